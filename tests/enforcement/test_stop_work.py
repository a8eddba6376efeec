"""Stop-work orders through the pages: issue, acknowledge, lift (§380-16 C(4)(e)[5], §380-19)."""
from __future__ import annotations

import datetime as dt
import io
import re
from decimal import Decimal

import pytest
from pypdf import PdfReader
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.completion.models import FinalSubmission
from inspect_app.enforcement import services
from inspect_app.enforcement.models import NoticeOfViolation, StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.mail.models import OutboundEmail
from inspect_app.permits import services as permits
from inspect_app.types import LOCAL_TZ, utcnow
from tests.inspections.report_helpers import save_with_finding, start, submit


@pytest.fixture
def site(make):
    """An active Longmeadow permit with its owner, an assigned engineer, an agent and two open findings."""
    owner = make.user("permittee")
    engineer = make.user("inspector")
    permit = make.permit(owner=owner, inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    inspection = make.inspection(permit, evaluation="violations", performed_at=utcnow() - dt.timedelta(days=2))
    return {
        "permit": permit, "owner": owner, "engineer": engineer, "agent": make.user("agent"),
        "silt": make.finding(permit, inspection, description="Silt fence down along the east line"),
        "inlet": make.finding(permit, inspection, description="Inlet protection missing at CB-2"),
        "inspection": inspection,
    }


def _issue(browser, site, **data):
    form = {"reason": "Sediment leaving the site into Longmeadow Brook.",
            "finding_ids": [site["silt"].id], "inspection_id": site["inspection"].id} | data
    return browser.post(f"/permits/{site['permit'].id}/stop-work/new", form)


def _actions(permit) -> list[str]:
    """The permit's audit actions in order, but the freezing of its documents (tests/integrity covers it)."""
    return list(db.session.scalars(select(AuditEntry.action).where(AuditEntry.permit_id == permit.id,
                                                                   AuditEntry.action != "document.freeze")
                                   .order_by(AuditEntry.seq)))


def _order(permit) -> StopWorkOrder:
    db.session.expire_all()
    return db.session.scalar(select(StopWorkOrder).where(StopWorkOrder.permit_id == permit.id))


def test_agent_issues_an_order_that_stops_the_permit_and_notifies_everyone(site, signed_in):
    agent = signed_in(site["agent"])
    response = _issue(agent, site, with_notice="y",
                      notice_text="Repair the silt fence and install inlet protection within 24 hours.")
    assert response.status_code == 303
    order = _order(site["permit"])
    assert response.headers["Location"].endswith(f"/permits/{site['permit'].id}/stop-work/{order.id}")
    assert site["permit"].status == "stop_work"
    assert [f.description for f in order.findings] == ["Silt fence down along the east line"]
    assert order.issued_by_id == site["agent"].id and order.inspection_id == site["inspection"].id

    mail = db.session.scalars(select(OutboundEmail).where(OutboundEmail.permit_id == site["permit"].id)).all()
    assert len(mail) == 1
    assert mail[0].subject == f"Stop-work order: permit {site['permit'].number}"
    assert mail[0].to == sorted([site["owner"].email, site["engineer"].email, "applicant@example.org"])
    assert "Silt fence down along the east line" in mail[0].body
    assert "Repair the silt fence" in mail[0].body
    # What the order says (its PDF): who issued it, for whom, and that the repairs go on (the mail said all work
    # must stop: a contractor following it would stop the very repairs that lift the order).
    assert f"by {site['agent'].name}, for the DPW Director" in mail[0].body
    assert ("must stop, except the work needed to correct the violations below and to keep erosion and sediment "
            "controls working") in " ".join(mail[0].body.split())

    notice = db.session.scalar(select(NoticeOfViolation))
    assert notice.stop_work_order_id == order.id and notice.permit_id == site["permit"].id

    page = agent.get(f"/permits/{site['permit'].id}").text
    assert "Stop-work order in effect" in page
    assert "Sediment leaving the site into Longmeadow Brook." in page
    assert "Repair the silt fence" in page  # the notice is shown with the order
    assert "not yet acknowledged" in page
    assert _actions(site["permit"])[-3:] == ["permit.status", "stop_work.issue", "violation.notice"]


def test_banner_shows_to_the_permittee_and_the_engineer(site, signed_in):
    _issue(signed_in(site["agent"]), site)
    for user in (site["owner"], site["engineer"]):
        page = signed_in(user).get(f"/permits/{site['permit'].id}").text
        assert "Stop-work order in effect" in page and "Sediment leaving the site" in page


def test_second_order_while_one_stands_is_refused(site, signed_in):
    agent = signed_in(site["agent"])
    assert _issue(agent, site).status_code == 303
    response = _issue(agent, site, reason="Another reason")
    assert response.status_code == 422
    assert "already stands on this permit" in response.text
    assert db.session.scalar(select(func.count()).select_from(StopWorkOrder)) == 1
    assert db.session.scalar(select(func.count()).select_from(OutboundEmail)) == 1


def test_bad_input_is_shown_beside_the_field_and_changes_nothing(site, make, signed_in):
    agent = signed_in(site["agent"])
    other = make.permit(construction_started_on=dt.date(2026, 6, 2))
    foreign = make.finding(other, description="Somebody else's finding")
    cases = [({"reason": "  "}, "Give the reasons"),
             ({"finding_ids": [foreign.id]}, "is not a valid choice"),
             ({"with_notice": "y", "notice_text": ""}, "Write the notice of violation")]
    for data, message in cases:
        response = _issue(agent, site, **data)
        assert response.status_code == 422
        assert 'class="field-error"' in response.text and message in response.text
    assert _order(site["permit"]) is None and site["permit"].status == "active"
    assert db.session.scalar(select(func.count()).select_from(OutboundEmail)) == 0


def test_an_issued_permit_not_yet_started_cannot_be_stopped(site, make, signed_in):
    permit = make.permit()
    response = signed_in(site["agent"]).post(f"/permits/{permit.id}/stop-work/new", {"reason": "x"})
    assert response.status_code == 422 and "cannot become stop-work" in response.text


def test_permittee_acknowledges_the_order(site, signed_in):
    _issue(signed_in(site["agent"]), site)
    order = _order(site["permit"])
    owner = signed_in(site["owner"])
    assert "Acknowledge receipt" in owner.get(f"/permits/{site['permit'].id}").text
    response = owner.post(f"/permits/{site['permit'].id}/stop-work/{order.id}/acknowledge")
    assert response.status_code == 303
    order = _order(site["permit"])
    assert order.acknowledged_by_id == site["owner"].id and order.acknowledged_at is not None
    assert f"by {site['owner'].name}" in owner.get(f"/permits/{site['permit'].id}/stop-work/{order.id}").text
    again = owner.post(f"/permits/{site['permit'].id}/stop-work/{order.id}/acknowledge")
    assert again.status_code == 422 and "already acknowledged" in again.text
    assert _actions(site["permit"])[-1] == "stop_work.acknowledge"


@pytest.mark.parametrize("role", ["engineer", "owner"])
def test_inspector_and_permittee_cannot_issue_or_lift(site, signed_in, role):
    browser = signed_in(site[role])
    assert _issue(browser, site).status_code == 403
    assert browser.get(f"/permits/{site['permit'].id}/stop-work/new").status_code == 403
    _issue(signed_in(site["agent"]), site)
    order = _order(site["permit"])
    response = signed_in(site[role]).post(f"/permits/{site['permit'].id}/stop-work/{order.id}/lift",
                                          {"reason": "done"})
    assert response.status_code == 403
    assert _order(site["permit"]).is_standing


def test_agent_cannot_acknowledge_for_the_permittee(site, signed_in):
    agent = signed_in(site["agent"])
    _issue(agent, site)
    order = _order(site["permit"])
    assert agent.post(f"/permits/{site['permit'].id}/stop-work/{order.id}/acknowledge").status_code == 403


def test_lifting_is_refused_while_a_cited_finding_is_open_then_allowed_once_corrected(site, signed_in):
    agent = signed_in(site["agent"])
    _issue(agent, site, finding_ids=[site["silt"].id, site["inlet"].id])
    order = _order(site["permit"])
    url = f"/permits/{site['permit'].id}/stop-work/{order.id}/lift"
    refused = agent.post(url, {"reason": "Looks fine", "approves_work": "y"})
    assert refused.status_code == 422
    assert "Violations not yet corrected" in refused.text and "Inlet protection missing" in refused.text
    assert _order(site["permit"]).is_standing and site["permit"].status == "stop_work"

    for finding in (site["silt"], site["inlet"]):
        db.session.get(type(finding), finding.id).status = "corrected"
    db.session.commit()
    response = agent.post(url, {"reason": "Silt fence repaired and inlet protection installed; seen on site.",
                                "approves_work": "y"})
    assert response.status_code == 303
    order = _order(site["permit"])
    assert site["permit"].status == "active"
    assert order.lifted_by_id == site["agent"].id and order.lifted_at is not None
    assert order.lift_reason.startswith("Silt fence repaired") and order.approval_inspection_id is None
    lifted_mail = db.session.scalar(select(OutboundEmail)
                                    .where(OutboundEmail.subject.like("Stop-work order lifted%")))
    assert lifted_mail.to == sorted([site["owner"].email, site["engineer"].email, "applicant@example.org"])
    assert f"by {site['agent'].name}, for the DPW Director; work may resume" in lifted_mail.body
    page = agent.get(f"/permits/{site['permit'].id}").text
    assert "Stop-work order in effect" not in page and "lifted" in page
    order_page = agent.get(f"/permits/{site['permit'].id}/stop-work/{order.id}").text
    assert f"by {site['agent'].name}, who approved the work for the DPW Director" in order_page
    assert "Silt fence repaired and inlet protection" in order_page
    assert _actions(site["permit"])[-2:] == ["permit.status", "stop_work.lift"]


def test_lifting_needs_the_corrections_and_the_approval_both(site, make, signed_in):
    # §380-16 C(4)(e)[5]: "until any violations are corrected and all work previously completed has
    # received approval by the DPW Director": a compliant inspection alone does not lift the order.
    agent = signed_in(site["agent"])
    _issue(agent, site)
    order = _order(site["permit"])
    url = f"/permits/{site['permit'].id}/stop-work/{order.id}/lift"
    before = make.inspection(site["permit"], performed_at=order.issued_at - dt.timedelta(hours=1))
    failing = make.inspection(site["permit"], evaluation="violations")
    draft = make.inspection(site["permit"], status="draft")
    for inspection in (before, failing, draft):
        response = agent.post(url, {"reason": "Approved", "approval_inspection_id": inspection.id,
                                    "approves_work": "y"})
        assert response.status_code == 422 and "Not a valid choice" in response.text
        with pytest.raises(services.EnforcementError, match="found compliant"):
            services.lift_stop_work(site["agent"], order, "Approved", inspection)
        db.session.rollback()  # as a caller does after a refusal: it held the order
    assert _order(site["permit"]).is_standing

    approval = make.inspection(site["permit"], performed_at=utcnow() + dt.timedelta(minutes=1))
    refused = agent.post(url, {"reason": "Re-inspection found the work compliant.",
                               "approval_inspection_id": approval.id, "approves_work": "y"})
    assert refused.status_code == 422 and "Violations not yet corrected" in refused.text
    assert "Silt fence down" in refused.text
    assert _order(site["permit"]).is_standing and site["permit"].status == "stop_work"

    # Both violations of the permit corrected: the cited one and the one the order does not name.
    for finding in (site["silt"], site["inlet"]):
        db.session.get(type(finding), finding.id).status = "corrected"
    db.session.commit()
    # Corrected, but the approval must come from an agent of the permit's town.
    for outsider in (site["engineer"], make.user("agent", town="southborough"), make.user("admin", town=None)):
        with pytest.raises(services.EnforcementError, match="Only an agent of the permit's town"):
            services.lift_stop_work(outsider, _order(site["permit"]), "Approved", approval)
        db.session.rollback()
    response = agent.post(url, {"reason": "Re-inspection found the work compliant.",
                                "approval_inspection_id": approval.id, "approves_work": "y"})
    assert response.status_code == 303
    order = _order(site["permit"])
    assert order.approval_inspection_id == approval.id and order.lifted_by_id == site["agent"].id
    assert site["permit"].status == "active"
    assert "found compliant" in agent.get(f"/permits/{site['permit'].id}/stop-work/{order.id}").text


def test_an_open_violation_not_cited_on_the_order_keeps_it_standing(site, signed_in):
    """§380-16 C(4)(e)[5]: "A stop-work order shall be issued until any violations are corrected and all work
    previously completed has received approval by the DPW Director": any violation, not only those cited."""
    agent = signed_in(site["agent"])
    _issue(agent, site)  # cites the silt fence only; the missing inlet protection is open too
    order = _order(site["permit"])
    url = f"/permits/{site['permit'].id}/stop-work/{order.id}/lift"
    db.session.get(type(site["silt"]), site["silt"].id).status = "corrected"
    db.session.commit()
    page = agent.get(f"/permits/{site['permit'].id}/stop-work/{order.id}").text
    assert "Inlet protection missing at CB-2 <span class=\"muted\">(not cited on the order)</span>" in page
    refused = agent.post(url, {"reason": "Silt fence repaired.", "approves_work": "y"})
    assert refused.status_code == 422
    assert "Violations not yet corrected: Inlet protection missing at CB-2 (not cited on the order)" in refused.text
    assert _order(site["permit"]).is_standing and site["permit"].status == "stop_work"
    with pytest.raises(services.EnforcementError, match="Inlet protection missing"):
        services.lift_stop_work(site["agent"], _order(site["permit"]), "Silt fence repaired.")

    db.session.get(type(site["inlet"]), site["inlet"].id).status = "corrected"
    db.session.commit()
    assert agent.post(url, {"reason": "Both repaired, seen on site.", "approves_work": "y"}).status_code == 303
    assert not _order(site["permit"]).is_standing and site["permit"].status == "active"


def test_an_order_with_reasons_only_stands_while_any_violation_is_open(site, make, signed_in):
    """An order citing no findings is not lifted by a one-word reason while a violation of the permit is open;
    a draft report's finding is its author's work in progress, not a violation of record."""
    agent = signed_in(site["agent"])
    _issue(agent, site, finding_ids=[], inspection_id="")
    order = _order(site["permit"])
    assert order.findings == []
    url = f"/permits/{site['permit'].id}/stop-work/{order.id}/lift"
    refused = agent.post(url, {"reason": "Done", "approves_work": "y"})
    assert refused.status_code == 422
    assert "Silt fence down along the east line (not cited on the order)" in refused.text
    assert "Inlet protection missing at CB-2 (not cited on the order)" in refused.text
    assert _order(site["permit"]).is_standing

    for finding in (site["silt"], site["inlet"]):
        db.session.get(type(finding), finding.id).status = "corrected"
    make.finding(site["permit"], make.inspection(site["permit"], status="draft", evaluation="violations"),
                 description="Draft: washout overflowing")
    assert agent.post(url, {"reason": "All corrected and approved on site.", "approves_work": "y"}).status_code == 303
    assert not _order(site["permit"]).is_standing


def test_lifting_needs_the_agent_to_approve_the_work(site, signed_in):
    """The approval "by the DPW Director" is the lifting agent's own, stated on the form and shown with the order."""
    agent = signed_in(site["agent"])
    _issue(agent, site, finding_ids=[])
    order = _order(site["permit"])
    for finding in (site["silt"], site["inlet"]):
        db.session.get(type(finding), finding.id).status = "corrected"
    db.session.commit()
    url = f"/permits/{site['permit'].id}/stop-work/{order.id}/lift"
    form = agent.get(f"/permits/{site['permit'].id}/stop-work/{order.id}").text
    assert "I approve, for the DPW Director, all work previously completed on this permit" in form
    refused = agent.post(url, {"reason": "Corrected."})
    assert refused.status_code == 422 and "Approve the work previously completed" in refused.text
    assert _order(site["permit"]).is_standing


def test_a_standing_order_stops_construction_changes_with_a_clear_message(site, make, signed_in):
    area = permits.add_area(None, site["permit"], "North lot", Decimal("0.5"), since=utcnow() - dt.timedelta(days=5))
    permits.change_area_status(None, area, "activity_ceased", utcnow() - dt.timedelta(days=1))
    db.session.commit()
    agent = signed_in(site["agent"])
    _issue(agent, site)
    response = agent.post(f"/permits/{site['permit'].id}/areas/{area.id}/status", {
        f"area-{area.id}-status": "disturbed", f"area-{area.id}-at": utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")},
        htmx="areas")
    assert response.status_code == 422
    # The order was issued after an erosion-control inspection: it rests on §380-16 C(4)(f)[2].
    assert "A stop-work order stands on permit" in response.text and "§380-16 C(4)(f)[2]" in response.text
    db.session.expire_all()
    assert db.session.get(type(area), area.id).status == "activity_ceased"
    # Stabilizing is what the order wants: still allowed.
    ok = agent.post(f"/permits/{site['permit'].id}/areas/{area.id}/status", {
        f"area-{area.id}-status": "stabilization_initiated",
        f"area-{area.id}-at": utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")}, htmx="areas")
    assert ok.status_code == 200


def test_other_town_agent_gets_404(site, make, signed_in):
    _issue(signed_in(site["agent"]), site)
    order = _order(site["permit"])
    outsider = signed_in(make.user("agent", town="southborough"))
    base = f"/permits/{site['permit'].id}/stop-work"
    assert outsider.get(f"{base}/new").status_code == 404
    assert _issue(outsider, site).status_code == 404
    assert outsider.get(f"{base}/{order.id}").status_code == 404
    assert outsider.post(f"{base}/{order.id}/lift", {"reason": "x"}).status_code == 404
    assert _order(site["permit"]).is_standing


def test_an_order_of_another_permit_is_not_found_under_this_one(site, make, signed_in):
    agent = signed_in(site["agent"])
    _issue(agent, site)
    order = _order(site["permit"])
    other = make.permit(construction_started_on=dt.date(2026, 6, 2))
    assert agent.get(f"/permits/{other.id}/stop-work/{order.id}").status_code == 404


def test_a_failed_final_inspection_issues_an_order_without_a_request(site, make):
    """The final-inspection code calls the service directly (§380-16 C(4)(e)[5])."""
    permit = site["permit"]
    final = make.inspection(permit, "final", evaluation="violations", inspector=site["engineer"])
    order = services.issue_stop_work(site["engineer"], permit, "Final inspection: basin outlet not as built.",
                                     inspection=final, notice_text="Rebuild the outlet as designed.")
    db.session.commit()
    assert permit.status == "stop_work" and order.inspection_id == final.id
    assert order.notices[0].text == "Rebuild the outlet as designed."
    assert db.session.scalar(select(OutboundEmail.to)) == sorted(
        [site["owner"].email, site["engineer"].email, "applicant@example.org"])
    with pytest.raises(services.EnforcementError, match="already stands"):
        services.issue_stop_work(site["agent"], permit, "again")


def _pdf_text(browser, order) -> str:
    pdf = browser.get(f"/documents/stop-work-orders/{order.id}.pdf")
    assert pdf.status_code == 200
    return re.sub(r"\s+", " ", " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.data)).pages))


def test_an_order_after_an_inspection_other_than_the_final_rests_on_380_16_c4f2(site, signed_in):
    """§380-16 C(4)(f)[2]: "If in the course of inspections ... water resources or the MS4 is not being adequately
    protected, enforcement action will proceed ... in accordance with ... § 380-19". §380-16 C(4)(e)[5] is the
    final inspection's: an order after an erosion-control inspection does not rest on it. Nor does (f)[2] say when
    the order is lifted: that is the DPW Director's procedure under §380-19, which the order cites for it."""
    agent = signed_in(site["agent"])
    assert _issue(agent, site).status_code == 303
    order = _order(site["permit"])
    text = _pdf_text(agent, order)
    assert "Under §380-16 C(4)(f)[2] and §380-19 of the Town of Longmeadow" in text
    assert "has been approved by the DPW Director (§380-19)" in text
    assert "C(4)(e)[5]" not in text
    page = agent.get(f"/permits/{site['permit'].id}/stop-work/{order.id}").text
    assert "must stop (§380-16 C(4)(f)[2]), until the violations are corrected and the work is approved (§380-19)" \
        in page and "C(4)(e)[5]" not in page
    mail = db.session.scalar(select(OutboundEmail).where(OutboundEmail.subject.like("Stop-work order%")))
    assert "for the DPW Director (§380-16 C(4)(f)[2])" in mail.body and "C(4)(e)[5]" not in mail.body
    assert "until the violations are corrected and the work is approved by the DPW Director (§380-19)" in mail.body


def test_an_order_after_the_final_inspection_rests_on_380_16_c4e5(site, make, signed_in):
    """§380-16 C(4)(e)[5]: "If the system does not comply with the Plan ... A stop-work order shall be issued"."""
    final = make.inspection(site["permit"], "final", evaluation="violations", inspector=site["engineer"])
    order = services.issue_stop_work(site["agent"], site["permit"], "Basin outlet not as built.", inspection=final)
    db.session.commit()
    text = _pdf_text(signed_in(site["agent"]), order)
    assert "Under §380-16 C(4)(e)[5] and §380-19 of the Town of Longmeadow" in text
    assert "C(4)(f)[2]" not in text


def test_a_southborough_failed_final_leaves_the_order_to_the_commission_which_cites_its_enforcement_section(
        make, signed_in):
    """Southborough §6.0: "The Conservation Commission shall administer, implement and enforce these
    Regulations"; §5.0 only defines a stop work order, and no clause issues one on a failed final by itself
    (Longmeadow's §380-16 C(4)(e)[5] does). A failed final made the applicant's engineer issue a stop-work order
    there, "as the Town of Southborough ... Regulations requires (§6.0)". Now the report records the violation
    and goes to the Commission; the order its agent issues on it cites §6.0."""
    engineer, agent = make.user("inspector"), make.user("agent", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    client = signed_in(engineer)
    final = start(client, permit, "final")
    assert save_with_finding(client, final, "Rain garden RG-1 still ponded after 72 hours", severity="critical",
                             is_violation="y").status_code == 303
    assert submit(client, final, evaluation="violations",
                  corrective_steps="Rebuild the rain garden to the approved grades.").status_code == 303
    assert _order(permit) is None
    assert db.session.scalar(select(func.count()).select_from(NoticeOfViolation)) == 0
    order = services.issue_stop_work(agent, permit, "Rain garden RG-1 not as approved.",
                                     inspection=db.session.get(Inspection, final.id))
    db.session.commit()
    text = _pdf_text(signed_in(agent), order)
    assert "Under §6.0 of the Town of Southborough" in text and "Issued by" in text
    assert "§5.0" not in text and "§380" not in text and "on the final inspection that found" not in text


def test_the_lift_form_says_what_the_server_holds_the_order_to(site, make, signed_in):
    # §380-16 C(4)(e)[5]: corrected violations AND the approval of the work; a compliant inspection is neither.
    agent = signed_in(site["agent"])
    _issue(agent, site)
    order = _order(site["permit"])
    make.inspection(site["permit"], performed_at=utcnow() + dt.timedelta(minutes=1))  # compliant, after the order
    page = agent.get(f"/permits/{site['permit'].id}/stop-work/{order.id}").text
    form = page.split('id="lift-conditions"', 1)[1].split("</form>", 1)[0]
    guidance = " ".join(re.sub(r"<[^>]+>", " ", form).split())
    assert ("every violation on the permit is corrected: those the order cites and any other found in a submitted "
            "report, each corrected once all its corrective actions are closed out and verified") in guidance
    assert "an agent of the permit's town approves, for the DPW Director, all work previously completed" \
        in guidance.replace("&#39;", "'")
    assert "It is optional, and it never replaces the corrections." in guidance
    # Both open violations are named, the one the order does not cite too.
    assert "Silt fence down along the east line" in guidance
    assert "Inlet protection missing at CB-2 (not cited on the order)" in guidance
    # And the server holds to it: the compliant inspection alone does not lift the order.
    approval = services.approving_inspections(order)[0]
    refused = agent.post(f"/permits/{site['permit'].id}/stop-work/{order.id}/lift",
                         {"reason": "Re-inspected", "approval_inspection_id": approval.id, "approves_work": "y"})
    assert refused.status_code == 422 and _order(site["permit"]).is_standing


def _with_actions(site):
    """A corrective action on each of the site's two violations, both still open (found two days ago)."""
    found = utcnow() - dt.timedelta(days=2)
    actions = [CorrectiveAction(finding_id=site[key].id, permit_id=site["permit"].id, kind="routine_maintenance",
                                description=what, owner_name="Site contractor", discovered_at=found,
                                due_at=found + dt.timedelta(days=7))
               for key, what in (("silt", "Re-trench and re-stake the silt fence"), ("inlet", "Replace the inlet bag"))]
    db.session.add_all(actions)
    db.session.commit()
    return actions


def test_an_order_is_lifted_from_its_page_with_each_action_verified_and_its_photo_chosen(site, make, signed_in):
    # §380-16 C(4)(e)[5]: the violations corrected (each action verified) and the work approved, in one step.
    agent = signed_in(site["agent"])
    _issue(agent, site)
    order, permit = _order(site["permit"]), site["permit"]
    fence, bag = _with_actions(site)
    east, cb2 = make.photo(permit, caption="East line re-trenched"), make.photo(permit, caption="CB-2 new bag")
    page = agent.get(f"/permits/{permit.id}/stop-work/{order.id}").text
    for action in (fence, bag):
        assert f'name="verified" value="{action.id}"' in page
        assert f'name="photo-{action.id}" value="{east.id}"' in page  # chosen by its thumbnail
    assert page.count(f'src="/photos/{east.id}/thumb') == 2
    url = f"/permits/{permit.id}/stop-work/{order.id}/lift"
    lift = {"reason": "Both repairs seen done on site.", "approves_work": "y", "verified": [fence.id, bag.id],
            f"photo-{fence.id}": east.id, f"photo-{bag.id}": cb2.id}

    # A photo of another permit is refused, and nothing at all is kept: no action closed out, the order stands.
    other = make.photo(make.permit(), caption="Elsewhere")
    refused = agent.post(url, lift | {f"photo-{bag.id}": other.id})
    assert refused.status_code == 422 and "Replace the inlet bag: No photo of this permit has that id." in refused.text
    db.session.expire_all()
    assert [a.status for a in db.session.scalars(select(CorrectiveAction))] == ["open", "open"]
    assert _order(permit).is_standing and "action.close" not in _actions(permit)

    assert agent.post(url, lift).status_code == 303
    db.session.expire_all()
    assert not _order(permit).is_standing and permit.status == "active"
    for action, photo in ((fence, east), (bag, cb2)):
        action = db.session.get(CorrectiveAction, action.id)
        assert (action.status, action.evidence_photo_id, action.verified_by_id) == ("verified", photo.id,
                                                                                     site["agent"].id)
        assert action.finding.status == "corrected"
    assert _actions(permit)[-1] == "stop_work.lift"


def test_verifying_on_the_lift_form_keeps_the_lift_checks(site, make, signed_in):
    # Both actions verified, but a third violation, with no corrective action yet, is still open: the lift is
    # refused, and the verifications made on the way are not kept either.
    agent = signed_in(site["agent"])
    _issue(agent, site)
    order, permit = _order(site["permit"]), site["permit"]
    fence, bag = _with_actions(site)
    make.finding(permit, site["inspection"], description="Stockpile unprotected by the brook")
    refused = agent.post(f"/permits/{permit.id}/stop-work/{order.id}/lift",
                         {"reason": "Repairs seen done", "approves_work": "y", "verified": [fence.id, bag.id]})
    assert refused.status_code == 422 and "Violations not yet corrected: Stockpile unprotected" in refused.text
    db.session.expire_all()
    assert [a.status for a in db.session.scalars(select(CorrectiveAction))] == ["open", "open"]
    assert _order(permit).is_standing


def test_the_status_form_neither_lifts_an_order_nor_stops_work_nor_completes_a_permit(site, signed_in):
    """The permit's status form moved a permit out of stop-work while its order stood, its violations open
    (§380-16 C(4)(e)[5]: the order stands until they are corrected and the work approved), into stop-work with
    no order, and to completed with no certificate (§380-18). Each of those is its own act now."""
    agent = signed_in(site["agent"])
    permit_url = f"/permits/{site['permit'].id}"
    page = agent.get(permit_url).text
    assert 'value="stop_work"' not in page and 'value="final_submissions"' in page
    refused = agent.post(f"{permit_url}/status", {"status-status": "stop_work"})
    assert refused.status_code == 422 and db.session.get(type(site["permit"]), site["permit"].id).status == "active"

    _issue(agent, site)
    lifted = agent.post(f"{permit_url}/status", {"status-status": "active"})
    assert lifted.status_code == 422
    assert "A stop-work order is issued and lifted on its own page" in lifted.text
    assert _order(site["permit"]).is_standing and site["permit"].status == "stop_work"
    assert 'name="status-status"' not in agent.get(permit_url).text  # nothing the form may do here

    with pytest.raises(permits.PermitError, match="certificate of completion"):
        permits.change_status(site["agent"], site["permit"], "completed")


def test_an_order_lifted_during_the_final_submissions_leaves_the_permit_in_them(site, signed_in):
    """Lifting always made the permit active again: one whose final submissions were all accepted was left out of
    them (its submissions cannot be filed again, and a certificate needs the permit in them, §380-18), until
    someone moved it back by hand. It goes back to where the order found it."""
    agent = signed_in(site["agent"])
    permits.change_status(site["agent"], site["permit"], "final_submissions")
    for kind in ("as_built", "om_plan"):
        db.session.add(FinalSubmission(permit_id=site["permit"].id, kind=kind, status="accepted"))
    db.session.commit()
    _issue(agent, site)
    assert _order(site["permit"]).is_standing and site["permit"].status == "stop_work"
    for finding in (site["silt"], site["inlet"]):
        db.session.get(type(finding), finding.id).status = "corrected"
    db.session.commit()
    order = _order(site["permit"])
    lifted = agent.post(f"/permits/{site['permit'].id}/stop-work/{order.id}/lift",
                        {"reason": "Corrected and seen on site.", "approves_work": "y"})
    assert lifted.status_code == 303
    db.session.expire_all()
    assert site["permit"].status == "final_submissions" and not _order(site["permit"]).is_standing

    # Moved back to active by hand (a submission still pending), then stopped and lifted: active again, as found.
    db.session.add(FinalSubmission(permit_id=site["permit"].id, kind="final_report", status="pending"))
    db.session.commit()
    assert agent.post(f"/permits/{site['permit'].id}/status", {"status-status": "active"}).status_code == 303
    site["inlet"].status = "open"
    db.session.commit()
    _issue(agent, site, finding_ids=[site["inlet"].id])
    site["inlet"].status = "corrected"
    db.session.commit()
    second = db.session.scalar(select(StopWorkOrder).where(StopWorkOrder.lifted_at.is_(None)))
    assert agent.post(f"/permits/{site['permit'].id}/stop-work/{second.id}/lift",
                      {"reason": "Corrected again.", "approves_work": "y"}).status_code == 303
    db.session.expire_all()
    assert site["permit"].status == "active"
