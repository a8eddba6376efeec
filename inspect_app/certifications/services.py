"""The O&M phase (§380-14): plan, responsible parties, maintenance log, annual certification, notices.

Every change writes the audit log in the same transaction and only flushes; the request commits.

Certification periods are counted from the certificate of completion on the town's calendar: period
*n* runs from the (n-1)th anniversary to the day before the nth, and is due on the nth anniversary
(the schedule engine's `om_certification` deadline, `inspect_app.rules.engine`).
"""
from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from inspect_app.rules import short_citation
from inspect_app.rules.trace import implements
from inspect_app import held_rows, inspection_types, signatures
from inspect_app.blobs import files
from inspect_app.accounts.models import User
from inspect_app.audit import services as audit
from inspect_app.certifications.models import (
    LOG_KINDS, PARTY_ROLES, Easement, MaintenanceLogEntry, NoticeToCorrect, OMCertification, OMPlan, OMReminder,
    ResponsibleParty, ScheduleAmendment, ScheduleAmendmentSignature,
)
from inspect_app.completion.models import FinalSubmission
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.labels import PARTY_ROLE_LABELS
from inspect_app.mail import services as mail
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit, StormwaterStructure
from inspect_app.rules.calendar import add_months, days_after, zone
from inspect_app.types import utcnow

# A reminder goes out this many days before a certification is due, and again once it is late.
REMINDER_DAYS_BEFORE = 30
# Certifications that fill their period; a deficient one leaves the period open for a new one.
COUNTING = ("submitted", "accepted")


# §380-14 C(2)(l): the certification documents the work done over the last 12 months. One with no log entry
# says no maintenance was logged at all: the signer is warned (templates/certifications/certify.html) and asked
# to confirm it, so an empty period is certified on purpose, never by a tap too many.
NO_ENTRIES = ("The maintenance log has no entries for {start:%b %-d, %Y} – {end:%b %-d, %Y}: the certification "
              "would say no maintenance was done in those 12 months ({cited}). Log the work done first, or tick "
              "the box to certify the period with no entries.")


class OMError(ValueError):
    """A change the record does not allow; `errors` maps form field names to messages."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(errors.values()))
        self.errors = errors


@dataclass(frozen=True)
class Period:
    """One certification period: `start` to `end` inclusive; `due_on` is the anniversary, the first day
    it can be certified (§380-14 C(2)(l): the last 12 months), and `certify_by` the day it is due."""

    number: int
    start: dt.date
    end: dt.date
    due_on: dt.date
    certify_by: dt.date


@dataclass(frozen=True)
class MissingTask:
    """A scheduled task (§380-14 C(2)(h)) with no log entry in one of its intervals."""

    structure_id: str
    structure: str
    task: str
    interval_months: int
    window_start: dt.date
    window_end: dt.date


@dataclass(frozen=True)
class Assembly:
    """What a certification for `period` lists: the log entries and the scheduled tasks not done."""

    period: Period
    as_of: dt.date
    entries: list[MaintenanceLogEntry]
    missing: list[MissingTask]


# -- dates ------------------------------------------------------------------------------------------


def today_at(permit: Permit) -> dt.date:
    """Today's date on the town's calendar."""
    return utcnow().astimezone(zone(permits.profile_of(permit).timezone)).date()


def period(permit: Permit, number: int) -> Period:
    """Certification period `number` (1 = the first 12 months after the certificate of completion)."""
    rule = permits.profile_of(permit).om_certification
    # Count from the completion date each time so anniversaries do not drift (Jan 31, Feb 28 ...).
    start = add_months(permit.completed_on, (number - 1) * rule.months)
    due_on = add_months(permit.completed_on, number * rule.months)
    return Period(number, start, due_on - dt.timedelta(days=1), due_on,
                  due_on + dt.timedelta(days=rule.certify_within_days))


def certifications(permit: Permit) -> list[OMCertification]:
    """The permit's certifications, newest period first."""
    query = (select(OMCertification).where(OMCertification.permit_id == permit.id)
             .order_by(OMCertification.period_start.desc(), OMCertification.submitted_at.desc()))
    return list(db.session.scalars(query))


def next_period(permit: Permit) -> Period | None:
    """The earliest period with no submitted or accepted certification; None before completion."""
    if permit.status != "completed" or permit.completed_on is None:
        return None
    certified = {c.period_start for c in certifications(permit) if c.status in COUNTING}
    number = 1
    while period(permit, number).start in certified:
        number += 1
    return period(permit, number)


def next_due_on(permit: Permit) -> dt.date | None:
    """When the next annual O&M certification is due (§380-14 C(2)(l)); None before completion."""
    upcoming = next_period(permit)
    return upcoming.certify_by if upcoming else None


# -- the O&M plan and its responsible parties ----------------------------------------------------------


def plan_of(permit: Permit) -> OMPlan | None:
    """The permit's O&M plan record, if one was made."""
    return db.session.scalar(select(OMPlan).where(OMPlan.permit_id == permit.id))


def plan_recording(permit: Permit) -> dict[str, Any]:
    """The final O&M plan's recording at the registry of deeds (§380-14 B), the one fact every document and page
    reads: the plan's own record where the agent has entered it, else the book and page filed with the accepted
    final O&M plan (§380-18 A), its date then unknown. `registry_reference` None: not recorded."""
    plan = plan_of(permit)
    if plan is not None and plan.registry_reference:
        return {"registry_reference": plan.registry_reference, "recorded_on": plan.recorded_on}
    filed = db.session.scalar(select(FinalSubmission.registry_reference).where(
        FinalSubmission.permit_id == permit.id, FinalSubmission.kind == "om_plan",
        FinalSubmission.status == "accepted", FinalSubmission.registry_reference.is_not(None))
        .order_by(FinalSubmission.reviewed_at.desc(), FinalSubmission.submitted_at.desc()).limit(1))
    return {"registry_reference": filed, "recorded_on": None}


def save_plan(actor, permit: Permit, *, estimated_annual_budget: decimal.Decimal | None,
              registry_reference: str | None, recorded_on: dt.date | None) -> OMPlan:
    """Record the O&M plan's budget and registry recording (§380-14 B, C(2)(g))."""
    if recorded_on and recorded_on > today_at(permit):
        raise OMError({"recorded_on": "The recording date cannot be in the future."})
    plan = plan_of(permit)
    before = audit.snapshot(plan) if plan else None
    if plan is None:
        plan = OMPlan(permit_id=permit.id)
        db.session.add(plan)
    plan.estimated_annual_budget = estimated_annual_budget
    plan.registry_reference, plan.recorded_on = registry_reference, recorded_on
    audit.record(actor, "om_plan.update" if before else "om_plan.create", plan, before)
    return plan


def easements(permit: Permit) -> list[Easement]:
    """The permit's stormwater management easements, in the order they were listed."""
    if held_rows.none_of(Easement.permit_id, permit.id):
        return []
    return list(db.session.scalars(select(Easement).where(Easement.permit_id == permit.id)
                                   .order_by(Easement.created_at, Easement.id)))


def easement_grantors(permit: Permit) -> list[ResponsibleParty]:
    """The responsible parties recorded as easement grantors, whom an easement may name as its grantor."""
    return [p for p in party_history(permit) if p.role == "easement_grantor"]


@implements("§380-14 C(2)(d)", "§380-14 C(2)(m)", "§380-14 D(2)", "§7.6 d)(4)", "§7.6 f)")
def save_easement(actor, permit: Permit, easement: Easement | None, *, purpose: str | None, location: str | None,
                  grantor_id: str | None, registry_reference: str | None, recorded_on: dt.date | None) -> Easement:
    """List a stormwater management easement on the O&M plan (`easement` None), or change one: the purpose
    and location of each (§380-14 C(2)(d), (m); D(2): "The purpose of each easement shall be specified"),
    its grantor, and its recording at the registry of deeds (§380-14 D(4), checked by the completion gate)."""
    profile = permits.profile_of(permit)
    clause = _paren(profile.cite("easements"))
    purpose, location, reference = ((v or "").strip() or None for v in (purpose, location, registry_reference))
    errors = {}
    if not purpose:
        errors["purpose"] = f"Give the purpose of the easement{clause}."
    if not location:
        errors["location"] = f"Give the location of the easement{clause}."
    if grantor_id and grantor_id not in {p.id for p in easement_grantors(permit)}:
        errors["grantor_id"] = "Choose a grantor recorded among this permit's responsible parties."
    if recorded_on and recorded_on > today_at(permit):
        errors["recorded_on"] = "The recording date cannot be in the future."
    elif recorded_on and not reference:
        errors["registry_reference"] = f"Give the {profile.registry_of_deeds} reference (book and page)."
    elif reference and not recorded_on:
        errors["recorded_on"] = "Give the date the easement was recorded."
    completion = profile.completion  # §380-14 D(4): recorded before the certificate; it stays so after it
    if (easement and easement.is_recorded and not recorded_on and permit.completed_on
            and "easements_recorded" in completion.gates):
        errors["registry_reference"] = ("The certificate of completion was issued with this easement recorded "
                                        f"({short_citation(completion.easements_citation)}): its recording "
                                        "cannot be removed.")
    if errors:
        raise OMError(errors)
    before = audit.snapshot(easement) if easement else None
    if easement is None:
        easement = Easement(permit_id=permit.id)
        db.session.add(easement)
    easement.purpose, easement.location, easement.grantor_id = purpose, location, grantor_id or None
    easement.registry_reference, easement.recorded_on = reference, recorded_on
    audit.record(actor, "easement.update" if before else "easement.create", easement, before)
    return easement


def easement_rows(permit: Permit) -> list[dict[str, Any]]:
    """The easements as plain data for a record and its document (purpose, location and its point on the site
    map, grantor, recording)."""
    return [{"purpose": e.purpose, "location": e.location, "grantor": e.grantor.name if e.grantor else None,
             "registry_reference": e.registry_reference, "recorded_on": e.recorded_on,
             "point": [e.latitude, e.longitude] if e.has_point else None} for e in easements(permit)]


@implements("§380-14 F(2)", "§7.6, Changes to O&M Plans b)")
def set_maintenance_schedule(actor, structure: StormwaterStructure, task: str | None,
                             interval_months: int | None) -> ScheduleAmendment | None:
    """Set a structure's inspection and maintenance task and interval (§380-14 C(2)(h)).

    §380-14 F(2) (Southborough §7.6, Changes to O&M Plans b)): once the plan binds responsible parties,
    the schedule "may be amended ... by mutual agreement of the DPW Director and the responsible parties.
    Amendments must be in writing and signed by all responsible parties." The agent's change is then a
    pending amendment, returned, in force only when every current party has signed it (`sign_amendment`).
    With no party bound yet, the schedule is the plan's own and is set at once (None is returned)."""
    if bool(task) != bool(interval_months):
        field = "maintenance_interval_months" if task else "maintenance_task"
        raise OMError({field: "Give both the task and how often it is done, or neither."})
    permit = db.session.get(Permit, structure.permit_id)
    if amendment_signers(permit):
        amendment = ScheduleAmendment(permit_id=permit.id, structure_id=structure.id, task=task,
                                      interval_months=interval_months, proposed_by_id=getattr(actor, "id", None))
        db.session.add(amendment)
        db.session.flush()
        audit.record(actor, "schedule_amendment.propose", amendment)
        return amendment
    _apply_schedule(actor, structure, task, interval_months)
    return None


def _apply_schedule(actor, structure: StormwaterStructure, task: str | None, interval_months: int | None) -> None:
    before = audit.snapshot(structure)
    structure.maintenance_task, structure.maintenance_interval_months = task, interval_months
    structure.revision += 1
    audit.record(actor, "structure.schedule", structure, before)


def pending_amendments(permit: Permit) -> list[ScheduleAmendment]:
    """The schedule amendments still waiting for a responsible party's signature (§380-14 F(2))."""
    return list(db.session.scalars(select(ScheduleAmendment).where(
        ScheduleAmendment.permit_id == permit.id, ScheduleAmendment.in_force_at.is_(None))
        .order_by(ScheduleAmendment.proposed_at)))


def amendment_signers(permit: Permit) -> list[ResponsibleParty]:
    """The current responsible parties who must sign a schedule amendment: those of the roles the town's
    rule names (§380-14 F(2) names easement grantors; Southborough §7.6, Changes to O&M Plans b) does not)."""
    roles = permits.profile_of(permit).amendment_signers
    return [p for p in current_parties(permit) if p.role in roles]


def unsigned_parties(amendment: ScheduleAmendment) -> list[ResponsibleParty]:
    """The responsible parties who must sign `amendment` and have not yet."""
    signed = {s.party_id for s in amendment.signatures}
    return [p for p in amendment_signers(db.session.get(Permit, amendment.permit_id)) if p.id not in signed]


@implements("§380-14 F(2)", "§7.6, Changes to O&M Plans b)")
def sign_amendment(actor, amendment: ScheduleAmendment, party: ResponsibleParty) -> ScheduleAmendment:
    """`party` signs `amendment`: by its own account, or the agent records its signature given in writing.
    The last signature puts the amendment in force and changes the schedule (§380-14 F(2))."""
    if amendment.in_force_at is not None:
        raise OMError({"party_id": "This amendment is already in force."})
    if party not in unsigned_parties(amendment):
        raise OMError({"party_id": "That party is not a current responsible party who still has to sign."})
    own = party.user_id is not None and party.user_id == getattr(actor, "id", None)
    if not own and getattr(actor, "role", None) not in ("agent", "admin"):
        raise OMError({"party_id": "Only the party itself, or the town's agent recording its written "
                                   "signature, can sign for it."})
    signature = ScheduleAmendmentSignature(amendment_id=amendment.id, party_id=party.id,
                                           signed_by_id=getattr(actor, "id", None))
    db.session.add(signature)
    db.session.flush()
    db.session.refresh(amendment)
    audit.record(actor, "schedule_amendment.sign", signature, permit_id=amendment.permit_id)
    if not unsigned_parties(amendment):
        before = audit.snapshot(amendment)
        amendment.in_force_at = utcnow()
        audit.record(actor, "schedule_amendment.in_force", amendment, before)
        _apply_schedule(actor, db.session.get(StormwaterStructure, amendment.structure_id), amendment.task,
                        amendment.interval_months)
    return amendment


def is_current(party: ResponsibleParty, on: dt.date) -> bool:
    """Whether `party` is bound to the plan on `on` (its last day is the day before `ends_on`)."""
    return party.starts_on <= on and (party.ends_on is None or party.ends_on > on)


def party_history(permit: Permit) -> list[ResponsibleParty]:
    """Every responsible party the permit has had, by role, newest first within a role."""
    query = (select(ResponsibleParty).where(ResponsibleParty.permit_id == permit.id)
             .order_by(ResponsibleParty.role, ResponsibleParty.starts_on.desc(), ResponsibleParty.name))
    return list(db.session.scalars(query))


def current_parties(permit: Permit, on: dt.date | None = None) -> list[ResponsibleParty]:
    """The owner(s), financially and operationally responsible parties and easement grantors bound to the
    plan on `on`."""
    on = on or today_at(permit)
    return [p for p in party_history(permit) if is_current(p, on)]


@implements("§380-14 F(1)", "§380-14 A(3)", "§7.6, Changes to O&M Plans a)", "§380-14 C(1)", "§380-14 C(2)(a)",
            "§380-14 C(2)(b)", "§7.6 a)", "§7.6 d)(1)", "§7.6 d)(2)")
def change_responsible_party(actor, permit: Permit, *, role: str, name: str, email: str | None,
                             address: str | None, starts_on: dt.date, user: User | None = None,
                             replaces_current: bool = True, make_permit_owner: bool = False) -> ResponsibleParty:
    """Record a new responsible party, end the one it replaces, notify and bind it (§380-14 F)."""
    errors = {}
    if role not in PARTY_ROLES:
        errors["role"] = "Choose owner, financial or operational responsibility, or easement grantor."
    if not (name or "").strip():
        errors["name"] = "Give the responsible party's name."
    # §380-14 C(2)(a) (Southborough §7.6 d)(1)): "The names and addresses of the person(s) responsible for
    # operation and maintenance".
    if role == "operational" and not (address or "").strip():
        errors["address"] = ("Give the address of the person responsible for operation and maintenance"
                             f"{_paren(permits.profile_of(permit).cite('om_parties'))}.")
    if make_permit_owner and (user is None or role != "owner"):
        errors["make_permit_owner"] = "Only a new owner with an account can become the permit's owner."
    if user is not None and user.role != "permittee":
        errors["user_id"] = "Only a permittee account can be bound to the O&M plan."
    if errors:
        raise OMError(errors)
    ended = []
    if replaces_current:
        for old in current_parties(permit, starts_on):
            if old.role == role:
                if old.starts_on >= starts_on:
                    raise OMError({"starts_on": f"{old.name} only started on {old.starts_on:%b %-d, %Y}; "
                                                "the change must come after that."})
                before = audit.snapshot(old)
                old.ends_on = starts_on
                audit.record(actor, "responsible_party.end", old, before)
                ended.append(old)
    party = ResponsibleParty(permit_id=permit.id, role=role, name=name.strip(), email=email or None,
                             address=address or None, starts_on=starts_on,
                             user_id=user.id if user else None)
    db.session.add(party)
    audit.record(actor, "responsible_party.create", party)
    if make_permit_owner:
        permits.update_permit(actor, permit, owner_id=user.id, owner_name=party.name)
    _notify_binding(permit, party, ended)
    return party


def _notify_binding(permit: Permit, party: ResponsibleParty, ended: list[ResponsibleParty]) -> None:
    profile = permits.profile_of(permit)
    what = {"owner": "an owner", "financial": "the party responsible for financing maintenance and repairs",
            "operational": "the party responsible for operation and maintenance",
            "easement_grantor": "a grantor of a stormwater management easement"}[party.role]
    replaced = f" in place of {', '.join(p.name for p in ended)}" if ended else ""
    # What the plan asks of each (Longmeadow §380-14 C(2)): the schedule, the log and the annual certification are
    # the duties of whoever operates and maintains the system (j), (l); the owner certifies in this app.
    duties = {
        "financial": "The plan names you as the party responsible for financing its maintenance and emergency "
                     "repairs.",
        "easement_grantor": "The plan lists the stormwater management easement you granted, with its purpose and "
                            f"location{_paren(profile.cite('easements'))}.",
    }.get(party.role, "You must follow its inspection and maintenance schedule, keep the maintenance log "
                      f"(inspections, repairs, replacement and disposal{_comma(profile.cite('om_log'))}) and submit the "
                      f"annual certification{_paren(profile.cite('om_certification'))} to the "
                      f"{profile.authority_title}.")
    body = (f"{party.name},\n\nFrom {party.starts_on:%B %-d, %Y} you are recorded as {what} of the stormwater "
            f"management system of permit {permit.number} at {permit.site_address}{replaced}.\n\n"
            f"The operation and maintenance plan is binding on all subsequent owners{_paren(profile.cite('om_binding'))}. "
            f"{duties}\n")
    recipients = [party.email] + [p.email for p in ended]
    mail.send(recipients, f"O&M plan responsibility: permit {permit.number}", body, permit_id=permit.id)


def _paren(clause: str) -> str:
    """' (§380-14 A(3))', or nothing where the town cites no clause: an email names only its town's sections."""
    return f" ({clause})" if clause else ""


def _comma(clause: str) -> str:
    return f", {clause}" if clause else ""


# -- the maintenance log ---------------------------------------------------------------------------------

def log_entries(permit: Permit, start: dt.date | None = None, end: dt.date | None = None) -> list[MaintenanceLogEntry]:
    """The permit's maintenance log, newest first, optionally only `start`..`end` inclusive."""
    query = select(MaintenanceLogEntry).where(MaintenanceLogEntry.permit_id == permit.id)
    if start:
        query = query.where(MaintenanceLogEntry.performed_on >= start)
    if end:
        query = query.where(MaintenanceLogEntry.performed_on <= end)
    query = query.order_by(MaintenanceLogEntry.performed_on.desc(), MaintenanceLogEntry.created_at.desc())
    return list(db.session.scalars(query))


@implements("§380-14 C(2)(j)", "§7.6 d)(6)", "§380-14 C(2)(e)", "§380-14 C(2)(i)")
def add_log_entry(actor, permit: Permit, *, kind: str, performed_on: dt.date | None, description: str,
                  performed_by: str, structure_id: str | None = None, material_type: str | None = None,
                  disposal_location: str | None = None, entry_id: str | None = None) -> MaintenanceLogEntry:
    """Add an inspection, repair, replacement or disposal to the maintenance log (§380-14 C(2)(j))."""
    material_type, disposal_location = (material_type or "").strip(), (disposal_location or "").strip()
    errors = {}
    if kind not in LOG_KINDS:
        errors["kind"] = "Choose inspection, repair, replacement or disposal."
    if performed_on is None:
        errors["performed_on"] = "Give the date the work was done."
    elif performed_on > today_at(permit):
        errors["performed_on"] = "The date cannot be in the future."
    if not (description or "").strip():
        errors["description"] = "Say what was done."
    if not (performed_by or "").strip():
        errors["performed_by"] = "Say who did the work."
    if structure_id and structure_id not in {s.id for s in permit.structures}:
        errors["structure_id"] = "Choose a structure of this permit."
    # §380-14 C(2)(j): a disposal is logged with the type of material and the disposal location.
    if kind == "disposal" and not material_type:
        errors["material_type"] = "A disposal needs the type of material."
    if kind == "disposal" and not disposal_location:
        errors["disposal_location"] = "A disposal needs the disposal location."
    if errors:
        raise OMError(errors)
    entry = MaintenanceLogEntry(**({"id": entry_id} if entry_id else {}),  # a device's own id (sync)
                                permit_id=permit.id, kind=kind, performed_on=performed_on,
                                description=description.strip(), performed_by=performed_by.strip(),
                                structure_id=structure_id or None, material_type=material_type or None,
                                disposal_location=disposal_location or None,
                                created_by_id=getattr(actor, "id", None))
    db.session.add(entry)
    audit.record(actor, "maintenance_log.create", entry)
    return entry


# -- the annual certification ------------------------------------------------------------------------------


def _windows(period: Period, months: int) -> list[tuple[dt.date, dt.date]]:
    """The `months`-long intervals ending inside `period`, counted back from its end, oldest first."""
    windows, step = [], 0
    while (hi := add_months(period.due_on, -step * months)) > period.start:
        windows.append((add_months(period.due_on, -(step + 1) * months), hi - dt.timedelta(days=1)))
        step += 1
    return windows[::-1]


@implements("§380-14 C(2)(h)", "§7.6 d)(3)")
def assemble(permit: Permit, for_period: Period, today: dt.date | None = None) -> Assembly:
    """The log entries of `for_period` and the scheduled tasks with no entry in an interval that has begun."""
    as_of = min(today or today_at(permit), for_period.end)
    entries = log_entries(permit, for_period.start, as_of)
    structures = [s for s in permit.structures if s.maintenance_interval_months and s.maintenance_task]
    earliest = min((add_months(for_period.due_on, -s.maintenance_interval_months) for s in structures),
                   default=for_period.start)
    # A task done every N months is looked for in each N-month stretch, even one reaching back before
    # the period (§380-14 C(2)(h): the schedule's "time period for each" task).
    done = [(e.structure_id, e.performed_on) for e in log_entries(permit, min(earliest, for_period.start), as_of)]
    missing = []
    for s in structures:
        for lo, hi in _windows(for_period, s.maintenance_interval_months):
            if lo <= as_of and not any(sid == s.id and lo <= day <= hi for sid, day in done):
                missing.append(MissingTask(s.id, s.name, s.maintenance_task, s.maintenance_interval_months,
                                           lo, hi))
    return Assembly(for_period, as_of, entries, missing)


def certification_statement(permit: Permit, for_period: Period) -> str:
    """The words the responsible party signs (§380-14 C(2)(l))."""
    return (f"I certify that the stormwater management system of permit {permit.number} at {permit.site_address} "
            f"was operated and maintained in accordance with its operation and maintenance plan from "
            f"{for_period.start:%B %-d, %Y} to {for_period.end:%B %-d, %Y}, and that the maintenance log listed "
            "here is true and complete to the best of my knowledge.")


@implements("§380-14 C(2)(l)")
def certify(actor, permit: Permit, *, signature_png: str | None = None,
            today: dt.date | None = None, certification_id: str | None = None,
            signature_sha256: str | None = None, period_start: dt.date | None = None,
            without_entries_confirmed: bool) -> OMCertification:
    """Sign and submit the annual O&M certification of the next period due (§380-14 C(2)(l)).

    From a device (sync): its own id, a signature already uploaded as a blob, and the period it was
    signed for, which must still be the one due. The signer is `actor`, by their account's name (SPEC
    *Signatures*): never a name typed into the form or sent by a device. A period with no log entry is
    certified only when the signer confirmed it (`without_entries_confirmed`): see NO_ENTRIES.
    """
    if permit.status != "completed" or permit.completed_on is None:
        raise OMError({"period_start": "O&M certifications start after the certificate of completion; "
                                       "this permit is not completed."})
    today = today or today_at(permit)
    for_period = next_period(permit)
    if period_start is not None and period_start != for_period.start:
        raise OMError({"period_start": f"The period due is {for_period.start:%b %-d, %Y} – "
                                       f"{for_period.end:%b %-d, %Y}; assemble and sign it again."})
    if for_period.end >= today:
        # §380-14 C(2)(l): the certification documents the work done over the last 12 months.
        done = "Every period that is over is already certified. " if for_period.number > 1 else ""
        raise OMError({"period_start": f"{done}Period {for_period.start:%b %-d, %Y} – {for_period.end:%b %-d, %Y} "
                                       f"is not over yet; it can be certified from {for_period.due_on:%b %-d, %Y} "
                                       f"({_om_cited(permits.profile_of(permit))}: the "
                                       "certification covers the last 12 months)."})
    if not current_parties(permit, min(for_period.end, today)):
        # §380-14 C(2)(a)-(b): the plan names who owns and who operates and maintains the system; the certification
        # lists them as bound at the end of its period (`certification_record`), so it cannot be signed for nobody.
        raise OMError({"period_start": f"No responsible party of the O&M plan is recorded for "
                                       f"{for_period.start:%b %-d, %Y} – {for_period.end:%b %-d, %Y}"
                                       f"{_paren(permits.profile_of(permit).cite('om_parties'))}: the town's agent "
                                       "records the owner and the others bound to the plan before it can be "
                                       "certified."})
    if actor is not None and not _certifies(actor, permit, today):
        # §380-14 C(2)(l): "person(s) responsible for operation and maintenance, shall submit annual certification";
        # the plan binds "all subsequent owners" (§380-14 A(3)): a seller whose sale is recorded is neither.
        bound = ", ".join(f"{p.name} ({PARTY_ROLE_LABELS[p.role].lower()})" for p in _certifying(permit, today))
        raise OMError({"period_start": f"You are not among those bound to the plan's operation and maintenance now"
                                       f"{f' ({bound})' if bound else ''}: one of them signs the certification. "
                                       f"If that is wrong, the {permits.profile_of(permit).authority_title}'s "
                                       "agent records the parties."})
    assembly = assemble(permit, for_period, today)
    if not assembly.entries and not without_entries_confirmed:
        raise OMError({"without_entries": NO_ENTRIES.format(start=for_period.start, end=for_period.end,
                                                            cited=_om_cited(permits.profile_of(permit)))})
    if signature_png:
        signature_sha256 = _store_signature(signature_png)
    certification = OMCertification(
        **({"id": certification_id} if certification_id else {}),
        permit_id=permit.id, period_start=for_period.start, period_end=for_period.end,
        signer_name=actor.name, signature_sha256=signature_sha256,
        statement=certification_statement(permit, for_period), submitted_by_id=getattr(actor, "id", None),
        submitted_at=utcnow(), status="submitted",
        contents={"as_of": assembly.as_of.isoformat(), "entry_ids": [e.id for e in assembly.entries],
                  "missing": [_missing_data(m) for m in assembly.missing],
                  # The easements and the plan's recording as signed: a later version (the review) shows
                  # what was certified, not an easement listed, changed or placed on the map since.
                  "easements": [{**e, "recorded_on": e["recorded_on"] and e["recorded_on"].isoformat()}
                                for e in easement_rows(permit)],
                  "plan": _plan_row(permit),
                  # The parties bound as signed: one recorded later, even from a day inside the period, is not
                  # who this certification was made for.
                  "parties": [_stored_party(p) for p in current_parties(permit, min(for_period.end, today))]},
    )
    try:
        with db.session.begin_nested():  # one certification per permit and period (a double-click)
            db.session.add(certification)
            db.session.flush()
    except IntegrityError:
        raise OMError({"period_start": f"Period {for_period.start:%b %-d, %Y} – {for_period.end:%b %-d, %Y} "
                                       "is already certified."}) from None
    audit.record(actor, "om_certification.submit", certification)
    return certification


def _missing_data(task: MissingTask) -> dict[str, Any]:
    return {"structure_id": task.structure_id, "structure": task.structure, "task": task.task,
            "interval_months": task.interval_months, "window_start": task.window_start.isoformat(),
            "window_end": task.window_end.isoformat()}


def _store_signature(data_url: str) -> str:
    """Keep a drawn signature (a PNG data URL) in the blob store; its SHA-256 names it."""
    try:
        png = signatures.from_data_url(data_url)
    except signatures.SignatureRefused as refused:
        raise OMError({"signature": str(refused)}) from None
    return files.store_file(png, "image/png")


def review(actor, certification: OMCertification, *, decision: str, note: str | None) -> OMCertification:
    """Accept a certification, or find it deficient, which issues a notice to correct (§380-14 E)."""
    note = (note or "").strip()
    if certification.status != "submitted":
        raise OMError({"decision": f"This certification was already found {certification.status}."})
    if decision not in ("accepted", "deficient"):
        raise OMError({"decision": "Choose accept or deficient."})
    if decision == "deficient" and not note:
        raise OMError({"note": "Say what maintenance must be corrected."})
    before = audit.snapshot(certification)
    certification.status, certification.review_note = decision, note or None
    certification.reviewed_by_id, certification.reviewed_at = getattr(actor, "id", None), utcnow()
    audit.record(actor, "om_certification.review", certification, before)
    if decision == "deficient":
        issue_notice(actor, db.session.get(Permit, certification.permit_id), note, certification)
    return certification


# -- failure to maintain (§380-14 E) ----------------------------------------------------------------------


def issue_notice(actor, permit: Permit, text: str, certification: OMCertification | None = None,
                 inspection: Inspection | None = None) -> NoticeToCorrect:
    """Issue a notice to correct maintenance; the cure period (30 days in §380-14 E) starts now. With
    `inspection`, the notice follows that report's violations and cites them (`findings_cited`)."""
    if not (text or "").strip():
        raise OMError({"text": "Say what maintenance must be corrected."})
    profile = permits.profile_of(permit)
    if inspection is not None:
        text = f"{text.strip()}\n\n{findings_cited(permit, inspection)}"
    issued_at = utcnow()
    # The day-based deadline ends with its last local day, as the schedule engine counts it.
    cure_due_at = days_after(issued_at, profile.cure_period.days, zone(profile.timezone))
    notice = NoticeToCorrect(permit_id=permit.id, certification_id=certification.id if certification else None,
                             text=text.strip(), issued_by_id=actor.id, issued_at=issued_at, cure_due_at=cure_due_at)
    db.session.add(notice)
    audit.record(actor, "notice_to_correct.issue", notice)
    body = (f"Notice to correct: permit {permit.number}, {permit.site_address}\n\n{notice.text}\n\n"
            f"Satisfactory corrections must be made within {profile.cure_period.days} days, by "
            f"{cure_due_at.astimezone(zone(profile.timezone)):%B %-d, %Y} "
            f"({profile.cure_period.cited(short_citation(profile.cure_period.citation))})."
            f"{f' If they are not, {profile.cure_period.remedy}.' if profile.cure_period.remedy else ''}"
            f"\n\n{profile.authority_title}\n")
    mail.send(recipients(permit), f"Notice to correct maintenance: permit {permit.number}", body,
              permit_id=permit.id)
    return notice


@implements("§380-14 E")
def findings_cited(permit: Permit, inspection: Inspection) -> str:
    """§380-14 E: "after notice ... to correct a violation requiring maintenance work": the violations found on a
    submitted report of a type whose findings feed the notice (inspection_types: `feeds_notice_to_correct`, the
    inspection of the completed project's facilities), as the notice cites them. OMError for any other report."""
    if (inspection.permit_id != permit.id or not inspection.is_submitted
            or not inspection_types.spec(inspection.type).feeds_notice_to_correct):
        raise OMError({"text": "A notice to correct cites a submitted inspection of this permit's "
                                        "stormwater facilities."})
    violations = [finding for finding in inspection.findings if finding.is_violation]
    if not violations:
        raise OMError({"text": "That inspection found no violation to correct."})
    profile = permits.profile_of(permit)
    day = inspection.performed_at.astimezone(zone(profile.timezone))
    lines = [f"- {finding.location}: {finding.description}" if finding.location else f"- {finding.description}"
             for finding in violations]
    return "\n".join([f"Violations found on the {profile.name_of(inspection.type)} of {day:%B %-d, %Y}:",
                      *lines])


def mark_cured(actor, notice: NoticeToCorrect) -> NoticeToCorrect:
    """Record that the corrections were made, which stops the cure clock."""
    if notice.cured_at is not None:
        raise OMError({"cured": "This notice was already marked cured."})
    before = audit.snapshot(notice)
    notice.cured_at, notice.cured_by_id = utcnow(), actor.id
    audit.record(actor, "notice_to_correct.cured", notice, before)
    return notice


def notices(permit: Permit) -> list[NoticeToCorrect]:
    """The permit's notices to correct, newest first."""
    if held_rows.none_of(NoticeToCorrect.permit_id, permit.id):
        return []
    query = (select(NoticeToCorrect).where(NoticeToCorrect.permit_id == permit.id)
             .order_by(NoticeToCorrect.issued_at.desc()))
    return list(db.session.scalars(query))


CERTIFYING_ROLES = ("owner", "operational")  # who signs the yearly certification (§380-14 C(2)(l), A(3))


def _certifying(permit: Permit, on: dt.date) -> list[ResponsibleParty]:
    return [p for p in current_parties(permit, on) if p.role in CERTIFYING_ROLES]


def _certifies(actor, permit: Permit, on: dt.date) -> bool:
    """Whether `actor`'s account is one of the current owners or operators bound to the plan (by the account
    recorded for the party, or its address); with none recorded with an account or an address, the permit's
    owner account, as before parties named them."""
    bound = _certifying(permit, on)
    if not any(p.user_id or p.email for p in bound):
        return getattr(actor, "id", None) == permit.owner_id
    email = (getattr(actor, "email", "") or "").lower()
    return any(p.user_id == actor.id or (p.email or "").lower() == email for p in bound)


def reminded(permit: Permit) -> list[str]:
    """Where a certification's reminder goes: the current owners and operators, who sign it, and the owner
    account where it is theirs (an easement grantor, told the plan asks no certification of it, is not)."""
    on = today_at(permit)
    addresses = [p.email for p in _certifying(permit, on)]
    if permit.owner is not None and _certifies(permit.owner, permit, on):
        addresses.append(permit.owner.email)
    return sorted({a.lower() for a in addresses if a})


def recipients(permit: Permit) -> list[str]:
    """Where O&M mail goes: the current responsible parties and the permit owner's account."""
    addresses = [p.email for p in current_parties(permit)]
    if permit.owner is not None:
        addresses.append(permit.owner.email)
    return sorted({a for a in addresses if a})


# -- reminders ----------------------------------------------------------------------------------------------


def send_reminders(today: dt.date | None = None) -> list[OMReminder]:
    """Email the responsible parties 30 days before a certification is due and once it is late.

    Safe to run daily: each (permit, period, upcoming/late) reminder is recorded and sent once. Commits
    each reminder on its own so a second run at the same time loses the race instead of sending twice.
    """
    sent = []
    completed = select(Permit.id).where(Permit.status == "completed", Permit.completed_on.is_not(None))
    for permit_id in db.session.scalars(completed).all():
        permit = db.session.get(Permit, permit_id)
        if not permits.profile_of(permit).om_certification.enabled:
            continue  # the town's policy switched off (its profile): nothing is owed, so nothing is due or late
        due = next_period(permit)
        on = today or today_at(permit)
        kind = None
        if on > due.certify_by:
            kind = "late"
        elif on >= due.certify_by - dt.timedelta(days=REMINDER_DAYS_BEFORE):
            kind = "upcoming"
        to = reminded(permit)
        if kind is None or not to or _reminded(permit, due, kind):
            continue
        reminder = OMReminder(permit_id=permit.id, period_start=due.start, kind=kind)
        db.session.add(reminder)
        try:
            db.session.flush()  # the unique constraint claims this reminder before any mail leaves
        except IntegrityError:
            db.session.rollback()
            continue
        reminder.email_id = _reminder_mail(permit, due, kind, to).id
        audit.record(None, "om_reminder.send", reminder)
        db.session.commit()
        sent.append(reminder)
    return sent


def _reminded(permit: Permit, due: Period, kind: str) -> bool:
    query = select(OMReminder.id).where(OMReminder.permit_id == permit.id, OMReminder.period_start == due.start,
                                        OMReminder.kind == kind)
    return db.session.scalar(query) is not None


def _reminder_mail(permit: Permit, due: Period, kind: str, to: list[str]):
    profile = permits.profile_of(permit)
    state = "is late" if kind == "late" else "is due"
    subject = f"O&M certification {'late' if kind == 'late' else 'due'} {due.certify_by:%b %-d, %Y}: permit {permit.number}"
    body = (f"The annual operation and maintenance certification for permit {permit.number} at "
            f"{permit.site_address}, covering {due.start:%B %-d, %Y} to {due.end:%B %-d, %Y}, {state} "
            f"on {due.certify_by:%B %-d, %Y}; it can be signed from {due.due_on:%B %-d, %Y}, once the period "
            f"is over.\n\nSign in, check the maintenance log of the period and submit the "
            f"certification to the {profile.authority_title} ({_om_cited(profile)}).\n")
    return mail.send(to, subject, body, permit_id=permit.id)


# -- what pages and documents show ------------------------------------------------------------------------


def summary(permit: Permit) -> dict[str, Any]:
    """The O&M facts shown on the permit page: next certification, open notices and their cure clocks."""
    due = next_period(permit)
    today = today_at(permit)
    status = None
    if due:
        status = "overdue" if today > due.certify_by else "due" if due.end < today else "upcoming"
    return {"next_period": due, "status": status, "open_notices": [n for n in notices(permit) if n.cured_at is None],
            "now": utcnow()}


def _plan_row(permit: Permit) -> dict[str, Any]:
    """The O&M plan's recording (`plan_recording`) and budget as a certification's record shows them (the date
    as ISO text)."""
    plan, recording = plan_of(permit), plan_recording(permit)
    budget = plan.estimated_annual_budget if plan else None
    return {"registry_reference": recording["registry_reference"],
            "recorded_on": recording["recorded_on"].isoformat() if recording["recorded_on"] else None,
            "estimated_annual_budget": str(budget) if budget is not None else None}


def _signed_easements(cert: OMCertification) -> list[dict[str, Any]]:
    """The easements as the certification was signed with them (`easement_rows`, kept in its contents)."""
    return [{**e, "recorded_on": dt.date.fromisoformat(e["recorded_on"]) if e["recorded_on"] else None}
            for e in cert.contents["easements"]]


def certification_record(cert: OMCertification) -> dict[str, Any]:
    """Everything the certification's PDF shows, as plain data (str, int, date, aware datetime, lists)."""
    permit = db.session.get(Permit, cert.permit_id)
    profile = permits.profile_of(permit)
    plan = cert.contents.get("plan") or _plan_row(permit)  # as signed (kept since it was)
    ids = cert.contents.get("entry_ids", [])
    by_id = {e.id: e for e in db.session.scalars(select(MaintenanceLogEntry).where(MaintenanceLogEntry.id.in_(ids)))}
    structures = {s.id: s.name for s in permit.structures}
    notice = db.session.scalar(select(NoticeToCorrect).where(NoticeToCorrect.certification_id == cert.id))
    as_of = cert.contents.get("as_of")
    return {
        "id": cert.id,
        "town": profile.town, "regulation": profile.regulation, "authority_title": profile.authority_title,
        "registry_of_deeds": profile.registry_of_deeds, "citation": profile.om_certification.citation,
        "permit": {"id": permit.id, "number": permit.number, "site_address": permit.site_address,
                   "owner_name": permit.owner_name, "completed_on": permit.completed_on},
        "plan": {**plan, "recorded_on": dt.date.fromisoformat(plan["recorded_on"]) if plan["recorded_on"] else None},
        "period": {"start": cert.period_start, "end": cert.period_end,
                   "due_on": cert.period_end + dt.timedelta(days=1),
                   "as_of": dt.date.fromisoformat(as_of) if as_of else cert.period_end},
        "easements": _signed_easements(cert) if "easements" in cert.contents else easement_rows(permit),
        "parties": (_signed_parties(cert) if "parties" in cert.contents else
                    [_party_row(p) for p in current_parties(
                        permit, min(cert.period_end, _local_day(cert.submitted_at, profile)))]),
        "entries": [{"performed_on": e.performed_on, "kind": e.kind, "structure": structures.get(e.structure_id),
                     "description": e.description, "material_type": e.material_type,
                     "disposal_location": e.disposal_location, "performed_by": e.performed_by}
                    for e in (by_id[i] for i in ids if i in by_id)],
        "missing": [{**m, "window_start": dt.date.fromisoformat(m["window_start"]),
                     "window_end": dt.date.fromisoformat(m["window_end"])} for m in cert.contents.get("missing", [])],
        "signer_name": cert.signer_name, "statement": cert.statement, "signature_sha256": cert.signature_sha256,
        "submitted_at": cert.submitted_at, "submitted_by": _name(cert.submitted_by_id),
        "status": cert.status, "reviewed_at": cert.reviewed_at, "reviewed_by": _name(cert.reviewed_by_id),
        "review_note": cert.review_note,
        "notice": {"text": notice.text, "issued_at": notice.issued_at, "cure_due_at": notice.cure_due_at,
                   "cured_at": notice.cured_at, "cure_citation": profile.cure_period.citation} if notice else None,
    }


def _party_row(party) -> dict[str, Any]:
    """A responsible party as a certification lists it (stored as signed: dates as ISO text)."""
    return {"role": party.role, "name": party.name, "address": party.address, "email": party.email,
            "starts_on": party.starts_on, "ends_on": party.ends_on}


def _stored_party(party) -> dict[str, Any]:
    row = _party_row(party)
    return {**row, "starts_on": row["starts_on"] and row["starts_on"].isoformat(),
            "ends_on": row["ends_on"] and row["ends_on"].isoformat()}


def _signed_parties(cert: OMCertification) -> list[dict[str, Any]]:
    """The parties a certification was signed for, as stored in its contents."""
    day = lambda value: dt.date.fromisoformat(value) if value else None  # noqa: E731
    return [{**p, "starts_on": day(p["starts_on"]), "ends_on": day(p["ends_on"])} for p in cert.contents["parties"]]


def _om_cited(profile) -> str:
    """The yearly certification's section, and "town policy" where that is what requires it."""
    return profile.om_certification.cited(short_citation(profile.om_certification.citation))


def _local_day(at: dt.datetime, profile) -> dt.date:
    return at.astimezone(zone(profile.timezone)).date()


def _name(user_id: str | None) -> str | None:
    user = db.session.get(User, user_id) if user_id else None
    return user.name if user else None
