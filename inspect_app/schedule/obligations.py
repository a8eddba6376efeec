"""Keeping `permit_obligations` current: the engine's open obligations of each permit, stored to be queried.

Two things change what is open:

- A change to the record. Every flush notes the permits whose record it touched: any row of a table the
  engine reads, however it was written (a service, which also writes the audit log, a sync push, a test
  factory). Just before the transaction commits, those permits' obligations are worked out again and
  replace their stored rows, in the same transaction. Nobody has to remember to; a change to a table the
  engine does not read (a photo, an email) costs nothing.
- The passage of time alone: a missed routine inspection brings the next one in the chain, a new O&M
  period opens, a construction start dated today counts from the end of the day. `flask dashboard
  refresh` (hourly from cron) works every permit out again for that, a batch per transaction.

Statuses need no refresh: each query works them out from its `now` (see `PermitObligation.status_at`).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from dataclasses import dataclass, field

from flask import has_app_context
from sqlalchemy import Select, delete, event, insert, select
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session, SessionTransaction
from sqlalchemy.orm.attributes import PASSIVE_NO_INITIALIZE, get_history

from inspect_app.audit.models import waiting_rows
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, Inspection
from inspect_app.permits.models import Permit
from inspect_app.rules import FactsError, obligations
from inspect_app.schedule.facts import READS, Record, collector_paused, load_records, subject_label
from inspect_app.schedule.models import PermitObligation, PermitScheduleProblem
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import utcnow

# Permits per transaction of a full refresh: bounds its memory and how long it holds their rows.
REFRESH_BATCH = 1000
_CHANGED = "dashboard.changed_permits"
_BUSY = "dashboard.recomputing"


@dataclass
class _Changed:
    """What the flushes of one transaction touched: permits, and rows that name them only indirectly."""

    permits: set[str] = field(default_factory=set)
    areas: set[str] = field(default_factory=set)
    inspections: set[str] = field(default_factory=set)


def _rows(records: list[Record], now: dt.datetime) -> tuple[list[dict], list[dict]]:
    """The obligation rows and problem rows of `records`, evaluated as of `now`."""
    rows: list[dict] = []
    problems: list[dict] = []
    with collector_paused():
        for record in records:
            pid = record.permit.id
            if record.facts is None or record.profile is None:
                problems.append({"permit_id": pid, "problem": record.problem or "The record cannot be evaluated.",
                                 "computed_at": now})
                continue
            try:
                found = obligations(record.facts, record.profile, now, history=False)
            except FactsError as error:
                problems.append({"permit_id": pid, "problem": f"The record cannot be evaluated: {error}",
                                 "computed_at": now})
                continue
            rows.extend({"permit_id": pid, "kind": ob.kind, "subject": ob.subject,
                         "about": subject_label(ob.subject, record), "opens_at": ob.opens_at,
                         "due_at": ob.due_at, "reason": ob.reason, "citation": ob.citation, "computed_at": now}
                        for ob in found)
    return rows, problems


def refresh_permits(permit_ids: Collection[str], now: dt.datetime | None = None, *, skip_busy: bool = False) -> int:
    """Work out again the open obligations of these permits and store them in place of the old ones.

    Runs in the caller's transaction and does not commit. With `skip_busy`, permits that a transaction
    in progress is changing are left to it (it stores them when it commits). Returns the number stored.
    """
    ids = sorted(set(permit_ids))
    if not ids:
        return 0
    now = now or utcnow()
    run = db.session.execute
    # Two transactions storing one permit take turns here (PostgreSQL; SQLite has one writer at a time),
    # so the second reads the first's committed record and replaces its rows rather than adding to them.
    # NO KEY UPDATE: rows added elsewhere that merely point at the permit do not wait for it.
    locked = run(select(Permit.id).where(Permit.id.in_(ids)).order_by(Permit.id)
                 .with_for_update(key_share=True, skip_locked=skip_busy)).scalars().all()
    if skip_busy:
        ids = list(locked)
    rows, problems = _rows(load_records(permit_ids=ids, open_at=now), now)
    obligation, problem = PermitObligation.__table__, PermitScheduleProblem.__table__
    run(delete(obligation).where(obligation.c.permit_id.in_(ids)))
    run(delete(problem).where(problem.c.permit_id.in_(ids)))
    if rows:
        run(insert(obligation), rows)
    if problems:
        run(insert(problem), problems)
    return len(rows)


def batches(scope: Select | None = None) -> list[list[str]]:
    """The ids of every permit of `scope` (default: all), in batches to refresh one transaction each."""
    scope = scope if scope is not None else select(Permit)
    ids = list(db.session.scalars(scope.with_only_columns(Permit.id).order_by(Permit.id)))
    return [ids[start:start + REFRESH_BATCH] for start in range(0, len(ids), REFRESH_BATCH)]


# -- keeping the rows current within every transaction ------------------------------------------------


def _note_changed_permits(session: Session, flush_context) -> None:
    """After each flush: note the permits whose record the flushed rows belong to.

    A row added or deleted in a table the engine reads counts; a changed row counts when a column the
    engine reads changed (editing a draft report's weather or notes does not).
    """
    changed = session.info.setdefault(_CHANGED, _Changed())
    # Status events a push writes as rows, right after this flush (permits.services.change_area_status).
    changed.areas.update(row["area_id"] for row in waiting_rows(session, AreaStatusEvent.__table__))
    dirty = {obj for obj in session.dirty if type(obj) in READS}
    for obj in (*session.new, *session.deleted, *dirty):
        columns = READS.get(type(obj))
        if columns is None:
            continue
        state = sa_inspect(obj)
        if obj in dirty and not any(_history(obj, key).has_changes() for key in columns):
            continue
        if isinstance(obj, Inspection) and _blank_before_and_after(state):
            continue
        if isinstance(obj, AreaStatusEvent):
            found, key = changed.areas, "area_id"
        elif isinstance(obj, ChecklistAnswer):
            found, key = changed.inspections, "inspection_id"
        else:
            found, key = changed.permits, "id" if isinstance(obj, Permit) else "permit_id"
        # The loaded value only (a deleted row must not be read back), and the one it had if it moved.
        found.add(state.dict.get(key))
        if obj in dirty:
            found.update(_history(obj, key).deleted or ())


def _history(obj, key: str):
    """What this flush changes of `obj`'s attribute `key`, as `inspect(obj).attrs[key].history` tells it (unloaded:
    nothing, never read), without making the accessors of all the object's attributes to get at one."""
    return get_history(obj, key, PASSIVE_NO_INITIALIZE)


def _blank_before_and_after(state) -> bool:
    """Whether a report row is a blank draft (a Start with nothing kept since) and was one before this flush:
    the engine reads no blank draft (`facts`: it owes no report and is no inspection yet), so starting,
    opening again or discarding one changes no permit's obligations. Starting a report then costs no
    recompute of the permit's schedule; the save that first keeps something in it (`blank` turns false)
    does."""
    values = state.dict
    if values.get("status") != "draft" or values.get("blank") is not True:
        return False
    if state.persistent or state.deleted:  # loaded before: it was a blank draft then too, unless that changed
        return not any(_history(state.obj(), key).deleted for key in ("status", "blank"))
    return True


def note_written(session: Session, permit_ids: Collection[str]) -> None:
    """Permits whose rows the caller wrote with plain statements (an import's INSERTs), which no flush sees:
    their obligations are stored at commit, as those of every permit a flush touched."""
    session.info.setdefault(_CHANGED, _Changed()).permits.update(permit_ids)


def _permits_of(changed: _Changed) -> set[str]:
    """The permit ids of what changed, looking up the permits of area events and checklist answers."""
    ids = set(changed.permits)
    areas, inspections = changed.areas - {None}, changed.inspections - {None}
    if areas:
        ids.update(db.session.scalars(select(DisturbedArea.permit_id).where(DisturbedArea.id.in_(areas))))
    if inspections:
        # Only a submitted report's answers: the engine reads no draft's (`facts`, a structure's pre-bury
        # inspection), and a report submitted in this transaction changed its own row, which counts already.
        # A draft's Save then costs no recompute of its permit's schedule for its answers alone.
        ids.update(db.session.scalars(select(Inspection.permit_id).where(Inspection.id.in_(inspections),
                                                                           Inspection.status == "submitted")))
    ids.discard(None)
    return ids


def _recompute_before_commit(session: Session) -> None:
    """Before the transaction commits: store again the obligations of every permit it changed."""
    # A released savepoint (sync applies each op in one) is not the commit: recompute once, at the end.
    if session.in_nested_transaction():
        return
    if session.info.get(_BUSY) or not has_app_context() or session is not db.session():
        return
    session.info[_BUSY] = True
    try:
        # The rows are written with plain statements, which flush nothing more; the bound only guards that.
        for _ in range(3):
            session.flush()  # what is still pending is part of the change, and is noted by the flush
            changed = session.info.pop(_CHANGED, None)
            if changed is None:
                return
            # A batch at a time: a transaction that changed thousands of permits (an import) is stored in
            # bounded memory, and each statement names at most REFRESH_BATCH of them.
            for batch in _in_batches(sorted(_permits_of(changed))):
                refresh_permits(batch)
    finally:
        session.info.pop(_BUSY, None)


def _in_batches(ids: list[str]) -> list[list[str]]:
    return [ids[start:start + REFRESH_BATCH] for start in range(0, len(ids), REFRESH_BATCH)]


def _forget_on_end(session: Session, transaction: SessionTransaction) -> None:
    """A transaction that ends (rolled back, or committed) leaves nothing to recompute."""
    if transaction.parent is None:
        session.info.pop(_CHANGED, None)


def install() -> None:
    """Listen to every database session (once per process)."""
    for name, listener in (("after_flush", _note_changed_permits), ("before_commit", _recompute_before_commit),
                           ("after_transaction_end", _forget_on_end)):
        if not event.contains(Session, name, listener):
            event.listen(Session, name, listener)
