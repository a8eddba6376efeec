"""Lifting a stop-work order with two corrective actions, on a 1024×768 touch tablet in a real headless Chromium:
one page, each action verified with its photo chosen by thumbnail, in at most 8 taps (issue: the agent)."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction

from tests.enforcement.test_stop_work import _issue, _order, _with_actions, site  # noqa: F401 (site: a fixture)

pytestmark = pytest.mark.browser


def test_an_order_with_two_corrective_actions_is_lifted_in_at_most_8_taps(site, make, live_server, browser, sign_in,
                                                                          signed_in):
    _issue(signed_in(site["agent"]), site)
    permit, order = site["permit"], _order(site["permit"])
    fence, bag = _with_actions(site)
    east, cb2 = make.photo(permit, caption="East line re-trenched"), make.photo(permit, caption="CB-2 new bag")
    context = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True)
    page = context.new_page()
    sign_in(page, site["agent"])
    page.goto(f"{live_server.url}/permits/{permit.id}/stop-work/{order.id}")
    taps = 0

    def tap(locator) -> None:
        nonlocal taps
        locator.scroll_into_view_if_needed()
        locator.tap()
        taps += 1

    for action, photo in ((fence, east), (bag, cb2)):
        tap(page.locator(f"label[for='verified-{action.id}']"))
        tap(page.locator(f".lift-action[data-action='{action.id}'] label.thumb", has=page.locator(
            f"input[value='{photo.id}']")))
    tap(page.locator("#reason"))
    page.keyboard.type("Both repairs seen done on site.")
    tap(page.locator("label[for='approves_work']"))
    tap(page.get_by_role("button", name="Lift the stop-work order"))
    page.wait_for_url(re.compile(rf"/stop-work/{order.id}$"))
    expect(page.locator("h1")).to_contain_text("Lifted")
    assert taps <= 8, taps
    db.session.expire_all()
    assert [db.session.get(CorrectiveAction, a.id).evidence_photo_id for a in (fence, bag)] == [east.id, cb2.id]
    context.close()
