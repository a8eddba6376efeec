"""Final submissions, the certificate of completion (§380-18), surety releases (§380-17 B, Southborough §6.3)."""
from __future__ import annotations

import datetime as dt
import io
import re
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.certifications.models import Easement
from inspect_app.completion import services as completion
from inspect_app.completion.models import CertificateOfCompletion, FinalSubmission, SuretyRelease
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, Finding
from inspect_app.permits import services as permits
from inspect_app.mail.models import OutboundEmail
from inspect_app.blobs.models import Blob
from inspect_app.types import LOCAL_TZ, utcnow

PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


@pytest.fixture
def site(make):
    """An active Longmeadow permit with a $10,000 surety, its owner, engineer and agent."""
    owner = make.user("permittee")
    engineer = make.user("inspector")
    permit = make.permit(owner=owner, inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2),
                         surety_amount=Decimal("10000.00"))
    return {"permit": permit, "owner": owner, "engineer": engineer, "agent": make.user("agent")}


def _required_inspections_made(site, make) -> None:
    """The inspections §380-16 C(4) requires besides the final: the initial site inspection, the erosion controls
    before construction starts (June 2, 2026) and the walk-through (the permit has no underground structure)."""
    permit, at = site["permit"], lambda day: dt.datetime(2026, 6, day, 14, 0, tzinfo=dt.UTC)
    make.inspection(permit, "initial", inspector=site["engineer"], performed_at=at(1))
    make.inspection(permit, "erosion_control", inspector=site["engineer"], performed_at=at(1))
    make.inspection(permit, "walk_through", inspector=site["engineer"])


def _url(site, tail: str = "") -> str:
    return f"/permits/{site['permit'].id}/completion/{tail}"


def _om_plan(browser, site, data: bytes = PDF, reference: str = "Book 25120, Page 311"):
    return browser.post(_url(site, "submit/om_plan"), {"om_plan-pdf": (io.BytesIO(data), "om-plan.pdf"),
                                                       "om_plan-registry_reference": reference})


def _as_built(browser, site, data: bytes = PDF, certified: bool = True):
    form = {"as_built-pdf": (io.BytesIO(data), "as-built.pdf")}
    if certified:
        form["as_built-pe_certified"] = "y"
    return browser.post(_url(site, "submit/as_built"), form)


def _final_report(browser, site, inspection):
    return browser.post(_url(site, "submit/final_report"), {"final_report-inspection_id": inspection.id})


def _submission(site, kind: str) -> FinalSubmission:
    db.session.expire_all()
    return db.session.scalar(select(FinalSubmission).where(FinalSubmission.kind == kind)
                             .order_by(FinalSubmission.submitted_at.desc()))


def _review(browser, site, submission, decision: str = "accepted", note: str = ""):
    prefix = f"review-{submission.id}"
    return browser.post(_url(site, f"submissions/{submission.id}/review"),
                        {f"{prefix}-decision": decision, f"{prefix}-note": note})


def _stored_files(app) -> list[Path]:
    root = Path(app.config["BLOB_ROOT"])
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def _count(model) -> int:
    return db.session.scalar(select(func.count()).select_from(model))


def _actions(permit) -> list[str]:
    """The permit's audit actions in order, but the freezing of its documents (tests/integrity covers it)."""
    return list(db.session.scalars(select(AuditEntry.action).where(AuditEntry.permit_id == permit.id,
                                                                   AuditEntry.action != "document.freeze")
                                   .order_by(AuditEntry.seq)))


def test_a_file_that_is_not_a_pdf_is_refused_and_nothing_is_stored(app, site, signed_in):
    response = _om_plan(signed_in(site["engineer"]), site, data=b"\x89PNG\r\n\x1a\n not a pdf at all")
    assert response.status_code == 422
    assert 'class="field-error"' in response.text and "This file is not a PDF" in response.text
    assert _count(FinalSubmission) == 0 and _count(Blob) == 0 and _stored_files(app) == []
    db.session.expire_all()
    assert site["permit"].status == "active"


def test_an_oversize_pdf_is_refused_and_nothing_is_stored(app, site, signed_in):
    app.config["FINAL_SUBMISSION_MAX_BYTES"] = 1024
    response = _as_built(signed_in(site["owner"]), site, data=PDF + b"0" * 2048)
    assert response.status_code == 422 and "larger than the limit" in response.text
    assert _count(FinalSubmission) == 0 and _stored_files(app) == []


def test_required_facts_are_asked_for_beside_their_fields(app, site, make, signed_in):
    """§380-14 B: the final O&M plan is recorded at the registry of deeds (its reference is required);
    §380-15 and §380-16 C(4)(e)[3]: the as-built drawings are certified by a registered PE (stamp)."""
    engineer = signed_in(site["engineer"])
    missing_reference = _om_plan(engineer, site, reference="")
    assert missing_reference.status_code == 422 and "book and page" in missing_reference.text
    uncertified = _as_built(engineer, site, certified=False)
    assert uncertified.status_code == 422 and "registered professional engineer" in uncertified.text
    draft = make.inspection(site["permit"], "final", status="draft")
    not_submitted = _final_report(engineer, site, draft)
    assert not_submitted.status_code == 422 and "not a valid choice" in not_submitted.text.lower()
    assert _count(FinalSubmission) == 0 and _stored_files(app) == []


def test_pdf_is_stored_by_its_hash_and_the_permit_moves_to_final_submissions(app, site, signed_in):
    engineer = signed_in(site["engineer"])
    page = engineer.get(_url(site)).text
    assert "Hampden County Registry of Deeds" in page  # the registry named in the town profile
    response = _om_plan(engineer, site)
    assert response.status_code == 303 and response.headers["Location"].endswith(_url(site))
    submission = _submission(site, "om_plan")
    assert submission.registry_reference == "Book 25120, Page 311" and submission.status == "pending"
    assert db.session.get(Blob, submission.blob_sha256).content_type == "application/pdf"
    assert site["permit"].status == "final_submissions"
    download = engineer.get(_url(site, f"submissions/{submission.id}/pdf"))
    assert download.status_code == 200 and download.data == PDF
    assert download.mimetype == "application/pdf"
    download.close()
    again = _om_plan(engineer, site)
    assert again.status_code == 422 and "already pending" in again.text
    assert _actions(site["permit"])[-2:] == ["permit.status", "final_submission.submit"]


def test_certificate_refused_until_all_three_are_accepted_then_issued(app, site, make, signed_in):
    """§380-18 A-C: the final O&M plan, as-built drawings and final inspection report are all accepted before
    the certificate; §380-10 L: "Applicants shall submit as-built drawings upon project completion"."""
    _required_inspections_made(site, make)
    final = make.inspection(site["permit"], "final", inspector=site["engineer"])
    engineer = signed_in(site["engineer"])
    assert _om_plan(engineer, site).status_code == 303
    assert _as_built(engineer, site).status_code == 303
    assert _final_report(engineer, site, final).status_code == 303

    agent = signed_in(site["agent"])
    rejected = _review(agent, site, _submission(site, "as_built"), "rejected")
    assert rejected.status_code == 422 and "Say why the submission is rejected" in rejected.text
    assert _submission(site, "as_built").status == "pending"
    assert _review(agent, site, _submission(site, "as_built"), "rejected",
                   "Basin outlet invert not shown.").status_code == 303
    assert _review(agent, site, _submission(site, "om_plan")).status_code == 303
    assert _review(agent, site, _submission(site, "final_report")).status_code == 303

    refused = agent.post(_url(site, "certificate"), {"certificate-note": ""})
    assert refused.status_code == 422 and "Not yet accepted: as-built drawings" in refused.text
    assert _count(CertificateOfCompletion) == 0 and site["permit"].status == "final_submissions"

    assert _as_built(signed_in(site["owner"]), site).status_code == 303  # filed again after the rejection
    agent = signed_in(site["agent"])
    assert _review(agent, site, _submission(site, "as_built")).status_code == 303
    issued = agent.post(_url(site, "certificate"), {"certificate-note": "All work complete."})
    assert issued.status_code == 303
    db.session.expire_all()
    permit = site["permit"]
    assert permit.status == "completed"
    assert permit.completed_on == utcnow().astimezone(LOCAL_TZ).date()
    mail = db.session.scalar(select(OutboundEmail)
                             .where(OutboundEmail.subject.like("Certificate of completion%")))
    assert site["owner"].email in mail.to
    page = agent.get(f"/permits/{permit.id}").text
    assert "Certificate of completion issued" in page
    actions = _actions(permit)
    assert actions.count("final_submission.review") == 4
    assert actions[-3:] == ["permit.status", "permit.complete", "certificate.issue"]
    twice = agent.post(_url(site, "certificate"), {})
    assert twice.status_code == 422 and "already issued" in twice.text


def test_surety_partial_releases_final_only_after_the_certificate_never_over(app, site, make, signed_in):
    """§380-17 B, Southborough §6.3: part released as a phase completes, the rest only after the certificate."""
    agent = signed_in(site["agent"])

    def release(amount: str, phase: str = "Phase 1: roadway", final: bool = False):
        form = {"surety-phase": phase, "surety-amount": amount}
        if final:
            form["surety-is_final"] = "y"
        return agent.post(_url(site, "surety"), form)

    assert release("4000").status_code == 303
    over = release("6000.01", "Phase 2")
    assert over.status_code == 422 and "Only $6,000.00 of the $10,000.00 surety remains" in over.text
    whole = release("6000", "Phase 2")
    assert whole.status_code == 422 and "cannot release the whole surety" in whole.text
    early = release("6000", "Completion", final=True)
    assert early.status_code == 422 and "certificate of completion is issued" in early.text
    assert _count(SuretyRelease) == 1

    from inspect_app.completion import services

    for kind in ("om_plan", "as_built"):
        services.submit(site["owner"], site["permit"], kind, pdf=PDF, registry_reference="Doc 1",
                        pe_certified=True)
    _required_inspections_made(site, make)
    final = make.inspection(site["permit"], "final")
    services.submit(site["engineer"], site["permit"], "final_report", inspection=final)
    for submission in db.session.scalars(select(FinalSubmission)):
        services.review(site["agent"], submission, "accepted")
    services.issue_certificate(site["agent"], site["permit"])
    db.session.commit()

    assert release("5000", "Completion", final=True).status_code == 422  # the final release is the whole rest
    assert release("6000", "Completion", final=True).status_code == 303
    after = release("1", "Extra")
    assert after.status_code == 422 and "already been fully released" in after.text
    total = db.session.scalar(select(func.sum(SuretyRelease.amount)))
    assert total == Decimal("10000.00")
    assert _actions(site["permit"]).count("surety.release") == 2
    assert "released in full" in agent.get(f"/permits/{site['permit'].id}").text


def test_a_surety_release_in_fractions_of_a_cent_is_refused(site, signed_in):
    # The amount is stored to the cent: 4000.005 would be kept as 4000.01 while the audit entry said 4000.005.
    answer = signed_in(site["agent"]).post(_url(site, "surety"),
                                           {"surety-phase": "Phase 1", "surety-amount": "4000.005"})
    assert answer.status_code == 422 and "Give the amount in dollars and cents" in answer.text
    assert _count(SuretyRelease) == 0


def test_a_part_released_before_the_certificate_cannot_be_all_of_the_surety_but_a_cent(site, make, signed_in):
    """§380-17 B: "release part of the bond as each phase is completed in compliance with the permit but the bond may
    not be fully released until ... a certificate of completion": $9,999.99 of $10,000 is not "part"."""
    agent = signed_in(site["agent"])

    def release(amount: str, phase: str):
        return agent.post(_url(site, "surety"), {"surety-phase": phase, "surety-amount": amount})

    nearly = release("9999.99", "Phase 1: roadway")
    assert nearly.status_code == 422
    assert "At most $9,000.00 can be released before the certificate of completion" in nearly.text
    assert "by the town&#39;s policy" in nearly.text and "(§380-17 B)" in nearly.text
    assert release("6000", "Phase 1: roadway").status_code == 303
    again = release("1000", "phase 1: ROADWAY")
    assert again.status_code == 422 and "already released for" in again.text
    over = release("3000.01", "Phase 2: lots")
    assert over.status_code == 422 and "At most $3,000.00" in over.text
    # A phase is released only "in compliance with the permit": not while a violation is open.
    finding = make.finding(site["permit"], description="Basin outlet eroding")
    open_violation = release("1000", "Phase 2: lots")
    assert open_violation.status_code == 422 and "violations are open: Basin outlet eroding" in open_violation.text
    db.session.get(type(finding), finding.id).status = "corrected"
    db.session.commit()
    assert release("3000", "Phase 2: lots").status_code == 303
    assert _count(SuretyRelease) == 2


def test_a_southborough_refusal_cites_southboroughs_section(make, signed_in):
    """Southborough §6.3: "the bond may not be fully released until the Commission has received the final inspection
    report as required by these Regulations and issued a Certificate of Completion"."""
    agent = signed_in(make.user("agent", town="southborough"))
    permit = make.permit("southborough", construction_started_on=dt.date(2026, 6, 2), surety_amount=Decimal("10000.00"))
    url = f"/permits/{permit.id}/completion/surety"
    nearly = agent.post(url, {"surety-phase": "Phase 1", "surety-amount": "9999.99"})
    assert nearly.status_code == 422 and "(§6.3)" in nearly.text and "§380-17" not in nearly.text
    early = agent.post(url, {"surety-phase": "Completion", "surety-amount": "10000", "surety-is_final": "y"})
    assert early.status_code == 422 and "certificate of completion is issued (§6.3)" in early.text
    assert "§380-17" not in early.text
    assert _count(SuretyRelease) == 0


def test_roles_are_enforced(site, make, signed_in):
    final = make.inspection(site["permit"], "final")
    assert _om_plan(signed_in(site["agent"]), site).status_code == 403
    engineer = signed_in(site["engineer"])
    assert _om_plan(engineer, site).status_code == 303
    submission = _submission(site, "om_plan")
    assert _review(engineer, site, submission).status_code == 403
    assert engineer.post(_url(site, "surety"), {"surety-phase": "x", "surety-amount": "1"}).status_code == 403
    assert _final_report(engineer, site, final).status_code == 303
    owner = signed_in(site["owner"])
    assert _review(owner, site, submission).status_code == 403
    assert owner.post(_url(site, "certificate"), {}).status_code == 403
    assert _submission(site, "om_plan").status == "pending" and _count(CertificateOfCompletion) == 0


def test_other_town_agent_gets_404(site, make, signed_in):
    outsider = signed_in(make.user("agent", town="southborough"))
    assert outsider.get(_url(site)).status_code == 404
    assert outsider.post(_url(site, "certificate"), {}).status_code == 404
    assert outsider.post(_url(site, "surety"), {"surety-phase": "x", "surety-amount": "1"}).status_code == 404
    assert _om_plan(signed_in(make.user("permittee")), site).status_code == 404
    assert _count(SuretyRelease) == 0


def test_a_stopped_permit_takes_no_final_submissions(app, site, signed_in):
    from inspect_app.enforcement import services as enforcement

    enforcement.issue_stop_work(site["agent"], site["permit"], "Sediment in the brook.")
    db.session.commit()
    stored = _stored_files(app)  # the order's frozen PDF
    response = _om_plan(signed_in(site["engineer"]), site)
    assert response.status_code == 422 and "stop-work takes no final submissions" in response.text
    assert _stored_files(app) == stored


def _all_three_accepted(site, make, signed_in):
    _required_inspections_made(site, make)
    final = make.inspection(site["permit"], "final", inspector=site["engineer"])
    engineer = signed_in(site["engineer"])
    for response in (_om_plan(engineer, site), _as_built(engineer, site), _final_report(engineer, site, final)):
        assert response.status_code == 303
    agent = signed_in(site["agent"])
    for kind in ("om_plan", "as_built", "final_report"):
        assert _review(agent, site, _submission(site, kind)).status_code == 303
    return agent, final


def test_the_certificate_names_each_open_gate_and_refuses_until_all_are_closed(app, site, make, signed_in):
    # §380-18: not while findings, corrective actions, notices to correct or a stop-work order are open,
    # while an area is not stabilized, or while the O&M plan's easements are unrecorded (§380-14 D(4)).
    agent, final = _all_three_accepted(site, make, signed_in)
    permit = site["permit"]
    finding = make.finding(permit, description="Basin outlet riprap missing")
    area = permits.add_area(None, permit, "Lot 4", Decimal("0.3"), since=utcnow() - dt.timedelta(days=20))
    db.session.add(Easement(permit_id=permit.id, purpose="Drainage to the basin", location="Lot 4"))
    db.session.commit()
    refused = agent.post(_url(site, "certificate"), {"certificate-note": ""})
    assert refused.status_code == 422
    text = refused.text.replace("&#39;", "'")
    assert "cannot be issued yet (§380-18)" in text
    assert "Findings not corrected: Basin outlet riprap missing" in text
    assert "Areas not stabilized: Lot 4" in text
    assert "Easements not recorded at the Hampden County Registry of Deeds (§380-14 D(4)): Drainage to the basin" in text
    assert _count(CertificateOfCompletion) == 0 and permit.status == "final_submissions"

    db.session.get(type(finding), finding.id).status = "corrected"
    permits.change_area_status(None, db.session.get(type(area), area.id), "stabilized", utcnow() - dt.timedelta(days=1))
    db.session.scalar(select(Easement)).recorded_on = dt.date.today() - dt.timedelta(days=2)
    db.session.commit()
    assert agent.post(_url(site, "certificate"), {"certificate-note": "All closed."}).status_code == 303
    assert _count(CertificateOfCompletion) == 1


def _certificate_button(page: str) -> str:
    return re.search(r"<button[^>]*>Issue the certificate of completion</button>", page).group(0)


def test_the_certificate_button_is_disabled_while_a_gate_is_open_and_lists_each_with_its_link(site, make, signed_in):
    agent, final = _all_three_accepted(site, make, signed_in)
    permit = site["permit"]
    make.finding(permit, description="Basin outlet riprap missing")
    area = permits.add_area(None, permit, "Lot 4", Decimal("0.3"), since=utcnow() - dt.timedelta(days=20))
    db.session.commit()
    page = agent.get(_url(site)).text
    assert "disabled" in _certificate_button(page)
    gates = dict(re.findall(r'<li data-gate="(\w+)"><a href="([^"]+)">', page))
    assert gates["findings"] == f"/permits/{permit.id}#open-actions"
    assert gates["stabilization"] == f"/permits/{permit.id}#areas"
    assert "Areas not stabilized: Lot 4" in page

    # Posted anyway (a page held from before): refused above the form, not on the Note field.
    refused = agent.post(_url(site, "certificate"), {"certificate-note": "Looks done"}).text
    note = refused.split('id="certificate-note"', 1)[1].split("</div>", 1)[0]
    assert "cannot be issued yet" in refused and "cannot be issued yet" not in note

    permits.change_area_status(None, db.session.get(type(area), area.id), "stabilized", utcnow() - dt.timedelta(days=1))
    db.session.scalars(select(Finding)).one().status = "corrected"
    db.session.commit()
    page = agent.get(_url(site)).text
    assert "disabled" not in _certificate_button(page) and 'id="open-gates"' not in page


def test_southborough_also_needs_the_npdes_notice_of_termination(make):
    # §9.6: "a copy of the Notice of Termination of NPDES coverage shall be submitted to the Commission".
    permit = make.permit("southborough", construction_started_on=dt.date(2026, 6, 2))
    final = make.inspection(permit, "final")
    assert any("NPDES notice of termination" in gate for gate in completion.open_gates(permit))
    db.session.add(ChecklistAnswer(inspection_id=final.id, item_key="npdes_notice_of_termination", answer="yes"))
    db.session.commit()
    assert completion.open_gates(permit) == []
    longmeadow = make.permit(construction_started_on=dt.date(2026, 6, 2))
    assert completion.open_gates(longmeadow) == []  # not a Longmeadow gate


# §380-18: "Final submissions must include the: A. Final operation and maintenance plan as specified in
# § 380-14; B. As-built drawings as specified in § 380-15; and C. Final inspection report".
FINAL_SUBMISSIONS = [
    ("§380-18 A, §380-14 A(1)", "om_plan", "Not yet accepted: final operation and maintenance plan."),
    ("§380-18 B", "as_built", "Not yet accepted: as-built drawings."),
    ("§380-18 C", "final_report", "Not yet accepted: final inspection report."),
]


@pytest.mark.parametrize("clause, left_out, refusal", FINAL_SUBMISSIONS)
def test_the_certificate_waits_for_each_final_submission(clause, left_out, refusal, app, site, make, signed_in):
    final = make.inspection(site["permit"], "final", inspector=site["engineer"])
    engineer = signed_in(site["engineer"])
    filings = {"om_plan": lambda: _om_plan(engineer, site), "as_built": lambda: _as_built(engineer, site),
               "final_report": lambda: _final_report(engineer, site, final)}
    for kind in [k for k in filings if k != left_out]:
        assert filings[kind]().status_code == 303
    agent = signed_in(site["agent"])
    for kind in [k for k in filings if k != left_out]:
        assert _review(agent, site, _submission(site, kind)).status_code == 303
    refused = agent.post(_url(site, "certificate"), {"certificate-note": ""})
    assert refused.status_code == 422 and refusal in refused.text
    assert _count(CertificateOfCompletion) == 0


def test_southborough_asks_for_the_as_built_drawings_and_the_final_report_not_a_recorded_om_plan(make, signed_in):
    """Southborough §9.6 asks at completion for as-built drawings "certified by a Registered Professional Engineer"
    and the NPDES notice of termination; its O&M plan "is required at the time of application ... shall remain on
    file with the Commission" (§7.6), and only the easements are recorded at the registry (§7.6 h)). The app asked
    for Longmeadow's final O&M plan recorded at the registry (§380-14 B), and refused the certificate without it."""
    engineer = make.user("inspector")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    site = {"permit": permit, "engineer": engineer}
    _required_inspections_made(site, make)
    final = make.inspection(permit, "final", inspector=engineer)
    db.session.add(ChecklistAnswer(inspection_id=final.id, item_key="npdes_notice_of_termination", answer="yes"))
    db.session.commit()
    browser = signed_in(engineer)
    page = browser.get(_url(site)).text
    assert 'name="as_built-pdf"' in page and 'name="final_report-inspection_id"' in page
    assert "once the as-built drawings and the final inspection report are all accepted" in page
    assert "om_plan-registry_reference" not in page and "Registry of Deeds" not in page.split("Easements")[0]
    assert _om_plan(browser, site).status_code == 404
    assert _count(FinalSubmission) == 0
    assert "Final operation and maintenance plan" not in browser.get(f"/permits/{permit.id}").text
    assert _as_built(browser, site).status_code == 303
    assert _final_report(browser, site, final).status_code == 303
    agent = signed_in(make.user("agent", town="southborough"))
    early = agent.post(_url(site, "certificate"), {"certificate-note": ""})
    assert early.status_code == 422
    assert ("Not yet accepted: as-built drawings, final inspection report. The certificate of completion needs each "
            "final submission: as-built drawings (§9.6), final inspection report (§6.3).") in early.text
    for kind in ("as_built", "final_report"):
        assert _review(agent, site, _submission(site, kind)).status_code == 303
    issued = agent.post(_url(site, "certificate"), {"certificate-note": ""})
    assert issued.status_code == 303, issued.text
    assert _count(CertificateOfCompletion) == 1


def test_a_southborough_om_plan_filed_before_its_own_list_of_submissions_stays_shown_and_reviewable(make, signed_in):
    """A final O&M plan filed while Southborough's certificate still asked for one (as Longmeadow's does) is not
    lost from the pages: shown, reviewable, taking no new filing, and no longer in the certificate's way."""
    engineer, agent = make.user("inspector"), make.user("agent", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    db.session.add(FinalSubmission(permit_id=permit.id, kind="om_plan", status="pending", submitted_by_id=engineer.id,
                                   registry_reference="Book 1, Page 2", blob_sha256=None))
    db.session.commit()
    site = {"permit": permit}
    page = signed_in(agent).get(_url(site)).text
    assert 'id="submission-om_plan"' in page and "Not asked for before this town" in page
    assert "om_plan-registry_reference" not in page
    assert _review(signed_in(agent), site, _submission(site, "om_plan"), "rejected", "Not needed here").status_code == 303
    assert "Final operation and maintenance plan" in signed_in(agent).get(f"/permits/{permit.id}").text
