"""An erosion-control inspection on a tablet, in a real headless Chromium: start with the device's GPS,
answer the checklist, add a finding in-page, sign with a finger (pointer events) and submit."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.inspections.models import Finding, Inspection
from inspect_app.permits import services as permits
from tests.inspections.report_helpers import OBSERVED_WEATHER

pytestmark = pytest.mark.browser


def test_an_erosion_control_inspection_is_filled_signed_and_submitted(make, live_server, page, sign_in):
    inspector = make.user("inspector")
    make.user("agent")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"], construction_started_on=dt.date(2026, 6, 15))
    permits.add_structure(None, permit, name="Silt fence, north edge", kind="bmp", is_underground=False)
    db.session.commit()
    page.context.grant_permissions(["geolocation"], origin=live_server.url)
    page.context.set_geolocation({"latitude": 42.050712, "longitude": -72.582934})

    sign_in(page, inspector)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    page.click("button[data-start=erosion_control]")
    page.wait_for_selector("h1:has-text('Erosion control inspection')")
    page.wait_for_load_state()  # its scripts have run: the signature pad and "Add a finding" answer
    assert "device GPS" in page.inner_text("#fact-location")

    # A finding, a repeatable part of the report form (posted with it, online or from the outbox).
    page.click("#add-new-finding")
    finding = page.locator("[data-list-of=finding-template] [data-part]").last
    finding.locator("textarea[name$=-description]").first.fill("Sediment at the construction entrance")
    finding.locator("input[name$=-location]").fill("Main gate")

    # Submitting too early names what is missing beside it, and keeps the finding typed in the form.
    page.click("#submit-report")
    page.wait_for_selector("#evaluation-error")
    assert "Evaluation is required" in page.inner_text("#evaluation-error")
    assert "Sign the report" in page.inner_text("#signature-error")
    # The weather service is unreachable: (e) is pending, so the inspector's observation is asked for.
    assert "write the weather you observed on site" in page.inner_text("#observed_weather-error")
    assert page.locator("[data-list-of=finding-template] textarea[name$=-description]").first.input_value() \
        == "Sediment at the construction entrance"

    for radio in page.locator("#checklist input[type=radio][value=yes]").all():
        radio.check()
    page.check("#evaluation-compliant")
    page.fill("#observed_weather", OBSERVED_WEATHER)
    pad = page.locator("#signature-canvas")
    pad.scroll_into_view_if_needed()
    box = pad.bounding_box()
    page.mouse.move(box["x"] + 30, box["y"] + 120)
    page.mouse.down()
    for x, y in ((90, 60), (150, 130), (220, 50), (300, 120)):
        page.mouse.move(box["x"] + x, box["y"] + y, steps=5)
    page.mouse.up()
    assert page.input_value("input[name=signature]").startswith("data:image/png;base64,")

    page.click("#submit-report")
    page.wait_for_selector("#report-status:has-text('Submitted')")
    assert "Sediment at the construction entrance" in page.inner_text("#findings")
    # Loaded (a broken image is complete too, with no width): the signature shows, not a broken picture.
    page.wait_for_function("() => document.querySelector('#signature-image').complete")
    assert page.evaluate("document.querySelector('#signature-image').naturalWidth") > 0

    db.session.expire_all()
    report = db.session.scalar(select(Inspection).where(Inspection.permit_id == permit.id))
    assert (report.status, report.location_source, report.evaluation) == ("submitted", "device", "compliant")
    assert report.latitude == pytest.approx(42.050712) and report.signature_sha256
    assert db.session.scalar(select(Finding.description)) == "Sediment at the construction entrance"
