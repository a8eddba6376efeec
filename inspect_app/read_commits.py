"""A page's reads end committed on PostgreSQL, not rolled back, so the statements it prepared stay prepared.

psycopg prepares a statement a connection has run 5 times: PostgreSQL then parses and plans it once, not at
every run. But psycopg forgets every prepared statement, and every count towards one, at a ROLLBACK, and
SQLAlchemy ends with a ROLLBACK each transaction the app did not commit. A page commits nothing, so each page
wiped them: no statement ever reached its 5th run on a connection, and the server parsed and planned every
statement of every page again (pg_stat_statements counted as many plans as runs).

A transaction that only read ends the same committed or rolled back. So a GET, HEAD or OPTIONS request that
ended without an error, whose transaction ran nothing but SELECTs (a WITH of reads only, too) and has nothing
pending in the session, has its database transaction committed at its end, on the connection; the session's own
commit (and the hooks that write at it) is not run. Any other ends as before: a change not committed is still
rolled back. On SQLite (whose statement cache a rollback keeps) nothing changes.
"""
from __future__ import annotations

import logging
import re

from flask import Flask, request
from sqlalchemy import Select, event
from sqlalchemy.engine import Engine

from inspect_app.extensions import db

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
WROTE = "inspect_app.wrote"  # in a connection's info: its transaction ran something other than a SELECT

log = logging.getLogger(__name__)


@event.listens_for(Engine, "before_cursor_execute")
def _note_writes(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
    # Anything but a SELECT counts as a write (an INSERT, a SAVEPOINT, a WITH that may hold an UPDATE).
    if executemany or not _reads_only(statement, context):
        conn.info[WROTE] = True


# A change in a statement (SQLAlchemy writes its keywords in capitals); a locking read's FOR UPDATE counts too.
_CHANGE = re.compile(r"\b(?:INSERT|UPDATE|DELETE|MERGE)\b")


def _reads_only(statement: str, context) -> bool:  # type: ignore[no-untyped-def]
    """A plain SELECT, or a SELECT built by SQLAlchemy that begins with its common table expressions (the
    hidden draft parts, accounts/records.py), none of which changes anything."""
    head = statement.lstrip()[:6].upper()
    if head == "SELECT":
        return True
    return (head[:4] == "WITH" and context is not None and context.compiled is not None
            and isinstance(context.compiled.statement, Select) and not _CHANGE.search(statement))


@event.listens_for(Engine, "commit")
@event.listens_for(Engine, "rollback")
def _transaction_ended(conn) -> None:  # type: ignore[no-untyped-def]
    if not conn.invalidated:  # (a lost connection's info is dropped with it when the pool connects again)
        conn.info.pop(WROTE, None)


def register(app: Flask) -> None:
    """Commit a safe request's read-only transaction as the request ends (before the session is removed)."""
    app.teardown_request(_commit_reads)


def _commit_reads(error: BaseException | None) -> None:
    if error is not None or request.method not in SAFE or not db.session.registry.has():
        return
    session = db.session()
    if not session.is_active or not session.in_transaction() or session.new or session.dirty or session.deleted:
        return
    try:
        connection = session.connection()
        if connection.dialect.name != "postgresql" or connection.invalidated or connection.info.get(WROTE):
            return
        # Committed on the database connection itself, not through the session: the session's commit hooks (the
        # audit log's, the schedule's) do not run. Then the session rolls back as it always did, and psycopg,
        # whose connection has no transaction left, sends no ROLLBACK (and keeps its prepared statements); the
        # rollback drops what those hooks would have written, as before, and leaves the session ready for another
        # transaction (a test, or a command, may use it after the request).
        connection.connection.dbapi_connection.commit()
        session.rollback()
    except Exception:  # the answer is made: the session's removal, next, ends the transaction as before
        log.exception("could not end a read-only transaction with a commit")
