"""Writing the audit log, in the same transaction as the change it records."""
from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from sqlalchemy import inspect as sa_inspect

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db


def snapshot(obj: Any) -> dict[str, Any]:
    """The column values of a model instance as JSON-safe data."""
    data: dict[str, Any] = {}
    for attr in sa_inspect(obj).mapper.column_attrs:
        value = getattr(obj, attr.key)
        if isinstance(value, (dt.datetime, dt.date)):
            value = value.isoformat()
        elif isinstance(value, decimal.Decimal):
            value = str(value)
        if attr.key in ("password_hash", "calendar_key"):  # secrets stay out of the log
            value = "(hidden)"
        data[attr.key] = value
    return data


def record(actor, action: str, obj: Any, before: dict[str, Any] | None = None,
           permit_id: str | None = None) -> AuditEntry:
    """Add an audit entry for `obj` after `action`; `before` is its snapshot before the change."""
    db.session.flush()
    entity = sa_inspect(obj).mapper.class_.__tablename__
    after = None if action.endswith("delete") else snapshot(obj)
    if permit_id is None:
        permit_id = getattr(obj, "permit_id", None)
        if permit_id is None and entity == "permits":
            permit_id = obj.id
    entry = AuditEntry(
        actor_id=getattr(actor, "id", None),
        action=action,
        entity=entity,
        entity_id=str(getattr(obj, "id", "")),
        permit_id=permit_id,
        before=before,
        after=after,
    )
    db.session.add(entry)
    return entry
