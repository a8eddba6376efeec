"""A field copy of the app (a laptop at the site) syncing with the central record.

Push: every local change the protocol knows is read from this copy's own audit log into an outbox
(so nothing in `inspect_app` has to know about sync), then sent; an item leaves the pending state only
when the central record has answered for it. Pull: the central change feed says which permits
changed; their snapshots are written into this copy's tables (a partial copy, so foreign keys to
records it does not hold are allowed to dangle).
"""
from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from sqlalchemy import Date, Float, Numeric, Table, func, select, update

from inspect_app.audit.models import AuditEntry
from inspect_app.blobs.store import BlobStore
from inspect_app.extensions import db
from inspect_app.blobs.models import Blob
from inspect_app.stabilization.models import AreaStatusEvent
from inspect_app.types import UTCDateTime, new_id, utcnow

from sync.client import SyncClient
from sync.models import OutboxItem, SyncCursor

UNSETTLED = ("pending", "waiting")
AUDIT_CURSOR = "outbox:audit"
# Snapshot parts and the tables they go into, parents first.
MIRRORED = (
    ("jurisdiction", "jurisdictions"), ("people", "users"), ("permit", "permits"),
    ("assignments", "permit_assignments"), ("structures", "stormwater_structures"),
    ("areas", "disturbed_areas"), ("area_events", "area_status_events"), ("last_inspection", "inspections"),
    ("last_inspection_answers", "checklist_answers"), ("findings", "findings"),
    ("corrective_actions", "corrective_actions"), ("punch_list", "punch_list_items"),
)


class FieldSyncError(RuntimeError):
    """This copy cannot take what the central record sent; the message says why."""


def enqueue(kind: str, record_id: str, payload: dict[str, Any], base_revision: int | None = None,
            blobs: list[str] | None = None, audit_seq: int | None = None) -> OutboxItem:
    """Queue an operation made on this copy, stamped with this machine's clock."""
    item = OutboxItem(op_id=new_id(), position=_next_position(), audit_seq=audit_seq, kind=kind,
                      record_id=record_id, base_revision=base_revision, device_time=utcnow().isoformat(),
                      payload=payload, blobs=blobs or [], status="pending")
    db.session.add(item)
    db.session.flush()
    return item


def enqueue_local_changes() -> int:
    """Queue an operation for every local audit entry not queued yet that the protocol carries."""
    cursor = _cursor(AUDIT_CURSOR)
    entries = list(db.session.scalars(select(AuditEntry).where(AuditEntry.seq > cursor.position)
                                      .order_by(AuditEntry.seq)))
    queued = 0
    for entry in entries:
        op = _operation_for(entry)
        if op is not None:
            enqueue(**op, audit_seq=entry.seq)
            queued += 1
        cursor.position = entry.seq
    cursor.moved_at = utcnow()
    db.session.flush()
    return queued


def _operation_for(entry: AuditEntry) -> dict[str, Any] | None:
    """The operation that carries a local change to the central record, if the protocol has one."""
    after = entry.after or {}
    if entry.entity == "disturbed_areas" and entry.action == "area.status":
        event = db.session.scalar(select(AreaStatusEvent).where(
            AreaStatusEvent.area_id == entry.entity_id, AreaStatusEvent.recorded_at <= entry.at)
            .order_by(AreaStatusEvent.recorded_at.desc()).limit(1))
        payload = {"status": event.status, "at": event.at.isoformat(), "note": event.note,
                   "inspection_id": event.inspection_id}
        return {"kind": "area.status", "record_id": entry.entity_id, "payload": payload,
                "base_revision": (entry.before or {}).get("revision")}
    if entry.entity == "inspection_notices" and entry.before is None:
        payload = {k: after[k] for k in ("permit_id", "inspection_type", "planned_for", "note")}
        return {"kind": "notice.give", "record_id": entry.entity_id, "payload": payload}
    if entry.entity == "photos" and entry.before is None:
        payload = {k: after[k] for k in ("permit_id", "original_sha256", "caption", "inspection_id",
                                         "finding_id", "structure_id", "log_entry_id")}
        return {"kind": "photo.attach", "record_id": entry.entity_id, "payload": payload,
                "blobs": [after["original_sha256"]]}
    return None


def push_outbox(client: SyncClient, store: BlobStore) -> dict[str, int]:
    """Send the blobs, then the operations, of every unsettled outbox item; counts by answer."""
    items = list(db.session.scalars(select(OutboxItem).where(OutboxItem.status.in_(UNSETTLED))
                                    .order_by(OutboxItem.position)))
    for sha in dict.fromkeys(sha for item in items for sha in item.blobs):
        content_type = db.session.scalar(select(Blob.content_type).where(Blob.sha256 == sha))
        with store.local_copy(sha) as path:
            client.upload_blob(path, content_type or "application/octet-stream", sha=sha)
    ops = [{"op_id": i.op_id, "kind": i.kind, "record_id": i.record_id, "base_revision": i.base_revision,
            "device_time": i.device_time, "payload": i.payload} for i in items]
    counts: dict[str, int] = {}
    for item, result in zip(items, client.push(ops), strict=True):
        # A duplicate means an earlier attempt got through: its original answer is the one to keep.
        settled = result.get("original", result)
        item.status = result["status"] if result["status"] != "duplicate" else settled["status"]
        item.result = result
        item.sent_at = utcnow()
        counts[result["status"]] = counts.get(result["status"], 0) + 1
    db.session.commit()
    return counts


def pull(client: SyncClient) -> dict[str, int]:
    """Bring this copy's permits up to date with the central record; counts of what was read."""
    enqueue_local_changes()  # first, so a pulled snapshot can never hide a local change
    db.session.commit()
    cursor = _cursor(f"pull:{client.server}")
    changed: set[str] = set()
    changes, new_position = client.pull(cursor.position)
    changed |= {c["permit_id"] for c in changes if c["permit_id"]}
    visible = {p["id"] for p in client.permits()}
    if cursor.position == 0:
        changed |= visible
    snapshots = [client.snapshot(permit_id) for permit_id in sorted(changed & visible)]
    db.session.commit()
    keep = set(db.session.scalars(select(OutboxItem.record_id).where(OutboxItem.status.in_(UNSETTLED))))
    for snap in snapshots:
        mirror(snap, keep)
    cursor = _cursor(f"pull:{client.server}")
    cursor.position, cursor.moved_at = new_position, utcnow()
    db.session.commit()
    return {"changes": len(changes), "permits": len(snapshots)}


def mirror(snap: dict[str, Any], keep: set[str]) -> None:
    """Write one permit snapshot into this copy's tables; rows in `keep` (unsent local edits) stay."""
    with db.engine.connect() as connection:
        if connection.dialect.name != "sqlite":
            raise FieldSyncError("A field copy pulls into its embedded SQLite database only.")
        # A partial copy: a finding may point at an inspection this copy does not hold.
        connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
        connection.commit()
        try:
            for part, table_name in MIRRORED:
                rows = snap.get(part) or []
                for row in [rows] if isinstance(rows, dict) else rows:
                    if row.get("id") not in keep:
                        _upsert(connection, db.metadata.tables[table_name], row)
            connection.commit()
        finally:
            connection.rollback()
            connection.exec_driver_sql("PRAGMA foreign_keys=ON")
            connection.commit()


def _upsert(connection, table: Table, row: dict[str, Any]) -> None:
    values = {c.name: _column_value(c, row[c.name]) for c in table.columns if c.name in row}
    if table.name == "users":
        values.pop("password_hash", None)
        taken = connection.scalar(select(table.c.id).where(table.c.email == values["email"],
                                                           table.c.id != values["id"]))
        if taken:  # a local account already has this email: keep it, the reports copy names anyway
            return
    if table.name == "jurisdictions":
        # A copy set up with `flask towns sync` has its own row for the town: the central one replaces it.
        connection.execute(table.delete().where(table.c.profile_key == values["profile_key"],
                                                table.c.id != values["id"]))
    found = connection.execute(update(table).where(table.c.id == values["id"]).values(**values))
    if found.rowcount == 0:
        if table.name == "users":
            values |= {"password_hash": "!", "is_enabled": True}  # no local sign-in until one is set
        connection.execute(table.insert().values(**values))


def _column_value(column, value: Any) -> Any:
    """A JSON value from a snapshot, as the column's Python type."""
    if value is None:
        return None
    if isinstance(column.type, UTCDateTime):
        return dt.datetime.fromisoformat(value)
    if isinstance(column.type, Date):
        return dt.date.fromisoformat(value)
    if isinstance(column.type, Numeric) and not isinstance(column.type, Float):
        return decimal.Decimal(str(value))
    return value


def _cursor(name: str) -> SyncCursor:
    cursor = db.session.get(SyncCursor, name)
    if cursor is None:
        cursor = SyncCursor(name=name, position=0)
        db.session.add(cursor)
    return cursor


def _next_position() -> int:
    return (db.session.scalar(select(func.max(OutboxItem.position))) or 0) + 1


def outbox_summary() -> dict[str, int]:
    """How many outbox items are in each state."""
    rows = db.session.execute(select(OutboxItem.status, func.count()).group_by(OutboxItem.status))
    return {status: count for status, count in rows}

