"""The town's documents as PDF bytes, made from the stored record alone (no clock, no state change).

`inspection_report_pdf` is what the submit email attaches; the views send the others for download.
"""
from __future__ import annotations

import gc
import re
from dataclasses import dataclass

from flask import url_for
from sqlalchemy import select

from inspect_app.accounts.policy import sees_report
from inspect_app.certifications.models import OMCertification
from inspect_app.documents import records, reports
from inspect_app.documents.builder import render
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.permits.models import Permit
from inspect_app.types import local


def inspection_report_pdf(inspection: Inspection) -> bytes:
    """The inspection report (§380-16 C(4)(f)[1]) as PDF bytes."""
    pdf = render(reports.inspection_report(inspection))
    # reportlab leaves the finished document, with every embedded photo, in reference cycles: free them
    # now rather than at some later collection, so two reports in a row never hold both sets of photos.
    gc.collect()
    return pdf


def stop_work_order_pdf(order: StopWorkOrder) -> bytes:
    """The notice of violation and stop-work order (§380-16 C(4)(e)[5]) as PDF bytes."""
    record = records.stop_work_record(order)
    return render(reports.stop_work_order(record, db.session.get(Permit, order.permit_id), records.sha256_of(record)))


def certificate_pdf(permit: Permit) -> bytes | None:
    """The certificate of completion (§380-18) as PDF bytes; None until it is issued."""
    certificate = records.certificate_of(permit)
    if certificate is None:
        return None
    record = records.certificate_record(certificate)
    return render(reports.certificate_of_completion(record, permit, records.sha256_of(record)))


def om_certification_pdf(certification: OMCertification) -> bytes:
    """The annual O&M certification (§380-14 C(2)(l)) as PDF bytes."""
    record = records.certification_record(certification)
    permit = db.session.get(Permit, certification.permit_id)
    return render(reports.om_certification(record, permit, records.sha256_of(record)))


def history_pdf(permit: Permit) -> bytes:
    """The permit's inspection history as PDF bytes."""
    record = records.history_record(permit)
    return render(reports.permit_history(record, permit, records.sha256_of(record)))


def filename(*parts: str) -> str:
    """A download file name from its parts: letters, digits, dots and dashes only."""
    return re.sub(r"[^A-Za-z0-9.-]+", "-", "-".join(parts)).strip("-") + ".pdf"


@dataclass(frozen=True)
class Download:
    """One document a user may download: what it is, when it is from, and where."""

    label: str
    detail: str
    url: str


def inspection_visible(user, inspection: Inspection) -> bool:
    """Submitted reports to whoever sees the permit; a draft to its author alone (the policy's rule)."""
    return sees_report(user, inspection)


def downloads(user, permit: Permit) -> list[Download]:
    """The documents of `permit` that `user` may download, for the permit page."""
    found = [Download("Inspection history", permit.number, url_for("documents.history", permit_id=permit.id))]
    if records.certificate_of(permit) is not None:
        found.append(Download("Certificate of completion", permit.number,
                              url_for("documents.certificate", permit_id=permit.id)))
    orders = db.session.scalars(select(StopWorkOrder).where(StopWorkOrder.permit_id == permit.id)
                                .order_by(StopWorkOrder.issued_at.desc(), StopWorkOrder.id))
    found += [Download("Notice of violation and stop-work order", f"issued {local(o.issued_at):%Y-%m-%d}",
                       url_for("documents.stop_work_order", order_id=o.id)) for o in orders]
    certifications = db.session.scalars(select(OMCertification).where(OMCertification.permit_id == permit.id)
                                        .order_by(OMCertification.period_start.desc(), OMCertification.id))
    found += [Download("O&M certification", f"{c.period_start:%Y-%m-%d} to {c.period_end:%Y-%m-%d}",
                       url_for("documents.om_certification", certification_id=c.id)) for c in certifications]
    reports_ = db.session.scalars(select(Inspection).where(Inspection.permit_id == permit.id)
                                  .order_by(Inspection.performed_at.desc(), Inspection.id))
    found += [Download("Inspection report" + ("" if i.is_submitted else " (draft)"),
                       f"{i.type.replace('_', '-')}, {local(i.performed_at):%Y-%m-%d}",
                       url_for("documents.inspection_report", inspection_id=i.id))
              for i in reports_ if inspection_visible(user, i)]
    return found
