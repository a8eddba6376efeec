"""An inspector's on-site rain-gauge reading (Spec *Weather*, §380-16 C(4)(f)[1](f)), through the app:
typed in inches on the report, stored in mm, shown as the report's 24-hour precipitation labelled as the
gauge's, and never touched by the weather backfill. The station is a fake meteostat on 127.0.0.1."""
from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from sqlalchemy import select
from weather_fake import FakeMeteostat, hours

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.weather import source
from tests.inspections.report_helpers import error_beside, filled, mail_to, report_form, start

UTC = dt.UTC
SITE = (44.5, -81.5)  # far (> 50 km) from every other test package's fake stations
STATION = ("GGE1", "Gauge Check Field")
KM_PER_DEGREE_LATITUDE = 6371.0 * 3.141592653589793 / 180
# 10:30 EDT; the station's 24 hours end with the 14:00 UTC label.
PERFORMED_LOCAL = "2024-07-09T10:30"
STATION_HOURS = hours(dt.datetime(2024, 7, 8, 15, tzinfo=UTC), 24, temp=24.0, prcp=0.3, wspd=5.0, wdir=180,
                      coco=7)  # 24 x 0.3 mm = 7.2 mm = 0.28 in


@pytest.fixture(scope="module")
def station_server() -> Iterator[FakeMeteostat]:
    """A fake meteostat with one station 4 km north of the site; its hours are published by each test."""
    fake = FakeMeteostat()
    fake.add_station(STATION[0], STATION[1], SITE[0] + 4 / KM_PER_DEGREE_LATITUDE, SITE[1])
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def station(app, station_server, tmp_path) -> Iterator[FakeMeteostat]:
    """The app's weather pointed at the fake station (after create_app, which configures weather)."""
    app.config.update(WEATHER_ENDPOINT=station_server.base_url, WEATHER_DEADLINE_S=3.0)
    source.configure(station_server.base_url, tmp_path / "meteostat-cache", timeout_s=0.5)
    yield station_server
    station_server.withdraw_hourly(STATION[0])


@pytest.fixture
def draft(make, signed_in, station):
    """A started erosion-control draft of a permit at SITE, and the inspector's client."""
    inspector = make.user("inspector")
    # Issued before the inspection of the station's recorded day (PERFORMED_LOCAL), as a permit is.
    permit = make.permit(inspectors=[inspector], latitude=SITE[0], longitude=SITE[1], issued_on=dt.date(2024, 6, 3))
    client = signed_in(inspector)
    inspection = start(client, permit, "erosion_control")
    return SimpleNamespace(client=client, inspection=inspection, permit=permit)


def _save(client, inspection: Inspection, **fields):
    """Press "Save draft" with the form as it stands and `fields` typed in."""
    values, _ = report_form(client.get(f"/inspections/{inspection.id}").text)
    return client.post(f"/inspections/{inspection.id}", values | fields)


def _reread(inspection: Inspection) -> Inspection:
    db.session.expire_all()
    return db.session.get(Inspection, inspection.id)


def _fact(page: str, name: str) -> str:
    """The text of one (a)-(h) fact of the report page, tags removed."""
    cell = page.split(f'id="fact-{name}">', 1)[1].split("</dd>", 1)[0]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split())


def test_a_gauge_reading_overrides_the_station_is_stored_in_mm_and_survives_the_backfill(draft, station, runner):
    client, inspection = draft.client, draft.inspection
    page = client.get(f"/inspections/{inspection.id}").text
    assert "On-site rain gauge (in, last 24 h)" in page and 'name="gauge_precip_in"' in page

    assert _save(client, inspection, performed_at=PERFORMED_LOCAL, gauge_precip_in="0.50").status_code == 303
    saved = _reread(inspection)
    assert saved.gauge_precip_mm == 12.7 and saved.weather_status == "gauge"
    assert saved.precip_24h_mm is None and saved.weather_fetched_at is None
    page = client.get(f"/inspections/{inspection.id}").text
    assert _fact(page, "precip").startswith("0.50 in, on-site rain gauge")
    assert _fact(page, "weather").startswith("Station: Pending")  # the gauge gives (f) only, not (e)
    assert 'name="gauge_precip_in" form="report-form" type="text" value="0.50"' in page

    # The station publishes its hours later; the backfill fills the station's part and nothing else.
    station.publish_hourly(STATION[0], STATION_HOURS)
    result = runner.invoke(args=["weather", "backfill"])
    assert result.exit_code == 0, result.output
    filled_in = _reread(inspection)
    assert (filled_in.station_id, filled_in.precip_24h_mm, filled_in.precip_hours) == ("GGE1", 7.2, 24)
    assert filled_in.temperature_c == 24.0 and filled_in.weather_fetched_at is not None
    assert (filled_in.gauge_precip_mm, filled_in.weather_status, filled_in.precipitation_mm) == (12.7, "gauge", 12.7)
    page = client.get(f"/inspections/{inspection.id}").text
    assert _fact(page, "precip").startswith("0.50 in, on-site rain gauge (the inspector's reading; "
                                            "it overrides the station's 0.28 in)")
    assert "Gauge Check Field" in _fact(page, "weather")

    # Signed and submitted, the report keeps the reading and its label; a second backfill changes nothing.
    response = client.post(f"/inspections/{inspection.id}/submit", filled(page))
    assert response.status_code == 303, error_beside(response.text, "evaluation")
    assert runner.invoke(args=["weather", "backfill"]).exit_code == 0
    report = _reread(inspection)
    assert (report.status, report.gauge_precip_mm, report.weather_status) == ("submitted", 12.7, "gauge")
    page = client.get(f"/inspections/{inspection.id}").text
    assert _fact(page, "precip").startswith("0.50 in, on-site rain gauge") and 'name="gauge_precip_in"' not in page
    (sent,) = mail_to("applicant@example.org")
    assert "(f) Precipitation in the previous 24 hours: 0.50 in, on-site rain gauge" in sent.body


@pytest.mark.parametrize(("typed", "message"), [
    ("-1", "A rain-gauge reading cannot be negative."),
    ("25", "Enter the reading in inches (at most 20 in for 24 hours)."),
    ("abc", "Enter the rain-gauge reading in inches, like 0.50."),
    ("nan", "Enter the reading in inches (at most 20 in for 24 hours)."),
])
def test_an_impossible_gauge_reading_is_refused_beside_the_field_and_nothing_is_saved(draft, typed, message):
    client, inspection = draft.client, draft.inspection
    before = _reread(inspection).weather_status
    audit_before = db.session.scalar(select(db.func.count()).select_from(AuditEntry))

    for url in (f"/inspections/{inspection.id}", f"/inspections/{inspection.id}/submit"):
        values, _ = report_form(client.get(f"/inspections/{inspection.id}").text)
        response = client.post(url, values | {"gauge_precip_in": typed, "notes": "Rained overnight."})
        assert response.status_code == 422
        assert error_beside(response.text, "gauge_precip_in") == message
        assert f'value="{typed}" aria-describedby="gauge_precip_in-hint gauge_precip_in-error"' in response.text

    kept = _reread(inspection)
    assert (kept.gauge_precip_mm, kept.weather_status, kept.notes, kept.status) == (None, before, None, "draft")
    assert db.session.scalar(select(db.func.count()).select_from(AuditEntry)) == audit_before


def test_a_zero_reading_counts_and_a_cleared_reading_gives_the_station_back(draft):
    client, inspection = draft.client, draft.inspection
    assert _save(client, inspection, gauge_precip_in="0").status_code == 303
    dry = _reread(inspection)
    assert (dry.gauge_precip_mm, dry.weather_status, dry.precipitation_mm) == (0.0, "gauge", 0.0)
    assert _fact(client.get(f"/inspections/{inspection.id}").text, "precip").startswith("0.00 in, on-site rain gauge")

    assert _save(client, inspection, gauge_precip_in="").status_code == 303
    cleared = _reread(inspection)
    assert (cleared.gauge_precip_mm, cleared.weather_status) == (None, "pending")
    assert _fact(client.get(f"/inspections/{inspection.id}").text, "precip").startswith("Pending")
