"""A report's weather, §380-16 C(4)(f)[1](e),(f): filled from meteostat (a fake one on 127.0.0.1),
kept by station and hour, pending until published, backfilled on record; a gauge reading wins."""
from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Iterator

import pytest
from flask import render_template_string
from sqlalchemy import func, select, text

from inspect_app.audit.models import AuditEntry
from inspect_app.audit.services import snapshot
from inspect_app.documents.models import FrozenDocument
from inspect_app.extensions import db
from inspect_app.inspections import weather as report_weather
from inspect_app.inspections.models import ChecklistAnswer, Inspection
from inspect_app.inspections.canonical import record_hash, seal
from inspect_app.weather import source
from inspect_app.weather.models import WeatherObservation
from tests.inspections.report_helpers import start, submit
from weather_fake import hours, recent_hour

UTC = dt.UTC
WEATHER_FIELDS = {"weather_status", "temperature_c", "conditions", "wind_kmh", "wind_direction_deg",
                  "precip_24h_mm", "precip_hours", "station_id", "station_name", "station_distance_m",
                  "weather_sources", "weather_attribution", "weather_fetched_at", "weather_stations",
                  "weather_provisional"}

@contextlib.contextmanager
def app_meteostat_requests(fake) -> Iterator[list[str]]:
    """The paths the fake server was asked for inside the `with` block."""
    asked: list[str] = []
    start = len(fake.requests)
    yield asked
    asked.extend(fake.requests[start:])

def weather_block(inspection: Inspection) -> str:
    """The report's weather block as the report page renders it."""
    return render_template_string('{% include "weather/_weather.html" %}', inspection=inspection)

def reread(inspection: Inspection) -> Inspection:
    db.session.expire_all()
    return db.session.get(Inspection, inspection.id)

def audit_actions(inspection: Inspection) -> list[AuditEntry]:
    return list(db.session.scalars(select(AuditEntry).where(AuditEntry.entity_id == inspection.id)
                                   .order_by(AuditEntry.seq)))

def test_an_inspection_gets_its_weather_with_the_station_and_its_distance_on_the_report(
        app_meteostat, permit_at, report):
    performed = dt.datetime(2024, 5, 14, 12, 40, tzinfo=UTC)
    app_meteostat.publish_hourly("RPT1", hours(dt.datetime(2024, 5, 13, 13, tzinfo=UTC), 24, temp=17.5,
                                               prcp=0.3, wspd=18.0, wdir=225, coco=8))
    inspection = report(permit_at("report"), performed)

    with app_meteostat_requests(app_meteostat) as asked:
        report_weather.fill_inspection_weather(inspection)
        db.session.commit()

    filled = reread(inspection)
    assert asked  # it did ask the weather service
    assert (filled.weather_status, filled.station_id, filled.station_name) == (
        "complete", "RPT1", "Report Field")
    assert filled.station_distance_m == pytest.approx(5000, abs=1)
    assert (filled.temperature_c, filled.conditions, filled.wind_kmh, filled.wind_direction_deg) == (
        17.5, "Rain", 18.0, 225)
    assert (filled.precip_24h_mm, filled.precip_hours) == (7.2, 24)
    assert filled.weather_fetched_at is not None
    assert filled.weather_attribution == "Meteostat (CC BY 4.0)"
    assert [e.action for e in audit_actions(filled)] == ["inspection.weather_fill"]

    html = weather_block(filled)
    assert "Report Field (RPT1), 3.1 mi from the site" in html
    assert "64 °F" in html  # 17.5 °C
    assert "Rain" in html
    assert "11 mph from SW" in html  # 18 km/h from 225°
    assert "0.28 in" in html and "from 24 of 24 hours" in html  # 7.2 mm
    assert "pending" not in html.lower() and "incomplete" not in html.lower()
    assert "Meteostat (CC BY 4.0)" in html
    assert "temperature: NOAA ISD Lite (observation)" in html

def test_the_same_station_hours_are_fetched_once_and_a_report_keeps_what_was_first_fetched(
        app, app_meteostat, meteostat_cache, permit_at, report, quiet_workers):
    # What this checks is how often hours are fetched, not how fast: bounds generous enough for a
    # machine under heavy load (the fixture's 0.5 s socket timeout and 3 s deadline can fail the first
    # fetch there, which then made the second report fetch), and no worker of an earlier test alive
    # (`quiet_workers`) to take a lookup slot or to ask the server for its own files meanwhile.
    app.config["WEATHER_DEADLINE_S"] = 30.0
    source.configure(app_meteostat.base_url, meteostat_cache, timeout_s=20.0)
    window = hours(dt.datetime(2024, 6, 2, 11, tzinfo=UTC), 24, temp=20.0, prcp=0.1, wspd=9.0, wdir=90,
                   coco=3)
    app_meteostat.publish_hourly("SHR1", window)
    permit = permit_at("shared")
    first = report(permit, dt.datetime(2024, 6, 3, 10, 5, tzinfo=UTC))
    report_weather.fill_inspection_weather(first)
    db.session.commit()
    assert reread(first).weather_status == "complete", reread(first).weather_status  # fetched, once

    # A second report of the same site within the same hour: the same 24 station-hours.
    second = report(permit, dt.datetime(2024, 6, 3, 10, 40, tzinfo=UTC))
    with app_meteostat_requests(app_meteostat) as asked:
        report_weather.fill_inspection_weather(second)
        report_weather.fill_inspection_weather(first)  # already final: nothing to do
        db.session.commit()

    assert asked == []
    second = reread(second)
    assert (second.weather_status, second.station_id, second.precip_24h_mm, second.temperature_c) == (
        "complete", "SHR1", 2.4, 20.0)
    assert db.session.scalar(select(func.count()).select_from(WeatherObservation)) == 24

    # meteostat's copy changes; another permit on the same site walks the nearest stations again, finds
    # the hours of its nearest one held and fetches nothing: its report says what the first two say.
    app_meteostat.publish_hourly("SHR1", hours(dt.datetime(2024, 6, 2, 11, tzinfo=UTC), 24, temp=31.0,
                                               prcp=0.9, wspd=9.0, wdir=90, coco=3))
    neighbour = report(permit_at("shared"), dt.datetime(2024, 6, 3, 10, 15, tzinfo=UTC))
    with app_meteostat_requests(app_meteostat) as asked:
        report_weather.fill_inspection_weather(neighbour)
        db.session.commit()

    assert asked == []
    neighbour, first = reread(neighbour), reread(first)
    assert (neighbour.precip_24h_mm, neighbour.temperature_c) == (2.4, 20.0)
    assert (first.precip_24h_mm, first.temperature_c) == (2.4, 20.0)
    assert db.session.scalar(select(func.count()).select_from(WeatherObservation)) == 24

def test_the_backfill_seals_no_new_version_of_a_report_whose_answers_changed_outside_the_app(
        app_meteostat, permit_at, report, runner):
    """A version with its weather filled in may differ from the signed one in its weather alone: a checklist
    answer rewritten in the database after signing is not sealed into a new version; the backfill says why."""
    performed = recent_hour(2) + dt.timedelta(minutes=25)
    inspection = report(permit_at("altered"), performed, status="submitted", submitted_at=performed,
                        evaluation="compliant", signer_name="Pat Inspector",
                        answers=[ChecklistAnswer(item_key="perimeter_controls", answer="yes")])
    seal(inspection)
    db.session.commit()
    signed = (inspection.record_sha256, inspection.parts_sha256)
    db.session.execute(text("UPDATE checklist_answers SET answer = 'no' WHERE inspection_id = :id"),
                       {"id": inspection.id})
    db.session.commit()

    app_meteostat.publish_hourly("ALT1", hours(performed.replace(minute=0) - dt.timedelta(hours=23), 24,
                                               temp=12.0, prcp=0.5, coco=7))
    result = runner.invoke(args=["weather", "backfill"])

    assert result.exit_code == 0, result.output
    assert "pending -> pending" in result.output and "changed outside the app" in result.output
    kept = reread(inspection)
    assert (kept.weather_status, kept.precip_24h_mm) == ("pending", None)
    assert (kept.record_sha256, kept.parts_sha256) == signed
    assert audit_actions(kept) == []


def test_a_submitted_report_stays_pending_then_is_backfilled_on_record(
        app_meteostat, permit_at, report, runner):
    performed = recent_hour(2) + dt.timedelta(minutes=25)
    submitted_at = performed + dt.timedelta(minutes=50)
    inspection = report(permit_at("late"), performed, status="submitted", submitted_at=submitted_at,
                        evaluation="compliant", signer_name="Pat Inspector", record_sha256="a" * 64)

    report_weather.fill_inspection_weather(inspection)
    db.session.commit()

    pending = reread(inspection)
    assert (pending.weather_status, pending.weather_fetched_at, pending.precip_24h_mm) == (
        "pending", None, None)
    assert audit_actions(pending) == []  # nothing changed, nothing to record
    assert "Weather pending" in weather_block(pending)
    untouched = {k: v for k, v in snapshot(pending).items()
                 if k not in WEATHER_FIELDS and k != "record_sha256"}

    # The station publishes the hours later; the backfill fills the report in.
    app_meteostat.publish_hourly("LTE1", hours(performed.replace(minute=0) - dt.timedelta(hours=23), 24,
                                               temp=12.0, prcp=0.5, coco=7))
    result = runner.invoke(args=["weather", "backfill"])

    assert result.exit_code == 0, result.output
    assert "pending -> complete" in result.output
    assert "1 report(s) looked at; 1 filled; 0 still pending." in result.output
    filled = reread(inspection)
    assert (filled.weather_status, filled.station_id, filled.precip_24h_mm, filled.precip_hours) == (
        "complete", "LTE1", 12.0, 24)
    assert {k: v for k, v in snapshot(filled).items()
            if k not in WEATHER_FIELDS and k != "record_sha256"} == untouched
    # The record's hash covers the weather, so it is sealed again with the filled values, on record.
    entry, reseal = audit_actions(filled)
    assert reseal.action == "inspection.reseal"
    assert filled.record_sha256 == record_hash(filled) != "a" * 64
    assert entry.action == "inspection.weather_backfill"
    assert entry.actor_id is None  # the system did it, not a person
    assert (entry.before["weather_status"], entry.after["weather_status"]) == ("pending", "complete")
    assert entry.after["weather_fetched_at"] is not None
    assert entry.at >= filled.weather_fetched_at - dt.timedelta(seconds=5)

    # Complete and observed: a second backfill leaves it alone and asks nothing.
    with app_meteostat_requests(app_meteostat) as asked:
        again = runner.invoke(args=["weather", "backfill"])
    assert "0 report(s) looked at" in again.output and asked == []

def test_weather_backfilled_after_a_report_is_signed_is_chained_and_the_audit_verifies(
        app_meteostat, permit_at, make, signed_in, runner, smtp_server):
    inspector = make.user("inspector")
    browser = signed_in(inspector)
    draft = start(browser, permit_at("late", inspectors=[inspector]), "erosion_control")
    assert submit(browser, draft).status_code == 303  # signed while the station has published nothing
    signed = reread(draft)
    assert (signed.status, signed.weather_status) == ("submitted", "pending")
    (first,) = smtp_server
    assert "station: pending (filled in by the server when the station reports)" in _mail_text(first)

    app_meteostat.publish_hourly("LTE1", hours(signed.performed_at.replace(minute=0, second=0, microsecond=0)
                                               - dt.timedelta(hours=23), 24, temp=12.0, prcp=0.5, coco=7))
    backfill = runner.invoke(args=["weather", "backfill"])
    assert "pending -> complete" in backfill.output, backfill.output
    filled = reread(draft)
    assert (filled.weather_status, filled.precip_24h_mm) == ("complete", 12.0)
    # §380-16 C(4)(f)[1]: the report sent after each inspection "shall include [e] Weather at time of inspection;
    # [f] Accumulated precipitation within previous 24 hours". It went with them pending: its recipients get it
    # again, complete, once (no one was sent it).
    assert len(smtp_server) == 2
    again = smtp_server[1]
    assert again["Subject"].startswith("Inspection report (weather filled in): permit ") and again["To"] == first["To"]
    text = _mail_text(again)
    assert text.startswith("This report was sent when it was signed, with the weather at the time still to come")
    # The version it carries is the server's, not a second signing by the inspector (its PDF was frozen for
    # "signed and submitted" as the mail was made, and the commit then made no version of its own).
    versions = list(db.session.scalars(select(FrozenDocument).where(FrozenDocument.subject_id == draft.id)
                                       .order_by(FrozenDocument.frozen_at, FrozenDocument.id)))
    assert [(v.occasion, v.signed_by) for v in versions][1:] == [("pending weather filled in",
                                                                  "the server (weather filled in)")]
    assert "station: pending" not in text and "(f) Precipitation in the previous 24 hours: 0.47 in" in text
    # The values the report now holds are those of its latest chained entry: the audit checks out.
    db.session.remove()
    verified = runner.invoke(args=["audit", "verify"])
    assert verified.exit_code == 0, verified.output
    assert "signed or issued records match their audit entries" in verified.output
    runner.invoke(args=["weather", "backfill"])
    assert len(smtp_server) == 2  # once


def _mail_text(message) -> str:
    return next(part for part in message.walk() if part.get_content_type() == "text/plain"
                and not part.get_filename()).get_payload(decode=True).decode()


def test_an_on_site_gauge_reading_wins_and_is_labelled(app_meteostat, permit_at, report):
    app_meteostat.publish_hourly("GAU1", hours(dt.datetime(2024, 7, 8, 15, tzinfo=UTC), 24, temp=24.0,
                                               prcp=0.3, wspd=5.0, wdir=180, coco=7))
    inspection = report(permit_at("gauge"), dt.datetime(2024, 7, 9, 14, 30, tzinfo=UTC),
                        gauge_precip_mm=10.7)

    report_weather.fill_inspection_weather(inspection)
    db.session.commit()

    filled = reread(inspection)
    assert filled.gauge_precip_mm == 10.7  # never overwritten
    assert (filled.weather_status, filled.precip_24h_mm, filled.precipitation_mm) == ("gauge", 7.2, 10.7)
    assert filled.temperature_c == 24.0  # the station still gives the rest of the weather
    html = weather_block(filled)
    assert "<strong>0.42 in</strong>, on-site rain gauge" in html
    assert "Station: 0.28 in from 24 of 24 hours" in html

def test_a_hung_weather_server_leaves_the_report_pending_within_the_deadline(
        app, app_meteostat, permit_at, report, runner, quiet_workers, short_socket_timeout):
    performed = dt.datetime(2024, 9, 17, 13, tzinfo=UTC)
    app_meteostat.publish_hourly("HNG9", hours(performed - dt.timedelta(hours=23), 24, temp=9.0, prcp=0.0))
    app_meteostat.hang("/hourly/2024/HNG9.csv.gz")
    app.config["WEATHER_DEADLINE_S"] = 0.3
    inspection = report(permit_at("hung"), performed)

    started = time.monotonic()
    report_weather.fill_inspection_weather(inspection)
    elapsed = time.monotonic() - started
    db.session.commit()

    assert elapsed < 0.3 + 0.25
    filled = reread(inspection)
    assert (filled.weather_status, filled.weather_fetched_at) == ("pending", None)
    assert audit_actions(filled) == []

    started = time.monotonic()
    result = runner.invoke(args=["weather", "backfill"])
    elapsed = time.monotonic() - started
    assert elapsed < 0.3 + 0.5
    assert "pending -> pending (the weather service did not answer within 0.3 s)" in result.output
    assert "0 filled; 1 still pending" in result.output

def test_a_report_of_a_time_still_to_come_asks_nothing(app_meteostat, permit_at, report):
    inspection = report(permit_at("report"), dt.datetime.now(UTC) + dt.timedelta(days=1))

    with app_meteostat_requests(app_meteostat) as asked:
        report_weather.fill_inspection_weather(inspection)
    assert asked == [] and reread(inspection).weather_status == "pending"

def test_a_bad_backfill_limit_is_refused_with_a_clear_message(app_meteostat, runner):
    result = runner.invoke(args=["weather", "backfill", "--limit", "0"])
    assert result.exit_code == 2 and "--limit" in result.output
    with pytest.raises(ValueError, match="limit must be a positive number"):
        report_weather.backfill_pending(0)

def test_display_filters_show_inches_fahrenheit_mph_and_miles(app):
    filters = app.jinja_env.filters
    assert filters["inches"](6.35) == "0.25 in"
    assert filters["inches"](6.1) == "0.24 in"
    assert filters["fahrenheit"](0.0) == "32 °F" and filters["fahrenheit"](-40.0) == "-40 °F"
    assert filters["mph"](100.0) == "62 mph"
    assert filters["miles"](1609.344) == "1.0 mi"
    assert filters["compass"](225) == "SW" and filters["compass"](360) == "N"
    assert filters["inches"](None) == filters["fahrenheit"](None) == "—"
    assert filters["weather_sources"]("temperature=metar; precipitation=isd_lite metno_forecast (model)") == (
        "temperature: METAR (observation); "
        "precipitation: NOAA ISD Lite, MET Norway Forecast (model-filled)")

def test_a_draft_being_created_can_be_filled_before_it_is_saved(app_meteostat, permit_at):
    app_meteostat.publish_hourly("RPT1", hours(dt.datetime(2024, 10, 1, 1, tzinfo=UTC), 24, temp=8.0,
                                               prcp=0.0))
    permit = permit_at("report")
    draft = Inspection(permit_id=permit.id, type="erosion_control", inspector_name="Pat Inspector",
                       inspector_credentials="PE No. 40001",
                       performed_at=dt.datetime(2024, 10, 2, 0, 30, tzinfo=UTC))
    db.session.add(draft)

    report_weather.fill_inspection_weather(draft)
    db.session.commit()

    filled = reread(draft)
    assert (filled.status, filled.weather_status, filled.station_id, filled.precip_24h_mm) == (
        "draft", "complete", "RPT1", 0.0)
    assert "0.00 in" in weather_block(filled)

def test_a_recent_incomplete_report_is_completed_by_a_later_backfill(app_meteostat, permit_at, report):
    performed = recent_hour(30) + dt.timedelta(minutes=10)
    first = performed.replace(minute=0) - dt.timedelta(hours=23)
    app_meteostat.publish_hourly("GAP1", hours(first, 24, temp=15.0, coco=3))  # no rain data yet
    app_meteostat.publish_hourly("GAP1", hours(first, 10, temp=15.0, coco=3, prcp=0.2))
    inspection = report(permit_at("gappy"), performed)

    report_weather.fill_inspection_weather(inspection)
    db.session.commit()
    early = reread(inspection)
    assert (early.weather_status, early.precip_24h_mm, early.precip_hours) == ("incomplete", 2.0, 10)
    assert "precipitation for only 10 of the 24 hours" in weather_block(early)
    assert report_weather.needs_weather(early)  # recent: the missing hours may still come

    app_meteostat.publish_hourly("GAP1", hours(first, 24, temp=15.0, coco=3, prcp=0.2))
    (outcome,) = report_weather.backfill_pending()
    db.session.commit()

    assert (outcome.before, outcome.after) == ("incomplete", "complete")
    done = reread(inspection)
    assert (done.weather_status, done.precip_24h_mm, done.precip_hours) == ("complete", 4.8, 24)
    assert not report_weather.needs_weather(done)
    assert [e.action for e in audit_actions(done)] == ["inspection.weather_fill"] * 2
