"""Final submissions, the certificate of completion (§380-18), surety releases (§380-17 B, Southborough §6.3).

Each change writes the audit log in the same transaction and only flushes: the caller commits.
"""
from __future__ import annotations

import decimal
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import exists, func, select
from sqlalchemy.orm import aliased

from inspect_app import held_rows, inspection_types
from inspect_app.accounts.policy import shown
from inspect_app.rules import short_citation
from inspect_app.rules.trace import implements
from inspect_app.profiles.schema import Profile
from inspect_app.audit import services as audit
from inspect_app.completion.models import (
    SUBMISSION_KINDS, CertificateOfCompletion, FinalSubmission, SuretyRelease,
)
from inspect_app.certifications.models import Easement, NoticeToCorrect
from inspect_app.enforcement import services as enforcement
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.blobs import files
from inspect_app.extensions import db
from inspect_app.inspections import queries
from inspect_app.inspections.models import ChecklistAnswer, CorrectiveAction, Finding, Inspection
from inspect_app.labels import SUBMISSION_KIND_LABELS
from inspect_app.mail import services as mail
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.schedule import missed
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.templating import local_time
from inspect_app.types import LOCAL_TZ, utcnow

# The reports completion rests on (§380-16 C(4)(e)): the type the registry declares the system's acceptance.
FINAL_TYPES = inspection_types.keys_where(part="system_acceptance")



def kind_citations(profile: Profile) -> dict[str, str]:
    """Each final submission's clause in the town's regulation (§380-18 A-C in Longmeadow), "" where none."""
    return {kind: profile.cite(f"{kind}_submission") for kind in SUBMISSION_KIND_LABELS}
DEFAULT_MAX_PDF_BYTES = 50 * 1024 * 1024
PDF_MAGIC = b"%PDF-"
OPEN_FOR_SUBMISSIONS = ("active", "final_submissions")


class CompletionError(ValueError):
    """A change the record does not allow; `field` names the form field it is about."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class CompletionRecord:
    """What the permit page shows of completion: submissions by kind, certificate, surety."""

    submissions: dict[str, list[FinalSubmission]]
    certificate: CertificateOfCompletion | None
    releases: list[SuretyRelease]
    released: decimal.Decimal
    kinds: tuple[str, ...] = SUBMISSION_KINDS  # those the town asks for (its profile's completion.submissions)

    def latest(self, kind: str) -> FinalSubmission | None:
        found = self.submissions[kind]
        return found[0] if found else None

    @property
    def missing(self) -> list[str]:
        """The kinds that have no accepted submission yet."""
        return [k for k in self.kinds if not any(s.status == "accepted" for s in self.submissions[k])]


def completion_record(permit: Permit) -> CompletionRecord:
    """The final submissions (newest first per kind), certificate and surety releases of `permit`."""
    by_kind: dict[str, list[FinalSubmission]] = {kind: [] for kind in SUBMISSION_KINDS}
    if not held_rows.none_of(FinalSubmission.permit_id, permit.id):
        query = select(FinalSubmission).where(FinalSubmission.permit_id == permit.id)
        for submission in db.session.scalars(query.order_by(FinalSubmission.submitted_at.desc())):
            by_kind[submission.kind].append(submission)
    releases: list[SuretyRelease] = []
    if not held_rows.none_of(SuretyRelease.permit_id, permit.id):
        query = select(SuretyRelease).where(SuretyRelease.permit_id == permit.id)
        releases = list(db.session.scalars(query.order_by(SuretyRelease.released_at)))
    return CompletionRecord(by_kind, certificate_of(permit), releases, _cents(sum(r.amount for r in releases)),
                            permits.profile_of(permit).completion.submissions)


def certificate_of(permit: Permit) -> CertificateOfCompletion | None:
    """The permit's certificate of completion, once issued."""
    if held_rows.none_of(CertificateOfCompletion.permit_id, permit.id):
        return None
    return db.session.scalar(select(CertificateOfCompletion)
                             .where(CertificateOfCompletion.permit_id == permit.id))


def surety_released(permit: Permit) -> decimal.Decimal:
    """How much of the surety has been released so far."""
    total = db.session.scalar(select(func.sum(SuretyRelease.amount))
                              .where(SuretyRelease.permit_id == permit.id))
    return _cents(total)


def _cents(total) -> decimal.Decimal:  # type: ignore[no-untyped-def]
    return decimal.Decimal(total or 0).quantize(decimal.Decimal("0.01"))


def final_inspections(permit: Permit) -> list[Inspection]:
    """Submitted final inspections of `permit` that found the work compliant, newest first: each the latest
    version of its line (one a signed amendment corrected, to "violations" perhaps, is no final report now)."""
    correction = aliased(Inspection)
    corrected = exists().where(correction.amends_id == Inspection.id, correction.status == "submitted")
    query = select(Inspection).where(Inspection.permit_id == permit.id, Inspection.type.in_(FINAL_TYPES),
                                     Inspection.status == "submitted", Inspection.evaluation == "compliant",
                                     ~corrected)
    return list(db.session.scalars(query.order_by(Inspection.performed_at.desc())))


def _final_report_corrected(record: CompletionRecord) -> str | None:
    """Why the accepted final inspection report can no longer be one: corrected since it was accepted, its latest
    version does not find the work compliant (§380-18 C: the "final inspection report"; §380-16 C(4)(e)[3])."""
    accepted = [s for s in record.submissions["final_report"] if s.status == "accepted" and s.inspection_id]
    latest = [queries.latest_version(db.session.get(Inspection, s.inspection_id)) for s in accepted]
    if not latest or any(version.evaluation == "compliant" for version in latest):
        return None
    return ("The final inspection report accepted was corrected since it was accepted: its latest version, signed "
            f"{local_time(latest[0].submitted_at)}, does not find the work compliant. Submit a final inspection "
            "report that does.")


def max_pdf_bytes() -> int:
    return int(current_app.config.get("FINAL_SUBMISSION_MAX_BYTES", DEFAULT_MAX_PDF_BYTES))


def check_pdf(data: bytes | None) -> None:
    """Refuse anything but a PDF within the size limit, before a byte is stored."""
    limit = max_pdf_bytes()
    if not data:
        raise CompletionError("pdf", "Choose the PDF file to upload.")
    if len(data) > limit:
        raise CompletionError("pdf", f"The file is larger than the limit of {limit // (1024 * 1024) or 1} MB "
                                     f"({limit:,} bytes).")
    if not data.startswith(PDF_MAGIC):
        raise CompletionError("pdf", "This file is not a PDF. Upload the document as a PDF file.")


@implements("§380-14 B", "§380-15", "§380-16 C(4)(e)[3]")
def submit(actor, permit: Permit, kind: str, *, pdf: bytes | None = None,
           registry_reference: str | None = None, pe_certified: bool = False,
           inspection: Inspection | None = None) -> FinalSubmission:
    """File one of the §380-18 final submissions; the first one moves the permit to final submissions."""
    if kind not in SUBMISSION_KINDS:
        raise CompletionError("kind", "Unknown kind of final submission.")
    profile = permits.profile_of(permit)
    if kind not in profile.completion.submissions:
        clause = short_citation(profile.completion.citation)
        raise CompletionError("kind", f"{profile.town}'s regulation asks for no "
                                      f"{SUBMISSION_KIND_LABELS[kind].lower()} before the certificate of completion "
                                      f"({clause}).")
    if permit.status not in OPEN_FOR_SUBMISSIONS:
        raise CompletionError("kind", f"A permit that is {permit.status.replace('_', '-')} takes no final "
                                      "submissions; it must be active or in final submissions.")
    taken = [s for s in completion_record(permit).submissions[kind] if s.status != "rejected"]
    if taken:
        raise CompletionError("kind", f"{SUBMISSION_KIND_LABELS[kind]} is already {taken[0].status}; a new one can be "
                                      "filed only after a rejection.")
    fields: dict = {}
    if kind == "om_plan":
        # §380-14 B: the final O&M plan is recorded at the registry of deeds, with proof filed.
        reference = (registry_reference or "").strip()
        if not reference:
            raise CompletionError("registry_reference", "Give the recording at the "
                                  f"{permits.profile_of(permit).registry_of_deeds} (book and page, or "
                                  "document number).")
        if len(reference) > 120:
            raise CompletionError("registry_reference", "Keep the reference within 120 characters.")
        fields["registry_reference"] = reference
    if kind == "as_built":
        # §380-15, §380-16 C(4)(e)[3]: as-built drawings certified with a PE's stamp.
        if not pe_certified:
            raise CompletionError("pe_certified", "As-built drawings must be certified by a Massachusetts "
                                                  "registered professional engineer.")
        fields["pe_certified"] = True
    if kind == "final_report":
        if inspection is None or inspection not in final_inspections(permit):
            raise CompletionError("inspection_id", "Choose a submitted final inspection of this permit "
                                                   "that found the work compliant.")
        fields["inspection_id"] = inspection.id
    else:
        check_pdf(pdf)
        fields["blob_sha256"] = files.store_file(pdf, "application/pdf")
    if permit.status == "active":
        permits.change_status(actor, permit, "final_submissions")
    submission = FinalSubmission(permit_id=permit.id, kind=kind, submitted_by_id=getattr(actor, "id", None),
                                 status="pending", **fields)
    db.session.add(submission)
    audit.record(actor, "final_submission.submit", submission)
    return submission


def review(actor, submission: FinalSubmission, decision: str, note: str | None = None) -> FinalSubmission:
    """Accept or reject a pending final submission; a rejection says why."""
    note = (note or "").strip() or None
    if decision not in ("accepted", "rejected"):
        raise CompletionError("decision", "Choose accept or reject.")
    if submission.status != "pending":
        raise CompletionError("decision", f"This submission was already {submission.status}.")
    if decision == "rejected" and not note:
        raise CompletionError("note", "Say why the submission is rejected, so it can be corrected.")
    before = audit.snapshot(submission)
    submission.status, submission.review_note = decision, note
    submission.reviewed_by_id, submission.reviewed_at = getattr(actor, "id", None), utcnow()
    audit.record(actor, "final_submission.review", submission, before)
    return submission


@dataclass(frozen=True, slots=True)
class OpenGate:
    """One gate of the town's profile still open: its key (`findings`, `stop_work`, ...) and why, in a sentence."""

    key: str
    why: str


def open_gates(permit: Permit) -> list[str]:
    """Why the certificate of completion cannot be issued yet, one sentence per open gate (`gates_open`)."""
    return [gate.why for gate in gates_open(permit)]


@implements("§380-18", "§380-14 D(4)", "§9.6", "§7.6 h)", "§5.0 (Certificate of Completion)", "§380-16 C(4)(d)")
def gates_open(permit: Permit) -> list[OpenGate]:
    """The gates of the town's profile still open, each with why (§380-18; Southborough §5.0, §9.6); empty when
    every gate is closed."""
    profile = permits.profile_of(permit)
    rule, found = profile.completion, []
    gates = set(rule.gates)

    def listed(names: list[str]) -> str:
        return "; ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")

    if "findings" in gates:
        open_findings = db.session.scalars(select(Finding.description).join(Inspection, Inspection.id == Finding.inspection_id)
                                           .where(Finding.permit_id == permit.id, Finding.status != "corrected",
                                                  Inspection.status == "submitted")).all()
        if open_findings:
            found.append(OpenGate("findings", f"Findings not corrected: {listed(list(open_findings))}."))
    if "corrective_actions" in gates:
        # As for findings: a draft report's actions are not on the record yet (and are its author's alone: the
        # completion page lists the open gates to everyone who sees the permit).
        actions = db.session.scalars(select(CorrectiveAction.description).where(
            CorrectiveAction.permit_id == permit.id, CorrectiveAction.status != "verified",
            shown(None, CorrectiveAction))).all()
        if actions:
            found.append(OpenGate("corrective_actions", f"Corrective actions not verified: {listed(list(actions))}."))
    if "notices_to_correct" in gates:
        notices = db.session.scalar(select(func.count()).select_from(NoticeToCorrect).where(
            NoticeToCorrect.permit_id == permit.id, NoticeToCorrect.cured_at.is_(None)))
        if notices:
            found.append(OpenGate("notices_to_correct", f"{notices} notice(s) to correct not yet cured."))
    if "stop_work" in gates and db.session.scalar(select(StopWorkOrder.id).where(
            StopWorkOrder.permit_id == permit.id, StopWorkOrder.lifted_at.is_(None)).limit(1)):
        found.append(OpenGate("stop_work", "A stop-work order stands on the permit."))
    if "stabilization" in gates:
        areas = db.session.scalars(select(DisturbedArea.name).where(
            DisturbedArea.permit_id == permit.id, DisturbedArea.status != "stabilized")).all()
        if areas:
            found.append(OpenGate("stabilization", f"Areas not stabilized: {listed(list(areas))}."))
    if "easements_recorded" in gates:
        # §380-14 D(4) (Southborough §7.6 h)): each easement recorded before the certificate of completion.
        unrecorded = db.session.scalars(select(Easement.purpose).where(
            Easement.permit_id == permit.id, Easement.recorded_on.is_(None)).order_by(Easement.created_at)).all()
        if unrecorded:
            found.append(OpenGate("easements_recorded", f"Easements not recorded at the {profile.registry_of_deeds} "
                                  f"({short_citation(rule.easements_citation)}): {listed(list(unrecorded))}."))
    if "punch_list" in gates:
        # §380-16 C(4)(d): the walk-through's "final punch list of items remaining"; an item no final inspection
        # resolved is work not completed (§380-18: "all work of the permit has been satisfactorily completed";
        # Southborough §5.0: "after all construction activities have been completed").
        remaining = [item.description for item in queries.open_punch_items(permit)]
        if remaining:
            found.append(OpenGate("punch_list", "Punch-list items no final inspection has resolved: "
                                                f"{listed(remaining)}."))
    if "npdes_notice_of_termination" in gates:
        answer = db.session.scalar(
            select(ChecklistAnswer.answer).join(Inspection, Inspection.id == ChecklistAnswer.inspection_id)
            .where(Inspection.permit_id == permit.id, Inspection.type.in_(FINAL_TYPES), Inspection.status == "submitted",
                   ChecklistAnswer.item_key == "npdes_notice_of_termination")
            # The latest final, and of its versions the latest signed: an amendment keeps its original's time.
            .order_by(Inspection.performed_at.desc(), Inspection.submitted_at.desc()).limit(1))
        # §9.6: "If a NPDES construction site filing was required": one was where the permit names its NPDES
        # coverage, or disturbs an acre or more (§5.0, NPDES: the program covers sites that "disturb 1-acre or more").
        filed = [f"NPDES ID {permit.npdes_id}"] if permit.npdes_id else []
        if permit.disturbed_acres >= 1:
            filed.append(f"{permit.disturbed_acres.normalize():f} acres disturbed")
        if answer != "yes" and (answer != "na" or filed):
            why = (f" This permit had a NPDES filing ({'; '.join(filed)}): “n/a” does not close it."
                   if filed and answer == "na" else "")
            found.append(OpenGate("npdes_notice_of_termination",
                                  "The NPDES notice of termination is not recorded as submitted on a final "
                                  "inspection (answer “yes”, or “n/a” where no NPDES filing was required)." + why))
    return found


def inspections_not_made(permit: Permit) -> list[missed.MissedInspection]:
    """The required inspections the permit's record does not have (§380-16 C(4)(a)-(e)): each blocks the
    certificate of completion unless waived with its reason."""
    try:
        return missed.required_not_made(permit, utcnow())
    except missed.ScheduleUnknown as error:
        raise CompletionError("waivers", f"The inspections the record owed cannot be worked out: {error}") from None


@implements("§380-16 C(4)(a)", "§380-16 C(4)(b)[1]", "§380-16 C(4)(c)", "§380-16 C(4)(d)", "§380-16 C(4)(e)")
def _waived(permit: Permit, waivers: dict[str, str]) -> list[dict[str, str | None]]:
    """The required inspections never made, each waived with its reason (§380-8 A: the DPW Director "may waive
    strict compliance with any requirement"); one not waived refuses the certificate, naming it."""
    profile = permits.profile_of(permit)
    not_made = inspections_not_made(permit)
    reasons = {key: (reason or "").strip() for key, reason in waivers.items()}
    unreasoned = [m.inspection for m in not_made if m.key in reasons and not reasons[m.key]]
    if unreasoned:
        raise CompletionError("waivers", f"Give the reason for waiving: {'; '.join(unreasoned)}. The certificate "
                                         "prints it.")
    unwaived = [m for m in not_made if not reasons.get(m.key)]
    if unwaived:
        named = "; ".join(f"{m.inspection} ({short_citation(m.citation)})" for m in unwaived)
        clause = profile.cite("completion_waiver")
        raise CompletionError("waivers", f"Required inspections never made: {named}. Each blocks the certificate "
                                         f"of completion unless the {profile.authority_title} waives it"
                                         f"{f' ({clause})' if clause else ''}, with the reason the certificate "
                                         "prints.")
    return [m.as_record() | {"reason": reasons[m.key]} for m in not_made]


@implements("§380-18", "§380-10 L", "§380-18 A", "§380-18 B", "§380-18 C", "§380-14 A(1)")
def issue_certificate(actor, permit: Permit, note: str | None = None,
                      waivers: dict[str, str] | None = None) -> CertificateOfCompletion:
    """Issue the certificate of completion once the final submissions the town asks for are accepted
    (Longmeadow §380-18 A-C: the final O&M plan, which every system must have (§380-14 A(1)), the as-built
    drawings and the final inspection report; Southborough §9.6: the as-built drawings and the final report), no
    gate of the town's profile is open, and every required inspection was made or is waived in
    `waivers` (the inspection's key: the reason). The certificate keeps the waivers and the inspections missed."""
    record = completion_record(permit)
    if record.certificate is not None:
        raise CompletionError("note", "The certificate of completion was already issued.")
    if record.missing:
        listed = ", ".join(SUBMISSION_KIND_LABELS[k].lower() for k in record.missing)
        profile = permits.profile_of(permit)
        clauses = kind_citations(profile)
        every = ", ".join(SUBMISSION_KIND_LABELS[k].lower() + (f" ({clauses[k]})" if clauses[k] else "")
                          for k in profile.completion.submissions)
        raise CompletionError("gates", f"Not yet accepted: {listed}. The certificate of completion needs each final "
                                       f"submission: {every}.")
    corrected = _final_report_corrected(record) if "final_report" in record.kinds else None
    if corrected:
        raise CompletionError("gates", corrected)
    gates = open_gates(permit)
    if gates:
        rule = short_citation(permits.profile_of(permit).completion.citation)
        raise CompletionError("gates", f"The certificate of completion cannot be issued yet ({rule}): "
                                       + " ".join(gates))
    waived = _waived(permit, waivers or {})
    # The inspections missed (late or never) stay on the certificate's record, not hidden by it.
    late = [m.as_record() for m in missed.missed_inspections(permit, utcnow())
            if m.key not in {w["key"] for w in waived}]
    try:
        permits.change_status(actor, permit, "completed", by_its_act=True)
    except permits.PermitError as error:
        raise CompletionError("note", str(error)) from None
    before = audit.snapshot(permit)
    permit.completed_on = utcnow().astimezone(LOCAL_TZ).date()
    audit.record(actor, "permit.complete", permit, before)
    certificate = CertificateOfCompletion(permit_id=permit.id, issued_by_id=actor.id,
                                          note=(note or "").strip() or None,
                                          contents={"waived": waived, "missed": late})
    db.session.add(certificate)
    audit.record(actor, "certificate.issue", certificate)
    profile = permits.profile_of(permit)
    mail.send([permit.owner.email if permit.owner else "", permit.applicant_email or ""],
              f"Certificate of completion: permit {permit.number}",
              f"The {profile.authority_title} has issued the certificate of completion for permit "
              f"{permit.number}, {permit.site_address}, on {permit.completed_on:%B %-d, %Y} "
              f"({short_citation(profile.completion.citation)}).\n\n"
              "The operation and maintenance plan now binds the owner and later owners: an annual "
              f"certification of its maintenance is due every year "
              f"({profile.om_certification.cited(short_citation(profile.om_certification.citation))}).",
              permit_id=permit.id)
    return certificate


@implements("§380-17 B", "§6.3")
def release_surety(actor, permit: Permit, amount: decimal.Decimal, phase: str,
                   is_final: bool = False) -> SuretyRelease:
    """Release part of the surety as a phase completes, or the rest of it after the certificate.

    §380-17 B (Southborough §6.3): "If the project is phased, [the authority] may release part of the bond as
    each phase is completed in compliance with the permit but the bond may not be fully released until [it] has
    received the final inspection report ... and issued a certificate of completion." So a partial release is
    for one named phase, once, while no violation is open and no stop-work order stands; and the share the
    town's profile keeps (`surety.retained_percent`, its policy: the text gives no number) stays until the
    certificate. Every refusal cites the permit's own town's section.
    """
    rule = permits.profile_of(permit).surety
    clause = f" ({short_citation(rule.citation)})" if rule is not None else ""
    phase = (phase or "").strip()
    if not permit.surety_amount:
        raise CompletionError("amount", "No surety is recorded for this permit.")
    if not phase:
        raise CompletionError("phase", "Name the phase this release is for.")
    if amount is None or amount <= 0:
        raise CompletionError("amount", "The amount must be more than zero.")
    if amount != amount.quantize(decimal.Decimal("0.01")):  # stored to the cent, as the audit entry must say
        raise CompletionError("amount", "Give the amount in dollars and cents (no fractions of a cent).")
    released = surety_released(permit)
    remaining = permit.surety_amount - released
    releases = completion_record(permit).releases
    if any(r.is_final for r in releases):
        raise CompletionError("amount", "The surety has already been fully released.")
    if amount > remaining:
        raise CompletionError("amount", f"Only ${remaining:,.2f} of the ${permit.surety_amount:,.2f} surety "
                                        f"remains; ${released:,.2f} is already released.")
    if is_final:
        if certificate_of(permit) is None:
            raise CompletionError("is_final", "The surety may not be fully released until the certificate "
                                              f"of completion is issued{clause}.")
        if amount != remaining:
            raise CompletionError("amount", f"The final release releases the whole remaining ${remaining:,.2f}.")
    else:
        if permit.status not in OPEN_FOR_SUBMISSIONS:
            raise CompletionError("amount", "Partial releases are made as phases are completed, while the "
                                            "permit is active or in final submissions.")
        if amount == remaining:
            raise CompletionError("amount", "A partial release cannot release the whole surety; the bond "
                                            f"is fully released only after the certificate of completion{clause}.")
        if any(r.phase.casefold() == phase.casefold() for r in releases):
            raise CompletionError("phase", f"Part of the surety was already released for “{phase}”: one release "
                                           f"as each phase is completed{clause}.")
        violations = enforcement.open_violations(permit)
        if violations or enforcement.standing_order(permit) is not None:
            why = ("a stop-work order stands" if not violations else
                   f"violations are open: {'; '.join(f.description for f in violations[:3])}")
            raise CompletionError("amount", f"A phase is released only when completed in compliance with the "
                                            f"permit{clause}; {why}.")
        if rule is not None and rule.retained_percent:
            kept = (permit.surety_amount * decimal.Decimal(str(rule.retained_percent)) / 100).quantize(
                decimal.Decimal("0.01"), rounding=decimal.ROUND_UP)
            most = remaining - kept
            if amount > most:
                basis = "the town's policy" if rule.retained_basis == "policy" else "the regulation"
                raise CompletionError("amount", f"At most ${max(most, decimal.Decimal(0)):,.2f} can be released "
                                                f"before the certificate of completion: {rule.retained_percent:g}% "
                                                f"of the surety (${kept:,.2f}) is kept until then, by {basis}, so "
                                                f"that the bond is not all but fully released{clause}.")
    release = SuretyRelease(permit_id=permit.id, phase=phase, amount=amount, is_final=is_final,
                            released_by_id=actor.id)
    db.session.add(release)
    audit.record(actor, "surety.release", release)
    return release
