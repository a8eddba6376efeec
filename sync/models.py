"""Tables of the sync protocol: operations received (for exactly-once), device tokens, conflicts, outbox."""
from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, choice, new_id, utcnow

OP_STATUSES = ("applied", "conflict", "rejected", "waiting")
OUTBOX_STATUSES = ("pending", "applied", "duplicate", "conflict", "rejected", "waiting", "invalid")


class SyncOperation(db.Model):
    """One operation a device sent, stored with its result so a replay answers the same thing.

    The primary key is the id the device made: a second insert of the same op fails on it, which is
    what makes concurrent replays store one result (insert-or-ignore).
    """

    __tablename__ = "sync_operations"

    op_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    # Order of arrival, so waiting operations are retried in the order they came.
    arrival: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    record_id: Mapped[str] = mapped_column(String(36), index=True)
    base_revision: Mapped[int | None]
    # The device's clock, kept exactly as given; the server's own clock is `received_at`.
    device_time: Mapped[str] = mapped_column(String(40))
    clock_offset_s: Mapped[int] = mapped_column(Integer, default=0)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    device_id: Mapped[str | None] = mapped_column(ForeignKey("sync_devices.id"))
    received_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    status: Mapped[str] = mapped_column(choice("sync_op_status", *OP_STATUSES), index=True)
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    settled_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)


class SyncDevice(db.Model):
    """A device allowed to sync as one user with a bearer token; an admin can revoke it."""

    __tablename__ = "sync_devices"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    # Only the SHA-256 of the token is kept: a copy of the database does not let anyone sync.
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    # The town of the admin who minted it: the token reaches that town's permits only (policy.token_town).
    jurisdiction_id: Mapped[str | None] = mapped_column(ForeignKey("jurisdictions.id"))
    last_used_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    revoked_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


class SyncConflict(db.Model):
    """Two versions of one record that a person must reconcile; sync never picks one silently."""

    __tablename__ = "sync_conflicts"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    entity: Mapped[str] = mapped_column(String(60))
    entity_id: Mapped[str] = mapped_column(String(36), index=True)
    permit_id: Mapped[str | None] = mapped_column(String(36), index=True)
    server_version: Mapped[dict[str, Any]] = mapped_column(JSON)
    device_version: Mapped[dict[str, Any]] = mapped_column(JSON)
    op_id: Mapped[str] = mapped_column(ForeignKey("sync_operations.op_id"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    resolved_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    resolved_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)


class OutboxItem(db.Model):
    """On a field copy: an operation made here, waiting until the central record confirms it."""

    __tablename__ = "sync_outbox"

    op_id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    position: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), index=True)
    # The local audit entry it was made from, so each local change is queued once.
    audit_seq: Mapped[int | None] = mapped_column(BigInteger().with_variant(Integer, "sqlite"),
                                                  unique=True)
    kind: Mapped[str] = mapped_column(String(40))
    record_id: Mapped[str] = mapped_column(String(36), index=True)
    base_revision: Mapped[int | None]
    device_time: Mapped[str] = mapped_column(String(40))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    blobs: Mapped[list[str]] = mapped_column(JSON, default=list)
    status: Mapped[str] = mapped_column(choice("outbox_status", *OUTBOX_STATUSES), default="pending",
                                        index=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    sent_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)


class SyncCursor(db.Model):
    """On a field copy: how far it has read a feed (the central change feed, or its own audit log)."""

    __tablename__ = "sync_cursors"

    name: Mapped[str] = mapped_column(String(300), primary_key=True)
    position: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), default=0)
    moved_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
