"""Writing the audit log, in the same transaction as the change it records."""
from __future__ import annotations

import datetime as dt
import decimal
import functools
from typing import Any

from dataclasses import dataclass

from sqlalchemy import inspect as sa_inspect
from sqlalchemy import or_, select, text
from sqlalchemy.orm import InstanceState, Mapper, RelationshipProperty
from sqlalchemy.orm.interfaces import MANYTOONE, ONETOMANY

from inspect_app.audit import chain
from inspect_app.audit.guards import GUARDS
from inspect_app.audit.models import AuditEntry, add_after_flush, chain_rows
from inspect_app.extensions import db


def snapshot(obj: Any) -> dict[str, Any]:
    """The column values of a model instance as JSON-safe data."""
    return _snapshot(sa_inspect(obj), obj)


# Values a snapshot keeps as they are (most of them): the others are written as text.
_AS_IS = frozenset({str, int, float, bool, type(None), dict, list})


def _snapshot(state: InstanceState, obj: Any) -> dict[str, Any]:
    loaded = state.dict  # read directly where loaded (a sync push takes two snapshots per operation)
    data: dict[str, Any] = {}
    for key in _column_keys(state.mapper):
        value = loaded[key] if key in loaded else getattr(obj, key)
        if type(value) not in _AS_IS:
            if isinstance(value, (dt.datetime, dt.date)):
                value = value.isoformat()
            elif isinstance(value, decimal.Decimal):
                value = str(value)
        data[key] = value
    for key in _secret_keys(state.mapper):  # secrets stay out of the log
        data[key] = "(hidden)"
    return data


@functools.cache
def _column_keys(mapper: Mapper) -> tuple[str, ...]:
    return tuple(attr.key for attr in mapper.column_attrs)


@functools.cache
def _secret_keys(mapper: Mapper) -> tuple[str, ...]:
    return tuple(key for key in _column_keys(mapper) if key in ("password_hash", "calendar_key"))


# A session flag, set by a caller that applies many changes inside one SAVEPOINT and lets that
# SAVEPOINT's flush write them (sync, for area status changes): `record` then skips its own flush when
# a flush could not change the recorded object's columns, so its snapshot is the same either way, and
# its entry is written with the others of the SAVEPOINT in one statement (`models.add_after_flush`).
DEFER_FLUSH = "audit_defer_flush"


def record(actor, action: str, obj: Any, before: dict[str, Any] | None = None,
           permit_id: str | None = None) -> None:
    """Add an audit entry for `obj` after `action`; `before` is its snapshot before the change."""
    session, state = db.session(), sa_inspect(obj)
    deferred = session.info.get(DEFER_FLUSH) and _settled(state)
    if not deferred:
        session.flush()  # ids and defaults given, foreign keys set: the snapshot is what is stored
    row = _entry(actor, action, state, obj, before, permit_id)
    if deferred:
        add_after_flush(session, row)
    else:
        session.add(AuditEntry(**row))


def record_flushed(actor, action: str, obj: Any, before: dict[str, Any] | None = None,
                   permit_id: str | None = None) -> None:
    """`record`, for a change the caller has flushed already: the entry is written with the others waiting,
    one statement, after the next flush (`models.add_after_flush`). For a caller that writes records by the
    thousand and flushes them a batch at a time (an import), where a flush per entry would cost most of it."""
    add_after_flush(db.session(), _entry(actor, action, sa_inspect(obj), obj, before, permit_id))


def _entry(actor, action: str, state: InstanceState, obj: Any, before: dict[str, Any] | None,
           permit_id: str | None) -> dict[str, Any]:
    entity = state.mapper.class_.__tablename__
    after = None if action.endswith("delete") else _snapshot(state, obj)
    if permit_id is None:
        permit_id = getattr(obj, "permit_id", None)
        if permit_id is None and entity == "permits":
            permit_id = obj.id
    return {"actor_id": getattr(actor, "id", None), "action": action, "entity": entity,
            "entity_id": str(getattr(obj, "id", "")), "permit_id": permit_id, "before": before, "after": after}


def _settled(state: InstanceState) -> bool:
    """Whether a flush now would leave every column of the object as it is: it is stored already, its table
    sets nothing on UPDATE, and no pending relationship change (its own many-to-one, or a collection of
    another object holding it) would set one of its foreign keys."""
    if not state.persistent or _sets_on_update(state.mapper):
        return False
    relationships = state.mapper.relationships
    if any(key in relationships and relationships[key].direction is MANYTOONE for key in state.committed_state):
        return False
    parents = _parent_collections(state.mapper)
    session = state.session
    for other in (*session.new, *session.dirty) if parents else ():
        keys = parents.get(type(other))
        if keys and any(key in sa_inspect(other).committed_state or other in session.new for key in keys):
            return False
    return not session.deleted


@functools.cache
def _sets_on_update(mapper: Mapper) -> bool:
    return mapper.version_id_col is not None or any(
        column.onupdate is not None or column.server_onupdate is not None for column in mapper.columns)


@functools.cache
def _parent_collections(mapper: Mapper) -> dict[type, tuple[str, ...]]:
    """The one-to-many collections (by the class that has them) that can hold a `mapper` object and whose
    changes would not show on the object itself.

    A collection with a many-to-one of the object's own on its other side (back_populates or backref)
    is left out (as is one that is view only): adding the object to it, or taking it out, sets that
    many-to-one, which `_settled` sees in the object's own changes. So for most models there is nothing to
    look for elsewhere in the session, and `_settled` need not go through every pending object.
    """
    found: dict[type, list[str]] = {}
    for parent in mapper.registry.mappers:
        for relationship in parent.relationships:
            if relationship.direction is ONETOMANY and mapper.isa(relationship.mapper) \
                    and not _shows_on_child(relationship):
                found.setdefault(parent.class_, []).append(relationship.key)
    return {cls: tuple(keys) for cls, keys in found.items()}


def _shows_on_child(collection: RelationshipProperty) -> bool:
    """Whether a change to this one-to-many collection either writes nothing (view only) or sets the
    child's own many-to-one as well (back_populates, kept in step both ways)."""
    if collection.viewonly:
        return True
    if not collection.back_populates or collection.sync_backref is False:
        return False
    reverse = collection.mapper.get_property(collection.back_populates)
    return reverse.direction is MANYTOONE and not reverse.viewonly


# -- the hash chain ---------------------------------------------------------------------------------

def verify_chain(batch: int = 2000) -> chain.Walk:
    """Walk the whole chain in commit order, streamed in batches (constant memory); see chain.walk."""
    table = AuditEntry.__table__
    rows = db.session.execute(chain_rows().execution_options(yield_per=batch))
    try:
        found = chain.walk(rows.mappings())
    finally:
        rows.close()  # a walk that stops at a break leaves the server-side cursor open
    if found.broken is not None:
        return found
    # Entries with no commit number or no hash are outside the chain: a committed entry always has both.
    unsealed = db.session.execute(select(table.c.seq, table.c.commit_seq)
                                  .where(or_(table.c.commit_seq.is_(None), table.c.hash.is_(None)))
                                  .order_by(table.c.seq).limit(1)).first()
    if unsealed is not None:
        return chain.Walk(found.verified, found.head_commit_seq, found.head_hash,
                          chain.Break(unsealed.seq, unsealed.commit_seq, "it is not sealed in the chain"))
    return found


def anchor_mismatch(commit_seq: int, expected_hash: str) -> str | None:
    """Why the entry `commit_seq` does not match an anchor kept outside the database, or None if it does."""
    table = AuditEntry.__table__
    stored = db.session.execute(select(table.c.hash).where(table.c.commit_seq == commit_seq)).first()
    if stored is None:
        return f"entry {commit_seq} of the anchor is not in the log (the chain was cut back or rewritten)"
    if stored.hash != expected_hash.strip().lower():
        return (f"entry {commit_seq} has hash {stored.hash}, the anchor says {expected_hash}: "
                "the chain was rewritten from there or before")
    return None


def chain_head() -> tuple[int, str]:
    """The last sealed entry's commit number and hash ((0, 64 zeros) for an empty log)."""
    table = AuditEntry.__table__
    head = db.session.execute(select(table.c.commit_seq, table.c.hash).where(table.c.hash.is_not(None))
                              .order_by(table.c.commit_seq.desc()).limit(1)).first()
    return (head.commit_seq, head.hash) if head else (0, chain.GENESIS)


def anchor_text(commit_seq: int, head_hash: str, at: dt.datetime) -> str:
    """The line an anchor keeps outside the database: the head's commit number and hash, and when."""
    return f"audit chain head: entry {commit_seq} hash {head_hash} at {at.isoformat()}"


# -- guarded records against the log ---------------------------------------------------------------

@dataclass(frozen=True)
class RecordCheck:
    """What checking the guarded records against the log found: how many matched, how many no entry
    records (made outside the app), and the first that differs from what its last entry says."""

    checked: int
    unrecorded: int
    mismatch: str | None


def verify_records(batch: int = 2000) -> RecordCheck:
    """Each record the guards have made final (a submitted report, an issued order, notice or certificate,
    a signed certification, a frozen document), against the last audit entry that recorded it.

    Its frozen columns (all but those its guard lets the app fill in later) must hold what that entry's
    `after` says. The chain proves the entries are untouched, so a row changed behind the triggers' back
    (with them dropped) shows here. One streamed query per table, the entry looked up beside each row by
    its indexed id (constant memory).
    """
    checked = unrecorded = 0
    for guard in GUARDS:
        if guard.table == AuditEntry.__tablename__:
            continue
        table = db.metadata.tables[guard.table]
        frozen = [column for column in table.columns if column.name not in guard.writable]
        entries = AuditEntry.__table__
        recorded = (select(entries.c.after)
                    .where(entries.c.entity == guard.table, entries.c.entity_id == table.c.id,
                           entries.c.after.is_not(None))
                    .order_by(entries.c.seq.desc()).limit(1).scalar_subquery())
        final = text(guard.final.replace("OLD.", f"{guard.table}."))
        query = (select(*frozen, recorded.label("audited_after")).where(final).order_by(table.c.id)
                 .execution_options(yield_per=batch))
        rows = db.session.execute(query)
        try:
            for row in rows.mappings():
                after = row["audited_after"]
                if after is None:
                    unrecorded += 1
                    continue
                differs = [column.name for column in frozen
                           if column.name in after and not _same(row[column.name], after[column.name])]
                if differs:
                    return RecordCheck(checked, unrecorded,
                                       f"{guard.table} {row['id']}: {', '.join(differs)} differ from its last audit "
                                       "entry; the row was changed outside the app")
                checked += 1
        finally:
            rows.close()
    return RecordCheck(checked, unrecorded, None)


def _same(stored: Any, audited: Any) -> bool:
    """Whether a column's value is what the audit snapshot (JSON, see `snapshot`) says it was."""
    if stored is None or audited is None:
        return stored is None and audited is None
    if isinstance(stored, dt.datetime):
        try:
            audited = dt.datetime.fromisoformat(audited)
        except (TypeError, ValueError):
            return False
        return _utc(stored) == _utc(audited)
    if isinstance(stored, (dt.date, decimal.Decimal)):
        return str(stored.isoformat() if isinstance(stored, dt.date) else stored) == str(audited)
    return stored == audited


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
