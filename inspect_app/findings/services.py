"""Every change to findings, their corrective actions (CGP 2022 Part 5) and walk-through punch lists.

Findings and punch-list items belong to a report and change only while it is a draft. Corrective
actions are follow-up: they are opened with the report, or later for a finding still open, and closed out,
verified or sent back after the report is submitted. Each change writes the audit log and only flushes.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, Select, bindparam, select
from sqlalchemy.orm import joinedload

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import sees_part
from inspect_app.audit import services as audit
from inspect_app.extensions import db, hold
from inspect_app.inspections.models import (
    ACTION_KINDS, CITATION_LENGTH, SEVERITIES, CorrectiveAction, Finding, PunchListItem,
)
from inspect_app.inspections import checks
from inspect_app.inspections.models import Inspection
from inspect_app.inspections.services import ReportInput, ensure_draft
from inspect_app.permits.models import Permit, StormwaterStructure
from inspect_app.permits.services import profile_of
from inspect_app.photos import services as photos
from inspect_app.photos.models import Photo
from inspect_app.photos.processing import PhotoData, PhotoRejected
from inspect_app.profiles.schema import Profile
from inspect_app import held_rows, inspection_types, rules
from inspect_app.rules import calendar
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import utcnow


class FindingError(ValueError):
    """A change the record does not allow; `field` names the form field it is about."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def action_deadline(kind: str, discovered_at: dt.datetime, profile: Profile) -> dt.datetime:
    """When a corrective action must be finished, counted from discovery on the town's calendar (CGP 2022
    Part 5.2): the schedule engine's rule."""
    return rules.corrective_action_due(kind, discovered_at, profile)


def open_actions(permit: Permit, *conditions: ColumnElement[bool]) -> list[CorrectiveAction]:
    """The permit's corrective actions not yet verified (and meeting `conditions`), soonest deadline first."""
    return list(db.session.scalars(open_actions_query(*conditions), {"permit_id": permit.id}))


def open_actions_query(*conditions: ColumnElement[bool]) -> Select:
    """`open_actions`' statement, for the permit of the parameter `permit_id`."""
    query = select(CorrectiveAction).where(CorrectiveAction.permit_id == bindparam("permit_id"),
                                           CorrectiveAction.status != "verified", *conditions)
    # With their findings (the permit page links each to its report): one query, not one per action.
    return query.options(joinedload(CorrectiveAction.finding)).order_by(CorrectiveAction.due_at)


def resolved_in(inspection: Inspection) -> list[PunchListItem]:
    """The punch-list items a final inspection resolved."""
    if held_rows.none_of(PunchListItem.resolved_in_id, inspection.id):
        return []
    query = select(PunchListItem).where(PunchListItem.resolved_in_id == inspection.id)
    return list(db.session.scalars(query.order_by(PunchListItem.description)))


def _part_of(permit: Permit, model, object_id: str | None, field: str):
    if not object_id:
        return None
    found = db.session.get(model, object_id)
    if found is None or found.permit_id != permit.id:
        raise FindingError(field, "Choose one of this permit's own.")
    return found


def add_finding(actor, inspection: Inspection, description: str, location: str | None = None,
                severity: str = "minor", is_violation: bool = False, citation: str | None = None,
                area_id: str | None = None, structure_id: str | None = None,
                finding_id: str | None = None) -> Finding:
    """Record a finding on a draft report."""
    ensure_draft(inspection)
    if not (description or "").strip():
        raise FindingError("description", "Describe what was found.")
    if severity not in SEVERITIES:
        raise FindingError("severity", "Choose a severity.")
    permit = inspection.permit
    _part_of(permit, DisturbedArea, area_id, "area_id")
    _part_of(permit, StormwaterStructure, structure_id, "structure_id")
    # A device made offline may bring its own id (sync), so photos and actions made with it find it.
    finding = Finding(**({"id": finding_id} if finding_id else {}),
                      inspection=inspection, permit_id=permit.id, description=description.strip(),
                      location=location or None, severity=severity, is_violation=is_violation,
                      citation=(citation or "")[:CITATION_LENGTH] or None, area_id=area_id or None,
                      structure_id=structure_id or None)
    db.session.add(finding)
    audit.record(actor, "finding.create", finding)
    return finding


@dataclass
class NewAction:
    """A corrective action opened with a new finding; `id` made by a device, when it made one."""

    kind: str
    description: str
    owner_id: str | None = None
    owner_name: str | None = None
    id: str | None = None


@dataclass
class NewFinding:
    """A finding sent with a report, from the report form or a device; `id` made by a device, when it made one."""

    description: str
    location: str | None = None
    severity: str = "minor"
    is_violation: bool = False
    citation: str | None = None
    area_id: str | None = None
    structure_id: str | None = None
    actions: list[NewAction] = field(default_factory=list)
    id: str | None = None


def record_finding(actor, inspection: Inspection, new: NewFinding) -> Finding:
    """Record a finding sent with the report and open its corrective actions: the one way a report's form
    and a device add one. Sent again under its id (an operation replayed), nothing is made twice.

    FindingError names the field: the finding's own, `id`, or `actions.<index>.<field>`."""
    finding = db.session.get(Finding, new.id) if new.id else None
    if finding is not None and finding.inspection_id != inspection.id:
        raise FindingError("id", "Another finding already has this id.")
    finding = finding or add_finding(actor, inspection, new.description, new.location, new.severity,
                                     new.is_violation, new.citation, new.area_id, new.structure_id,
                                     finding_id=new.id)
    for index, spec in enumerate(new.actions):
        try:
            _record_action(actor, finding, spec)
        except FindingError as error:
            raise FindingError(f"actions.{index}.{error.field}", str(error)) from None
    return finding


def _record_action(actor, finding: Finding, spec: NewAction) -> None:
    """Open the action, unless it is here already under its id (on this finding; another's id is refused)."""
    action = db.session.get(CorrectiveAction, spec.id) if spec.id else None
    if action is not None:
        if action.finding_id != finding.id:
            raise FindingError("id", "Another corrective action already has this id.")
        return
    open_action(actor, finding, spec.kind, spec.description, spec.owner_id, spec.owner_name, action_id=spec.id)


def remove_finding(actor, finding: Finding) -> None:
    """Take a finding (and the actions opened on it) off a draft report."""
    ensure_draft(finding.inspection)
    for action in list(finding.actions):
        before = audit.snapshot(action)
        db.session.delete(action)
        audit.record(actor, "action.delete", action, before)
    before = audit.snapshot(finding)
    finding.inspection.findings.remove(finding)
    db.session.delete(finding)
    audit.record(actor, "finding.delete", finding, before)


def open_action(actor, finding: Finding, kind: str, description: str, owner_id: str | None = None,
                owner_name: str | None = None, now: dt.datetime | None = None,
                action_id: str | None = None, first_observed: dt.date | None = None) -> CorrectiveAction:
    """Open a corrective action on a finding, with its CGP Part 5 deadline (from `first_observed`, the day
    the condition was first seen, when that was before the inspection)."""
    if finding.status == "corrected":
        raise FindingError("kind", "This finding is already corrected.")
    if kind not in ACTION_KINDS:
        raise FindingError("kind", "Choose the kind of corrective action.")
    if not (description or "").strip():
        raise FindingError("description", "Say what must be done.")
    owner = db.session.get(User, owner_id) if owner_id else None
    if owner_id and owner is None:
        raise FindingError("owner_id", "Choose a person from the list.")
    typed = (owner_name or "").strip()
    if owner is not None and typed and typed != owner.name:
        owner = None  # a name typed "…or name" is who does it: the person the page chose in the list is not
    name = owner.name if owner else typed
    if not name:
        raise FindingError("owner_name", "Say who will do it: choose a person or type a name.")
    inspection = finding.inspection
    # CGP 2022 Part 5.2: the clock runs from discovery, the inspection that recorded the condition, not
    # from when the action is opened (an action opened days later is already that much closer to due).
    discovered = inspection.performed_at
    tz = calendar.zone(profile_of(inspection.permit).timezone)
    if first_observed is not None and first_observed < discovered.astimezone(tz).date():
        # Seen on an earlier day: the clock runs from then, from the start of that day (the stricter reading).
        discovered = dt.datetime.combine(first_observed, dt.time(), tz).astimezone(dt.UTC)
    action = CorrectiveAction(**({"id": action_id} if action_id else {}),  # a device's own id (sync)
                              finding=finding, permit_id=finding.permit_id, kind=kind,
                              description=description.strip(), owner_id=owner.id if owner else None,
                              owner_name=name[:200], discovered_at=discovered,
                              due_at=action_deadline(kind, discovered, profile_of(inspection.permit)))
    db.session.add(action)
    audit.record(actor, "action.create", action)
    return action


def open_fixes(actor, inspection: Inspection, data: ReportInput) -> list[CorrectiveAction]:
    """CGP 2022 Part 5.1: for each condition requiring corrective action the posted report records (a control
    answered "no", a discharge with visible sediment) whose fix names its kind and who does it and is tied to
    no open action yet, record the finding and open its corrective action (Part 5.2 deadline from discovery);
    the action's id goes into the fix, so the report keeps it and a second save opens no second one."""
    opened = []
    fixes = data.details.get("fixes", {})
    for need in checks.needed_fixes(inspection, data.answers, data.details):
        fix = fixes.get(need.key) or {}
        if checks.linked_action(inspection, fix.get("action_id")) is not None \
                or not all(fix.get(k) for k in ("repair", "first_observed", "kind", "owner_name")):
            continue
        # Filed under the condition the work is (routine maintenance is not CGP 2022 Part 5.1.1's "beyond").
        condition = profile_of(inspection.permit).filed_under(need.condition, fix["kind"])
        finding = add_finding(actor, inspection, f"{need.subject}: {need.what}. Repair needed: {fix['repair']}",
                              need.subject, "minor", citation=condition.citation)
        action = open_action(actor, finding, fix["kind"], fix["repair"], owner_name=fix["owner_name"],
                             first_observed=checks.first_observed(fix))
        db.session.flush()  # its id, for the fix to name
        fix["action_id"] = action.id
        opened.append(action)
    return opened


NOT_SIGNED_YET = "Submit the report first: an action is closed out once the report that recorded it is signed."
CORRECTED = ("This finding is corrected: every action on it is verified. Open a new action on it if more must "
             "be done.")


def close_out(actor, action: CorrectiveAction, completed_at: dt.datetime, note: str | None = None,
              evidence_photo_id: str | None = None, evidence_photo: PhotoData | None = None) -> CorrectiveAction:
    """Record that the corrective action was done: when, how, and the photo that shows it.

    The photo is one already stored (`evidence_photo_id`) or one taken for the close-out (`evidence_photo`,
    its bytes), stored through the photos service only once the close-out itself is known to be right.
    """
    if action.status == "verified":
        raise FindingError("completed_at", "This action is already verified.")
    inspection = action.finding.inspection
    if not inspection.is_submitted:
        # Its report is not signed yet: nothing of it is the record, and the schedule must not count it done.
        raise FindingError("completed_at", NOT_SIGNED_YET)
    if completed_at > utcnow() + dt.timedelta(minutes=5):
        raise FindingError("completed_at", "The completion time cannot be in the future.")
    # Times are entered to the minute; the discovery time and the inspection's are kept to the second. A problem
    # first observed days before (`discovered_at` then) was still there at the inspection that recorded it.
    if completed_at < action.discovered_at.replace(second=0, microsecond=0):
        raise FindingError("completed_at", "The action cannot be done before the problem was found.")
    if completed_at < inspection.performed_at.replace(second=0, microsecond=0):
        raise FindingError("completed_at", "The action cannot be done before the inspection that found the "
                                           "problem still there.")
    photo_id = (evidence_photo_id or "").strip() or None
    if photo_id and evidence_photo is not None:
        raise FindingError("evidence_photo", "Take or choose a photo, or give the id of one already uploaded: "
                                             "not both.")
    if photo_id:
        photo = db.session.get(Photo, photo_id)
        # One the person closing out may see: never a photo of someone else's draft, theirs alone (same words as
        # for none: a draft's photo is not said to exist).
        if photo is None or photo.permit_id != action.permit_id or (actor is not None and not sees_part(actor, photo)):
            raise FindingError("evidence_photo_id", "No photo of this permit has that id.")
    if evidence_photo is not None:
        try:
            photo_id = photos.store_photo(actor, db.session.get(Permit, action.permit_id), evidence_photo,
                                          corrective_action=action).id
        except (PhotoRejected, photos.PhotoRefused) as error:
            raise FindingError("evidence_photo", str(error)) from None
    before = audit.snapshot(action)
    action.status, action.completed_at = "completed", completed_at
    action.closeout_note, action.evidence_photo_id = note or None, photo_id
    action.revision += 1
    audit.record(actor, "action.close", action, before)
    return action


def verify(actor, action: CorrectiveAction, now: dt.datetime | None = None) -> CorrectiveAction:
    """An agent confirms the close-out; a finding whose actions are all verified is corrected.

    The finding, then the action, are held and read again as they are now (the order `return_to_field` holds
    them in): of two agents verifying at once, or one verifying while another sends the finding back, the second
    waits, then finds what the first did and is told."""
    hold(Finding, action.finding_id)
    hold(CorrectiveAction, action.id)
    if action.status == "verified":
        who = action.verified_by.name if action.verified_by else "another agent"
        raise FindingError("verify", f"This action was verified meanwhile, by {who}.")
    if action.status != "completed":
        raise FindingError("verify", "Only a completed action can be verified: this one was sent back to the "
                                     "field meanwhile." if action.finding.status == "returned" else
                           "Only a completed action can be verified.")
    before = audit.snapshot(action)
    action.status, action.verified_by_id, action.verified_at = "verified", actor.id, now or utcnow()
    action.revision += 1
    audit.record(actor, "action.verify", action, before)
    finding = action.finding
    if all(a.status == "verified" for a in finding.actions):
        before = audit.snapshot(finding)
        finding.status = "corrected"
        audit.record(actor, "finding.corrected", finding, before)
    return action


def return_to_field(actor, finding: Finding, comment: str) -> Finding:
    """An agent sends a finding back to the field with a comment; unverified close-outs reopen."""
    if not (comment or "").strip():
        raise FindingError("comment", "Say what must still be done.")
    hold(Finding, finding.id)  # (see `verify`: the finding first, then its actions, as they are now, by id)
    for action in sorted(finding.actions, key=lambda a: a.id):
        hold(CorrectiveAction, action.id)
    if finding.status == "corrected":
        # Every action is verified, and a verified one is never reopened: sent back, it would stay "returned"
        # with nothing to do. More work on it is a new action.
        raise FindingError("comment", CORRECTED)
    before = audit.snapshot(finding)
    finding.status, finding.agent_comment = "returned", comment.strip()
    audit.record(actor, "finding.return", finding, before)
    for action in finding.actions:
        if action.status == "completed":
            action_before = audit.snapshot(action)
            action.status, action.completed_at = "open", None
            action.revision += 1
            audit.record(actor, "action.reopen", action, action_before)
    return finding


def add_punch_item(actor, inspection: Inspection, description: str,
                   item_id: str | None = None) -> PunchListItem:
    """Add an item of remaining work to a walk-through's punch list (§380-16 C(4)(d))."""
    ensure_draft(inspection)
    if not inspection_types.spec(inspection.type).makes_punch_list:
        raise FindingError("description", "Only a walk-through inspection makes a punch list.")
    if not (description or "").strip():
        raise FindingError("description", "Describe the remaining work and where it is.")
    item = PunchListItem(**({"id": item_id} if item_id else {}),  # a device's own id (sync)
                         permit_id=inspection.permit_id, walk_through_id=inspection.id,
                         description=description.strip())
    db.session.add(item)
    audit.record(actor, "punch.create", item)
    return item


def remove_punch_item(actor, item: PunchListItem) -> None:
    """Take an item off a draft walk-through's punch list."""
    ensure_draft(db.session.get(Inspection, item.walk_through_id))
    before = audit.snapshot(item)
    db.session.delete(item)
    audit.record(actor, "punch.delete", item, before)
