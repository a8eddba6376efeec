"""Fixtures: an app on a real database (SQLite by default, PostgreSQL when TEST_DATABASE_URL is set).

The schema is made once per test session; each test then starts from empty tables.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).parent))

from inspect_app import create_app  # noqa: E402
from inspect_app.extensions import db  # noqa: E402


def _database_url(tmp_root: Path) -> str:
    return os.environ.get("TEST_DATABASE_URL") or f"sqlite:///{tmp_root / 'test.sqlite3'}"


def pytest_report_header(config) -> str:
    url = os.environ.get("TEST_DATABASE_URL", "")
    return f"database: {'PostgreSQL' if url.startswith('postgresql') else 'SQLite'}"


@pytest.fixture(scope="session")
def database_url(tmp_path_factory) -> str:
    """Make the schema of an empty database once per session and give its URL.

    The schema comes from the models; tests/test_migrations.py proves the migrations make the same.
    """
    root = tmp_path_factory.mktemp("db")
    url = _database_url(root)
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": url,
                      "BLOB_ROOT": str(root / "blobs")})
    with app.app_context():
        db.drop_all()
        with db.engine.begin() as connection:
            connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
        db.create_all()
        db.engine.dispose()
    return url


def _empty_tables() -> None:
    tables = [t.name for t in db.metadata.sorted_tables]
    with db.engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"))
        else:
            connection.execute(text("PRAGMA foreign_keys=OFF"))
            for name in reversed(tables):
                connection.execute(text(f"DELETE FROM {name}"))
            connection.execute(text("PRAGMA foreign_keys=ON"))


@pytest.fixture
def app(database_url, tmp_path):
    """A fresh app on empty tables, with its own blob folder."""
    app = create_app({
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": database_url,
        "BLOB_ROOT": str(tmp_path / "blobs"),
        "SERVER_NAME": None,
        "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
    })
    with app.app_context():
        _empty_tables()
        yield app
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def make(app):
    """Factories for records (see tests/factories.py), bound to this test's app."""
    import factories

    return factories.Factories()


@pytest.fixture
def signed_in(client):
    """`signed_in(user)` gives a test client signed in as `user`."""
    import factories

    return lambda user=None: factories.SignedIn(client, user)
