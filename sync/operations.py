"""Operation kinds a device can push, each a payload model and an applier, found through `KINDS`.

Adding a kind is one payload model, one `apply_*` function and one entry in `KINDS`. An applier
checks everything before it changes anything, then raises `Rejected` (field → reason) or `Waiting`
(a record or blob not here yet), or changes the record through the domain's own service (which
writes the audit log) and returns the result a device gets back.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from sqlalchemy import select

from inspect_app.accounts.policy import allowed
from inspect_app.audit import services as audit
from inspect_app.blobstore import BlobStore
from inspect_app.extensions import db
from inspect_app.inspections import services as inspections
from inspect_app.inspections.models import INSPECTION_TYPES, Inspection
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.photos import services as photos
from inspect_app.photos.processing import PhotoRejected
from inspect_app.stabilization.models import AREA_STATUSES, DisturbedArea

from sync.models import SyncConflict, SyncOperation

SHA256 = r"^[0-9a-f]{64}$"
RecordId = Field(min_length=1, max_length=36)
# A device clock this far off is wrong, not just slow: its times are moved by the measured offset.
CLOCK_TOLERANCE = dt.timedelta(minutes=5)


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


@dataclass(frozen=True)
class Op:
    """A validated operation from a device."""

    op_id: str
    kind: str
    record_id: str
    base_revision: int | None
    device_time: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class Context:
    """Who sent the operation, from which device, and how far off the device clock is."""

    user: Any
    device_id: str | None
    clock_offset: dt.timedelta
    blobs: BlobStore

    def server_time(self, device_clock_time: dt.datetime) -> dt.datetime:
        """A time read off the device clock, on the server's clock when the device's is far off."""
        if abs(self.clock_offset) > CLOCK_TOLERANCE:
            return device_clock_time + self.clock_offset
        return device_clock_time


class Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


# --- area.status ---------------------------------------------------------------------------------

class AreaStatus(Payload):
    status: Literal[AREA_STATUSES]  # type: ignore[valid-type]
    at: AwareDatetime
    note: str | None = Field(default=None, max_length=4000)
    inspection_id: str | None = Field(default=None, max_length=36)


def apply_area_status(ctx: Context, op: Op, payload: AreaStatus) -> tuple[str, dict[str, Any]]:
    """A disturbed area's status event (§380-11 C(3)(a) clock); a stale base revision is a conflict."""
    # FOR UPDATE: two devices' operations on one area must not both read the same revision.
    area = db.session.scalar(select(DisturbedArea).where(DisturbedArea.id == op.record_id)
                             .with_for_update().execution_options(populate_existing=True))
    if area is None:
        raise Waiting(record=op.record_id)
    _require(ctx.user, "area.edit", area.permit, "record_id")
    if op.base_revision is None:
        raise Rejected({"base_revision": "An area status change must say which revision it was based on."})
    if payload.inspection_id and db.session.get(Inspection, payload.inspection_id) is None:
        raise Waiting(record=payload.inspection_id)
    if op.base_revision != area.revision and not _only_own_changes(ctx, op, area.revision):
        return _conflict(ctx, op, area)
    try:
        permits.change_area_status(ctx.user, area, payload.status, ctx.server_time(payload.at),
                                   payload.note, payload.inspection_id)
    except permits.PermitError as error:
        raise Rejected({f"payload.{error.field}": str(error)}) from None
    return "applied", {"revision": area.revision}


def _only_own_changes(ctx: Context, op: Op, current: int) -> bool:
    """True if every revision after the op's base came from this same device (its own earlier ops)."""
    if op.base_revision is None or op.base_revision > current:
        return False
    rows = db.session.scalars(select(SyncOperation).where(
        SyncOperation.record_id == op.record_id, SyncOperation.kind == op.kind,
        SyncOperation.status == "applied", SyncOperation.user_id == ctx.user.id,
        SyncOperation.device_id.is_(None) if ctx.device_id is None
        else SyncOperation.device_id == ctx.device_id,
    ))
    own = {row.result.get("revision") for row in rows}
    return all(revision in own for revision in range(op.base_revision + 1, current + 1))


def _conflict(ctx: Context, op: Op, area: DisturbedArea) -> tuple[str, dict[str, Any]]:
    """Keep both versions and flag the area for a person; the device's change is not applied."""
    server = audit.snapshot(area)
    conflict = SyncConflict(
        entity="disturbed_areas", entity_id=area.id, permit_id=area.permit_id, server_version=server,
        device_version={"kind": op.kind, "base_revision": op.base_revision,
                        "device_time": op.device_time, "payload": op.payload},
        op_id=op.op_id,
    )
    db.session.add(conflict)
    area.has_conflict = True
    audit.record(ctx.user, "area.conflict", area, server)
    return "conflict", {"server": server, "conflict_id": conflict.id}


# --- notice.give ---------------------------------------------------------------------------------

class NoticeGive(Payload):
    permit_id: str = RecordId
    inspection_type: Literal[INSPECTION_TYPES]  # type: ignore[valid-type]
    planned_for: AwareDatetime
    note: str | None = Field(default=None, max_length=4000)


def apply_notice_give(ctx: Context, op: Op, payload: NoticeGive) -> tuple[str, dict[str, Any]]:
    """The engineer's 24-hour advance notice to the authority (§380-16 C(3)), through its service."""
    permit = _visible_permit(ctx.user, payload.permit_id, "inspection.notice")
    # §380-16 C(3): the notice counts from when the authority can see it, so `given_at` is the
    # server's clock on arrival (the service's default), not the time it was written down offline.
    try:
        notice = inspections.give_notice(ctx.user, permit, payload.inspection_type,
                                         ctx.server_time(payload.planned_for), payload.note)
    except inspections.InspectionError as error:
        raise Rejected({f"payload.{error.field}": str(error)}) from None
    return "applied", {"revision": 1, "id": notice.id}


# --- photo.attach --------------------------------------------------------------------------------

class PhotoAttach(Payload):
    permit_id: str = RecordId
    original_sha256: str = Field(pattern=SHA256)
    caption: str | None = Field(default=None, max_length=2000)
    inspection_id: str | None = Field(default=None, max_length=36)
    finding_id: str | None = Field(default=None, max_length=36)
    corrective_action_id: str | None = Field(default=None, max_length=36)
    log_entry_id: str | None = Field(default=None, max_length=36)
    structure_id: str | None = Field(default=None, max_length=36)


def apply_photo_attach(ctx: Context, op: Op, payload: PhotoAttach) -> tuple[str, dict[str, Any]]:
    """A photo from a completely uploaded blob, linked to its record, through the photos service."""
    permit = _visible_permit(ctx.user, payload.permit_id, "inspection.perform")
    ids = {key: getattr(payload, key) for key in photos.TARGETS}
    for key, model in photos.TARGETS.items():
        if ids[key] and db.session.get(model, ids[key]) is None:
            raise Waiting(record=ids[key])  # made offline too, and its operation has not come yet
    if not ctx.blobs.exists(payload.original_sha256):
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

def _visible_permit(user, permit_id: str, action: str) -> Permit:
    """The permit the operation is about, if the user may do `action` on it; else Rejected."""
    permit = db.session.get(Permit, permit_id)
    if permit is None or not allowed(user, "permit.view", permit):
        # The same words whether it is missing or hidden: a device learns nothing about others' permits.
        raise Rejected({"payload.permit_id": "No such permit, or you may not see it."})
    _require(user, action, permit, "payload.permit_id")
    return permit


def _require(user, action: str, permit: Permit, field: str) -> None:
    if not allowed(user, action, permit):
        raise Rejected({field: f"Your role may not do {action} on this permit."})


@dataclass(frozen=True)
class Kind:
    payload: type[Payload]
    apply: Callable[[Context, Op, Any], tuple[str, dict[str, Any]]]


KINDS: dict[str, Kind] = {
    "area.status": Kind(AreaStatus, apply_area_status),
    "notice.give": Kind(NoticeGive, apply_notice_give),
    "photo.attach": Kind(PhotoAttach, apply_photo_attach),
}
