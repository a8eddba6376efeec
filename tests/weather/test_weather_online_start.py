"""An inspection started with network access gets its weather at once, through the real app."""
from __future__ import annotations

import datetime as dt
import socket

import pytest
from sqlalchemy import event, select, update

from inspect_app.audit import services as audit
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.types import utcnow
from inspect_app.weather import services, source
from inspect_app.weather.models import StationArea
from weather_fake import hours


def test_an_inspection_started_online_has_its_weather_and_station_on_the_report(
        app_meteostat, permit_at, make, signed_in):
    inspector = make.user("inspector")
    permit = permit_at("report", inspectors=[inspector])
    now = utcnow().replace(minute=0, second=0, microsecond=0)
    app_meteostat.publish_hourly("RPT1", hours(now - dt.timedelta(hours=30), 32, temp=10.0, prcp=0.3,
                                               wspd=12.0, wdir=200, coco=8))
    browser = signed_in(inspector)

    response = browser.post(f"/permits/{permit.id}/inspections", {"type": "erosion_control"})

    assert response.status_code == 303
    inspection = db.session.scalar(select(Inspection))
    assert inspection.weather_status == "complete"
    assert inspection.station_id == "RPT1" and inspection.precip_hours == 24
    assert abs(inspection.precip_24h_mm - 7.2) < 0.01  # 24 hours of 0.3 mm: a storm-sized day
    page = browser.get(response.headers["Location"]).text
    assert "Report Field" in page and "RPT1" in page
    assert "0.28 in" in page  # 7.2 mm shown in inches
    assert "Meteostat" in page  # the data source's attribution is shown with the weather


def hourly_files(fake, since: int) -> list[str]:
    return [path for path in fake.requests[since:] if path.startswith("/hourly/")]


@pytest.fixture
def neighbours(app_meteostat, permit_at, make, signed_in):
    """(inspector's browser, neighbour, permit): two permits of one inspector at the "start_held" site, 70
    days of STH1's hours published, and the neighbour's rainfall chart opened (its hours stored)."""
    inspector = make.user("inspector")
    neighbour, permit = permit_at("start_held", inspectors=[inspector]), permit_at("start_held", inspectors=[inspector])
    now = utcnow().replace(minute=0, second=0, microsecond=0)
    app_meteostat.publish_hourly("STH1", hours(now - dt.timedelta(days=70), 70 * 24 + 1, temp=10.0, prcp=0.3,
                                               wspd=12.0, wdir=200, coco=8))
    browser = signed_in(inspector)
    first = browser.get(f"/permits/{neighbour.id}/rainfall", htmx="rainfall")
    assert first.status_code == 200 and "Start Held Field (STH1)" in first.text and "pending" not in first.text
    return browser, neighbour, permit


def test_starting_an_inspection_uses_the_hours_the_permit_page_already_stored(app_meteostat, neighbours):
    browser, _, permit = neighbours
    # Another permit's page stored the station's hours; this permit has no station of its own yet.
    asked = len(app_meteostat.requests)

    response = browser.post(f"/permits/{permit.id}/inspections", {"type": "erosion_control"})

    assert response.status_code == 303
    assert hourly_files(app_meteostat, asked) == []  # nothing fetched again
    inspection = db.session.scalar(select(Inspection))
    assert inspection.weather_status == "complete"
    assert inspection.station_id == "STH1" and inspection.precip_hours == 24
    assert abs(inspection.precip_24h_mm - 7.2) < 0.01 and inspection.temperature_c == 10.0


def test_a_started_inspection_still_takes_each_value_from_the_nearest_station_with_it(
        app_meteostat, permit_at, make, signed_in):
    inspector = make.user("inspector")
    permit = permit_at("split_held", inspectors=[inspector])
    now = utcnow().replace(minute=0, second=0, microsecond=0)
    app_meteostat.publish_hourly("TMP2", hours(now - dt.timedelta(days=70), 70 * 24 + 1, temp=11.0))
    app_meteostat.publish_hourly("PCP2", hours(now - dt.timedelta(days=70), 70 * 24 + 1, prcp=0.3))
    browser = signed_in(inspector)
    assert browser.get(f"/permits/{permit.id}/rainfall", htmx="rainfall").status_code == 200
    asked = len(app_meteostat.requests)

    assert browser.post(f"/permits/{permit.id}/inspections", {"type": "erosion_control"}).status_code == 303

    inspection = db.session.scalar(select(Inspection))
    stations = {item["parameter"]: item["station_id"] for item in inspection.weather_stations}
    # The thermometer is nearer and holds no stored hours, so it is fetched; the rain gauge's are held.
    assert stations["temperature"] == "TMP2" and stations["precipitation"] == "PCP2"
    assert inspection.temperature_c == 11.0 and abs(inspection.precip_24h_mm - 7.2) < 0.01
    assert [path for path in hourly_files(app_meteostat, asked) if "PCP2" in path] == []


@pytest.fixture
def meteostat_unreachable(app_meteostat, meteostat_cache, tmp_path):
    """A function that points weather lookups at a port nobody listens on, with no copy of meteostat's
    station list in the fetcher's cache: only what the app keeps is left. Pointed back at the end."""
    def cut() -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed_port = probe.getsockname()[1]
        source.configure(f"http://127.0.0.1:{closed_port}", tmp_path / "empty-cache", timeout_s=0.5)

    yield cut
    source.configure(app_meteostat.base_url, meteostat_cache, timeout_s=0.5)


def test_the_station_list_one_permit_asked_for_serves_its_neighbours_while_meteostat_is_down(
        neighbours, meteostat_unreachable):
    browser, _, permit = neighbours
    meteostat_unreachable()

    chart = browser.get(f"/permits/{permit.id}/rainfall", htmx="rainfall").text
    started = browser.post(f"/permits/{permit.id}/inspections", {"type": "erosion_control"})

    # The nearest station is found in the list kept by the first chart; its hours are stored.
    assert "Start Held Field (STH1)" in chart and "pending" not in chart
    assert started.status_code == 303
    page = browser.get(started.headers["Location"]).text
    assert "Start Held Field" in page and "0.28 in" in page  # 24 hours of 0.3 mm, from stored hours
    inspection = db.session.scalar(select(Inspection))
    assert inspection.weather_status == "complete" and inspection.station_id == "STH1"


def test_a_station_list_older_than_a_week_is_asked_for_again(neighbours, meteostat_unreachable):
    browser, _, permit = neighbours
    asked_at = utcnow() - services.STATION_LIST_TTL - dt.timedelta(hours=1)
    db.session.execute(update(StationArea).values(asked_at=asked_at))
    db.session.commit()
    meteostat_unreachable()

    chart = browser.get(f"/permits/{permit.id}/rainfall", htmx="rainfall").text

    # meteostat's station list may have changed since: asked again, and it cannot be had now.
    assert "Latest rainfall pending:" in chart and "could not be reached" in chart


# Starting a report is the request inspectors wait on most under load (bench/load.py): it reads what the report
# restates (the last inspection, notice, storms, schedule in force, weather) and writes the report and its two
# audit entries, in a bounded number of statements, whatever the permit's history.
START_STATEMENTS = 20


def test_starting_an_inspection_takes_few_sql_statements(neighbours):
    browser, _, permit = neighbours
    start = f"/permits/{permit.id}/inspections"  # read before counting: the test's own permit is expired
    statements: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    event.listen(db.engine, "before_cursor_execute", seen)
    try:
        response = browser.post(start, {"type": "erosion_control"})
    finally:
        event.remove(db.engine, "before_cursor_execute", seen)

    assert response.status_code == 303
    assert len(statements) <= START_STATEMENTS, "\n".join(s.split("\n", 1)[0][:100] for s in statements)
    inspection = db.session.scalar(select(Inspection))
    assert inspection.weather_status == "complete" and inspection.station_id == "STH1"
    assert [entry.action for entry in db.session.scalars(
        select(AuditEntry).where(AuditEntry.entity_id == inspection.id).order_by(AuditEntry.commit_seq))] \
        == ["inspection.start", "inspection.weather_fill"]
    walked = audit.verify_chain()
    assert walked.broken is None and walked.verified >= 2
