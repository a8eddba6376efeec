"""The town's documents as PDF bytes: frozen once when signed or issued, or (the history) when downloaded.

A signed or issued document (inspection report, notice of violation and stop-work order, certificate of
completion, O&M certification) is rendered once, in the transaction that signs or issues it: its PDF goes
to the blob store, a `FrozenDocument` row names it, and every download after serves those bytes, so names,
owners and parties stay those at signing. What the town does to it later (an amended report, weather
filled in, an order acknowledged or lifted, a certification reviewed) freezes a new version that amends
the one before; the old one stays downloadable. The permit history is a report of the present, saying when it
was generated: frozen on download, with its id and QR code, as a new version only once its record has changed.

Freezing follows the audit log: the actions in `FREEZE_ON`, noted as their entries are flushed, freeze
their document just before the commit (and before the audit entries are sealed), whichever path made them:
a form, a sync push, a command.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import hashlib
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flask import url_for
from sqlalchemy import event, exists, select
from sqlalchemy.orm import Session

from inspect_app import held_rows
from inspect_app.blobs import files
from inspect_app.accounts.policy import sees
from inspect_app.audit import services as audit
from inspect_app.audit.models import AuditEntry
from inspect_app.certifications.models import OMCertification
from inspect_app.completion.models import CertificateOfCompletion
from inspect_app.documents import records, reports
from inspect_app.documents.builder import Document, render
from inspect_app.documents.models import FrozenDocument
from inspect_app.enforcement.models import NoticeOfViolation, StopWorkOrder
from inspect_app.extensions import db
from inspect_app.links import public_link
from inspect_app.inspections import queries
from inspect_app.inspections.models import Inspection
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.types import local, new_id, utcnow

# audit action -> (document kind, what makes this version)
FREEZE_ON = {
    "inspection.submit": ("inspection_report", "signed and submitted"),
    "inspection.reseal": ("inspection_report", "pending weather filled in"),
    "stop_work.issue": ("stop_work_order", "issued"),
    "stop_work.acknowledge": ("stop_work_order", "acknowledged"),
    "stop_work.lift": ("stop_work_order", "lifted"),
    "violation.notice": ("stop_work_order", "notice of violation added"),
    "certificate.issue": ("certificate_of_completion", "issued"),
    "om_certification.submit": ("om_certification", "signed and submitted"),
    "om_certification.review": ("om_certification", "reviewed"),
}
_TO_FREEZE = "documents_to_freeze"


def inspection_report_pdf(inspection: Inspection, occasion: str = "signed and submitted") -> bytes:
    """The inspection report (§380-16 C(4)(f)[1]) as PDF bytes: the frozen document once submitted, frozen now
    for `occasion` (what made this version: FREEZE_ON's words) where its record has no version yet."""
    if inspection.is_submitted:
        return pdf_bytes(freeze("inspection_report", inspection, occasion))
    return rendered_report_pdf(inspection)


def rendered_report_pdf(inspection: Inspection) -> bytes:
    """The inspection report rendered from the record now (a draft's; what freezing a report costs)."""
    pdf = render(reports.inspection_report(inspection))
    # reportlab leaves the finished document, with every embedded photo, in reference cycles: free them
    # now rather than at some later collection, so two reports in a row never hold both sets of photos.
    gc.collect()
    return pdf


# -- frozen documents --------------------------------------------------------------------------------

def current_document(kind: str, subject_id: str) -> FrozenDocument | None:
    """The latest frozen version of a record's document (None if it was never frozen)."""
    query = (select(FrozenDocument).where(FrozenDocument.kind == kind, FrozenDocument.subject_id == subject_id)
             .order_by(FrozenDocument.frozen_at.desc(), FrozenDocument.id))
    versions = list(db.session.scalars(query))
    amended = {v.amends_id for v in versions}
    latest = [v for v in versions if v.id not in amended]
    return latest[0] if latest else None


def amendment_of(document: FrozenDocument) -> FrozenDocument | None:
    """The version that amends `document`, if there is one (the first made, where an earlier release let two)."""
    return db.session.scalar(select(FrozenDocument).where(FrozenDocument.amends_id == document.id)
                             .order_by(FrozenDocument.frozen_at, FrozenDocument.id).limit(1))


def _latest_in_chain(kind: str, document: FrozenDocument) -> FrozenDocument:
    """The latest version of a report's document, following from `document` the version that first amended each,
    whichever report's it is: a report corrected twice is corrected by its second amendment's document after its
    first's, in one line, so each version's check page (/verify) names the one made after it. (An original whose
    weather is filled in after it was amended gets a version of its own beside that line, not at its end: the
    corrections stay the report's latest word.)"""
    seen = {document.id}
    while (later := amendment_of(document)) is not None and later.id not in seen:
        document = current_document(kind, later.subject_id) or later
        seen.add(document.id)
    return document


class AlteredDocument(Exception):
    """The stored file of a frozen document is not the PDF that was frozen: it is gone, or its bytes were
    changed on disk (they no longer hash to the SHA-256 the document row keeps). It is never served."""

    def __init__(self, document: FrozenDocument, found_sha256: str | None) -> None:
        found = "the file is missing" if found_sha256 is None else f"the file hashes to {found_sha256}"
        super().__init__(f"its PDF file does not match the SHA-256 {document.pdf_sha256} it was frozen with "
                         f"({found}): it was altered or lost outside the app")
        self.document = document


def pdf_bytes(document: FrozenDocument) -> bytes:
    """The frozen PDF, byte for byte as it was frozen; AlteredDocument if the stored file is not that PDF."""
    try:
        with files.blob_store().open(document.pdf_sha256) as stream:
            data = stream.read()
    except FileNotFoundError:
        raise AlteredDocument(document, None) from None
    found = hashlib.sha256(data).hexdigest()
    if found != document.pdf_sha256:
        raise AlteredDocument(document, found)
    return data


@dataclass(frozen=True)
class FileCheck:
    """What re-hashing the frozen documents' files found: how many are the PDFs frozen, and each that is not."""

    intact: int
    problems: list[str]


def check_frozen_files(batch: int = 2000) -> FileCheck:
    """Re-hash the stored PDF of every frozen document (`flask audit verify`), one file at a time, streamed."""
    store, intact, problems = files.blob_store(), 0, []
    query = select(FrozenDocument.id, FrozenDocument.pdf_sha256).order_by(FrozenDocument.id)
    rows = db.session.execute(query.execution_options(yield_per=batch))
    try:
        for document in rows:
            found = store.stored_sha256(document.pdf_sha256)
            if found == document.pdf_sha256:
                intact += 1
            else:
                problems.append(f"{FrozenDocument.__tablename__} {document.id}: {AlteredDocument(document, found)}")
    finally:
        rows.close()
    return FileCheck(intact, problems)


def verify_url(document_id: str) -> str:
    """Where anyone can verify a document: under PUBLIC_URL (config.public_url), never the request's host."""
    return public_link("verify.verify", document_id=document_id)


def freeze(kind: str, subject, occasion: str, note: str | None = None,
           now: dt.datetime | None = None) -> FrozenDocument:
    """The document of `subject` as it stands, frozen; the current version if its record has not changed.

    `note`, printed on each page, says how this version came to be when that is not the signing itself.
    """
    record_sha, layout = _layout(kind, subject, now)
    current = current_document(kind, subject.id)
    if current is not None and current.record_sha256 == record_sha:
        return current
    declared = KINDS[kind]
    if current is None and declared.follows_amendments and subject.amends_id:
        # An amended report amends the original's document: the latest version of its line, from the first.
        first = db.session.scalar(select(FrozenDocument).where(
            FrozenDocument.kind == kind, FrozenDocument.subject_id == subject.amends_id)
            .order_by(FrozenDocument.frozen_at, FrozenDocument.id).limit(1))
        current = _latest_in_chain(kind, first) if first is not None else None
    document_id = new_id()
    pdf = render(dataclasses.replace(layout, document_id=document_id, verify_url=verify_url(document_id),
                                     generated_text=note))
    gc.collect()
    signed_by, signed_at = _signer(kind, subject, occasion)
    document = FrozenDocument(
        id=document_id, kind=kind, subject_id=subject.id, title=declared.title,
        permit_id=subject.id if declared.subject is Permit else subject.permit_id,
        pdf_sha256=files.store_file(pdf, "application/pdf"), pdf_size=len(pdf), record_sha256=record_sha,
        signed_by=signed_by, signed_at=signed_at, occasion=occasion,
        amends_id=current.id if current is not None else None)
    db.session.add(document)
    audit.record(None, "document.freeze", document)
    return document


def _layout(kind: str, subject, now: dt.datetime | None = None) -> tuple[str, Document]:
    """The record's hash and the document laid out from the record as it stands now."""
    return KINDS[kind].layout(subject, now)


def made_by(kind: str, subject, profile) -> str | None:
    """Who made the document of `subject`: the report's engineer (or the town's agent), the certification's
    responsible party; None for what the town issues itself (an order, a certificate, the history)."""
    return KINDS[kind].maker(subject, profile)


def _signer(kind: str, subject, occasion: str) -> tuple[str | None, dt.datetime | None]:
    """Who made this version and when: the signer or issuer, or whoever acknowledged, lifted or reviewed."""
    return KINDS[kind].signer(subject, occasion)


def _final(kind: str, subject) -> bool:
    """Whether the record is signed or issued (a rolled-back savepoint may have undone the action)."""
    return subject is not None and (not KINDS[kind].follows_amendments or subject.is_submitted)


# -- the document kinds ------------------------------------------------------------------------------

def _history_layout(permit: Permit, now: dt.datetime | None) -> tuple[str, Document]:
    record = records.history_record(permit, now)
    sha = records.sha256_of(record)
    return sha, reports.permit_history(record, permit, sha)


def _report_layout(inspection: Inspection, now: dt.datetime | None) -> tuple[str, Document]:
    layout = reports.inspection_report(inspection)
    return layout.record_sha256, layout


def _order_layout(order: StopWorkOrder, now: dt.datetime | None) -> tuple[str, Document]:
    record = records.stop_work_record(order)
    sha = records.sha256_of(record)
    return sha, reports.stop_work_order(record, db.session.get(Permit, order.permit_id), sha)


def _certificate_layout(certificate: CertificateOfCompletion, now: dt.datetime | None) -> tuple[str, Document]:
    record = records.certificate_record(certificate)
    sha = records.sha256_of(record)
    return sha, reports.certificate_of_completion(record, db.session.get(Permit, certificate.permit_id), sha)


def _certification_layout(certification: OMCertification, now: dt.datetime | None) -> tuple[str, Document]:
    record = records.certification_record(certification)
    sha = records.sha256_of(record)
    return sha, reports.om_certification(record, db.session.get(Permit, certification.permit_id), sha)


def _nobody(subject, occasion: str) -> tuple[str | None, dt.datetime | None]:
    return None, None  # a report the town's record makes of itself, signed by nobody


def _report_signer(inspection: Inspection, occasion: str) -> tuple[str | None, dt.datetime | None]:
    if occasion == "pending weather filled in":
        return "the server (weather filled in)", inspection.weather_fetched_at or utcnow()
    return inspection.signer_name or inspection.inspector_name, inspection.signed_at or inspection.submitted_at


def _order_signer(order: StopWorkOrder, occasion: str) -> tuple[str | None, dt.datetime | None]:
    name = records.user_name
    if order.lifted_at:
        return name(order.lifted_by_id), order.lifted_at
    if occasion == "acknowledged" and order.acknowledged_at:
        return name(order.acknowledged_by_id), order.acknowledged_at
    return name(order.issued_by_id), order.issued_at


def _issuer(certificate: CertificateOfCompletion, occasion: str) -> tuple[str | None, dt.datetime | None]:
    return records.user_name(certificate.issued_by_id), certificate.issued_at


def _certification_signer(certification: OMCertification, occasion: str) -> tuple[str | None, dt.datetime | None]:
    """The responsible party who signed it (§380-14 C(2)(l): the certification is theirs), and on its reviewed
    version the agent who reviewed it beside them, at the review's time (the version named the agent alone)."""
    if certification.reviewed_at:
        return (f"{certification.signer_name}; reviewed by {records.user_name(certification.reviewed_by_id)}",
                certification.reviewed_at)
    return certification.signer_name, certification.submitted_at


def _town_issues(subject, profile) -> str | None:
    return None  # the town issues it itself: no other maker is named


def _report_maker(inspection: Inspection, profile) -> str | None:
    return reports.report_maker(inspection, profile)


def _certification_maker(certification: OMCertification, profile) -> str | None:
    return reports.certification_maker(certification.signer_name)


@dataclass(frozen=True)
class DocumentKind:
    """A kind of document kept in the town's record, declared once: its title, the record it is of, how it is
    laid out and hashed, who signed each version, and who made it where the town did not."""

    title: str
    subject: type
    layout: Callable[[Any, dt.datetime | None], tuple[str, Document]]
    signer: Callable[[Any, str], tuple[str | None, dt.datetime | None]]
    maker: Callable[[Any, Any], str | None] = _town_issues
    # A report: frozen once submitted, and an amendment's document amends the original's.
    follows_amendments: bool = False


KINDS: dict[str, DocumentKind] = {
    "inspection_report": DocumentKind("Inspection report", Inspection, _report_layout, _report_signer,
                                      _report_maker, follows_amendments=True),
    "stop_work_order": DocumentKind("Notice of violation and stop-work order", StopWorkOrder, _order_layout,
                                    _order_signer),
    "certificate_of_completion": DocumentKind("Certificate of completion", CertificateOfCompletion,
                                              _certificate_layout, _issuer),
    "om_certification": DocumentKind("O&M certification", OMCertification, _certification_layout,
                                     _certification_signer, _certification_maker),
    "permit_history": DocumentKind("Inspection history", Permit, _history_layout, _nobody),
}
TITLES = {key: kind.title for key, kind in KINDS.items()}
# The kinds whose record is another record's (not the permit's own history), by their model.
_SUBJECTS = {key: kind.subject for key, kind in KINDS.items() if kind.subject is not Permit}


def install_freezing() -> None:
    """Freeze documents at every commit whose audit log signed or issued one (once per process).

    Installed by create_app before the audit log's commit numbering, so the freeze's own entries are sealed.
    """
    if not event.contains(Session, "before_commit", _freeze_noted):
        event.listen(Session, "after_flush", _note_actions)
        event.listen(Session, "before_commit", _freeze_noted)
        event.listen(Session, "after_rollback", _forget_noted)


def _note_actions(session: Session, flush_context) -> None:
    for obj in session.new:
        if isinstance(obj, AuditEntry) and obj.action in FREEZE_ON:
            session.info.setdefault(_TO_FREEZE, []).append((obj.action, obj.entity_id))


def _forget_noted(session: Session) -> None:
    session.info.pop(_TO_FREEZE, None)


def _freeze_noted(session: Session) -> None:
    if session.in_nested_transaction():
        return
    session.flush()
    for action, entity_id in dict.fromkeys(session.info.pop(_TO_FREEZE, [])):
        kind, occasion = FREEZE_ON[action]
        if action == "violation.notice":  # a notice joins its order's document, if it was given under one
            notice = session.get(NoticeOfViolation, entity_id)
            entity_id = notice.stop_work_order_id if notice is not None else None
            if entity_id is None:
                continue
        subject = session.get(_SUBJECTS[kind], entity_id)
        if _final(kind, subject):
            freeze(kind, subject, occasion)
    session.flush()


def stop_work_order_pdf(order: StopWorkOrder) -> bytes:
    """The notice of violation and stop-work order (§380-16 C(4)(e)[5]) as PDF bytes."""
    return _frozen_or_rendered("stop_work_order", order)


def certificate_pdf(permit: Permit) -> bytes | None:
    """The certificate of completion (§380-18) as PDF bytes; None until it is issued."""
    certificate = records.certificate_of(permit)
    if certificate is None:
        return None
    return _frozen_or_rendered("certificate_of_completion", certificate)


def om_certification_pdf(certification: OMCertification) -> bytes:
    """The annual O&M certification (§380-14 C(2)(l)) as PDF bytes."""
    return _frozen_or_rendered("om_certification", certification)


def report_download_pdf(inspection: Inspection) -> bytes:
    """The inspection report to download: the frozen one if there is one, else (a draft) rendered now."""
    return _frozen_or_rendered("inspection_report", inspection)


def _frozen_or_rendered(kind: str, subject) -> bytes:
    """The latest frozen version; a record from before documents were frozen (or a draft) is rendered now.

    A signed record rendered now says so on each page: it is the record as it stands, not what was signed
    (`flask documents freeze-existing` freezes such records once, see `freeze_existing`).
    """
    document = current_document(kind, subject.id)
    if document is not None:
        return pdf_bytes(document)
    layout = _layout(kind, subject)[1]
    if _final(kind, subject):
        # The day only: two downloads of one record the same day are the same bytes.
        layout = dataclasses.replace(layout, generated_text=f"Rendered {local(utcnow()):%b %-d, %Y} from the record "
                                                            "as it stands now; not frozen at signing.")
    pdf = render(layout)
    gc.collect()
    return pdf


def _when(moment: dt.datetime) -> str:
    return f"{local(moment):%b %-d, %Y %-I:%M %p %Z}"


def freeze_existing(now: dt.datetime | None = None) -> int:
    """Freeze, once, each signed or issued record that has no frozen document (it was signed before documents
    were frozen): rendered from the record as it stands, and saying so on each page and on the verify page.

    Run once after upgrading (`flask documents freeze-existing`); running it again freezes nothing more.
    Committed one record at a time, so an interrupted run resumes where it stopped.
    """
    when = _when(now or utcnow())
    occasion = f"frozen {when} from the record, not at signing"
    note = (f"Frozen {when} from the record as it then stood, not at signing: signed before this system "
            "froze documents.")
    frozen = 0
    for kind, model in _SUBJECTS.items():
        query = select(model.id).where(~exists().where(FrozenDocument.kind == kind,
                                                       FrozenDocument.subject_id == model.id))
        if KINDS[kind].follows_amendments:  # a report: only once submitted
            query = query.where(model.status == "submitted")
        for subject_id in db.session.scalars(query.order_by(model.id)).all():
            freeze(kind, db.session.get(model, subject_id), occasion, note)
            db.session.commit()
            frozen += 1
    return frozen


def history_document(permit: Permit, now: dt.datetime | None = None) -> FrozenDocument:
    """The permit's inspection history: a report of the present, saying when it was generated, frozen with its
    document id and QR code so a copy can be verified; the same version while its record is unchanged. The
    caller commits."""
    now = now or utcnow()
    note = f"Generated {_when(now)}; a report of the record as it stood then."
    return freeze("permit_history", permit, "generated", note, now)


def history_pdf(permit: Permit, now: dt.datetime | None = None) -> bytes:
    """The permit's inspection history as PDF bytes (`history_document`). The caller commits."""
    return pdf_bytes(history_document(permit, now))


def filename(*parts: str) -> str:
    """A download file name from its parts: letters, digits, dots and dashes only."""
    return re.sub(r"[^A-Za-z0-9.-]+", "-", "-".join(parts)).strip("-") + ".pdf"


@dataclass(frozen=True)
class Download:
    """One document a user may download: what it is, when it is from, and where."""

    label: str
    detail: str
    url: str
    made_on_request: bool = False  # a document made when asked (the history): a form that posts, not a link


def inspection_visible(user, inspection: Inspection) -> bool:
    """Submitted reports to whoever sees the permit; a draft to its author alone (the policy's rule)."""
    return queries.sees_report(user, inspection)


def downloads(permit: Permit, reports: Sequence[queries.ListedReport], orders: Sequence[StopWorkOrder],
              certificate: CertificateOfCompletion | None) -> list[Download]:
    """The documents of `permit` for the permit page, as the page has read them already: one for each of
    `reports` (the permit's reports the user may download, `inspection_visible`, newest first), of `orders`
    (its stop-work orders, newest first) and for its certificate of completion when issued."""
    found = [Download("Inspection history", permit.number, url_for("documents.history", permit_id=permit.id),
                      made_on_request=True)]
    if certificate is not None:
        found.append(Download("Certificate of completion", permit.number,
                              url_for("documents.certificate", permit_id=permit.id)))
    found += [Download("Notice of violation and stop-work order", f"issued {local(o.issued_at):%Y-%m-%d}",
                       url_for("documents.stop_work_order", order_id=o.id)) for o in orders]
    certifications = [] if held_rows.none_of(OMCertification.permit_id, permit.id) else db.session.scalars(
        select(OMCertification).where(OMCertification.permit_id == permit.id)
        .order_by(OMCertification.period_start.desc(), OMCertification.id))
    found += [Download("O&M certification", f"{c.period_start:%Y-%m-%d} to {c.period_end:%Y-%m-%d}",
                       url_for("documents.om_certification", certification_id=c.id)) for c in certifications]
    found += [Download("Inspection report" + ("" if i.is_submitted else " (draft)"),
                       f"{i.type.replace('_', '-')}, {local(i.performed_at):%Y-%m-%d}",
                       url_for("documents.inspection_report", inspection_id=i.id))
              for i in reports if not i.is_blank]  # a Start with nothing kept since has nothing to print
    # Versions a later one amends stay downloadable as they were frozen (a history's earlier versions are only
    # reports of an earlier present: each is checked at /verify, not listed).
    amended = select(FrozenDocument.amends_id).where(FrozenDocument.amends_id.is_not(None))
    earlier = [] if held_rows.none_of(FrozenDocument.permit_id, permit.id) else db.session.scalars(
        select(FrozenDocument).where(FrozenDocument.permit_id == permit.id, FrozenDocument.id.in_(amended),
                                     FrozenDocument.kind.in_(_SUBJECTS))
        .order_by(FrozenDocument.frozen_at.desc(), FrozenDocument.id))
    found += [Download(f"{d.title} (earlier version)", f"{d.occasion}, {local(d.frozen_at):%Y-%m-%d %H:%M}",
                       url_for("documents.frozen", document_id=d.id)) for d in earlier]
    return found


# -- verification ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verification:
    """What the public page says of a frozen document, and nothing else of the record."""

    document: FrozenDocument
    town: str
    permit_number: str
    amended_by: FrozenDocument | None
    amendment_url: str | None  # only for a viewer who may see the permit
    # An amended report signed by someone else than the report it corrects: "amendment by C of a report by A".
    amended_by_another: str | None = None
    record_of: str = ""  # whose record keeps it: "Town of Longmeadow, Department of Public Works"
    made_by: str | None = None  # its maker where the town did not issue it (an engineer, an owner)
    # The later version, when it is an amendment by someone else than the report's inspector: said on the
    # original's page too (SPEC *Signatures*: "everywhere the document is shown or checked").
    amended_by_another_later: str | None = None


def verification(document_id: str, viewer) -> Verification | None:
    """The facts the public verify page shows; None for an id that names no frozen document."""
    document = db.session.get(FrozenDocument, _canonical_uuid(document_id)) if _canonical_uuid(document_id) else None
    if document is None:
        return None
    permit = db.session.get(Permit, document.permit_id)
    amended_by = amendment_of(document)
    url = None
    if amended_by is not None and getattr(viewer, "is_authenticated", False) and sees(viewer, permit):
        url = url_for("documents.frozen", document_id=amended_by.id)
    report = db.session.get(Inspection, document.subject_id) if KINDS[document.kind].subject is Inspection else None
    another = queries.amended_by_another(report) if report is not None else None
    later = (db.session.get(Inspection, amended_by.subject_id)
             if amended_by is not None and KINDS[amended_by.kind].subject is Inspection else None)
    profile = profile_of(permit)
    subject = db.session.get(_SUBJECTS[document.kind], document.subject_id) if document.kind in _SUBJECTS else None
    return Verification(document, permit.jurisdiction.name, permit.number, amended_by, url, another,
                        record_of=f"{reports.town_of(profile)}, {profile.authority_body}",
                        made_by=made_by(document.kind, subject, profile) if subject is not None else None,
                        amended_by_another_later=queries.amended_by_another(later) if later is not None else None)


def visible_document(user, document_id: str) -> FrozenDocument | None:
    """A frozen document `user` may download: of a permit they see (submitted reports only, as ever)."""
    key = _canonical_uuid(document_id)
    document = db.session.get(FrozenDocument, key) if key else None
    if document is None or not sees(user, db.session.get(Permit, document.permit_id)):
        return None
    return document


def compare_upload(document: FrozenDocument, stream) -> tuple[bool, str]:
    """(same bytes?, the upload's SHA-256): a PDF is genuine only if it hashes to what was frozen."""
    digest = hashlib.sha256()
    while chunk := stream.read(1024 * 1024):
        digest.update(chunk)
    return digest.hexdigest() == document.pdf_sha256, digest.hexdigest()


def _canonical_uuid(value: str) -> str | None:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None
