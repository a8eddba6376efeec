"""The storm sweep (CGP 2022 Parts 4.2, 4.3; spec "Weather"): a local day of 0.25 in (6.35 mm) or more
at an active or stop-work permit makes one storm event, however often the sweep runs."""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.weather import services
from inspect_app.weather.models import StormEvent, WeatherObservation
from weather_fake import Hour, hours

UTC = dt.UTC
EASTERN = ZoneInfo("America/New_York")


def local_day_hours(day: dt.date, **values: object) -> list[Hour]:
    """The hourly rows of one local day: labels from 01:00 to the next midnight, local time."""
    first = dt.datetime.combine(day, dt.time(1), tzinfo=EASTERN).astimezone(UTC)
    last = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=EASTERN).astimezone(UTC)
    return hours(first, round((last - first).total_seconds() / 3600) + 1, **values)


def rain_on(day: dt.date, tenths: list[int]) -> list[Hour]:
    """A local day whose first hours hold these tenths of a millimetre and the rest none."""
    rows = local_day_hours(day, prcp=0.0)
    return [Hour(r.time, prcp=(tenths[i] / 10 if i < len(tenths) else 0.0)) for i, r in enumerate(rows)]


def storm_events() -> list[StormEvent]:
    return list(db.session.scalars(select(StormEvent).order_by(StormEvent.day)))


def test_a_quarter_inch_day_makes_one_storm_event_and_a_0_24_in_day_none(app_meteostat, permit_at):
    # 10 June 2024: 16 hours of 0.4 mm = 6.4 mm (0.25 in); 11 June: 6.1 mm (0.24 in); 12 June dry.
    app_meteostat.publish_hourly("STM1", local_day_hours(dt.date(2024, 6, 9), prcp=0.0)
                                 + rain_on(dt.date(2024, 6, 10), [4] * 16)
                                 + rain_on(dt.date(2024, 6, 11), [3] * 20 + [1])
                                 + local_day_hours(dt.date(2024, 6, 12), prcp=0.0))
    active = permit_at("storm", "active")
    stopped = permit_at("storm", "stop_work")
    permit_at("storm", "issued")  # no construction yet: no CGP inspections, no storm events
    now = dt.datetime(2024, 6, 12, 19, tzinfo=UTC)

    first = services.sweep_storms(3, now=now)
    db.session.commit()

    assert first.checked == 2
    made = storm_events()
    assert {(e.permit_id, e.day, e.depth_mm, e.station_id) for e in made} == {
        (active.id, dt.date(2024, 6, 10), 6.4, "STM1"), (stopped.id, dt.date(2024, 6, 10), 6.4, "STM1")}
    assert sorted(number for number, _ in first.created) == sorted([active.number, stopped.number])
    assert db.session.scalar(select(func.count()).select_from(AuditEntry)
                             .where(AuditEntry.action == "storm_event.create")) == 2
    assert db.session.scalar(select(func.count()).select_from(WeatherObservation)) == 3 * 24

    again = services.sweep_storms(3, now=now + dt.timedelta(hours=1))
    db.session.commit()

    assert again.created == () and again.deepened == ()
    assert [(e.id, e.depth_mm) for e in storm_events()] == [(e.id, e.depth_mm) for e in made]


def test_a_storm_day_that_grows_as_hours_are_published_is_deepened_not_duplicated(
        app_meteostat, permit_at):
    day = dt.date(2024, 8, 20)
    app_meteostat.publish_hourly("STM1", rain_on(day, [5] * 14)[:14])  # 7.0 mm in the first 14 hours
    permit = permit_at("storm")
    now = dt.datetime(2024, 8, 20, 23, tzinfo=UTC)

    services.sweep_storms(1, now=now)
    app_meteostat.publish_hourly("STM1", rain_on(day, [5] * 20))  # the day is published: 10.0 mm
    later = services.sweep_storms(1, now=now + dt.timedelta(hours=3))
    db.session.commit()

    (event,) = storm_events()
    assert (event.permit_id, event.day, event.depth_mm) == (permit.id, day, 10.0)
    assert later.created == () and [e.id for _, e in later.deepened] == [event.id]


def test_the_sweep_command_reports_what_it_made_and_runs_twice_safely(app_meteostat, permit_at, runner):
    today = dt.datetime.now(EASTERN).date()
    yesterday, before = today - dt.timedelta(days=1), today - dt.timedelta(days=2)
    app_meteostat.publish_hourly("STM1", rain_on(before, [3] * 20 + [1]) + rain_on(yesterday, [4] * 16))
    permit = permit_at("storm")

    first = runner.invoke(args=["compliance", "sweep"])
    second = runner.invoke(args=["compliance", "sweep", "--days", "3"])

    assert first.exit_code == 0, first.output
    assert (f"storm event: {permit.number} {yesterday:%Y-%m-%d} 0.25 in (6.4 mm) at station STM1"
            in first.output)
    assert f"{before:%Y-%m-%d}" not in first.output  # 0.24 in: no storm
    assert "1 permit(s) checked; 1 storm event(s) created." in first.output
    assert second.exit_code == 0 and "1 permit(s) checked; 0 storm event(s) created." in second.output
    assert [(e.day, e.depth_mm) for e in storm_events()] == [(yesterday, 6.4)]


def test_bad_sweep_days_are_refused_and_change_nothing(app_meteostat, permit_at, runner):
    permit_at("storm")
    asked = len(app_meteostat.requests)

    result = runner.invoke(args=["compliance", "sweep", "--days", "0"])

    assert result.exit_code == 2 and "--days" in result.output
    assert len(app_meteostat.requests) == asked
    assert storm_events() == []
