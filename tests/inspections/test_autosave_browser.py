"""Save as you go, in a real headless Chromium on a 1024x768 touch tablet (issue 31): a draft reaches the server a
moment after each change, with "Saved 09:41" by the title; with no network it stays on the device and says so, with
nothing put in the outbox; a new finding is made once, by Save draft, however many background saves came before."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, Finding, Inspection
from tests.offline.offline_helpers import add_finding, outbox, sign_in_controlled, wait_until

pytestmark = pytest.mark.browser

SAVED = re.compile(r"^Saved \d\d:\d\d$")
ON_DEVICE = re.compile(r"^On this device \d\d:\d\d$")


@pytest.fixture
def browser_context_args(browser_context_args):
    """A tablet in landscape, touched with a finger."""
    return {**browser_context_args, "viewport": {"width": 1024, "height": 768}, "has_touch": True}


def answer(page, item: str, value: str) -> None:
    """Tap an answer of an item of the site (its section opened first, as a finger does)."""
    fieldset = page.locator(f"#answer-{item}-site")
    section = fieldset.locator("xpath=ancestor::details[1]")
    if section.count() and section.get_attribute("open") is None:
        section.locator(":scope > summary").tap()
    fieldset.locator(f"label[for='answer-{item}-site-{value}']").tap()


def stored_answers(draft_id: str) -> dict[str, str]:
    db.session.expire_all()
    return {a.item_key: a.answer for a in db.session.scalars(
        select(ChecklistAnswer).where(ChecklistAnswer.inspection_id == draft_id))}


def test_a_draft_is_saved_as_the_inspector_goes_online_and_kept_on_the_device_offline(
        make, live_server, page, weather_offline):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    db.session.commit()
    sign_in_controlled(page, live_server, inspector)
    background = []
    page.on("request", lambda r: background.append(r.url) if r.headers.get("x-autosave") else None)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    page.locator("#start-inspection button[data-start=erosion_control]").tap()
    page.wait_for_url(re.compile(r"/inspections/[0-9a-f-]{36}$"))
    draft_id = page.url.rsplit("/", 1)[-1]
    assert db.session.get(Inspection, draft_id).is_blank  # a tap on Start: nothing kept yet

    answer(page, "perimeter_controls", "no")
    page.locator("#note-perimeter_controls-site").fill("Gap at the gate.")

    expect(page.locator("#saved")).to_have_text(SAVED, timeout=15_000)
    assert wait_until(page, lambda: stored_answers(draft_id).get("perimeter_controls") == "no", "not saved")
    assert not db.session.get(Inspection, draft_id).is_blank
    # A change that changes nothing (the same note typed again) sends nothing: each save is an audit entry.
    page.wait_for_timeout(3_000)  # the last background save has gone
    sent = len(background)
    note = page.locator("#note-perimeter_controls-site")
    note.fill("Gap at the gate!")
    note.fill("Gap at the gate.")
    page.wait_for_timeout(4_000)
    assert len(background) == sent

    # A new finding typed: background saves go on, but the finding is made by Save draft alone, once.
    sent = len(background)
    add_finding(page, "Silt fence down along the east line")
    page.locator("#note-perimeter_controls-site").fill("Gap at the gate, 3 ft.")  # and a change that is sent
    wait_until(page, lambda: len(background) > sent, "no background save after the finding was typed")
    expect(page.locator("#saved")).to_have_text(SAVED, timeout=15_000)
    db.session.expire_all()
    assert db.session.scalar(select(func.count()).select_from(Finding)
                             .where(Finding.inspection_id == draft_id)) == 0
    with page.expect_navigation():  # the page comes back from the server (it is at the same address)
        page.locator("#save-draft").tap()
    expect(page.locator("#saved")).to_have_text(SAVED)

    def findings() -> int:
        db.session.expire_all()
        return db.session.scalar(select(func.count()).select_from(Finding).where(Finding.inspection_id == draft_id))
    wait_until(page, lambda: findings() == 1, "Save draft did not keep the finding")
    page.wait_for_timeout(3_000)  # a background save after it makes none more
    assert findings() == 1

    # No network: the change stays on the device, the pill says so, and nothing waits in the outbox.
    page.context.set_offline(True)
    answer(page, "slopes_protected", "yes")
    expect(page.locator("#saved")).to_have_text(ON_DEVICE, timeout=15_000)
    assert outbox(page) == []
    assert "slopes_protected" not in stored_answers(draft_id)
    # Back online: the next change brings it all.
    page.context.set_offline(False)
    answer(page, "perimeter_controls", "yes")
    expect(page.locator("#saved")).to_have_text(SAVED, timeout=15_000)
    assert wait_until(page, lambda: stored_answers(draft_id).get("slopes_protected") == "yes", "not sent after")
    assert stored_answers(draft_id)["perimeter_controls"] == "yes"


def test_the_same_draft_in_two_tabs_never_says_saved_over_the_other_tabs_save(make, live_server, page, weather_offline):
    """Tab 2, opened before tab 1 saved the notes, saved its whole form in the background and said "Saved": the notes
    were gone. Now its save is refused and its pill says why; the notes stay."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    sign_in_controlled(page, live_server, inspector)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    page.locator("#start-inspection button[data-start=erosion_control]").tap()
    page.wait_for_url(re.compile(r"/inspections/[0-9a-f-]{36}$"))
    draft_id = page.url.rsplit("/", 1)[-1]
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector("#report-form[data-autosave]", state="attached")

    page.fill("#notes", "North gate locked; walked in from Williams Street")
    expect(page.locator("#saved")).to_have_text(SAVED, timeout=15_000)
    other.fill("#observed_weather", "Overcast, light drizzle")
    expect(other.locator("#saved")).to_contain_text("Not saved: this draft was saved from another tab or device",
                                                    timeout=15_000)
    expect(other.locator("#saved")).to_have_class(re.compile(r"\bpill-overdue\b"))  # a warning, not a check mark
    db.session.expire_all()
    stored = db.session.get(Inspection, draft_id)
    assert stored.notes.startswith("North gate") and not stored.observed_weather
    page.fill("#notes", "North gate locked; walked in from Williams Street. Site quiet.")  # tab 1 goes on saving
    expect(page.locator("#saved")).to_have_text(SAVED, timeout=15_000)
    assert wait_until(page, lambda: (db.session.expire_all(), db.session.get(Inspection, draft_id).notes)[1]
                      .endswith("Site quiet."), "tab 1 stopped saving")

    # Tab 2 reloaded, as its pill says: the notes are tab 1's, its own typing (the weather) is put back, and its
    # next save keeps both. (The device kept what differed from what tab 2 showed, not its stale copy of the rest.)
    other.reload()
    other.wait_for_selector("#report-form[data-autosave]", state="attached")
    expect(other.locator("#notes")).to_have_value("North gate locked; walked in from Williams Street. Site quiet.")
    expect(other.locator("#observed_weather")).to_have_value("Overcast, light drizzle")
    other.fill("#observed_weather", "Overcast, light drizzle, 48 F")
    expect(other.locator("#saved")).to_have_text(SAVED, timeout=15_000)
    db.session.expire_all()
    stored = db.session.get(Inspection, draft_id)
    assert stored.notes.endswith("Site quiet.") and stored.observed_weather == "Overcast, light drizzle, 48 F"
