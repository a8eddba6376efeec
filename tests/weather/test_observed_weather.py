"""(e) "Weather at time of inspection" (§380-16 C(4)(f)[1][e]) when the station has not reported: the inspector
writes the weather observed on site, a report is never signed with only "Pending", and the station's values,
when they come, are kept beside the observation, never in its place (issues 31 and 32). The weather service is
a fake meteostat on 127.0.0.1."""
from __future__ import annotations

import datetime as dt
import io
import re

from pypdf import PdfReader

from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.inspections.canonical import record_hash, report_record
from inspect_app.inspections.models import Inspection
from inspect_app.types import LOCAL_TZ
from tests.inspections.report_helpers import error_beside, start, submit
from weather_fake import hours

SEEN = "Light rain, about 50 °F, wind gusty from the northwest"


def reread(inspection: Inspection) -> Inspection:
    db.session.expire_all()
    return db.session.get(Inspection, inspection.id)


def pdf_text(inspection: Inspection) -> str:
    pdf = documents.inspection_report_pdf(inspection)
    return re.sub(r"\s+", " ", " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages))


def page_text(browser, inspection: Inspection, part: str) -> str:
    """The words of one element of the report page (by id), as a person reads them."""
    page = browser.get(f"/inspections/{inspection.id}").text
    match = re.search(rf'<p id="{part}">(.*?)</p>', page, re.S)
    assert match, f"no #{part} on the report page"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", match.group(1))).strip()


def test_a_report_cannot_be_signed_with_only_pending_weather(app_meteostat, permit_at, make, signed_in):
    inspector = make.user("inspector")
    browser = signed_in(inspector)
    draft = start(browser, permit_at("observed_pending", inspectors=[inspector]), "erosion_control")

    refused = submit(browser, draft, observed_weather="   ")  # the station has published nothing

    assert refused.status_code == 422
    assert error_beside(refused.text, "observed_weather") == (
        "(e) The weather station has not reported yet: write the weather you observed on site "
        "(conditions, temperature, wind).")
    assert 'href="#observed_weather"' in refused.text  # named in the summary, linked to the field
    kept = reread(draft)
    assert (kept.status, kept.observed_weather, kept.record_sha256) == ("draft", None, None)  # nothing saved

    assert submit(browser, draft, observed_weather=f"  {SEEN} ").status_code == 303
    signed = reread(draft)
    assert (signed.status, signed.weather_status, signed.observed_weather) == ("submitted", "pending", SEEN)
    # What the inspector signed holds the observation: the record and its hash.
    assert report_record(signed)["e_weather"]["observed"] == SEEN
    assert signed.record_sha256 == record_hash(signed)
    assert page_text(browser, signed, "weather-observed") == f"Observed by the inspector: {SEEN}"
    assert page_text(browser, signed, "weather-station") == (
        "Station: Pending filled in by the server when the station reports")
    assert (f"(e) Weather at the time Observed by the inspector: {SEEN} Station: pending, added beside this when "
            "the station reports.") in pdf_text(signed)


def test_the_observed_weather_is_optional_when_the_station_has_reported(app_meteostat, permit_at, make,
                                                                       signed_in):
    inspector = make.user("inspector")
    browser = signed_in(inspector)
    draft = start(browser, permit_at("observed_reported", inspectors=[inspector]), "erosion_control")
    performed = (dt.datetime.now(dt.UTC) - dt.timedelta(days=3)).replace(minute=30, second=0, microsecond=0)
    app_meteostat.publish_hourly("OBR1", hours(performed.replace(minute=0) - dt.timedelta(hours=23), 25,
                                               temp=12.0, prcp=0.5, coco=7))

    signed = submit(browser, draft, observed_weather="",
                    performed_at=performed.astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M"))

    assert signed.status_code == 303, error_beside(signed.text, "observed_weather") or signed.text[:2000]
    report = reread(draft)
    assert (report.status, report.weather_status, report.station_id, report.observed_weather) == (
        "submitted", "complete", "OBR1", None)
    assert "observed" not in report_record(report)["e_weather"]
    assert page_text(browser, report, "weather-station").startswith("Station (Prompt Publisher Field")
    assert "Observed by the inspector" not in pdf_text(report)


def test_the_station_values_arriving_later_are_kept_beside_the_observed_weather(
        app_meteostat, permit_at, make, signed_in, runner):
    inspector = make.user("inspector")
    browser = signed_in(inspector)
    draft = start(browser, permit_at("observed_later", inspectors=[inspector]), "erosion_control")
    assert submit(browser, draft, observed_weather=SEEN).status_code == 303
    signed = reread(draft)
    assert signed.weather_status == "pending"

    app_meteostat.publish_hourly("OBL1", hours(signed.performed_at.replace(minute=0, second=0, microsecond=0)
                                               - dt.timedelta(hours=23), 24, temp=12.0, prcp=0.5, coco=7))
    backfill = runner.invoke(args=["weather", "backfill"])
    assert "pending -> complete" in backfill.output, backfill.output

    filled = reread(draft)
    assert (filled.weather_status, filled.temperature_c, filled.conditions) == ("complete", 12.0, "Light Rain")
    assert filled.observed_weather == SEEN  # never in its place
    assert report_record(filled)["e_weather"]["observed"] == SEEN
    assert filled.record_sha256 == record_hash(filled)
    assert page_text(browser, filled, "weather-observed") == f"Observed by the inspector: {SEEN}"
    station = page_text(browser, filled, "weather-station")
    assert station.startswith("Station (Later Publisher Field") and station.endswith(": Light Rain, 54 °F")
    text = pdf_text(filled)
    assert (f"(e) Weather at the time Observed by the inspector: {SEEN} Station (Later Publisher Field): "
            "Light Rain, 54 °F") in text
    db.session.remove()
    verified = runner.invoke(args=["audit", "verify"])
    assert verified.exit_code == 0, verified.output


def test_the_observed_weather_is_kept_with_the_draft_and_refused_when_too_long(app_meteostat, permit_at, make,
                                                                               signed_in):
    inspector = make.user("inspector")
    browser = signed_in(inspector)
    draft = start(browser, permit_at("observed_pending", inspectors=[inspector]), "erosion_control")
    page = browser.get(f"/inspections/{draft.id}").text
    assert re.search(r'<input id="observed_weather" name="observed_weather" form="report-form"', page)

    assert browser.post(f"/inspections/{draft.id}", {"observed_weather": SEEN}).status_code in (200, 303)
    assert reread(draft).observed_weather == SEEN
    assert f'value="{SEEN}"' in browser.get(f"/inspections/{draft.id}").text

    refused = browser.post(f"/inspections/{draft.id}", {"observed_weather": "x" * 301})
    assert refused.status_code == 422
    assert error_beside(refused.text, "observed_weather") == "Keep this under 300 characters."
    assert reread(draft).observed_weather == SEEN
