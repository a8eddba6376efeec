"""Operation kinds a device can push, each a payload model and an applier, found through `KINDS`.

Adding a kind is one payload model, one `apply_*` function and one entry in `KINDS`; an applier that does
what a form does is a thin adapter over that form's own service. Four kinds are retired (`Kind.legacy`):
only the previous release's outbox made them, and they are still applied for what it left queued. An applier
checks everything before it changes anything, then raises `Rejected` (field → reason), `Waiting`
(a record or blob not here yet) or `Duplicate` (the record it would make is already here), or changes
the record through the domain's own services (which write the audit log) and returns the result a
device gets back. Whatever an applier changed before it raises is undone: it runs in a SAVEPOINT.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.orm import selectinload
from werkzeug.datastructures import MultiDict

from inspect_app import inspection_types
from inspect_app.accounts.policy import allowed, sees_part, usable_blob, visible
from inspect_app.audit import services as audit
from inspect_app.blobs.models import Blob
from inspect_app.blobs.store import BlobStore
from inspect_app.certifications import services as certifications
from inspect_app.certifications.models import MaintenanceLogEntry, OMCertification
from inspect_app.extensions import db
from inspect_app.fields import in_calendar
from inspect_app.findings import services as findings
from inspect_app.reporting import submission
from inspect_app.findings.services import NewAction, NewFinding
from inspect_app.inspections.models import ACTION_KINDS, SEVERITIES, CorrectiveAction
from inspect_app.inspections import forms as report_forms
from inspect_app.inspections import queries
from inspect_app.inspections import services as inspections
from inspect_app.inspections.models import INSPECTION_TYPES, Inspection, InspectionNotice
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.photos import services as photos
from inspect_app.photos.posted import Sent
from inspect_app.photos.processing import PhotoRejected
from inspect_app.stabilization.models import AREA_STATUSES, DisturbedArea
from inspect_app.types import canonical_uuid, new_id

from sync.models import SyncConflict, SyncOperation

SHA256 = r"^[0-9a-f]{64}$"
# Dates and times within the years the app takes anywhere (inspect_app.fields): past them a time cannot be
# stored as UTC, or a deadline counted from it cannot be held.
CalendarTime = Annotated[AwareDatetime, AfterValidator(in_calendar)]
CalendarDate = Annotated[dt.date, AfterValidator(in_calendar)]
# Ids are compared as text: each is brought to its one form on the way in (upper case resent = same id).
Uuid = Annotated[str, AfterValidator(canonical_uuid)]
# A device clock this far off is wrong, not just slow: its times are moved by the measured offset.
CLOCK_TOLERANCE = dt.timedelta(minutes=5)
# Report form fields the payload carries itself: its `performed_at` (with its offset) and
# `signature_sha256` (an uploaded blob) win over the form's local time and data URL.
FORM_FIELDS_IGNORED = frozenset({"performed_at", "signature", "csrf_token"})
# Report problems that are about a payload field rather than a field of `form`; "signer": the sender, who
# signs the report and may not for its type (not a PE where the town asks for one).
REPORT_FIELDS = {"signature": "payload.signature_sha256", "performed_at": "payload.performed_at", "signer": "signer"}


class Rejected(Exception):
    """The operation can never be applied as sent; `reasons` maps fields to plain-words reasons."""

    def __init__(self, reasons: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in reasons.items()))
        self.reasons = reasons


class Waiting(Exception):
    """The operation needs a record or blob that has not arrived yet; it is kept and retried."""

    def __init__(self, blob: str | None = None, record: str | None = None) -> None:
        self.waiting_for = {"blob": blob} if blob else {"record": record}
        super().__init__(str(self.waiting_for))


class Duplicate(Exception):
    """The record the operation creates is already here (an earlier operation, or made online).

    Nothing is done again; the device is answered `duplicate` with the first result, as for a replay.
    """

    def __init__(self, original: dict[str, Any]) -> None:
        super().__init__(str(original))
        self.original = original


@dataclass(frozen=True)
class Op:
    """A validated operation from a device (`model`: its payload, already parsed)."""

    op_id: str
    kind: str
    record_id: str
    base_revision: int | None
    device_time: str
    payload: dict[str, Any]
    model: Any = field(default=None, compare=False)
    # Reasons it is refused before it is tried (a NUL character): answered, never stored or applied.
    refused: dict[str, str] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Context:
    """Who sent the operation, from which device, and how far off the device clock is."""

    user: Any
    device_id: str | None
    clock_offset: dt.timedelta
    blobs: BlobStore
    # Records locked (FOR UPDATE) in the open transaction, by (table, id): read once, then reused. Held
    # here, since the session keeps unchanged records only as long as something else refers to them.
    locked: dict[tuple[str, str], Any] = field(default_factory=dict, compare=False)
    # Revisions of a record that this device's operations made in the run being applied, by (kind, record id):
    # their answers are stored only once the run is (sync/services.py `_apply_run`), and a later operation of the
    # run on the same record counts them as its own (`_only_own_changes`).
    made: dict[tuple[str, str], set[int]] = field(default_factory=dict, compare=False)

    def server_time(self, device_clock_time: dt.datetime, field: str) -> dt.datetime:
        """A time read off the device clock (the payload's `field`), on the server's clock when the device's is far
        off; Rejected when the time so moved is not one the app takes (a sent time and a clock both far off)."""
        if abs(self.clock_offset) <= CLOCK_TOLERANCE:
            return device_clock_time
        moved = device_clock_time + self.clock_offset
        try:
            return in_calendar(moved)
        except ValueError as error:
            raise Rejected({field: f"Moved by the device clock's error ({self.clock_offset}), this time is "
                                   f"{moved.isoformat()}: {error} Set the device's date and time."}) from None


class Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


class PhotoIn(Payload):
    # Its description in the OpenAPI document is set here, not read from a docstring: app servers run with
    # python -OO (docs/deploy/inspect-app.service), which loads no docstrings.
    model_config = ConfigDict(json_schema_extra={
        "description": "A photo made on the device: its id, the SHA-256 of its uploaded bytes, caption, finding."})

    id: Uuid
    sha256: str = Field(pattern=SHA256)
    caption: str | None = Field(default=None, max_length=2000)
    finding_id: Uuid | None = None


# --- area.status ---------------------------------------------------------------------------------

class AreaStatus(Payload):
    status: Literal[AREA_STATUSES]  # type: ignore[valid-type]
    at: CalendarTime
    note: str | None = Field(default=None, max_length=4000)
    inspection_id: Uuid | None = None


def prefetch_areas(ctx: Context, ops: list[Op]) -> None:
    """Lock and read every area of a batch at once, with its permit's assignments (which the role check
    reads): three queries, not three per op. Not its timeline: a status change adds to it unread.

    Only areas the user may change: the permission is part of the query, so an area of a permit they do
    not see (another town's) is neither read nor locked, and answers as an area not there."""
    if not allowed(ctx.user, "area.edit"):
        return
    wanted = sorted({op.record_id for op in ops} - {key for table, key in ctx.locked if table == "disturbed_areas"})
    for start in range(0, len(wanted), 500):
        # In id order, so two batches locking some of the same areas take them in the same order.
        query = (select(DisturbedArea).where(DisturbedArea.id.in_(wanted[start:start + 500]),
                                             visible(ctx.user, DisturbedArea))
                 .order_by(DisturbedArea.id).with_for_update(of=DisturbedArea)
                 .options(selectinload(DisturbedArea.permit).selectinload(Permit.assignments))
                 .execution_options(populate_existing=True))
        ctx.locked.update((("disturbed_areas", area.id), area) for area in db.session.scalars(query))


def apply_area_status(ctx: Context, op: Op, payload: AreaStatus) -> tuple[str, dict[str, Any]]:
    """A disturbed area's status event (§380-11 C(3)(a) clock); a stale base revision is a conflict."""
    _require(ctx.user, "area.edit", None, "record_id")  # the role first: it tells nothing of the area
    area = _locked(ctx, DisturbedArea, op.record_id)
    if area is None:  # not here, or not the user's to see: the same answer
        raise Waiting(record=op.record_id)
    if op.base_revision is None:
        raise Rejected({"base_revision": "An area status change must say which revision it was based on."})
    if payload.inspection_id:
        _record_of(ctx, Inspection, payload.inspection_id, area.permit_id, "payload.inspection_id", "report")
    if op.base_revision != area.revision and not _only_own_changes(ctx, op, area.revision):
        return _conflict(ctx, op, area)
    try:
        permits.change_area_status(ctx.user, area, payload.status, ctx.server_time(payload.at, "payload.at"),
                                   payload.note, payload.inspection_id, batched=True)
    except permits.PermitError as error:
        raise Rejected({f"payload.{error.field}": str(error)}) from None
    return "applied", {"revision": area.revision}


# --- inspection.submit ---------------------------------------------------------------------------

class ActionIn(Payload):
    id: Uuid
    kind: Literal[ACTION_KINDS]  # type: ignore[valid-type]
    description: str = Field(max_length=5000)
    owner_name: str = Field(max_length=200)


class FindingIn(Payload):
    id: Uuid
    description: str = Field(max_length=5000)
    location: str | None = Field(default=None, max_length=300)
    severity: Literal[SEVERITIES] = "minor"  # type: ignore[valid-type]
    is_violation: bool = False
    citation: str | None = Field(default=None, max_length=120)
    area_id: Uuid | None = None
    structure_id: Uuid | None = None
    actions: list[ActionIn] = Field(default_factory=list, max_length=50)


class PunchItemIn(Payload):
    id: Uuid
    description: str = Field(max_length=2000)


class ControlIn(Payload):
    id: Uuid
    name: str = Field(max_length=120)


class InspectionSubmit(Payload):
    permit_id: Uuid
    type: Literal[INSPECTION_TYPES]  # type: ignore[valid-type]
    performed_at: CalendarTime
    latitude: float | None = Field(default=None, ge=-90, le=90)
    longitude: float | None = Field(default=None, ge=-180, le=180)
    # Exactly what the online report form posts: field name → value (or values).
    form: dict[str, str | list[str]] = Field(default_factory=dict, max_length=5000)
    signature_sha256: str | None = Field(default=None, pattern=SHA256)
    findings: list[FindingIn] = Field(default_factory=list, max_length=200)
    photos: list[PhotoIn] = Field(default_factory=list, max_length=200)
    # A walk-through's punch list, made on the device (§380-16 C(4)(d)).
    punch_list: list[PunchItemIn] = Field(default_factory=list, max_length=200)
    # An erosion-control report's other controls: the id the device gave each name typed in
    # `form["controls"]`, which its checklist answers name (answer-<item key>-<control id>).
    controls: list[ControlIn] = Field(default_factory=list, max_length=100)


def apply_inspection_submit(ctx: Context, op: Op, payload: InspectionSubmit) -> tuple[str, dict[str, Any]]:
    """A report made offline, signed and submitted (§380-16 C(4)); a legacy kind, sent only by a previous
    release's outbox, answered as it always was: a thin adapter over the report form's own submit service.

    Its checks → start (under the device's id) → the typed controls' ids → the form's fields, read as the form
    reads them → `submission.submit_report` (findings and their corrective actions, punch-list items, photos,
    submit, send). A refused submission is `rejected` with every problem, and the SAVEPOINT it ran in leaves
    nothing behind. A report already submitted under this id is never made twice.
    """
    permit = _visible_permit(ctx.user, payload.permit_id, queries.action_for(payload.type))
    inspection = db.session.get(Inspection, op.record_id)
    if inspection is not None:
        # Someone else's draft is not theirs to fill in or submit (nor to learn of): the same words.
        if inspection.permit_id != permit.id or inspection.type != payload.type \
                or not sees_part(ctx.user, inspection):
            raise Rejected({"record_id": "Another report already has this id."})
        if inspection.is_submitted:  # submitted reports are immutable: answer as for a replay
            raise Duplicate(_original(op.kind, op.record_id, {"revision": 1, "id": inspection.id,
                                                              "record_sha256": inspection.record_sha256}))
    _check_device_ids(payload)
    _check_type_parts(payload)
    for sha in [payload.signature_sha256] + [p.sha256 for p in payload.photos]:
        if sha and not _blob_here(ctx, sha):
            raise Waiting(blob=sha)
    performed_at = ctx.server_time(payload.performed_at, "payload.performed_at")
    if inspection is None:
        inspection = inspections.start_inspection(ctx.user, permit, payload.type, payload.latitude,
                                                  payload.longitude, now=performed_at,
                                                  inspection_id=op.record_id, fetch_weather=False)
    _seed_controls(inspection, payload.controls)
    data = _report_input(ctx, inspection, payload, performed_at)
    inspections.save_draft(ctx.user, inspection, data)
    reasons = _submitted(ctx, inspection, data, payload)
    if reasons:
        raise Rejected(reasons)
    return "applied", {"revision": 1, "id": inspection.id, "record_sha256": inspection.record_sha256,
                       "weather_status": inspection.weather_status}


def _submitted(ctx: Context, inspection: Inspection, data: inspections.ReportInput,
               payload: InspectionSubmit) -> dict[str, str]:
    """Submit through the report form's own service; what it refused, as payload fields (none: submitted)."""
    try:
        # A previous release's form had no field for the observed weather (`inspections.submit`).
        submission.submit_report(ctx.user, inspection, data, _report_parts(payload), fetch_weather=False,
                                 observed_weather_asked=False)
    except submission.PartRefused as refused:
        return {f"payload.{refused.field}": str(refused)}
    except inspections.ReportIncomplete as incomplete:
        return _report_reasons(incomplete.problems)
    except inspections.InspectionError as error:
        return _report_reasons({error.field: str(error)})
    return {}


def _report_parts(payload: InspectionSubmit) -> submission.ReportParts:
    """The payload's findings, punch list and photos as the submit service takes them, under the device's ids."""
    index = {item.id: i for i, item in enumerate(payload.findings)}
    new_findings = [NewFinding(f.description, f.location, f.severity, f.is_violation, f.citation, f.area_id,
                               f.structure_id, [NewAction(a.kind, a.description, owner_name=a.owner_name, id=a.id)
                                                for a in f.actions], id=f.id) for f in payload.findings]
    photos = [submission.NewPhoto(Sent(sha256=p.sha256), p.caption, p.id,
                                  finding=index[p.finding_id] if p.finding_id else None) for p in payload.photos]
    punch = [submission.NewPunchItem(p.description, p.id) for p in payload.punch_list]
    return submission.ReportParts(new_findings, punch, photos)


def _check_device_ids(payload: InspectionSubmit) -> None:
    """Every id made on the device appears once, and photos name findings of this report."""
    ids = [f.id for f in payload.findings] + [a.id for f in payload.findings for a in f.actions]
    ids += [p.id for p in payload.photos] + [p.id for p in payload.punch_list] + [c.id for c in payload.controls]
    if len({i.lower() for i in ids}) != len(ids):
        raise Rejected({"payload": "Each finding, corrective action, photo, punch-list item and control "
                                   "needs an id of its own."})
    finding_ids = {f.id for f in payload.findings}
    for index, photo in enumerate(payload.photos):
        if photo.finding_id and photo.finding_id not in finding_ids:
            raise Rejected({f"payload.photos.{index}.finding_id": "No finding of this report has this id."})


def _check_type_parts(payload: InspectionSubmit) -> None:
    """A punch list comes only with a walk-through, typed controls only with an erosion-control report."""
    declared = inspection_types.spec(payload.type)
    if payload.punch_list and not declared.makes_punch_list:
        raise Rejected({"payload.punch_list": "Only a walk-through inspection makes a punch list "
                                              "(§380-16 C(4)(d))."})
    if payload.controls and not declared.lists_other_controls:
        raise Rejected({"payload.controls": "Only an erosion control inspection lists other controls."})
    seen: set[str] = set()
    for index, control in enumerate(payload.controls):
        name = control.name.strip().lower()
        if not name:
            raise Rejected({f"payload.controls.{index}.name": "Give the control's name."})
        if name in seen:  # one name, one id: otherwise which answers are whose is a guess
            raise Rejected({f"payload.controls.{index}.name": "Each control is listed once."})
        seen.add(name)


def _seed_controls(inspection: Inspection, controls: list[ControlIn]) -> None:
    """Put the device's controls on the draft before its form is read.

    The form's `_controls` keeps the id of a name the draft already lists, so the names typed on the
    device keep the device's ids and the answers sent for them (answer-<item key>-<id>) stay theirs.
    A line typed without an id gets a new one, and its checklist rows are then unanswered.
    """
    if not controls:
        return
    details = dict(inspection.details or {})
    details["controls"] = [*details.get("controls", []), *({"id": c.id, "name": c.name.strip()} for c in controls)]
    inspection.details = details


def _report_input(ctx: Context, inspection: Inspection, payload: InspectionSubmit,
                  performed_at: dt.datetime) -> inspections.ReportInput:
    """The report form's values read exactly as the online form reads them (one set of checks)."""
    form = MultiDict([(name, value) for name, values in payload.form.items() if name not in FORM_FIELDS_IGNORED
                      for value in (values if isinstance(values, list) else [values])])
    data, errors = report_forms.parse_report(ctx.user, inspection, form)
    data.performed_at = performed_at
    if payload.signature_sha256:
        try:
            data.signature_png = _own_signature(ctx, payload.signature_sha256)
        except inspections.InspectionError as error:
            errors["signature"] = str(error)
    if errors:
        raise Rejected(_report_reasons(errors))
    return data


def _report_reasons(problems: dict[str, str]) -> dict[str, str]:
    """Report problems keyed as payload fields: `payload.form.<form field>`, or the payload's own."""
    return {REPORT_FIELDS.get(name, f"payload.form.{name}"): text for name, text in problems.items()}


def _add_photos(ctx: Context, permit: Permit, items: list[PhotoIn], where: str, **target: Any) -> None:
    """Photos from uploaded blobs, kept byte for byte (renditions made here), under the device's ids."""
    for i, item in enumerate(items):
        try:
            photos.store_photo_from_blob(ctx.user, permit, item.sha256, caption=item.caption, photo_id=item.id,
                                         **target)
        except (PhotoRejected, photos.PhotoRefused) as error:
            raise Rejected({f"{where}.{i}.sha256": str(error)}) from None


# --- action.close --------------------------------------------------------------------------------

class EvidencePhoto(Payload):
    id: Uuid
    sha256: str = Field(pattern=SHA256)
    caption: str | None = Field(default=None, max_length=2000)


class ActionClose(Payload):
    completed_at: CalendarTime
    note: str | None = Field(default=None, max_length=5000)
    evidence_photo: EvidencePhoto | None = None


def apply_action_close(ctx: Context, op: Op, payload: ActionClose) -> tuple[str, dict[str, Any]]:
    """A corrective action's close-out (CGP 2022 Part 5.4) with its evidence photo; stale → conflict."""
    _require(ctx.user, "action.close", None, "record_id")  # the role first: it tells nothing of the action
    action = _locked(ctx, CorrectiveAction, op.record_id)
    if action is None:  # opened by a report whose operation has not come yet, or not the user's to see
        raise Waiting(record=op.record_id)
    permit = db.session.get(Permit, action.permit_id)
    if op.base_revision is None:
        raise Rejected({"base_revision": "A close-out must say which revision of the action it was based on."})
    evidence = payload.evidence_photo
    if evidence and not _blob_here(ctx, evidence.sha256):
        raise Waiting(blob=evidence.sha256)
    if op.base_revision != action.revision and not _only_own_changes(ctx, op, action.revision):
        return _conflict(ctx, op, action)
    photo_id = None
    if evidence:
        try:
            photo_id = photos.store_photo_from_blob(ctx.user, permit, evidence.sha256, caption=evidence.caption,
                                                    photo_id=evidence.id, corrective_action=action).id
        except (PhotoRejected, photos.PhotoRefused) as error:
            raise Rejected({"payload.evidence_photo.sha256": str(error)}) from None
    completed_at = ctx.server_time(payload.completed_at, "payload.completed_at")
    try:
        findings.close_out(ctx.user, action, completed_at, payload.note, photo_id)
    except findings.FindingError as error:
        name = "evidence_photo" if error.field == "evidence_photo_id" else error.field
        raise Rejected({f"payload.{name}": str(error)}) from None
    return "applied", {"revision": action.revision, "id": action.id}


# --- om.log --------------------------------------------------------------------------------------

class OMLog(Payload):
    permit_id: Uuid
    # Checked by the O&M service, so a wrong value is `rejected` beside its field like on the form.
    kind: str = Field(default="", max_length=40)
    performed_on: str | None = Field(default=None, max_length=40)
    description: str = Field(default="", max_length=4000)
    performed_by: str = Field(default="", max_length=200)
    structure_id: Uuid | None = None
    material_type: str | None = Field(default=None, max_length=200)
    disposal_location: str | None = Field(default=None, max_length=300)
    photos: list[PhotoIn] = Field(default_factory=list, max_length=50)


def apply_om_log(ctx: Context, op: Op, payload: OMLog) -> tuple[str, dict[str, Any]]:
    """A maintenance log entry (§380-14 C(2)(j)) with its photos, through the O&M service."""
    permit = _visible_permit(ctx.user, payload.permit_id, "om.log")
    _made_before(op, MaintenanceLogEntry, permit, "log entry")
    for index, photo in enumerate(payload.photos):
        if photo.finding_id:
            raise Rejected({f"payload.photos.{index}.finding_id": "A log entry's photos belong to no finding."})
        if not _blob_here(ctx, photo.sha256):
            raise Waiting(blob=photo.sha256)
    try:
        performed_on = dt.date.fromisoformat(payload.performed_on) if payload.performed_on else None
    except ValueError:
        raise Rejected({"payload.performed_on": "Give the date as YYYY-MM-DD."}) from None
    try:
        in_calendar(performed_on)
    except ValueError as error:
        raise Rejected({"payload.performed_on": str(error)}) from None
    fields = payload.model_dump(exclude={"permit_id", "photos", "performed_on"})
    try:
        entry = certifications.add_log_entry(ctx.user, permit, performed_on=performed_on, entry_id=op.record_id,
                                             **fields)
    except certifications.OMError as error:
        raise Rejected({f"payload.{name}": text for name, text in error.errors.items()}) from None
    _add_photos(ctx, permit, payload.photos, "payload.photos", log_entry=entry)
    return "applied", {"revision": 1, "id": entry.id}


# --- om.certify ----------------------------------------------------------------------------------

class OMCertify(Payload):
    permit_id: Uuid
    period_start: CalendarDate
    # Ignored: the signer is the user who sends the operation, by their account's name (SPEC *Signatures*).
    # Kept so an operation made before this still applies, under its sender's name.
    signer_name: str = Field(default="", max_length=200)
    signature_sha256: str | None = Field(default=None, pattern=SHA256)


def apply_om_certify(ctx: Context, op: Op, payload: OMCertify) -> tuple[str, dict[str, Any]]:
    """The annual O&M certification (§380-14 C(2)(l)) signed on a device, for the period it names."""
    permit = _visible_permit(ctx.user, payload.permit_id, "om.certify")
    _made_before(op, OMCertification, permit, "certification")
    if payload.signature_sha256 and not _blob_here(ctx, payload.signature_sha256):
        raise Waiting(blob=payload.signature_sha256)
    if payload.signature_sha256:
        try:
            _own_signature(ctx, payload.signature_sha256)
        except inspections.InspectionError as error:
            raise Rejected({"payload.signature_sha256": str(error)}) from None
    try:
        # A retired kind, answered as before: the previous release's form, which made it, asked no confirmation
        # for a period with no log entry, and its signer cannot be asked now.
        certification = certifications.certify(
            ctx.user, permit, certification_id=op.record_id, signature_sha256=payload.signature_sha256,
            period_start=payload.period_start, without_entries_confirmed=True)
    except certifications.OMError as error:
        raise Rejected({f"payload.{name}": text for name, text in error.errors.items()}) from None
    return "applied", {"revision": 1, "id": certification.id}


# --- notice.give ---------------------------------------------------------------------------------

class NoticeGive(Payload):
    permit_id: Uuid
    inspection_type: Literal[INSPECTION_TYPES]  # type: ignore[valid-type]
    planned_for: CalendarTime
    note: str | None = Field(default=None, max_length=4000)


def apply_notice_give(ctx: Context, op: Op, payload: NoticeGive) -> tuple[str, dict[str, Any]]:
    """The engineer's 24-hour advance notice to the authority (§380-16 C(3)), under the device's id."""
    permit = _visible_permit(ctx.user, payload.permit_id, "inspection.notice")
    _made_before(op, InspectionNotice, permit, "notice")
    # §380-16 C(3): the notice counts from when the authority can see it, so `given_at` is the
    # server's clock on arrival (the service's default), not the time it was written down offline.
    try:
        notice = inspections.give_notice(ctx.user, permit, payload.inspection_type,
                                         ctx.server_time(payload.planned_for, "payload.planned_for"), payload.note,
                                         notice_id=op.record_id)
    except inspections.InspectionError as error:
        raise Rejected({f"payload.{error.field}": str(error)}) from None
    return "applied", {"revision": 1, "id": notice.id}


# --- photo.attach --------------------------------------------------------------------------------

class PhotoAttach(Payload):
    permit_id: Uuid
    original_sha256: str = Field(pattern=SHA256)
    caption: str | None = Field(default=None, max_length=2000)
    inspection_id: Uuid | None = None
    finding_id: Uuid | None = None
    corrective_action_id: Uuid | None = None
    log_entry_id: Uuid | None = None
    structure_id: Uuid | None = None


def apply_photo_attach(ctx: Context, op: Op, payload: PhotoAttach) -> tuple[str, dict[str, Any]]:
    """A photo from a completely uploaded blob, linked to its record, through the photos service.

    The same rule as an upload online: "photo.add", and the action owning each record it is of (a
    permittee adds photos to their maintenance log, an inspector to a report).
    """
    ids = {key: getattr(payload, key) for key in photos.TARGETS}
    # A photo of no record is a close-out's (as in photos.views), sent before its corrective action.
    needed = photos.actions_for([key for key, value in ids.items() if value] or ["corrective_action_id"])
    permit = _visible_permit(ctx.user, payload.permit_id, needed[0])
    for action in needed[1:]:
        _require(ctx.user, action, permit, "payload.permit_id")
    for key, model in photos.TARGETS.items():
        if ids[key]:  # made offline too (Waiting), or a record of another permit or draft (Rejected)
            _record_of(ctx, model, ids[key], permit.id, f"payload.{key}", key.removesuffix("_id").replace("_", " "))
    if not _blob_here(ctx, payload.original_sha256):
        raise Waiting(blob=payload.original_sha256)
    try:
        target = photos.resolve_target(permit, ids)
        photo = photos.store_photo_from_blob(ctx.user, permit, payload.original_sha256, caption=payload.caption,
                                             photo_id=op.record_id, **target)
    except LookupError as error:
        raise Rejected({"payload": str(error)}) from None
    except (PhotoRejected, photos.PhotoRefused) as error:
        raise Rejected({"payload.original_sha256": str(error)}) from None
    return "applied", {"revision": 1, "id": photo.id}


# --- shared --------------------------------------------------------------------------------------

def _locked(ctx: Context, model, record_id: str):
    """The record read afresh and locked until commit (FOR UPDATE on PostgreSQL), or None: not here, or
    not one the user may see (the permission is in the query, so another town's record is never locked).

    Two devices' operations on one record must not both read the same revision. Once locked in this
    transaction nobody else can change it, so the next operation on it takes it from the session
    (no second read, and its loaded timeline stays loaded).
    """
    key = (model.__tablename__, record_id)
    if key in ctx.locked:
        return ctx.locked[key]
    record = db.session.scalar(select(model).where(model.id == record_id, visible(ctx.user, model))
                               .with_for_update(of=model).execution_options(populate_existing=True))
    if record is not None:
        ctx.locked[key] = record
    return record


def _record_of(ctx: Context, model, record_id: str, permit_id: str, field_name: str, what: str):
    """A record an operation's payload names: of the operation's permit, and one the user may see.

    Not here yet, or not one the user may see (another town's, someone else's draft or a part of one):
    Waiting, the same answer either way (its own operation may still come). One of another permit the
    user sees: Rejected.
    """
    record = db.session.scalar(select(model).where(model.id == record_id, visible(ctx.user, model)))
    if record is None:
        raise Waiting(record=record_id)
    if record.permit_id != permit_id:
        raise Rejected({field_name: f"No {what} of this permit has this id, or you may not see it."})
    return record


def _only_own_changes(ctx: Context, op: Op, current: int) -> bool:
    """True if every revision after the op's base came from this same device (its own earlier ops)."""
    if op.base_revision is None or op.base_revision > current:
        return False
    # Without a flush first: the answers are stored by statements, never in the session, so a flush would
    # change nothing read here; it would only write the run's changes so far, one op at a time, where the
    # run's SAVEPOINT writes them all at once (audit.DEFER_FLUSH).
    with db.session.no_autoflush:
        rows = db.session.scalars(select(SyncOperation).where(
            SyncOperation.record_id == op.record_id, SyncOperation.kind == op.kind,
            SyncOperation.status == "applied", SyncOperation.user_id == ctx.user.id,
            SyncOperation.device_id.is_(None) if ctx.device_id is None
            else SyncOperation.device_id == ctx.device_id,
        )).all()
    own = {row.result.get("revision") for row in rows} | ctx.made.get((op.kind, op.record_id), set())
    return all(revision in own for revision in range(op.base_revision + 1, current + 1))


def _conflict(ctx: Context, op: Op, record) -> tuple[str, dict[str, Any]]:
    """Keep both versions and flag the record for a person; the device's change is not applied."""
    server = audit.snapshot(record)
    conflict = SyncConflict(
        id=new_id(),  # given here, not by the flush: the answer names it
        entity=record.__tablename__, entity_id=record.id, permit_id=record.permit_id, server_version=server,
        device_version={"kind": op.kind, "base_revision": op.base_revision,
                        "device_time": op.device_time, "payload": op.payload},
        op_id=op.op_id,
    )
    db.session.add(conflict)
    if hasattr(record, "has_conflict"):  # areas carry the flag; other records are listed by their conflict
        record.has_conflict = True
    audit.record(ctx.user, f"{op.kind.split('.')[0]}.conflict", record, server)
    return "conflict", {"server": server, "conflict_id": conflict.id}


def _made_before(op: Op, model, permit: Permit, what: str) -> None:
    """A creation whose record is already here: a replay (`duplicate`, with the first answer), or its
    id taken by a record of another permit (`rejected`). Nothing when the id is new."""
    record = db.session.get(model, op.record_id)
    if record is None:
        return
    if record.permit_id != permit.id:
        raise Rejected({"record_id": f"Another {what} already has this id."})
    raise Duplicate(_original(op.kind, op.record_id, {"revision": 1, "id": record.id}))


def _original(kind: str, record_id: str, made: dict[str, Any]) -> dict[str, Any]:
    """The first answer for the operation that made `record_id`; made online, an answer like it."""
    first = db.session.scalar(select(SyncOperation.result).where(
        SyncOperation.record_id == record_id, SyncOperation.kind == kind, SyncOperation.status == "applied")
        .order_by(SyncOperation.arrival).limit(1))
    return first or {"status": "applied", "record_id": record_id, **made}


def _visible_permit(user, permit_id: str, action: str) -> Permit:
    """The permit the operation is about, if the user may do `action` on it; else Rejected."""
    permit = db.session.get(Permit, permit_id)
    if permit is None or not allowed(user, "permit.view", permit):
        # The same words whether it is missing or hidden: a device learns nothing about others' permits.
        raise Rejected({"payload.permit_id": "No such permit, or you may not see it."})
    _require(user, action, permit, "payload.permit_id")
    return permit


def _own_signature(ctx: Context, sha: str) -> bytes:
    """The PNG of a signature the user uploaded themselves, checked as one from the pad is (InspectionError if
    not). A stored file they may use is not enough: a site photo, or the engineer's signature on a report they
    see, would sign a certification or a report as theirs."""
    if db.session.scalar(select(Blob.uploaded_by_id).where(Blob.sha256 == sha)) != ctx.user.id:
        raise inspections.InspectionError("signature", "The signature must be one drawn on this account's device "
                                                       "and uploaded with it.")
    return inspections.signature_from_blob(sha)


def _blob_here(ctx: Context, sha: str) -> bool:
    """Whether the blob is stored and the user's to use (`usable_blob`, as for a form): a stored file they
    may not see (another town's photo, named by its hash) is, to them, one not uploaded yet, as at /sync/blobs."""
    return usable_blob(ctx.user, sha, ctx.blobs)


def _require(user, action: str, permit: Permit | None, field_name: str) -> None:
    if not allowed(user, action, permit):
        raise Rejected({field_name: f"Your role may not do {action} on this permit."})


@dataclass(frozen=True)
class Kind:
    payload: type[Payload]
    apply: Callable[[Context, Op, Any], tuple[str, dict[str, Any]]]
    # A creation: record_id is the new record's id, made on the device (a UUID).
    creates: bool = False
    # Reads (and locks) what a batch's operations of this kind need, before they are applied.
    prefetch: Callable[[Context, list[Op]], None] | None = None
    # Applied in a run (sync.services._apply_run), its changes may wait for the run's flush: the applier
    # reads no id or default a flush would give (audit.DEFER_FLUSH).
    defer_flush: bool = False
    # Retired: nothing live makes it any more (the app replays its own form posts). It is still applied as
    # it always was, through the same services as the form, for an item the previous release's outbox left
    # queued on a device: that outbox deletes what it sent once answered, so a refusal would lose the work.
    legacy: bool = False


KINDS: dict[str, Kind] = {
    "area.status": Kind(AreaStatus, apply_area_status, prefetch=prefetch_areas, defer_flush=True),
    "inspection.submit": Kind(InspectionSubmit, apply_inspection_submit, creates=True, legacy=True),
    "action.close": Kind(ActionClose, apply_action_close, legacy=True),
    "om.log": Kind(OMLog, apply_om_log, creates=True, legacy=True),
    "om.certify": Kind(OMCertify, apply_om_certify, creates=True, legacy=True),
    "notice.give": Kind(NoticeGive, apply_notice_give, creates=True),
    "photo.attach": Kind(PhotoAttach, apply_photo_attach, creates=True),
}
