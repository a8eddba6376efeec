"""Databases for the tests: each pytest-xdist worker has its own."""
from __future__ import annotations

import os

from sqlalchemy import create_engine, text


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
