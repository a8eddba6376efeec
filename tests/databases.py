"""Databases for the tests: each pytest-xdist worker has its own; and the statements a block runs."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, event, text

from inspect_app.extensions import db


def worker_database(name: str) -> str | None:
    """A new, empty database called `name` on the test PostgreSQL server (None on SQLite): its URL.

    The suite runs on several workers (pytest-xdist), each in its own process with its own databases, so
    the name carries the worker's id.
    """
    url = os.environ.get("TEST_DATABASE_URL")
    if not url:
        return None
    name = f"{name}_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        connection.execute(text(f"CREATE DATABASE {name}"))
    engine.dispose()
    base, _, query = url.partition("?")
    return base.rsplit("/", 1)[0] + f"/{name}" + (f"?{query}" if query else "")


@contextmanager
def recorded_statements() -> Iterator[list[str]]:
    """The SQL statements the app's engine runs inside the block, in order, each on one line."""
    statements: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        statements.append(" ".join(statement.split()))

    event.listen(db.engine, "before_cursor_execute", seen)
    try:
        yield statements
    finally:
        event.remove(db.engine, "before_cursor_execute", seen)
