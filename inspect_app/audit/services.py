"""Writing the audit log, in the same transaction as the change it records."""
from __future__ import annotations

import datetime as dt
import decimal
import functools
from typing import Any

from dataclasses import dataclass

from sqlalchemy import inspect as sa_inspect
from sqlalchemy import exists, or_, select
from sqlalchemy.orm import InstanceState, Mapper, RelationshipProperty
from sqlalchemy.orm.interfaces import MANYTOONE, ONETOMANY

from inspect_app.audit import chain
from inspect_app.audit.guards import RECORDS, Guard
from inspect_app.audit.models import AuditEntry, add_after_flush, chain_rows, write_waiting
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
        data[key] = value if type(value) in _AS_IS else _as_json(value)
    for key in _secret_keys(state.mapper):  # secrets stay out of the log
        data[key] = "(hidden)"
    return data


def _as_json(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def row_snapshot(model: type, row: dict[str, Any]) -> dict[str, Any]:
    """`snapshot` of a `model` row written by a plain INSERT of `row` (every column given, as `new_row`
    makes it): the same data the object's snapshot gives once flushed."""
    mapper = sa_inspect(model)
    data = {key: row[key] if type(row[key]) in _AS_IS else _as_json(row[key]) for key in _column_keys(mapper)}
    for key in _secret_keys(mapper):
        data[key] = "(hidden)"
    return data


def new_row(model: type, values: dict[str, Any]) -> dict[str, Any]:
    """The row the ORM would write for `model(**values)`: the values given, and each other column's default
    (the models' defaults are Python-side: ids, times, flags), so a plain INSERT of it stores the same."""
    row = {}
    for column in sa_inspect(model).columns:
        if column.key in values:
            row[column.key] = values[column.key]
        elif column.default is None:
            row[column.key] = None
        else:
            row[column.key] = column.default.arg(None) if column.default.is_callable else column.default.arg
    return row


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


def write_recorded() -> None:
    """Write the entries `record_flushed` and `record_inserted` left waiting, now (see `models.write_waiting`)."""
    write_waiting(db.session())


def record_inserted(actor, action: str, model: type, row: dict[str, Any], permit_id: str | None = None) -> None:
    """`record_flushed`, for a `model` row the caller wrote with a plain INSERT (`new_row`): the entry a
    flushed object would get, written the same way. For an import's thousands of new records."""
    entity = model.__tablename__
    if permit_id is None:
        permit_id = row.get("permit_id") or (row["id"] if entity == "permits" else None)
    add_after_flush(db.session(), _entry_row(actor, action, entity, str(row["id"]), permit_id, None,
                                             row_snapshot(model, row)))


def _entry(actor, action: str, state: InstanceState, obj: Any, before: dict[str, Any] | None,
           permit_id: str | None) -> dict[str, Any]:
    entity = state.mapper.class_.__tablename__
    after = None if action.endswith("delete") else _snapshot(state, obj)
    if permit_id is None:
        permit_id = getattr(obj, "permit_id", None)
        if permit_id is None and entity == "permits":
            permit_id = obj.id
    return _entry_row(actor, action, entity, str(getattr(obj, "id", "")), permit_id, before, after)


def _entry_row(actor, action: str, entity: str, entity_id: str, permit_id: str | None,
               before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any]:
    return {"actor_id": getattr(actor, "id", None), "action": action, "entity": entity, "entity_id": entity_id,
            "permit_id": permit_id, "before": before, "after": after}


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


# -- final records against the chain ---------------------------------------------------------------

@dataclass(frozen=True)
class RecordCheck:
    """What checking the final records against the chain found: how many hold their latest chained state,
    and a line for each that does not (which record, and what is wrong with it)."""

    checked: int
    problems: list[str]


def verify_records(batch: int = 2000) -> RecordCheck:
    """Each final record (`guards.RECORDS`: a submitted report, an issued order, notice or certificate, a
    surety release, a signed certification, a frozen document) against its latest chained state: the
    `after` of the last audit entry, in commit order, that recorded it. The chain walk has proved the
    entries untouched, so:

    - a row that is final, or whose chained state is final, must hold in every column what that state says
      (the app writes an entry with each change it makes, later ones included: weather filled in, an order
      lifted, a certification reviewed); one that does not was changed outside the app, a submitted report
      put back to draft included. A column the snapshot does not have (added by a later migration) is left out;
    - a record whose chained state is final must still be there: if gone, it was deleted outside the app;
    - a final row must have a chained state: one with none was made outside the app.

    Two streamed queries per table, the entries looked up beside each row by their indexed id (memory
    constant while records match).
    """
    checked, problems = 0, []
    for guard in RECORDS:
        table = db.metadata.tables[guard.table]
        found = _check_rows(guard, table, batch)
        checked += found.checked
        problems += found.problems + _gone(guard, table, batch)
    return RecordCheck(checked, problems)


def _check_rows(guard: Guard, table, batch: int) -> RecordCheck:
    entries = AuditEntry.__table__
    chained = (select(entries.c.after)
               .where(entries.c.entity == guard.table, entries.c.entity_id == table.c.id,
                      entries.c.commit_seq.is_not(None), entries.c.after.is_not(None))
               .order_by(entries.c.commit_seq.desc()).limit(1).scalar_subquery())
    query = select(*table.columns, chained.label("chained_state")).order_by(table.c.id)
    checked, problems = 0, []
    rows = db.session.execute(query.execution_options(yield_per=batch))
    try:
        for row in rows.mappings():
            state, final = row["chained_state"], guard.is_final(row)
            if state is None:
                if final:
                    problems.append(f"{guard.table} {row['id']}: {guard.what} that no audit entry records: it was "
                                    "made outside the app")
                continue
            if not final and not guard.is_final(state):
                continue  # not part of the record yet (a draft)
            differs = [column.name for column in table.columns
                       if column.name in state and not _same(row[column.name], state[column.name])]
            if differs:
                problems.append(f"{guard.table} {row['id']}: {', '.join(differs)} differ from its last audit entry; "
                                "the row was changed outside the app")
            else:
                checked += 1
    finally:
        rows.close()
    return RecordCheck(checked, problems)


def _gone(guard: Guard, table, batch: int) -> list[str]:
    """The records of `table` whose latest chained state is final and whose row is gone."""
    entries, later = AuditEntry.__table__, AuditEntry.__table__.alias("later")
    query = (select(entries.c.entity_id, entries.c.commit_seq, entries.c.action, entries.c.after)
             .where(entries.c.entity == guard.table, entries.c.commit_seq.is_not(None),
                    ~exists().where(table.c.id == entries.c.entity_id),
                    ~exists().where(later.c.entity == guard.table, later.c.entity_id == entries.c.entity_id,
                                    later.c.commit_seq > entries.c.commit_seq))
             .order_by(entries.c.entity_id))
    problems = []
    rows = db.session.execute(query.execution_options(yield_per=batch))
    try:
        for entry in rows:
            # A last entry with no state after it records a deletion the app made (of what was not final).
            if entry.after is not None and guard.is_final(entry.after):
                problems.append(f"{guard.table} {entry.entity_id}: {guard.what} by its last audit entry "
                                f"(entry {entry.commit_seq}, {entry.action}), is gone: the row was deleted "
                                "outside the app")
    finally:
        rows.close()
    return problems


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
    if isinstance(stored, dt.date):
        return stored.isoformat() == str(audited)
    if isinstance(stored, decimal.Decimal):  # as numbers: 5000 was written, the column gives 5000.00
        try:
            return stored == decimal.Decimal(str(audited))
        except decimal.InvalidOperation:
            return False
    return stored == audited


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
