"""PostgreSQL sessions keep time in UTC whatever the server's own zone, and every time still reads back as the
instant stored (inspect_app/config.py: database_engine_options)."""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select, text

from inspect_app import create_app
from inspect_app.config import database_engine_options
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection

LOCAL = ZoneInfo("America/New_York")


def test_only_a_postgresql_address_gets_the_setting():
    sqlite = {"SQLALCHEMY_DATABASE_URI": "sqlite:////tmp/inspect.sqlite3"}
    database_engine_options(sqlite)
    assert "SQLALCHEMY_ENGINE_OPTIONS" not in sqlite

    postgresql = {"SQLALCHEMY_DATABASE_URI": "postgresql+psycopg://app@db/inspect",
                  "SQLALCHEMY_ENGINE_OPTIONS": {"pool_size": 8}}
    database_engine_options(postgresql)
    assert postgresql["SQLALCHEMY_ENGINE_OPTIONS"] == {"pool_size": 8,
                                                       "connect_args": {"options": "-c TimeZone=UTC"}}

    # Options the deployment gave in the address are its own: left as they are.
    given = {"SQLALCHEMY_DATABASE_URI": "postgresql+psycopg://app@db/inspect?options=-c%20statement_timeout%3D5s"}
    database_engine_options(given)
    assert "SQLALCHEMY_ENGINE_OPTIONS" not in given


def _report(make, performed_at: dt.datetime) -> str:
    inspector = make.user()
    permit = make.permit(inspectors=[inspector])
    inspection = make.inspection(permit, inspector=inspector, performed_at=performed_at)
    db.session.commit()
    return inspection.id


def test_postgresql_reads_times_in_utc(app, make):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("the session zone is PostgreSQL's")
    performed = dt.datetime(2026, 3, 8, 1, 30, tzinfo=LOCAL)  # the night the clocks go forward
    report_id = _report(make, performed)
    db.session.expunge_all()

    assert db.session.scalar(text("SHOW TimeZone")) == "UTC"
    read = db.session.scalar(select(Inspection.performed_at).where(Inspection.id == report_id))
    assert read == performed == dt.datetime(2026, 3, 8, 6, 30, tzinfo=dt.UTC)
    assert read.tzinfo is dt.UTC


def test_a_zone_given_in_the_address_still_reads_the_same_instants(app, make, database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("the session zone is PostgreSQL's")
    performed = dt.datetime(2026, 11, 1, 1, 30, fold=1, tzinfo=LOCAL)  # the second 1:30 of the night clocks go back
    report_id = _report(make, performed)

    separator = "&" if "?" in database_url else "?"
    other = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI":
                        f"{database_url}{separator}options=-c%20TimeZone%3DAmerica/New_York",
                        "BLOB_ROOT": app.config["BLOB_ROOT"]})
    with other.app_context():
        try:
            assert db.session.scalar(text("SHOW TimeZone")) == "America/New_York"
            read = db.session.scalar(select(Inspection.performed_at).where(Inspection.id == report_id))
            # (An ambiguous local time never compares equal to another zone's: PEP 495. Its instant does.)
            assert read == performed.astimezone(dt.UTC) == dt.datetime(2026, 11, 1, 6, 30, tzinfo=dt.UTC)
            assert read.tzinfo is dt.UTC
        finally:
            db.session.remove()
            db.engine.dispose()
