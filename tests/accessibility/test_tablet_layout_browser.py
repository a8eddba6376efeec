"""What a 1024×768 touch tablet shows of pages the axe pass does not open, as its user meets them: nothing wider than
the screen, a message that does not break its page's structure, tap targets a finger can hit, a heading to start
from (the set-up of test_axe_browser.py: Debian's Chromium, axe-core vendored)."""
from __future__ import annotations

import datetime as dt

import pytest
from playwright.sync_api import expect

from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail
from inspect_app.types import utcnow
from tests.accessibility.test_axe_browser import TABLET, axe_violations
from tests.offline.offline_helpers import wait_for_form

pytestmark = pytest.mark.browser

WIDTH = "() => document.documentElement.scrollWidth"


@pytest.fixture
def tablet(browser):
    context = browser.new_context(**TABLET)
    yield context.new_page()
    context.close()


def _started_permit(make, **people):
    today = utcnow().date()
    return make.permit(construction_started_on=today - dt.timedelta(days=12), issued_on=today - dt.timedelta(days=40),
                       **people)


def test_a_message_on_the_sign_in_page_keeps_the_page_free_of_serious_violations(live_server, tablet):
    """A flash was a list item whose role (status) took the item's place: axe's "list" rule, serious."""
    tablet.goto(f"{live_server.url}/account/password")  # not signed in: sent to sign in, with a message
    expect(tablet.locator(".flashes [role=status]")).to_have_count(1)
    serious = [v["id"] for v in axe_violations(tablet) if v["impact"] in ("serious", "critical")]
    assert serious == []


def test_the_new_report_does_not_scroll_sideways(make, live_server, tablet, sign_in):
    """Each checklist item's hidden photo input took the full width of a file input (a rule more specific than
    .visually-hidden), so the form was 1,065 px wide and the page panned under a finger."""
    inspector = make.user("inspector")
    permit = _started_permit(make, inspectors=[inspector])
    sign_in(tablet, inspector)
    tablet.goto(f"{live_server.url}/permits/{permit.id}/inspections/new/erosion_control")
    wait_for_form(tablet)
    assert tablet.evaluate(WIDTH) <= 1024


def test_the_sent_mail_page_wraps_each_message_to_the_screen(make, live_server, tablet, sign_in):
    admin = make.user("admin")
    permit = make.permit()
    db.session.add(OutboundEmail(to=["owner@example.org"], subject="Stop-work order", permit_id=permit.id,
                                 body="A stop-work order has been issued. " * 12 + "\n\nPermit " + permit.number))
    db.session.commit()
    sign_in(tablet, admin)
    tablet.goto(f"{live_server.url}/mail/")
    expect(tablet.locator("pre.mail-body")).to_contain_text("Permit " + permit.number)
    assert tablet.evaluate(WIDTH) <= 1024


def test_the_maps_and_the_permit_pages_own_links_are_tap_targets(make, live_server, tablet, sign_in):
    """Leaflet's zoom buttons are 30 px; the permit page's Timeline, Waivers and Frozen conditions links and the
    dashboard's permit numbers were a line of text high (21-24 px). The app's own size is 48 px."""
    agent = make.user("agent")
    permit = _started_permit(make)
    sign_in(tablet, agent)
    small = []
    for url in (f"/permits/{permit.id}", "/dashboard/", "/dashboard/map"):
        tablet.goto(f"{live_server.url}{url}")
        tablet.wait_for_load_state("networkidle")
        small += [f"{url}: {s}" for s in tablet.evaluate("""() => [...document.querySelectorAll(
            '.leaflet-control-zoom a, #permit-timeline a, #waivers a, #conditions a, main .card h3 a')]
            .filter(a => a.offsetParent).map(a => [a.textContent.trim().slice(0, 30), a.getBoundingClientRect()])
            .filter(([, r]) => r.width < 44 || r.height < 44).map(([t, r]) => `${t} ${Math.round(r.width)}x${Math.round(r.height)}`)""")]
    assert small == []


def test_the_rainfall_page_has_a_main_heading(make, live_server, tablet, sign_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    sign_in(tablet, inspector)
    tablet.goto(f"{live_server.url}/permits/{permit.id}/rainfall")
    expect(tablet.locator("main h1")).to_contain_text(f"Rainfall at permit {permit.number}")
