"""The append-only audit log: every change to the record, with actor, time, before and after."""
from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Integer, String, event
from sqlalchemy.orm import Mapped, Session, mapped_column

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, utcnow


class AuditEntry(db.Model):
    __tablename__ = "audit_entries"

    # A growing integer, so it also serves as the sync pull cursor.
    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    actor_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    action: Mapped[str] = mapped_column(String(60))
    entity: Mapped[str] = mapped_column(String(60))
    entity_id: Mapped[str] = mapped_column(String(36), index=True)
    permit_id: Mapped[str | None] = mapped_column(String(36), index=True)
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class AppendOnlyError(RuntimeError):
    """Raised when code tries to change or delete an audit entry."""


@event.listens_for(Session, "before_flush")
def _refuse_audit_changes(session: Session, flush_context, instances) -> None:
    for obj in list(session.dirty) + list(session.deleted):
        if isinstance(obj, AuditEntry):
            raise AppendOnlyError("the audit log is append-only")
