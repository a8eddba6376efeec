"""WCAG 2.1 A and AA, checked by axe-core in a real headless Chromium on the pages each role uses, as they see
them on a 1024×768 touch tablet, one browser context per role: the inspector's (login, permits, My day, a permit,
its photos, a new report with a photo's markup dialog open, the same report refused with its error summary, the
submitted report, the outbox with kept posts, the offline pages), the agent's (the dashboard, a permit under a
stop-work order, the order with its lift form) and the permit holder's (home, the O&M certification to sign and
the signed one). Folded parts are opened first, as a user opens them: axe does not check what is hidden.

axe-core is vendored under tests/vendor/axe-core (nothing is downloaded at test time) and put into each page with
`page.evaluate`, which the page's Content-Security-Policy does not govern (a script tag of it would be refused)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from inspect_app.certifications.models import OMCertification, ResponsibleParty
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction
from inspect_app.permits import services as permits
from inspect_app.rules.calendar import add_months
from inspect_app.types import utcnow
from tests.offline.offline_helpers import (add_finding, answer_checklist, draw_signature, jpeg, keep_post,
                                           photo_file, wait_for_form, observe_weather)

pytestmark = pytest.mark.browser

AXE_SOURCE = (Path(__file__).parents[1] / "vendor" / "axe-core" / "axe.min.js").read_text(encoding="utf-8")
WCAG_21_A_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
TABLET = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}
TARGETS_SHOWN = 3


def axe_violations(page) -> list[dict]:
    """axe-core's WCAG 2.1 A/AA violations on the page as it is now."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_SOURCE)
    return page.evaluate("""tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})
        .then(results => results.violations.map(v => ({
          id: v.id, impact: v.impact, help: v.help,
          targets: v.nodes.map(node => node.target.join(' '))})))""", WCAG_21_A_AA)


class Audit:
    """The violations of every page checked in one test, reported together so that one run shows them all."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.checked: list[str] = []

    def visit(self, page, url: str, name: str) -> None:
        """Open `url` and check it."""
        response = page.goto(url)
        assert response.ok, f"{name}: {url} answered {response.status}"
        self.check(page, name)

    def check(self, page, name: str) -> None:
        """Check the page as it is, with its folded parts opened as a user opens them (axe skips what is hidden)."""
        page.wait_for_load_state()
        page.evaluate("() => document.querySelectorAll('details').forEach(details => { details.open = true; })")
        self.checked.append(name)
        for violation in axe_violations(page):
            targets = violation["targets"]
            more = f" (and {len(targets) - TARGETS_SHOWN} more)" if len(targets) > TARGETS_SHOWN else ""
            self.found.append(f"{name}: {violation['id']} [{violation['impact']}] {violation['help']} — "
                              f"{', '.join(targets[:TARGETS_SHOWN])}{more}")

    def assert_clean(self) -> None:
        """Fail with every violation found (rule, impact, what it asks and where), one a line."""
        if self.found:
            pytest.fail(f"axe-core found {len(self.found)} WCAG 2.1 A/AA violation(s) on the {len(self.checked)} "
                        f"pages checked:\n" + "\n".join(self.found), pytrace=False)


@pytest.fixture
def tablet(browser):
    """`tablet()` opens a page in a browser context of its own, a 1024×768 touch tablet; closed after the test."""
    contexts = []

    def open_page():
        contexts.append(browser.new_context(**TABLET))
        return contexts[-1].new_page()

    yield open_page
    for context in contexts:
        context.close()


def test_the_inspector_s_pages_meet_wcag_2_1_aa(make, live_server, tablet, sign_in):
    inspector, owner = make.user("inspector"), make.user("permittee")
    today = utcnow().date()
    permit = make.permit(owner=owner, inspectors=[inspector], areas=["Lot 1 pad"],
                         construction_started_on=today - dt.timedelta(days=12),
                         issued_on=today - dt.timedelta(days=40))
    permits.add_structure(None, permit, name="Silt fence SF-1", kind="bmp", is_underground=False)
    db.session.commit()
    make.photo(permit)
    page, audit, site = tablet(), Audit(), live_server.url

    audit.visit(page, f"{site}/login", "login")
    sign_in(page, inspector)
    audit.visit(page, f"{site}/permits/", "permits list")
    audit.visit(page, f"{site}/dashboard/my-day", "My day")
    expect(page.locator(".my-day").get_by_role("button", name="Start").first).to_be_visible()  # one overdue
    audit.visit(page, f"{site}/permits/{permit.id}", "permit page")
    audit.visit(page, f"{site}/permits/{permit.id}/photos", "photos")

    # A new report: a photo chosen, with its thumbnail, and the markup dialog open over the form.
    audit.visit(page, f"{site}/permits/{permit.id}/inspections/new/erosion_control", "new erosion-control report")
    wait_for_form(page)
    page.set_input_files("#photos", [photo_file("site.jpg", jpeg(7))])
    page.locator("[data-photo-previews] [data-markup]").click()
    page.wait_for_function("() => document.querySelector('#photo-markup-dialog img').naturalWidth > 0")
    audit.check(page, "photo markup dialog on the report")
    page.locator("#photo-markup-dialog button[value=cancel]").click()
    page.set_input_files("#photos", [])
    # One item answered No (its note and fix open), a finding added, submitted unfinished: the error summary and
    # each item's message. Then finished, signed and submitted.
    page.locator("label[for=answer-perimeter_controls-site-no]").tap()
    add_finding(page, "Sediment at the construction entrance", action="Sweep the entrance and add stone")
    page.click("#submit-report")
    expect(page.locator("#error-summary")).to_be_focused()
    audit.check(page, "new erosion-control report, refused")
    answer_checklist(page)
    page.check("#evaluation-violations")
    page.fill("#corrective_steps", "Sweep the entrance by tomorrow evening.")
    observe_weather(page)  # (e) the station's weather is pending
    draw_signature(page)
    page.click("#submit-report")
    expect(page.locator("#report-status")).to_contain_text("Submitted")
    audit.check(page, "submitted report")

    # The outbox with two posts kept on the device: one the server refused, one kept before posts named their
    # author (it waits to be claimed). Then the pages of offline work.
    form_url = f"/permits/{permit.id}/inspections/new/erosion_control"
    refused = keep_post(page, form_url, {"posted_by": inspector.id})
    page.evaluate("id => FormStore.get(id).then(post => FormStore.put({...post, state: 'refused'}))", refused)
    keep_post(page, form_url, {"note": "kept by an older release"})
    page.goto(f"{site}/outbox")
    expect(page.locator(f"#item-{refused} [data-correct]")).to_be_visible()
    expect(page.locator("#claim-all")).to_be_visible()
    audit.check(page, "outbox")
    audit.visit(page, f"{site}/offline/", "available offline")
    audit.visit(page, f"{site}/offline", "offline")
    audit.assert_clean()


def test_the_agent_s_pages_meet_wcag_2_1_aa(make, signed_in, live_server, tablet, sign_in):
    agent, owner, inspector = make.user("agent"), make.user("permittee"), make.user("inspector")
    today = utcnow().date()
    permit = make.permit(owner=owner, inspectors=[inspector], construction_started_on=today - dt.timedelta(days=30),
                         issued_on=today - dt.timedelta(days=60))
    make.permit(construction_started_on=today - dt.timedelta(days=3), issued_on=today - dt.timedelta(days=20))
    found = utcnow() - dt.timedelta(days=2)
    report = make.inspection(permit, evaluation="violations", performed_at=found)
    finding = make.finding(permit, report, description="Silt fence down along the east line")
    issued = signed_in(agent).post(f"/permits/{permit.id}/stop-work/new", {
        "reason": "Sediment leaving the site into Longmeadow Brook.", "finding_ids": [finding.id],
        "inspection_id": report.id})
    assert issued.status_code == 303, issued.text
    db.session.add(CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="routine_maintenance",
                                    description="Re-trench and re-stake the silt fence", owner_name="Site contractor",
                                    discovered_at=found, due_at=found + dt.timedelta(days=7)))
    db.session.commit()
    make.photo(permit, caption="East line re-trenched")
    order = db.session.scalar(select(StopWorkOrder).where(StopWorkOrder.permit_id == permit.id))
    page, audit, site = tablet(), Audit(), live_server.url

    sign_in(page, agent)
    audit.visit(page, f"{site}/dashboard/", "dashboard")
    audit.visit(page, f"{site}/permits/{permit.id}", "permit page under a stop-work order")
    audit.visit(page, f"{site}/permits/{permit.id}/stop-work/{order.id}", "stop-work order")
    audit.assert_clean()


def test_the_permit_holder_s_pages_meet_wcag_2_1_aa(make, signed_in, live_server, tablet, sign_in):
    owner = make.user("permittee", name="Pat Owner")
    today = utcnow().date()
    make.permit(owner=owner, construction_started_on=today - dt.timedelta(weeks=6),
                issued_on=today - dt.timedelta(weeks=10))
    completed_on = add_months(today, -12) - dt.timedelta(days=10)
    done = make.permit(owner=owner, structures=["Forebay F-1"],
                       construction_started_on=completed_on - dt.timedelta(days=200),
                       issued_on=completed_on - dt.timedelta(days=300))
    forebay = done.structures[0]
    forebay.maintenance_task, forebay.maintenance_interval_months = "Remove sediment from the forebay", 12
    done.status, done.completed_on = "completed", completed_on
    # §380-14 A(3): the plan binds the owner from the certificate of completion
    db.session.add(ResponsibleParty(permit_id=done.id, user_id=owner.id, name=owner.name, role="owner",
                                    email=owner.email, starts_on=completed_on))
    db.session.commit()
    page, audit, site = tablet(), Audit(), live_server.url

    sign_in(page, owner)
    audit.visit(page, f"{site}/my-permits", "permit holder's home")
    audit.visit(page, f"{site}/permits/{done.id}/om/certify", "O&M certification to sign")
    signed = signed_in(owner).post(f"/permits/{done.id}/om/certify", {"cert-agree": "y", "cert-without_entries": "y"})
    assert signed.status_code == 303, signed.text
    cert = db.session.scalar(select(OMCertification).where(OMCertification.permit_id == done.id))
    audit.visit(page, f"{site}/permits/{done.id}/om/certifications/{cert.id}", "O&M certification signed")
    audit.assert_clean()
