"""The report form as an inspector sees it on a 1024x768 touch tablet, in a real headless Chromium: one tap per
answer, the note only where an answer needs one, errors that name their item and take you to it, sections with
their progress, "All compliant" and its Undo (offline too, through the outbox, with a point of discharge added in
place and a fix filled in with its day and the permittee), busy buttons, "Saved 09:41", and the submitted
report's PDF."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from playwright.sync_api import expect

from inspect_app.extensions import db
from inspect_app.inspections import services as inspections
from inspect_app.inspections.models import Inspection
from inspect_app.permits import services as permits
from inspect_app.types import LOCAL_TZ
from tests.inspections.report_helpers import OBSERVED_WEATHER
from tests.offline.offline_helpers import (device_id, draw_signature, hold_permits, new_report_url,
                                           observe_weather, sign_in_controlled, submit, wait_for_form,
                                           wait_for_outbox)

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


def watch_busy(page, selector: str) -> None:
    """Keep what `selector` (a button) says and whether it is disabled, whenever it changes, in the tab's
    sessionStorage: the page that posts is gone when the test looks."""
    page.evaluate("""selector => {
      const button = document.querySelector(selector);
      new MutationObserver(() => sessionStorage.setItem('busy', `${button.textContent}|${button.disabled}`))
        .observe(button, { childList: true, characterData: true, subtree: true, attributes: true });
    }""", selector)


def test_progress_all_compliant_and_undo_saved_folded_and_the_submitted_pdf(silt_fence, live_server, page,
                                                                             sign_in):
    inspector, permit, fence = silt_fence
    sign_in(page, inspector)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    watch_busy(page, "button[data-start=erosion_control]")
    page.click("button[data-start=erosion_control]")
    page.wait_for_selector("#report-status:has-text('Draft')")
    assert page.evaluate("sessionStorage.getItem('busy')") == "Starting…|true"
    page.wait_for_load_state()

    progress = page.locator("#section-list [data-progress]")
    total = page.locator("fieldset[data-answer]").count()
    expect(progress).to_have_text(f"0 of {total} answered")
    page.locator("label[for=answer-perimeter_controls-site-no]").tap()
    expect(progress).to_have_text(f"1 of {total} answered")
    expect(page.locator("#item-perimeter_controls [data-section-progress]")).to_have_text("1 of 1")

    # Jump to the first unanswered item: the first item of the checklist.
    first = page.locator("fieldset[data-answer]").first.get_attribute("id")
    page.locator("#section-list a[data-first-unanswered]").tap()
    expect(page.locator(f"#{first}-yes")).to_be_focused()

    # "All compliant" answers Yes to what is unanswered, never the No given; Undo takes back exactly that.
    checklist = page.locator("#checklist")
    checklist.locator("[data-all-compliant]").first.tap()
    expect(progress).to_have_text(f"{total} of {total} answered")
    assert page.is_checked("#answer-perimeter_controls-site-no")
    assert page.is_checked(f"#answer-control_installed-{fence.id}-yes")
    checklist.locator("[data-undo-compliant]").first.tap()
    expect(progress).to_have_text(f"1 of {total} answered")
    assert page.locator("fieldset[data-answer] input:checked").count() == 1
    assert page.is_checked("#answer-perimeter_controls-site-no")
    checklist.locator("[data-all-compliant]").first.tap()
    page.fill("#note-perimeter_controls-site", "Silt fence down along the east line")

    # Save draft: the page says when, and the answered sections come back folded, to reopen with a tap.
    page.click("#save-draft")
    expect(page.locator("#saved")).to_have_text(re.compile(r"^Saved \d\d:\d\d$"))
    expect(progress).to_have_text(f"{total} of {total} answered")
    section = page.locator("#item-control_installed")
    expect(section).not_to_have_attribute("open", "")
    expect(page.locator(f"#answer-control_installed-{fence.id}")).to_be_hidden()
    page.locator("#item-control_installed > summary").tap()
    expect(page.locator(f"#answer-control_installed-{fence.id}")).to_be_visible()

    page.check("#evaluation-violations")
    page.fill("#corrective_steps", "Reset the silt fence along the east line.")
    fix = "fix-perimeter_controls-site"
    if page.locator(f"#{fix}").count():  # the town ties this No to a corrective action: give its fix
        page.fill(f"#{fix}-repair", "Reset and re-trench")
    page.fill("#observed_weather", OBSERVED_WEATHER)  # (e) the station's weather is pending
    draw_signature(page)
    watch_busy(page, "#submit-report")
    page.click("#submit-report")
    page.wait_for_selector("#report-status:has-text('Submitted')")
    assert page.evaluate("sessionStorage.getItem('busy')") == "Submitting…|true"

    # The submitted report links its PDF.
    pdf = page.request.get(live_server.url + page.locator("#report-pdf").get_attribute("href"))
    assert pdf.ok and pdf.headers["content-type"] == "application/pdf" and pdf.body().startswith(b"%PDF")


def test_offline_a_point_added_in_place_a_fix_filled_in_and_all_compliant_go_through_the_outbox(
        silt_fence, server, page, context):
    inspector, permit, fence = silt_fence
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    page.goto(new_report_url(server, permit))
    wait_for_form(page)
    made = device_id(page)

    # A point of discharge added in place, answered at once: its row comes with the button, no save first.
    page.locator("#add-discharge-point").tap()
    point = page.locator("[data-list-of=discharge-template] [data-part]").last
    point.locator("input[name^=discharge-new-]").fill("Swale outlet at Bliss Road")
    point_id = point.get_attribute("data-part").split()[1]
    point.locator(f"label[for='discharge-{point_id}-now-no']").tap()
    point.locator(f"label[for='discharge-{point_id}-since_last-no']").tap()
    # A control not installed: its fix comes filled in with the day and the permittee, both changeable.
    page.locator(f"label[for='answer-control_installed-{fence.id}-no']").tap()
    fix = page.locator(f"#fix-control_installed-{fence.id}")
    today = page.evaluate("document.getElementById('performed_at').value.slice(0, 10)")
    expect(fix.locator("input[name$='-first_observed']")).to_have_value(today)
    expect(fix.locator("input[name$='-owner_name']")).to_have_value(permit.owner_name)
    if fix.get_attribute("open") is None:
        fix.locator("summary").tap()  # its repair and action: one tap opens them
    fix.locator("textarea[name$='-repair']").fill("Re-trench the fence")
    fix.locator("select[name$='-kind']").select_option(index=1)
    page.fill(f"#note-control_installed-{fence.id}", "Fence down at the swale")

    progress = page.locator("#section-list [data-progress]")
    total = page.locator("fieldset[data-answer]").count()
    page.locator("#checklist [data-all-compliant]").first.tap()
    expect(progress).to_have_text(f"{total} of {total} answered")
    page.check("#evaluation-violations")
    page.fill("#corrective_steps", "Re-trench the fence this week")
    observe_weather(page)
    draw_signature(page)
    submit(page)

    context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    wait_for_outbox(page, lambda items: not items)
    db.session.expire_all()
    report = db.session.get(Inspection, made)
    assert report.status == "submitted" and len(report.answers) == total
    assert sorted(a.answer for a in report.answers) == ["no"] + ["yes"] * (total - 1)
    assert report.details["discharge_points"] == [{"id": point_id, "name": "Swale outlet at Bliss Road"}]
    fixed = report.details["fixes"][f"control_installed-{fence.id}"]
    assert (fixed["first_observed"], fixed["owner_name"]) == (today, permit.owner_name)


def test_a_fix_on_a_draft_started_days_ago_is_first_observed_on_the_inspections_day(silt_fence, live_server, page,
                                                                                      sign_in):
    """A No on a draft Start made on the server fills in the day first observed with the inspection's day (CGP 2022
    Part 5.2: the clock runs from discovery), not the tablet's today: the inspection's time is a control of the
    form outside it, which the page did not find, so an inspection finished a day later was first observed that
    day, and on a tablet whose clock was ahead of the town's, an evening's Save was refused as in the future."""
    inspector, permit, fence = silt_fence
    draft = inspections.start_inspection(inspector, permit, "erosion_control", fetch_weather=False)
    draft.performed_at = performed = draft.performed_at - dt.timedelta(days=3)  # started, then left till today
    draft.blank = False
    db.session.commit()
    sign_in(page, inspector)
    page.goto(f"{live_server.url}/inspections/{draft.id}")
    page.wait_for_load_state()
    page.locator(f"label[for='answer-control_installed-{fence.id}-no']").tap()
    day = performed.astimezone(LOCAL_TZ).date().isoformat()
    expect(page.locator(f"#fix-control_installed-{fence.id}-first_observed")).to_have_value(day)
