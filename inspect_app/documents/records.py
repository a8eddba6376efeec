"""The canonical record behind each document, and its SHA-256 (printed on the document's last page).

An inspection report's hash is the one the report carries (`Inspection.record_sha256`, sealed on submit)
or, for a draft, the inspections domain's `record_hash`. An O&M certification's record comes from the
certifications domain. The stop-work order, certificate of completion and permit history have their
record made here. Each record holds only what its document shows, and nothing that depends on the clock,
so the same stored record gives the same hash and the same PDF; the one exception is the history's inspections
missed, which are missed as of when it is made.
"""
from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import joinedload

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import shown
from inspect_app.certifications import services as certifications
from inspect_app.certifications.models import OMCertification
from inspect_app.completion.models import CertificateOfCompletion, FinalSubmission
from inspect_app.enforcement.models import NoticeOfViolation, StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from inspect_app.inspections import canonical, queries as inspection_queries
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.schedule import missed
from inspect_app.types import canonical_json, utcnow


def sha256_of(record: dict[str, Any]) -> str:
    """SHA-256 (hex) of a record's canonical JSON."""
    return hashlib.sha256(canonical_json(record)).hexdigest()



def user_name(user_id: str | None) -> str | None:
    """The name of the user `user_id`, or None."""
    user = db.session.get(User, user_id) if user_id else None
    return user.name if user else None


def _permit_part(permit: Permit) -> dict[str, Any]:
    return {"id": permit.id, "number": permit.number, "site_address": permit.site_address,
            "town": permit.jurisdiction.name, "owner_name": permit.owner_name,
            "applicant_name": permit.applicant_name}


def _finding_part(finding: Finding) -> dict[str, Any]:
    return {"id": finding.id, "inspection_id": finding.inspection_id, "description": finding.description,
            "location": finding.location, "severity": finding.severity, "is_violation": finding.is_violation,
            "citation": finding.citation, "status": finding.status, "created_at": finding.created_at}


# -- inspection report ------------------------------------------------------------------------------

def inspection_sha256(inspection: Inspection) -> str:
    """The report's record hash: the one sealed on submit, else (a draft) computed from its record now."""
    return inspection.record_sha256 or canonical.record_hash(inspection)


# -- notice of violation and stop-work order ---------------------------------------------------------

def stop_work_record(order: StopWorkOrder) -> dict[str, Any]:
    """The stop-work order with its reasons, linked findings, notices of violation and its lifting."""
    notices = db.session.scalars(select(NoticeOfViolation).where(NoticeOfViolation.stop_work_order_id == order.id)
                                 .order_by(NoticeOfViolation.issued_at, NoticeOfViolation.id))
    return {
        "id": order.id,
        "permit": _permit_part(db.session.get(Permit, order.permit_id)),
        "reason": order.reason,
        "inspection_id": order.inspection_id,
        "findings": [_finding_part(f) for f in sorted(order.findings, key=lambda f: (f.created_at, f.id))],
        "issued_by": user_name(order.issued_by_id), "issued_at": order.issued_at,
        "acknowledged_by": user_name(order.acknowledged_by_id), "acknowledged_at": order.acknowledged_at,
        "lifted_by": user_name(order.lifted_by_id), "lifted_at": order.lifted_at, "lift_reason": order.lift_reason,
        "approval_inspection_id": order.approval_inspection_id,
        "notices": [{"id": n.id, "text": n.text, "issued_by": user_name(n.issued_by_id), "issued_at": n.issued_at,
                     "inspection_id": n.inspection_id} for n in notices],
    }


# -- certificate of completion -----------------------------------------------------------------------

def certificate_of(permit: Permit) -> CertificateOfCompletion | None:
    """The permit's certificate of completion, once issued."""
    return db.session.scalar(select(CertificateOfCompletion).where(CertificateOfCompletion.permit_id == permit.id))


def accepted_submissions(permit: Permit) -> list[FinalSubmission]:
    """The latest accepted final submission of each kind, in the order §380-18 A-C lists them."""
    query = (select(FinalSubmission).where(FinalSubmission.permit_id == permit.id, FinalSubmission.status == "accepted")
             .order_by(FinalSubmission.reviewed_at.desc(), FinalSubmission.submitted_at.desc(), FinalSubmission.id))
    latest: dict[str, FinalSubmission] = {}
    for submission in db.session.scalars(query):
        latest.setdefault(submission.kind, submission)
    return [latest[kind] for kind in ("om_plan", "as_built", "final_report") if kind in latest]


def certificate_record(certificate: CertificateOfCompletion) -> dict[str, Any]:
    """The certificate of completion with the accepted final submissions it rests on (§380-18)."""
    permit = db.session.get(Permit, certificate.permit_id)
    profile = profile_of(permit)
    submissions = []
    for s in accepted_submissions(permit):
        final = db.session.get(Inspection, s.inspection_id) if s.inspection_id else None
        submissions.append({
            "id": s.id, "kind": s.kind, "blob_sha256": s.blob_sha256, "registry_reference": s.registry_reference,
            "pe_certified": s.pe_certified, "submitted_at": s.submitted_at, "reviewed_at": s.reviewed_at,
            "reviewed_by": user_name(s.reviewed_by_id), "review_note": s.review_note,
            "inspection": {"id": final.id, "performed_at": final.performed_at, "record_sha256": final.record_sha256}
            if final else None,
        })
    return {
        "id": certificate.id,
        "permit": {**_permit_part(permit), "completed_on": permit.completed_on},
        "authority_title": profile.authority_title, "registry_of_deeds": profile.registry_of_deeds,
        "regulation": profile.regulation,
        "issued_by": user_name(certificate.issued_by_id), "issued_at": certificate.issued_at,
        "note": certificate.note,
        # The required inspections waived with their reasons and the inspections missed, as issued (None: a
        # certificate issued before certificates kept them).
        "inspections": certificate.contents,
        "submissions": submissions,
        # The one recorded fact the O&M certification reads too (certifications.plan_recording).
        "om_plan": certifications.plan_recording(permit),
        "easements": certifications.easement_rows(permit),
        "om_certification_months": profile.om_certification.months,
    }


# -- annual O&M certification ------------------------------------------------------------------------

def certification_record(certification: OMCertification) -> dict[str, Any]:
    """The certification as its domain freezes it (period, log entries, missing tasks, signer, review)."""
    return certifications.certification_record(certification)


# -- permit history ----------------------------------------------------------------------------------

def history_inspections(permit: Permit) -> list[Inspection]:
    """Every inspection of the permit, oldest first; a draft is nobody's record yet but its author's."""
    query = (select(Inspection).where(Inspection.permit_id == permit.id, shown(None, Inspection))
             .options(joinedload(Inspection.inspector)))
    return list(db.session.scalars(query.order_by(Inspection.performed_at, Inspection.id)))


def open_findings(permit: Permit) -> list[Finding]:
    """Findings not yet corrected, oldest first."""
    query = select(Finding).where(Finding.permit_id == permit.id, Finding.status != "corrected",
                                  shown(None, Finding))
    return list(db.session.scalars(query.order_by(Finding.created_at, Finding.id)))


def open_actions(permit: Permit) -> list[CorrectiveAction]:
    """Corrective actions not yet completed, earliest deadline first."""
    query = select(CorrectiveAction).where(CorrectiveAction.permit_id == permit.id,
                                           CorrectiveAction.completed_at.is_(None), shown(None, CorrectiveAction))
    return list(db.session.scalars(query.order_by(CorrectiveAction.due_at, CorrectiveAction.id)))


def history_record(permit: Permit, now: dt.datetime | None = None) -> dict[str, Any]:
    """One row per inspection (date, type, inspector, evaluation, status, weather), every stop-work order, every
    inspection missed as of `now` (made late or never), open findings and actions."""
    try:
        late = [m.as_record() for m in missed.missed_inspections(permit, now or utcnow())]
    except missed.ScheduleUnknown as error:
        late = [{"problem": str(error)}]
    return {
        "permit": {**_permit_part(permit), "status": permit.status, "issued_on": permit.issued_on,
                   "construction_started_on": permit.construction_started_on, "completed_on": permit.completed_on},
        "inspections": [{
            "id": i.id, "type": i.type, "status": i.status, "performed_at": i.performed_at,
            "inspector_name": i.inspector_name, "inspector_credentials": i.inspector_credentials,
            "evaluation": i.evaluation, "weather_status": i.weather_status, "temperature_c": i.temperature_c,
            "conditions": i.conditions, "observed_weather": i.observed_weather, "precip_24h_mm": i.precip_24h_mm,
            "precip_hours": i.precip_hours,
            "gauge_precip_mm": i.gauge_precip_mm, "notice_given": i.notice_given, "by_authority": i.by_authority,
            "under_stop_work": i.under_stop_work, "amends_id": i.amends_id, "record_sha256": i.record_sha256,
            # Who signed an amendment of someone else's report (SPEC *Signatures*: it "says so everywhere").
            "amended_by_another": inspection_queries.amended_by_another(i),
        } for i in history_inspections(permit)],
        "open_findings": [_finding_part(f) for f in open_findings(permit)],
        "open_actions": [{"id": a.id, "finding_id": a.finding_id, "kind": a.kind, "description": a.description,
                          "owner_name": a.owner_name, "discovered_at": a.discovered_at, "due_at": a.due_at,
                          "status": a.status} for a in open_actions(permit)],
        "orders": [_order_part(o) for o in db.session.scalars(select(StopWorkOrder).where(
            StopWorkOrder.permit_id == permit.id).order_by(StopWorkOrder.issued_at, StopWorkOrder.id))],
        "missed": late,
    }


def _order_part(order: StopWorkOrder) -> dict[str, Any]:
    found_by = order.inspection
    return {"id": order.id, "issued_at": order.issued_at, "issued_by": user_name(order.issued_by_id),
            "reason": order.reason, "inspection_type": found_by.type if found_by is not None else None,
            "findings": len(order.findings), "notices": len(order.notices),
            "acknowledged_at": order.acknowledged_at, "lifted_at": order.lifted_at,
            "lifted_by": user_name(order.lifted_by_id), "lift_reason": order.lift_reason}
