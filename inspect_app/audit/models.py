"""The append-only audit log: every change to the record, with actor, time, before and after."""
from __future__ import annotations

import datetime as dt
from functools import cache
from typing import Any

from sqlalchemy import (JSON, BigInteger, ForeignKey, Integer, Select, Sequence, String, Table, Update, bindparam,
                        event, func, select, text, update)
from sqlalchemy.orm import Mapped, Session, mapped_column

from inspect_app.audit import chain
from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, utcnow


class AuditEntry(db.Model):
    __tablename__ = "audit_entries"

    # A growing integer, in the order entries were written.
    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    # The sync pull cursor: given to a transaction's entries as it commits, in commit order (see
    # `_stamp_commit_order`). `seq` is not: on PostgreSQL a transaction that took a lower one can commit
    # after one that took a higher one, and a reader that had moved past the higher would miss it.
    commit_seq: Mapped[int | None] = mapped_column(BigInteger, unique=True)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    actor_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    action: Mapped[str] = mapped_column(String(60))
    entity: Mapped[str] = mapped_column(String(60))
    entity_id: Mapped[str] = mapped_column(String(36), index=True)
    permit_id: Mapped[str | None] = mapped_column(String(36), index=True)
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # The hash chain (see chain.py), written with `commit_seq` as the transaction commits.
    prev_hash: Mapped[str | None] = mapped_column(String(64))
    hash: Mapped[str | None] = mapped_column(String(64))


class AppendOnlyError(RuntimeError):
    """Raised when code tries to change or delete an audit entry."""


# PostgreSQL: the numbers `commit_seq` is given from (SQLite, with one writer at a time, uses `seq`).
COMMIT_SEQUENCE = Sequence("audit_commit_seq", metadata=db.metadata)
# The transaction-level lock that lets one committing transaction at a time take its numbers.
_COMMIT_ORDER_LOCK = 380_014
_UNSTAMPED = "audit_entries_to_stamp"
# Entries sealed per statement at commit (each batch chained on from the one before).
SEAL_BATCH = 2000
_WAITING = "rows_waiting_for_flush"


def _note_new_entries(session: Session, flush_context) -> None:
    if any(isinstance(obj, AuditEntry) for obj in session.new):
        session.info[_UNSTAMPED] = True


def add_after_flush(session: Session, row: dict[str, Any], table: Table | None = None) -> None:
    """Write an entry's row (or a row of `table`, for a change made by the hundred: a sync push's area
    status events) with the others waiting, one statement per table, right after the next flush (or at
    the end of the SAVEPOINT or transaction, whichever comes first), instead of as an object of its own.

    After the flush, so it goes in after every entry recorded before it (those wait in the session as
    objects, flushed with the changes they record): entries are numbered in the order they were written.
    A row follows the SAVEPOINT (or transaction) it was queued in: written before a SAVEPOINT inside it
    begins (`_write_before_savepoint`), so an inner rollback cannot take it; kept when its own is
    released; dropped with its own when that rolls back.
    """
    if table is None:
        table, row = AuditEntry.__table__, {"at": utcnow(), **row}
    session.info.setdefault(_WAITING, {}).setdefault(table, []).append(row)


def waiting_rows(session: Session, table: Table) -> list[dict[str, Any]]:
    """The rows of `table` waiting to be written after the next flush."""
    return session.info.get(_WAITING, {}).get(table, [])


def _write_waiting(session: Session, flush_context=None, connection=None) -> None:
    waiting = session.info.pop(_WAITING, None) or {}
    for table, rows in waiting.items():  # in the order each table's first row came
        (connection or session.connection()).execute(table.insert(), rows)
    if AuditEntry.__table__ in waiting:
        session.info[_UNSTAMPED] = True


def write_waiting(session: Session) -> None:
    """Write the rows waiting now, without waiting for a flush: for a caller that writes with plain statements,
    which flush nothing (an import's INSERTs), so that its entries do not pile up in memory until the commit."""
    _write_waiting(session)


def _write_before_savepoint(session: Session, transaction) -> None:
    """A SAVEPOINT begins: rows still waiting (queued with nothing to flush, so its opening flush did
    not write them) belong to the transaction around it, and are written there first, on its connection
    (the SAVEPOINT itself is opened later, by its first statement), so that its rollback cannot drop them.
    So the rows waiting are always those of the innermost transaction alone."""
    if transaction.nested and session.info.get(_WAITING):
        _write_waiting(session, connection=transaction.parent.connection(None))


def install_session_hooks() -> None:
    """Refuse changes to entries, and number and seal them at every commit (once per process).

    Installed last, by create_app, so the commit-order lock is held for the commit itself and nothing
    more: the schedule's recompute, which locks permits, and the documents' freezing, which writes
    entries of its own, run before it.
    """
    for name, listener in (("before_flush", _refuse_audit_changes), ("after_flush", _note_new_entries),
                           ("after_flush", _write_waiting), ("after_transaction_create", _write_before_savepoint),
                           ("before_commit", _stamp_commit_order), ("after_transaction_end", _forget_unstamped)):
        if not event.contains(Session, name, listener):
            event.listen(Session, name, listener)


def _stamp_commit_order(session: Session) -> None:
    """Number this transaction's entries in commit order and seal them in the chain, just before it commits.

    On PostgreSQL the numbers are taken under a transaction-level advisory lock, which is released only
    once the commit is visible: the next transaction takes its numbers after that, so what a reader can
    see is always every number up to some point, never one with a gap below it that fills in later.
    The lock is taken last, holding nothing anyone else waits for, so it cannot deadlock; so not on the
    release of a SAVEPOINT (a sync push makes one per operation), only on the real commit.
    """
    session.flush()
    _write_waiting(session)  # rows still waiting when there was nothing to flush
    if session.in_nested_transaction():
        return
    if not session.info.pop(_UNSTAMPED, False):
        return
    postgresql = session.get_bind().dialect.name == "postgresql"
    if postgresql:
        session.execute(_TAKE_COMMIT_ORDER_LOCK, {"key": _COMMIT_ORDER_LOCK})
    last_seq = 0
    while True:
        found = session.execute(_unsealed(postgresql), {"last_seq": last_seq}).mappings().all()
        if not found:
            return
        chain_head = found[0]["chain_head"]
        rows = [{key: value for key, value in row.items() if key not in ("chain_head", "commit_number")}
                for row in found]
        if postgresql:
            numbers = sorted(row["commit_number"] for row in found)
        else:  # one writer at a time: the order they were written in is the order they commit in
            numbers = [row["seq"] for row in rows]
        _seal(session, [{**row, "commit_seq": number} for row, number in zip(rows, numbers, strict=True)], chain_head)
        if len(rows) < SEAL_BATCH:
            return  # a batch short of full was the last: no need to ask again
        last_seq = rows[-1]["seq"]


_TAKE_COMMIT_ORDER_LOCK = text("SELECT pg_advisory_xact_lock(:key)")


@cache
def _unsealed(postgresql: bool) -> Select:
    """`_stamp_commit_order`'s statement (built once: every commit that writes an entry runs it), after the
    parameter `last_seq`.

    This transaction's entries (every committed one is numbered), in the order they were written, a batch at a
    time: a transaction of many entries (an import) is sealed in bounded memory. With them, the head of the
    chain, read in the same statement (begun under the lock, so no commit can come between): the last hash,
    this transaction's own last batch's included. On PostgreSQL, each row's commit number too, taken as the row
    is read (for the rows the LIMIT keeps only: PostgreSQL works a volatile output column out after the sort,
    for the rows returned)."""
    table = AuditEntry.__table__
    chained = table.alias("chained")
    head = (select(chained.c.hash).where(chained.c.hash.is_not(None)).order_by(chained.c.commit_seq.desc())
            .limit(1).scalar_subquery().label("chain_head"))
    extra = (head, func.nextval("audit_commit_seq").label("commit_number")) if postgresql else (head,)
    return (_chain_query().add_columns(*extra)
            .where(table.c.commit_seq.is_(None), table.c.seq > bindparam("last_seq"))
            .order_by(table.c.seq).limit(SEAL_BATCH))


def _chain_query():
    table = AuditEntry.__table__
    return select(*(table.c[name] for name in (*chain.CONTENT_COLUMNS, "prev_hash", "hash")))


def chain_rows(where=None):
    """A query of the entries' chained columns in commit order (for `flask audit verify`)."""
    table = AuditEntry.__table__
    return (_chain_query().where(where if where is not None else table.c.commit_seq.is_not(None))
            .order_by(table.c.commit_seq))


def _seal(session: Session, rows: list[dict[str, Any]], head: str | None) -> None:
    """Chain this transaction's entries after the head, in commit order, still under the commit-order lock;
    each row's number, link and hash written in one UPDATE.

    The rows were read from the database, given their commit numbers, so the hash covers exactly what
    `flask audit verify` reads once they are written.
    """
    sealed = [{"row_seq": row["seq"], "number": row["commit_seq"], "prev_hash": prev, "hash": digest}
              for row, prev, digest in chain.link(head or chain.GENESIS, rows)]
    session.execute(_sealing(), sealed, execution_options={"synchronize_session": False})


@cache
def _sealing() -> Update:
    """`_seal`'s statement: each row's number, link and hash, by its `row_seq`."""
    table = AuditEntry.__table__
    return (update(table).where(table.c.seq == bindparam("row_seq"))
            .values(commit_seq=bindparam("number"), prev_hash=bindparam("prev_hash"), hash=bindparam("hash")))


def _forget_unstamped(session: Session, transaction) -> None:
    """The transaction has ended: nothing of it is left to number. Not on the end of a SAVEPOINT (which
    fires the session's rollback event too): entries flushed before it, or in an earlier one, still wait
    for the commit, which would otherwise leave them unnumbered and outside the chain.

    Rows still waiting to be written go with any SAVEPOINT or transaction that ends: they are its own
    (those of the transaction around it were written before it began, `_write_before_savepoint`), and
    one that commits has written them (`_stamp_commit_order`), so they are those of one rolled back."""
    session.info.pop(_WAITING, None)
    if transaction.parent is None:
        session.info.pop(_UNSTAMPED, None)


def _refuse_audit_changes(session: Session, flush_context, instances) -> None:
    for obj in list(session.dirty) + list(session.deleted):
        if isinstance(obj, AuditEntry):
            raise AppendOnlyError("the audit log is append-only")
