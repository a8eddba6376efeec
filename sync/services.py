"""Push, pull, blobs and device tokens: the server side of the sync protocol (docs/sync.md).

Each operation is applied in its own short transaction. The operation's row is inserted first: its
primary key is the id the device made, so a replay (even one racing on another connection) fails to
insert and is answered with the stored result instead of being applied twice.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
import time
import uuid
from typing import Any

from flask import current_app
from pydantic import ValidationError
from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import visible_permits
from inspect_app.audit import services as audit
from inspect_app.audit.models import AuditEntry
from inspect_app.blobstore import BlobStore
from inspect_app.extensions import db
from inspect_app.findings.models import CorrectiveAction, Finding, PunchListItem
from inspect_app.inspections.models import Inspection
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.photos.models import Blob
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import utcnow

from sync.models import SyncConflict, SyncDevice, SyncOperation
from sync.operations import KINDS, Context, Op, Rejected, Waiting

MAX_OPS = 1000
MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_CHUNK_BYTES = 8 * 1024 * 1024
MAX_BLOB_BYTES = 512 * 1024 * 1024
PAGE_SIZE = 500
_OP_FIELDS = {"op_id", "kind", "record_id", "base_revision", "device_time", "payload"}


class BatchError(ValueError):
    """The batch as a whole is refused (nothing applied); `status` is the HTTP status to answer."""

    def __init__(self, status: int, message: str, problems: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.problems = problems or []


def setting(name: str, default: Any) -> Any:
    return current_app.config.get(name, default)


def blob_store() -> BlobStore:
    """The app's blob store."""
    return BlobStore(current_app.config["BLOB_ROOT"], max_bytes=setting("SYNC_MAX_BLOB_BYTES", MAX_BLOB_BYTES))


# --- push ----------------------------------------------------------------------------------------

def parse_batch(body: bytes, now: dt.datetime) -> tuple[list[Op], dt.timedelta]:
    """The operations of a push body and the device clock's offset; BatchError if anything is wrong."""
    try:
        batch = json.loads(body)
    except (UnicodeDecodeError, ValueError) as error:
        raise BatchError(400, f"The body is not valid JSON: {error}.") from None
    if not isinstance(batch, dict) or not isinstance(batch.get("ops"), list):
        raise BatchError(400, 'The body must be a JSON object with a list "ops".')
    unknown = set(batch) - {"ops", "sent_at"}
    if unknown:
        raise BatchError(400, f"Unknown fields in the batch: {', '.join(sorted(unknown))}.")
    if len(batch["ops"]) > setting("SYNC_MAX_OPS", MAX_OPS):
        raise BatchError(413, f"A batch holds at most {setting('SYNC_MAX_OPS', MAX_OPS)} operations; "
                              f"this one has {len(batch['ops'])}. Send it in smaller batches.")
    offset = dt.timedelta(0)
    if batch.get("sent_at") is not None:
        sent_at = _aware_time(batch["sent_at"])
        if sent_at is None:
            raise BatchError(400, '"sent_at" must be an ISO 8601 time with its UTC offset.')
        offset = now - sent_at
    ops, problems, seen = [], [], set()
    for index, raw in enumerate(batch["ops"]):
        op, reasons = _parse_op(raw)
        if op is not None and op.op_id in seen:
            reasons = {"op_id": "The same op_id appears twice in this batch."}
        if reasons:
            problems.append({"index": index, "op_id": raw.get("op_id") if isinstance(raw, dict) else None,
                             "reasons": reasons})
        else:
            seen.add(op.op_id)
            ops.append(op)
    if problems:
        raise BatchError(422, f"{len(problems)} operation(s) are malformed; nothing was applied.", problems)
    return ops, offset


def _parse_op(raw: Any) -> tuple[Op | None, dict[str, str]]:
    """One operation checked for shape and types, with field-level reasons when it is wrong."""
    if not isinstance(raw, dict):
        return None, {"": "An operation must be a JSON object."}
    reasons = {f: "Unknown field." for f in set(raw) - _OP_FIELDS}
    reasons |= {f: "Required." for f in _OP_FIELDS - set(raw) - {"base_revision"}}
    op_id, kind, record_id = raw.get("op_id"), raw.get("kind"), raw.get("record_id")
    if "op_id" in raw and not _is_uuid(op_id):
        reasons["op_id"] = "Must be a UUID made on the device, as text."
    if "kind" in raw and kind not in KINDS:
        reasons["kind"] = f"Unknown kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}."
    if "record_id" in raw and not (isinstance(record_id, str) and 1 <= len(record_id) <= 36):
        reasons["record_id"] = "Must be text of 1 to 36 characters."
    base = raw.get("base_revision")
    if base is not None and (type(base) is not int or base < 1):
        reasons["base_revision"] = "Must be a whole number from 1, or null."
    if "device_time" in raw and _aware_time(raw["device_time"]) is None:
        reasons["device_time"] = "Must be an ISO 8601 time with its UTC offset."
    payload = raw.get("payload")
    if "payload" in raw and not isinstance(payload, dict):
        reasons["payload"] = "Must be a JSON object."
    elif isinstance(payload, dict) and kind in KINDS:
        try:
            KINDS[kind].payload.model_validate(payload)
        except ValidationError as error:
            for problem in error.errors():
                where = ".".join(str(p) for p in problem["loc"])
                reasons[f"payload.{where}" if where else "payload"] = problem["msg"]
    if reasons:
        return None, reasons
    return Op(op_id, kind, record_id, base, raw["device_time"], payload), {}


def push(user, device_id: str | None, ops: list[Op], clock_offset: dt.timedelta) -> list[dict[str, Any]]:
    """Apply each operation once, in order; the answer for each, in the same order."""
    ctx = Context(user=user, device_id=device_id, clock_offset=clock_offset, blobs=blob_store())
    stored = _stored_ops([op.op_id for op in ops])
    db.session.rollback()  # end the read; each operation gets its own transaction
    retry_waiting(user_id=user.id)  # what they waited for may have come since
    answers = []
    session = db.session()
    # Keep what was loaded (the user, their permits) across the batch's many short commits; the
    # records an operation changes are re-read with populate_existing (see operations.py).
    session.expire_on_commit = False
    try:
        for op in ops:
            row = stored.get(op.op_id)
            if row is None:
                answers.append(_apply_new(ctx, op))
            elif row.status == "waiting":
                answers.append(_retry(row) or _answer_stored(op.op_id))
            else:
                answers.append(_duplicate(op.op_id, row.result))
    finally:
        session.expire_on_commit = True
    retry_waiting(user_id=user.id)  # this batch may have brought a record an earlier op waited for
    return answers


def _stored_ops(op_ids: list[str]) -> dict[str, SyncOperation]:
    found: dict[str, SyncOperation] = {}
    for start in range(0, len(op_ids), 500):
        rows = db.session.execute(select(SyncOperation.op_id, SyncOperation.status, SyncOperation.result)
                                  .where(SyncOperation.op_id.in_(op_ids[start:start + 500])))
        found |= {row.op_id: row for row in rows}
    return found


def _apply_new(ctx: Context, op: Op) -> dict[str, Any]:
    """Claim the op id by inserting its row, apply the op, store its result; one transaction."""
    for _attempt in range(3):
        if not _insert_op(ctx, op, "waiting", {}):
            return _answer_stored(op.op_id)  # already stored: a replay, perhaps racing us
        try:
            status, result = _run(ctx, op)
        except (Rejected, Waiting) as outcome:
            # Undo whatever the applier touched, then store only the operation and why.
            db.session.rollback()
            status, result = _outcome(outcome)
            if not _insert_op(ctx, op, status, result):
                return _answer_stored(op.op_id)
            db.session.commit()
            return {"op_id": op.op_id, **_stored_result(op.record_id, status, result)}
        except IntegrityError:  # a race on another unique key (a blob row, say): try it again
            db.session.rollback()
            continue
        stored = _stored_result(op.record_id, status, result)
        db.session.execute(update(SyncOperation).where(SyncOperation.op_id == op.op_id)
                           .values(status=status, result=stored, settled_at=utcnow())
                           .execution_options(synchronize_session=False))
        db.session.commit()
        return {"op_id": op.op_id, **stored}
    raise RuntimeError(f"operation {op.op_id} kept colliding with concurrent writes")


def _insert_op(ctx: Context, op: Op, status: str, result: dict[str, Any]) -> bool:
    """Insert the operation's row; False (and rolled back) if its id is already stored."""
    try:
        db.session.execute(insert(SyncOperation).values(
            op_id=op.op_id, arrival=time.time_ns(), kind=op.kind, record_id=op.record_id,
            base_revision=op.base_revision, device_time=op.device_time,
            clock_offset_s=round(ctx.clock_offset.total_seconds()), payload=op.payload, user_id=ctx.user.id,
            device_id=ctx.device_id, received_at=utcnow(), status=status,
            result=_stored_result(op.record_id, status, result) if result else {},
            settled_at=None if status == "waiting" else utcnow()))
    except IntegrityError:
        db.session.rollback()
        return False
    return True


def _stored_result(record_id: str, status: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"status": status, "record_id": record_id, **result}


def _outcome(error: Rejected | Waiting) -> tuple[str, dict[str, Any]]:
    if isinstance(error, Waiting):
        return "waiting", {"waiting_for": error.waiting_for}
    return "rejected", {"reasons": error.reasons}


def _run(ctx: Context, op: Op) -> tuple[str, dict[str, Any]]:
    kind = KINDS[op.kind]
    return kind.apply(ctx, op, kind.payload.model_validate(op.payload))


def _settle(row: SyncOperation, status: str, result: dict[str, Any]) -> None:
    row.status = status
    row.result = _stored_result(row.record_id, status, result)
    row.settled_at = None if status == "waiting" else utcnow()


def _answer_stored(op_id: str) -> dict[str, Any]:
    row = db.session.get(SyncOperation, op_id)
    if row.status == "waiting":
        return {"op_id": op_id, **row.result}
    return _duplicate(op_id, row.result)


def _duplicate(op_id: str, original: dict[str, Any]) -> dict[str, Any]:
    return {"op_id": op_id, "status": "duplicate", "original": original}


def _retry(row) -> dict[str, Any] | None:
    """Try a waiting operation again; its answer if this call settled it, else None."""
    op_id = row.op_id
    # Claim it: a no-op UPDATE takes the row's write lock; a concurrent retry then finds it settled.
    claimed = db.session.execute(update(SyncOperation).where(
        SyncOperation.op_id == op_id, SyncOperation.status == "waiting").values(arrival=SyncOperation.arrival))
    if claimed.rowcount != 1:
        db.session.rollback()
        return None
    stored = db.session.get(SyncOperation, op_id)
    user = db.session.get(User, stored.user_id)
    ctx = Context(user=user, device_id=stored.device_id, clock_offset=dt.timedelta(seconds=stored.clock_offset_s),
                  blobs=blob_store())
    op = Op(op_id, stored.kind, stored.record_id, stored.base_revision, stored.device_time, stored.payload)
    try:
        status, result = _run(ctx, op)
    except Waiting:
        db.session.rollback()
        return None
    except Rejected as error:
        db.session.rollback()
        stored = db.session.get(SyncOperation, op_id)
        if stored.status != "waiting":
            return None
        status, result = _outcome(error)
    _settle(stored, status, result)
    db.session.commit()
    return {"op_id": op_id, **stored.result}


def retry_waiting(user_id: str | None = None, blob: str | None = None) -> int:
    """Retry waiting operations in the order they arrived (one user's, or those waiting for a blob)."""
    query = select(SyncOperation.op_id).where(SyncOperation.status == "waiting").order_by(SyncOperation.arrival)
    if user_id is not None:
        query = query.where(SyncOperation.user_id == user_id)
    waiting = list(db.session.scalars(query))
    db.session.rollback()
    settled = 0
    for op_id in waiting:
        row = db.session.get(SyncOperation, op_id)
        if blob is not None and row.result.get("waiting_for", {}).get("blob") != blob:
            continue
        settled += _retry(row) is not None
    return settled


# --- pull ----------------------------------------------------------------------------------------

def changes(user, cursor: int, limit: int) -> dict[str, Any]:
    """The audit entries after `cursor` on permits `user` may see, oldest first, one page."""
    visible = visible_permits(user).with_only_columns(Permit.id).scalar_subquery()
    query = (select(AuditEntry).where(AuditEntry.seq > cursor, AuditEntry.permit_id.in_(visible))
             .order_by(AuditEntry.seq).limit(limit + 1))
    settle = setting("SYNC_PULL_SETTLE_S", 0)
    if settle:
        # Sequence numbers are handed out before commit: on PostgreSQL an entry can become visible
        # after a higher one. Entries younger than this are left for the next pull.
        query = query.where(AuditEntry.at <= utcnow() - dt.timedelta(seconds=settle))
    rows = list(db.session.scalars(query))
    page = rows[:limit]
    return {
        "changes": [{"seq": e.seq, "at": e.at.isoformat(), "action": e.action, "entity": e.entity,
                     "entity_id": e.entity_id, "permit_id": e.permit_id, "after": e.after} for e in page],
        "cursor": page[-1].seq if page else cursor,
        "more": len(rows) > limit,
    }


def latest_seq() -> int:
    return db.session.scalar(select(func.max(AuditEntry.seq))) or 0


def snapshot(permit: Permit) -> dict[str, Any]:
    """What a device needs to inspect `permit` offline, with the cursor to pull changes from."""
    cursor = latest_seq()
    profile = profile_of(permit)
    inspections = select(Inspection).where(Inspection.permit_id == permit.id, Inspection.status == "submitted")
    last = db.session.scalar(inspections.order_by(Inspection.performed_at.desc()).limit(1))
    findings = list(db.session.scalars(select(Finding).where(Finding.permit_id == permit.id,
                                                             Finding.status == "open")))
    actions = db.session.scalars(select(CorrectiveAction).where(CorrectiveAction.permit_id == permit.id,
                                                                CorrectiveAction.status != "verified"))
    punch = db.session.scalars(select(PunchListItem).where(PunchListItem.permit_id == permit.id,
                                                           PunchListItem.resolved_at.is_(None)))
    people = {a.user for a in permit.assignments} | ({permit.owner} if permit.owner else set())
    return {
        "cursor": cursor,
        "jurisdiction": audit.snapshot(permit.jurisdiction),
        "permit": audit.snapshot(permit),
        "people": [_person(u) for u in sorted(people, key=lambda u: u.id)],
        "assignments": [audit.snapshot(a) for a in permit.assignments],
        "areas": [audit.snapshot(a) for a in permit.areas],
        "area_events": [audit.snapshot(e) for a in permit.areas for e in a.events],
        "structures": [audit.snapshot(s) for s in permit.structures],
        "findings": [audit.snapshot(f) for f in findings],
        "corrective_actions": [audit.snapshot(a) for a in actions],
        "punch_list": [audit.snapshot(p) for p in punch],
        "last_inspection": audit.snapshot(last) if last else None,
        "last_inspection_answers": [audit.snapshot(a) for a in last.answers] if last else [],
        "checklists": [t.model_dump(mode="json") for t in profile.inspection_types],
        "profile": {"key": profile.key, "town": profile.town, "authority_title": profile.authority_title,
                    "stabilization_days": profile.stabilization.days,
                    "advance_notice_hours": profile.advance_notice.hours},
    }


def _person(user: User) -> dict[str, Any]:
    """The facts about a person a report prints; never a password hash."""
    return {"id": user.id, "email": user.email, "name": user.name, "role": user.role,
            "pe_number": user.pe_number, "certification": user.certification,
            "organization": user.organization}


# --- blobs ---------------------------------------------------------------------------------------

def complete_blob(sha: str, content_type: str) -> int:
    """Verify an upload and record its Blob row; retries the operations that waited for it."""
    store = blob_store()
    store.complete(sha)  # HashMismatch discards the bytes
    if db.session.get(Blob, sha) is None:
        db.session.add(Blob(sha256=sha, size=store.size(sha), content_type=content_type))
        try:
            db.session.commit()
        except IntegrityError:  # completed twice at once: one row is enough
            db.session.rollback()
    return retry_waiting(blob=sha)


# --- conflicts -----------------------------------------------------------------------------------

def resolve_conflict(actor, conflict: SyncConflict, area: DisturbedArea) -> SyncConflict:
    """Record that a person reconciled the two versions; the flag goes when no conflict stays open."""
    before = audit.snapshot(conflict)
    if conflict.resolved_at is None:
        conflict.resolved_at = utcnow()
        conflict.resolved_by_id = actor.id
        audit.record(actor, "sync.conflict_resolve", conflict, before, permit_id=conflict.permit_id)
    db.session.flush()
    still_open = db.session.scalar(select(func.count(SyncConflict.id)).where(
        SyncConflict.entity_id == area.id, SyncConflict.resolved_at.is_(None)))
    if not still_open and area.has_conflict:
        area_before = audit.snapshot(area)
        area.has_conflict = False
        audit.record(actor, "area.conflict_resolved", area, area_before)
    return conflict


# --- devices -------------------------------------------------------------------------------------

def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_device(actor, user: User, name: str) -> tuple[SyncDevice, str]:
    """A device token for `user`; the token itself is shown once and only its hash is kept."""
    token = secrets.token_urlsafe(32)
    device = SyncDevice(user_id=user.id, name=name.strip()[:120] or "device", token_sha256=token_hash(token),
                        created_by_id=getattr(actor, "id", None))
    db.session.add(device)
    audit.record(actor, "sync.device_create", device)
    return device, token


def revoke_device(actor, device: SyncDevice) -> SyncDevice:
    """Stop a device token from working, from its next request on."""
    before = audit.snapshot(device)
    if device.revoked_at is None:
        device.revoked_at = utcnow()
        device.revoked_by_id = getattr(actor, "id", None)
    audit.record(actor, "sync.device_revoke", device, before)
    return device


def device_for_token(token: str) -> SyncDevice | None:
    """The unrevoked device of an enabled user that holds `token`, or None."""
    device = db.session.scalar(select(SyncDevice).where(SyncDevice.token_sha256 == token_hash(token)))
    if device is None or device.is_revoked:
        return None
    user = db.session.get(User, device.user_id)
    return device if user is not None and user.is_enabled else None


def _is_uuid(value: Any) -> bool:
    if not isinstance(value, str) or len(value) != 36:
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _aware_time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None
