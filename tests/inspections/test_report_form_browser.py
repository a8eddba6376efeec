"""The report form as an inspector sees it on a 1024x768 touch tablet, in a real headless Chromium: one tap per
answer, the note only where an answer needs one, errors that name their item and take you to it."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from inspect_app.extensions import db
from inspect_app.permits import services as permits

pytestmark = pytest.mark.browser


@pytest.fixture
def browser_context_args(browser_context_args):
    """A tablet in landscape, touched with a finger."""
    return {**browser_context_args, "viewport": {"width": 1024, "height": 768}, "has_touch": True}


@pytest.fixture
def silt_fence(make):
    """An inspector's permit with one control, the silt fence SF-1; the inspector and the permit."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"])
    fence = permits.add_structure(None, permit, name="Silt fence SF-1", kind="bmp", is_underground=False)
    db.session.commit()
    return inspector, permit, fence


def test_an_answer_is_one_tap_and_the_refused_report_names_each_item(silt_fence, live_server, page, sign_in):
    inspector, permit, fence = silt_fence
    sign_in(page, inspector)
    page.goto(f"{live_server.url}/permits/{permit.id}/inspections/new/erosion_control")
    page.wait_for_load_state()

    # Yes / No / N/A / unsafe side by side, each a finger-sized target; no note until an answer needs one.
    installed = f"answer-control_installed-{fence.id}"
    segments = page.locator(f"#{installed} label")
    expect(segments).to_have_text(["Yes", "No", "N/A", "Not inspected: unsafe"])
    boxes = [segments.nth(i).bounding_box() for i in range(4)]
    assert len({round(box["y"]) for box in boxes}) == 1 and min(box["height"] for box in boxes) >= 44
    note = page.locator(f"#note-control_installed-{fence.id}")
    expect(note).to_be_hidden()
    segments.nth(1).tap()  # No
    assert page.is_checked(f"#{installed}-no")
    expect(note).to_be_visible()
    expect(page.locator(f"#fix-control_installed-{fence.id}")).to_be_visible()  # its repair and action
    segments.nth(0).tap()  # Yes after all: nothing typed, so the note goes again
    expect(note).to_be_hidden()

    # Submitted unfinished: the summary names each item and its subject, and takes the focus.
    page.click("#submit-report")
    summary = page.locator("#error-summary")
    expect(summary).to_be_focused()
    maintained = f"answer-control_maintained-{fence.id}"
    link = summary.locator(f"a[href='#{maintained}']")
    expect(link).to_have_text("Silt fence SF-1 — This control is maintained (repaired, cleaned out, "
                              "sediment…: answer yes, no or n/a.")
    expect(summary.locator("a[href='#answer-perimeter_controls-site']")).to_contain_text("Site — Perimeter controls")
    assert f"#{installed}" not in [a.get_attribute("href") for a in summary.locator("a").all()]  # answered
    link.tap()
    expect(page.locator(f"#{maintained}-yes")).to_be_focused()
    expect(page.locator(f"#{maintained}")).to_be_in_viewport()
    expect(page.locator(f"#{maintained}-error")).to_contain_text("Silt fence SF-1 — This control is maintained")
