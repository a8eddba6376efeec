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


IN_VIEW = """(el) => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }"""


def test_a_refused_form_low_on_its_page_comes_back_with_its_error_in_view_and_its_field_focused(
        make, live_server, tablet, sign_in):
    """The lift form is low on the order's page; a boosted answer starts at the top, so the agent tapped Lift and
    saw the order's reasons again, the refusal far below and the focus nowhere. The refused field takes the focus,
    and the page goes to it."""
    from inspect_app.enforcement import services as enforcement

    agent = make.user("agent")
    permit = _started_permit(make, owner=make.user("permittee"))
    order = enforcement.issue_stop_work(make.user("agent"), permit, "Sediment leaving the site into the brook.")
    db.session.commit()
    sign_in(tablet, agent)
    tablet.goto(f"{live_server.url}/permits/{permit.id}/stop-work/{order.id}")
    button = tablet.get_by_role("button", name="Lift the stop-work order")
    button.scroll_into_view_if_needed()
    button.tap()  # no reason given
    reason = tablet.locator("#reason")
    expect(reason).to_be_focused()
    assert reason.evaluate(IN_VIEW)
    expect(tablet.locator("#reason-error")).to_contain_text("Say why the order is lifted.")


def test_a_close_out_refused_in_place_gives_the_focus_to_its_field(make, live_server, tablet, sign_in):
    """A form htmx redraws in place (the report's findings) lost the focus to the page with its refusal."""
    from inspect_app.inspections.models import CorrectiveAction

    inspector = make.user("inspector")
    permit = _started_permit(make, inspectors=[inspector], owner=make.user("permittee"))
    found = utcnow() - dt.timedelta(days=2)
    report = make.inspection(permit, evaluation="violations", performed_at=found, inspector=inspector,
                             latitude=permit.latitude, longitude=permit.longitude, location_source="permit")
    finding = make.finding(permit, report, description="Silt fence down along the east line")
    action = CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="routine_maintenance",
                              description="Re-trench the silt fence", owner_name="Site contractor",
                              discovered_at=found, due_at=found + dt.timedelta(days=7), status="open")
    db.session.add(action)
    db.session.commit()
    sign_in(tablet, inspector)
    tablet.goto(f"{live_server.url}/inspections/{report.id}")
    tablet.locator(f"#action-{action.id} form").get_by_role("button", name="Record it done").tap()  # no time: refused
    expect(tablet.locator(f"#close-{action.id}-completed_at")).to_be_focused()


def test_a_conflict_is_explained_in_the_servers_words_beside_what_was_tapped(make, live_server, tablet, sign_in):
    """A 409 (the record moved on since the page was opened) was Werkzeug's bare page, which the tablet could not
    quote: it said "Not done: the server answered 409." Now the page gives the reason, and the note beside the
    button quotes it."""
    from inspect_app.inspections.models import CorrectiveAction, Finding

    agent, inspector = make.user("agent"), make.user("inspector")
    permit = _started_permit(make, inspectors=[inspector], owner=make.user("permittee"))
    found = utcnow() - dt.timedelta(days=2)
    report = make.inspection(permit, evaluation="violations", performed_at=found, inspector=inspector,
                             latitude=permit.latitude, longitude=permit.longitude, location_source="permit")
    finding = make.finding(permit, report, description="Silt fence down along the east line")
    db.session.add(CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="routine_maintenance",
                                    description="Re-trench the silt fence", owner_name="Site contractor",
                                    discovered_at=found, due_at=found + dt.timedelta(days=7), status="completed",
                                    completed_at=found + dt.timedelta(hours=3)))
    db.session.commit()
    sign_in(tablet, agent)
    tablet.goto(f"{live_server.url}/inspections/{report.id}")
    tablet.locator(f"#finding-{finding.id} summary", has_text="Send back to the field").tap()
    tablet.locator(f"#return-{finding.id}-comment").fill("Re-stake it")
    db.session.get(Finding, finding.id).status = "corrected"  # meanwhile, in another tab
    db.session.commit()
    with tablet.expect_response(lambda r: r.url.endswith("/return")) as answer:
        tablet.get_by_role("button", name="Send back", exact=True).tap()
    assert answer.value.status == 409
    expect(tablet.locator("[data-refused-note]")).to_contain_text("Nothing was changed: This finding")


def test_each_waiver_reason_on_the_completion_page_says_which_inspection_it_waives(make, live_server, tablet,
                                                                                    sign_in):
    """Five to seven text boxes were each named "Reason for the waiver": a screen reader could not tell them apart."""
    agent = make.user("agent")
    permit = make.permit(structures=["Pipe P-1"], construction_started_on=utcnow().date() - dt.timedelta(days=30),
                         issued_on=utcnow().date() - dt.timedelta(days=60))
    sign_in(tablet, agent)
    tablet.goto(f"{live_server.url}/permits/{permit.id}/completion/")
    names = tablet.evaluate("""() => [...document.querySelectorAll('#waivers textarea')]
        .map(t => [...t.labels].map(l => l.textContent.trim()).join(' '))""")
    assert len(names) > 1 and len(set(names)) == len(names)
    assert all(name.startswith("Reason for the waiver of ") for name in names)


def test_changing_a_dashboard_filter_keeps_the_focus_on_the_filter_and_the_page_where_it_is(make, live_server, tablet,
                                                                                            sign_in):
    """A permit the schedule cannot read is said in red on the dashboard (no refusal of anything): after a filter
    change the focus went to it, and the page scrolled away from the filter being used. Only a refusal takes it."""
    from inspect_app.schedule.models import PermitScheduleProblem

    agent = make.user("agent")
    permit = _started_permit(make)
    db.session.merge(PermitScheduleProblem(permit_id=permit.id, problem="The record cannot be evaluated: test."))
    db.session.commit()
    sign_in(tablet, agent)
    tablet.goto(f"{live_server.url}/dashboard/")
    tablet.wait_for_selector("#obligations .field-error")
    assert tablet.evaluate("document.activeElement === document.body")  # nothing taken as the page loads
    tablet.focus("select[name=kind]")
    with tablet.expect_response(lambda r: "/dashboard/" in r.url and r.request.headers.get("hx-request")):
        tablet.select_option("select[name=kind]", index=1)
    tablet.wait_for_timeout(300)  # htmx settles, then the refusal's check runs
    assert tablet.evaluate("document.activeElement.name") == "kind"
