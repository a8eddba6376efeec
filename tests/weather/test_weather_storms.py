"""The storm sweep (CGP 2022 Parts 4.2, 4.3; spec "Weather"): a storm is 0.25 in (6.35 mm) or more within a
rolling 24-hour period of the stored hourly data; the inspection is due 24 hours after the moment the total
reached it, and a multi-day storm needs another within 24 hours of its end. The sweep covers every permit
the engine still requires inspections of, and the permit's obligations change in the same transaction.

Each case publishes its hours on the fake meteostat (127.0.0.1, read by meteostat's own code) at its own
dates, so the cases do not see each other's rain.
"""
from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.schedule.models import PermitObligation
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.permits.models import Permit
from inspect_app.templating import local_time
from inspect_app.weather import services, source
from inspect_app.weather.models import StormEvent, WeatherObservation
from weather_fake import Hour, hours  # noqa: F401

UTC = dt.UTC
EASTERN = ZoneInfo("America/New_York")
H = dt.timedelta(hours=1)
ROOT = Path(__file__).resolve().parents[2]
STORM_SCHEDULE = {"cgp_schedule": "every_14_days_and_storm", "issued_on": dt.date(2024, 1, 2),
                  "construction_started_on": dt.date(2024, 1, 3)}


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def dry(first: dt.datetime, last: dt.datetime, **values: object) -> list[Hour]:
    """Hours from `first` to `last` (labels, inclusive) with no rain."""
    return hours(first, round((last - first) / H) + 1, prcp=0.0, **values)


def rain(first: dt.datetime, count: int, mm: float) -> list[Hour]:
    return hours(first, count, prcp=mm)


def storm_events(permit=None) -> list[StormEvent]:
    query = select(StormEvent).order_by(StormEvent.reached_at)
    if permit is not None:
        query = query.where(StormEvent.permit_id == permit.id)
    return list(db.session.scalars(query))


def stored_storm_obligations(permit) -> list[tuple[dt.datetime | None, dt.datetime | None]]:
    """(opens_at, due_at) of the permit's storm inspections as the dashboard stores them."""
    return [(o.opens_at, o.due_at) for o in db.session.scalars(
        select(PermitObligation).where(PermitObligation.permit_id == permit.id,
                                       PermitObligation.kind == "storm_inspection")
        .order_by(PermitObligation.due_at))]


def test_a_storm_straddling_local_midnight_is_one_storm_due_24_hours_after_it_reached_the_threshold(
        app_meteostat, permit_at):
    """CGP 2022 Part 4.2: 0.25 in within a 24-hour period is a storm event, whatever the calendar day."""
    # 3.2 mm in the 4 hours before local midnight of 10 June 2024 (labels 01:00-04:00 UTC on the 11th,
    # EDT = UTC-4) and 3.2 mm in the 4 hours after it: each calendar day holds 0.13 in, the 8 hours 0.25 in.
    app_meteostat.publish_hourly("STM1", dry(utc(2024, 6, 8), utc(2024, 6, 13))
                                 + rain(utc(2024, 6, 11, 1), 8, 0.8))
    permit = permit_at("storm", **STORM_SCHEDULE)

    outcome = services.sweep_storms(3, now=utc(2024, 6, 12, 19))
    db.session.commit()

    (event,) = storm_events()
    assert (event.permit_id, event.station_id, event.depth_mm) == (permit.id, "STM1", 6.4)
    assert (event.started_at, event.reached_at, event.ended_at) == (
        utc(2024, 6, 11, 0), utc(2024, 6, 11, 8), utc(2024, 6, 11, 8))
    assert (event.day, event.multi_day, event.hours_missing, event.ongoing) == (
        dt.date(2024, 6, 11), False, 0, False)
    # The calendar days each hold less than the threshold: a count by day would have found no storm.
    by_day = source.daily_totals(services.stored_observations("STM1", utc(2024, 6, 10, 5), utc(2024, 6, 12, 4))[0],
                                 dt.date(2024, 6, 10), dt.date(2024, 6, 11))
    assert [d.precip_mm for d in by_day] == [3.2, 3.2]
    assert [number for number, _ in outcome.created] == [permit.number]
    assert outcome.pending == ()
    # In the same transaction, the permit's stored obligations: due 24 h after 4 a.m. EDT on 11 June.
    assert stored_storm_obligations(permit) == [(utc(2024, 6, 11, 8), utc(2024, 6, 12, 8))]
    assert db.session.scalar(select(func.count()).select_from(AuditEntry)
                             .where(AuditEntry.action == "storm_event.create")) == 1

    again = services.sweep_storms(3, now=utc(2024, 6, 12, 20))
    db.session.commit()
    assert again.created == () and again.deepened == ()
    assert [e.id for e in storm_events()] == [event.id]


def test_a_multi_day_storm_needs_an_inspection_after_it_reached_and_another_after_its_end(
        app_meteostat, permit_at):
    """CGP 2022 Part 4.2: a storm over several days, each producing 0.25 in or more."""
    # 0.5 mm an hour for 40 hours from the hour ending 10:00 UTC on 13 August 2024: 6.5 mm after 13 hours,
    # then 12 mm in the next 24 hours (a second day of 0.25 in or more), then 3 more hours of rain.
    app_meteostat.publish_hourly("STM1", dry(utc(2024, 8, 12), utc(2024, 8, 17)) + rain(utc(2024, 8, 13, 10), 40, 0.5))
    permit = permit_at("storm", **STORM_SCHEDULE)

    services.sweep_storms(4, now=utc(2024, 8, 16, 12))
    db.session.commit()

    (event,) = storm_events()
    assert (event.started_at, event.reached_at, event.ended_at, event.depth_mm) == (
        utc(2024, 8, 13, 9), utc(2024, 8, 13, 22), utc(2024, 8, 15, 1), 20.0)
    assert (event.multi_day, event.ongoing) == (True, False)
    assert stored_storm_obligations(permit) == [
        (utc(2024, 8, 13, 22), utc(2024, 8, 14, 22)),  # 24 h after it reached 0.25 in
        (utc(2024, 8, 15, 1), utc(2024, 8, 16, 1)),  # 24 h after the storm ended
    ]


def test_hours_missing_inside_the_window_are_said_never_read_as_dry(app_meteostat, permit_at):
    gap = {utc(2024, 9, 10, 20) + i * H for i in range(6)} | {utc(2024, 9, 12, 12) + i * H for i in range(3)}
    published = [h for h in dry(utc(2024, 9, 9), utc(2024, 9, 13)) if h.time not in gap]
    # 4.0 mm in 10 hours, 6 hours with no data, 2.4 mm in the 6 hours after: 6.4 mm known.
    app_meteostat.publish_hourly("STM1", published + rain(utc(2024, 9, 10, 10), 10, 0.4)
                                 + rain(utc(2024, 9, 11, 2), 6, 0.4))
    permit = permit_at("storm", **STORM_SCHEDULE)

    outcome = services.sweep_storms(3, now=utc(2024, 9, 12, 22))
    db.session.commit()

    (event,) = storm_events()
    # What is known already reaches the threshold; the missing hours could only have reached it sooner.
    assert (event.reached_at, event.depth_mm, event.hours_missing) == (utc(2024, 9, 11, 7), 6.4, 6)
    assert stored_storm_obligations(permit) == [(utc(2024, 9, 11, 7), utc(2024, 9, 12, 7))]
    # Three hours with no data on 12 September: no storm can be ruled out there, and the sweep says so.
    assert outcome.pending == ((permit.number, "Storm Watch Field has no rain data for 3 hour(s) "
                                "(2024-09-12 07:00 to 2024-09-12 10:00); a storm in them cannot be ruled out"),)
    stored = db.session.scalars(select(WeatherObservation.hour).where(
        WeatherObservation.station_id == "STM1", WeatherObservation.hour >= utc(2024, 9, 12, 12),
        WeatherObservation.hour <= utc(2024, 9, 12, 14))).all()
    assert stored == []  # never stored as zero


def test_a_storm_on_the_spring_clock_change_counts_elapsed_hours(app_meteostat, permit_at):
    # 0.8 mm an hour in the 8 hours from 9 p.m. EST on 9 March 2024 to 6 a.m. EDT on 10 March: the clocks
    # skip 2 a.m., so 9 hours on the wall clock but 8 real hours, 6.4 mm (0.25 in) within 24 hours.
    app_meteostat.publish_hourly("STM1", dry(utc(2024, 3, 8), utc(2024, 3, 12)) + rain(utc(2024, 3, 10, 3), 8, 0.8))
    permit = permit_at("storm", **STORM_SCHEDULE)

    services.sweep_storms(3, now=utc(2024, 3, 11, 16))
    db.session.commit()

    (event,) = storm_events()
    assert (event.started_at, event.reached_at, event.depth_mm) == (utc(2024, 3, 10, 2), utc(2024, 3, 10, 10), 6.4)
    assert local_time(event.started_at) == "Mar 9, 2024 9:00 PM"
    assert local_time(event.reached_at) == "Mar 10, 2024 6:00 AM"
    # Due 24 real hours later, 6 a.m. EDT on 11 March.
    ((opens, due),) = stored_storm_obligations(permit)
    assert (opens, due, local_time(due)) == (utc(2024, 3, 10, 10), utc(2024, 3, 11, 10), "Mar 11, 2024 6:00 AM")


def test_the_sweep_covers_permits_in_final_submissions_but_not_those_before_construction(
        app_meteostat, permit_at):
    app_meteostat.publish_hourly("FIN1", dry(utc(2024, 10, 1), utc(2024, 10, 5)) + rain(utc(2024, 10, 3, 15), 4, 2.0))
    final = permit_at("final", "final_submissions", **STORM_SCHEDULE)
    permit_at("final", "issued")  # no construction yet: no CGP inspections, no storm events

    outcome = services.sweep_storms(2, now=utc(2024, 10, 4, 12))
    db.session.commit()

    assert outcome.checked == 1
    (event,) = storm_events()
    assert (event.permit_id, event.reached_at, event.depth_mm) == (final.id, utc(2024, 10, 3, 18), 8.0)
    assert stored_storm_obligations(final) == [(utc(2024, 10, 3, 18), utc(2024, 10, 4, 18))]


def test_a_storm_growing_as_hours_are_published_is_revised_not_duplicated(app_meteostat, permit_at):
    # Published so far: up to the hour ending 23:00 UTC on 20 August, the last 14 of them rain.
    app_meteostat.publish_hourly("STM1", dry(utc(2024, 8, 20), utc(2024, 8, 20, 9)) + rain(utc(2024, 8, 20, 10), 14, 0.5))
    permit = permit_at("storm", **STORM_SCHEDULE)

    services.sweep_storms(1, now=utc(2024, 8, 21, 3))
    db.session.commit()
    (first,) = storm_events(permit)
    assert (first.reached_at, first.ended_at, first.depth_mm, first.ongoing) == (
        utc(2024, 8, 20, 22), utc(2024, 8, 20, 23), 7.0, True)
    app_meteostat.publish_hourly("STM1", dry(utc(2024, 8, 21, 3), utc(2024, 8, 22, 6)) + rain(utc(2024, 8, 21, 0), 6, 0.5))

    later = services.sweep_storms(2, now=utc(2024, 8, 22, 6))
    db.session.commit()

    (event,) = storm_events(permit)
    assert event.id == first.id and [e.id for _, e in later.deepened] == [event.id] and later.created == ()
    assert (event.reached_at, event.ended_at, event.depth_mm, event.ongoing) == (
        utc(2024, 8, 20, 22), utc(2024, 8, 21, 5), 10.0, False)
    assert db.session.scalar(select(func.count()).select_from(AuditEntry)
                             .where(AuditEntry.action == "storm_event.revise")) == 1


def test_an_on_site_gauge_reading_of_a_quarter_inch_makes_a_storm_inspection_due(app_meteostat, permit_at, report):
    permit = permit_at("gauge", **STORM_SCHEDULE)
    at = utc(2024, 7, 9, 15, 30)
    report(permit, at, type="periodic", status="submitted", gauge_precip_mm=0.30 * 25.4)
    report(permit, at + dt.timedelta(days=2), type="periodic", status="submitted", gauge_precip_mm=0.24 * 25.4)

    # CGP 2022 Part 4.2: the gauge says 0.30 in fell in the 24 hours to 11:30 a.m.: an inspection by
    # 11:30 a.m. the next day; a periodic visit is not the erosion-control inspection.
    assert stored_storm_obligations(permit) == [(at, at + dt.timedelta(hours=24))]


def cron(database_url: str, weather: str, *command: str) -> subprocess.CompletedProcess:
    """`flask <command>` in a process of its own, as cron runs it: settings from the environment only."""
    env = {**os.environ, "DATABASE_URL": database_url, "WEATHER_ENDPOINT": weather, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "flask", "--app", "inspect_app", *command], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_sweep_and_the_backfill_run_as_cron_and_twice_safely(app_meteostat, permit_at, report, database_url,
                                                                 runner):
    now = dt.datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    first_rain = now - dt.timedelta(hours=30)
    app_meteostat.publish_hourly("STM1", dry(now - dt.timedelta(days=4), now - 2 * H, temp=15.0)
                                 + rain(first_rain, 5, 1.5))
    permit = permit_at("storm", **STORM_SCHEDULE)
    inspected = report(permit, now - dt.timedelta(hours=20, minutes=30), status="submitted")
    number, inspected_id = permit.number, inspected.id
    db.session.close()  # nothing of the test's holds the database while the commands run

    first = cron(database_url, app_meteostat.base_url, "compliance", "sweep")
    backfill = cron(database_url, app_meteostat.base_url, "weather", "backfill")
    second = runner.invoke(args=["compliance", "sweep", "--days", "3"])  # again, in this process

    assert first.returncode == 0, first.stderr
    reached = first_rain + 4 * H  # 7.5 mm after 5 hours: 6.0 mm after 4 was not yet 0.25 in
    assert (f"storm event: {number} reached 0.30 in (7.5 mm) at {local_time(reached)}; at station STM1;"
            f" inspection due by {local_time(reached + dt.timedelta(hours=24))}") in first.stdout
    assert "1 permit(s) checked; 1 storm event(s) created." in first.stdout
    assert second.exit_code == 0 and "1 permit(s) checked; 0 storm event(s) created." in second.output
    permit = db.session.scalar(select(Permit).where(Permit.number == number))
    assert [(e.reached_at, e.depth_mm) for e in storm_events(permit)] == [(reached, 7.5)]
    # The report made after the storm reached the threshold answers it: nothing storm-related is open.
    assert stored_storm_obligations(permit) == []
    assert backfill.returncode == 0, backfill.stderr
    assert "pending -> complete" in backfill.stdout
    filled = db.session.get(Inspection, inspected_id)
    assert (filled.station_id, filled.precip_24h_mm, filled.precip_hours) == ("STM1", 7.5, 24)


def test_bad_sweep_days_are_refused_and_change_nothing(app_meteostat, permit_at, runner):
    permit_at("storm")
    asked = len(app_meteostat.requests)

    result = runner.invoke(args=["compliance", "sweep", "--days", "0"])

    assert result.exit_code == 2 and "--days" in result.output
    assert len(app_meteostat.requests) == asked
    assert storm_events() == []


@pytest.mark.parametrize("days", [1, 2, 7, 60, 61])
def test_the_database_adds_stored_hours_up_by_local_day_as_the_hours_themselves_do(app, days):
    """The chart's totals come from the database (`stored_rain`, grouping by the day each hour began in); they
    are the same as adding the same hours up in Python (`daily_totals`), day by day, across the clock change
    and for any number of days. An hour's rain is its number, so an hour counted on the wrong day shows."""
    start = dt.date(2024, 11, 3) - dt.timedelta(days=days // 2)  # 3 November 2024: a day of 25 hours
    end = start + dt.timedelta(days=days - 1)
    first, last = source._rainfall_window(start, end)
    rows, hour, number = [], first - dt.timedelta(hours=3), 0  # and 3 hours before the first day, not in it
    while hour <= last + dt.timedelta(hours=3):
        number += 1
        rows.append(source.HourlyObservation("DAYS", hour, None, None if number % 11 == 0 else number / 10,
                                             None, None, None, "prcp=isd_lite"))
        hour += dt.timedelta(hours=1)
    services.store_observations(rows)
    db.session.commit()

    stored, attribution, _ = services.stored_rain("DAYS", start, end)
    assert stored == source.daily_totals(rows, start, end)
    assert len(stored) == days and attribution.startswith("Meteostat")
    if start <= dt.date(2024, 11, 3) <= end:
        assert next(d for d in stored if d.day == dt.date(2024, 11, 3)).hours_in_day == 25
