"""The O&M facility inspection (§380-14 A(3)): the DPW Director's regular inspection of a completed project's
stormwater facilities, each structure answered item by item; its violations feed the notice to correct and its
30-day cure (§380-14 E); its PDF has its own section; the schedule owes it yearly from the certificate."""
from __future__ import annotations

import datetime as dt
import io
from types import SimpleNamespace

import pytest
from pypdf import PdfReader
from sqlalchemy import func, select

from inspect_app.certifications.models import NoticeToCorrect
from inspect_app.documents.services import inspection_report_pdf
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, Inspection
from inspect_app.schedule.models import PermitObligation
from inspect_app.types import LOCAL_TZ, utcnow
from tests.inspections.report_helpers import filled, save_with_finding, start, submit

STRUCTURES = ["Basin B-1", "Drain line D-1"]


@pytest.fixture
def site(make):
    inspector, agent = make.user("inspector"), make.user("agent")
    permit = make.permit(inspectors=[inspector], structures=STRUCTURES, construction_started_on=dt.date(2025, 6, 2))
    return SimpleNamespace(permit=permit, inspector=inspector, agent=agent)


def _complete(permit, days_ago: int = 30) -> None:
    """The certificate of completion issued `days_ago` (its record is the completion domain's; the permit's
    status and date are what the inspection and the schedule read)."""
    permit.status = "completed"
    permit.completed_on = utcnow().astimezone(LOCAL_TZ).date() - dt.timedelta(days=days_ago)
    db.session.commit()


def _open(permit, subject: str) -> str | None:
    """The stored open obligation's status for `subject` on the permit (None: not open, met or never owed)."""
    return db.session.scalar(select(PermitObligation.status_at(utcnow())).where(
        PermitObligation.permit_id == permit.id, PermitObligation.subject == subject))


def _pdf_text(inspection: Inspection) -> str:
    pdf = PdfReader(io.BytesIO(inspection_report_pdf(db.session.get(Inspection, inspection.id))))
    return " ".join("".join(page.extract_text() for page in pdf.pages).split())


def test_the_agent_inspects_each_facility_of_a_completed_permit_and_the_pdf_has_its_section(site, signed_in):
    _complete(site.permit)
    client = signed_in(site.agent)
    assert "Start: O&amp;M facility inspection" in client.get(f"/permits/{site.permit.id}").text
    assert _open(site.permit, "om_inspection:1") == "due"

    inspection = start(client, site.permit, "om_facility")
    page = client.get(f"/inspections/{inspection.id}").text
    assert 'id="om-part"' in page and "§380-14 A(3)" in page
    response = submit(client, inspection)
    assert response.status_code == 303, response.text

    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    assert report.status == "submitted"
    per_structure = db.session.execute(select(ChecklistAnswer.item_key, ChecklistAnswer.subject_id).where(
        ChecklistAnswer.inspection_id == report.id, ChecklistAnswer.subject_id != "")).all()
    structures = {s.id for s in site.permit.structures}
    items = {key for key, _ in per_structure}
    assert {"facility_accessible", "facility_working", "facility_maintained"} <= items
    assert all({subject for key, subject in per_structure if key == item} == structures for item in items)

    text = _pdf_text(report)
    assert "O&M facility inspection" in text and "Stormwater facilities after completion (§380-14 A(3))" in text
    assert all(name in text for name in STRUCTURES)
    # The schedule's first year is met by it (no longer open), and the next year is on the schedule.
    assert _open(site.permit, "om_inspection:1") is None
    assert _open(site.permit, "om_inspection:2") == "upcoming"


def test_refused_on_a_permit_not_completed(site, signed_in):
    client = signed_in(site.agent)
    assert "Start: O&amp;M facility inspection" not in client.get(f"/permits/{site.permit.id}").text
    refused = client.post(f"/permits/{site.permit.id}/inspections", {"type": "om_facility"})
    assert refused.status_code == 400
    assert "The O&amp;M facility inspection is made of a completed project" in refused.text
    assert "no certificate of completion yet" in refused.text
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 0


def test_an_inspector_who_is_not_the_authority_cannot_start_it(site, signed_in):
    _complete(site.permit)
    client = signed_in(site.inspector)
    assert "Start: O&amp;M facility inspection" not in client.get(f"/permits/{site.permit.id}").text
    assert client.post(f"/permits/{site.permit.id}/inspections", {"type": "om_facility"}).status_code == 403
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 0


def test_a_violation_found_feeds_the_notice_to_correct_citing_it(site, signed_in, make):
    """§380-14 E: after the DPW Director's notice to correct a violation requiring maintenance work, 30 days."""
    _complete(site.permit)
    client = signed_in(site.agent)
    inspection = start(client, site.permit, "om_facility")
    saved = save_with_finding(client, inspection, "Sediment fills the forebay", location="Basin B-1",
                              is_violation="y", severity="major")
    assert saved.status_code in (200, 303), saved.text
    page = client.get(f"/inspections/{inspection.id}").text
    answers = {name: "no" for name in filled(page) if name.startswith("answer-facility_maintained-")}
    submitted = client.post(f"/inspections/{inspection.id}/submit", filled(page, evaluation="violations",
                                                                   corrective_steps="Clean out the forebay.", **answers))
    assert submitted.status_code == 303, [line for line in submitted.text.splitlines() if "error" in line]

    report_page = client.get(f"/inspections/{inspection.id}").text
    assert "Issue the notice to correct" in report_page
    issued = client.post(f"/permits/{site.permit.id}/om/notices",
                         {"notice-text": "Clean out the forebay of Basin B-1.", "notice-inspection_id": inspection.id})
    assert issued.status_code == 303, issued.text
    notice = db.session.scalar(select(NoticeToCorrect).where(NoticeToCorrect.permit_id == site.permit.id))
    assert notice.text.startswith("Clean out the forebay of Basin B-1.")
    assert "Violations found on the O&M facility inspection of" in notice.text
    assert "- Basin B-1: Sediment fills the forebay" in notice.text
    assert (notice.cure_due_at - notice.issued_at) >= dt.timedelta(days=30)
    # Its 30 days are on the schedule.
    assert _open(site.permit, f"notice_to_correct:{notice.id}") == "due"

    # A report that is not of the facilities cites nothing: refused, with the reason, and nothing issued.
    other = make.inspection(site.permit, "erosion_control", evaluation="violations")
    refused = client.post(f"/permits/{site.permit.id}/om/notices",
                          {"notice-text": "Fix it.", "notice-inspection_id": other.id})
    assert refused.status_code == 422
    assert "A notice to correct cites a submitted inspection of this permit&#39;s stormwater facilities" in refused.text
    assert db.session.scalar(select(func.count()).select_from(NoticeToCorrect)) == 1


def test_the_inspectors_calendar_leaves_out_the_towns_own_facility_inspection(site, signed_in, make):
    """The O&M facility inspection is the town's (§380-14 A(3): "by the DPW Director or their authorized
    representative"): it is not on the calendar of an inspector assigned to the completed permit, who could not
    start it; the inspections they make on their other permits are."""
    _complete(site.permit, days_ago=360)
    assert _open(site.permit, "om_inspection:1") == "due"
    make.permit(inspectors=[site.inspector], number="OM-CAL-2", construction_started_on=dt.date(2025, 6, 2))
    calendar = signed_in(site.inspector).get(f"/dashboard/inspectors/{site.inspector.id}/calendar.ics")
    assert calendar.status_code == 200
    body = calendar.get_data(as_text=True)
    assert "OM-CAL-2" in body
    assert site.permit.number not in body and "O&M facility" not in body


def test_the_facility_inspection_owed_is_named_by_its_year_on_the_dashboard(site, signed_in):
    """The agent's dashboard says which yearly inspection is owed in words ("Year 1"), as it does for the O&M
    certification, never the schedule's own key."""
    _complete(site.permit, days_ago=360)
    page = signed_in(site.agent).get("/dashboard/").text
    assert "O&amp;M facility inspection" in page and "Year 1" in page
    assert "om_inspection:" not in page
