"""A form answered in place (htmx swaps its section for the server's answer) leaves the page where it was on a
tablet. The browser's scroll anchoring held on to the old section while the new one was put in before it, and
the page jumped a section's height down, to its foot, after every area added or notice sent."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def _top(page, selector: str) -> float:
    return page.evaluate(f"document.querySelector({selector!r}).getBoundingClientRect().top")


def test_adding_an_area_keeps_the_page_where_it_was(browser, live_server, sign_in, make):
    agent = make.user("agent")
    permit = make.permit(areas=[f"Lot {n} pad" for n in range(6)])
    context = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True)
    page = sign_in(context.new_page(), agent)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    page.evaluate("document.querySelector('#area-name').scrollIntoView({block: 'start'})")
    scrolled = page.evaluate("window.scrollY")
    assert scrolled > 0
    page.fill("#area-name", "Lot 9 pad")
    page.fill("#area-acres", "0.5")
    page.locator("#areas button[type=submit]:has-text('Add area')").tap()
    page.wait_for_selector("#areas td:has-text('Lot 9 pad')")
    page.wait_for_timeout(300)
    # The page did not move: the row added stands above the form, still in view, as the agent left it.
    assert page.evaluate("window.scrollY") == scrolled
    assert 0 <= _top(page, "#area-name") < 768
    context.close()
