"""The migrations, applied to an empty database, make exactly the schema the models describe."""
from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect, text

from inspect_app import create_app
from inspect_app.extensions import db
from tests.databases import worker_database


def _empty_database_url(tmp_path) -> str:
    """An empty database: a new SQLite file, or a new database on the test PostgreSQL server."""
    return worker_database("inspect_migrations") or f"sqlite:///{tmp_path / 'migrations.sqlite3'}"


def test_migrations_from_empty_match_the_models(tmp_path):
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": _empty_database_url(tmp_path)})
    with app.app_context():
        upgrade()
        with db.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            diff = compare_metadata(context, db.metadata)
        assert diff == [], f"models and migrations differ; run `flask db migrate`: {diff}"
        downgrade(revision="base")
        assert set(inspect(db.engine).get_table_names()) <= {"alembic_version"}
        db.engine.dispose()


def test_a_database_with_records_goes_down_and_up_again_keeping_them(tmp_path):
    """Later migrations change tables other tables point at; on SQLite that means copying the table."""
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": _empty_database_url(tmp_path),
                      "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000"})
    with app.app_context():
        upgrade()
        assert app.test_cli_runner().invoke(args=["demo", "load"]).exit_code == 0
        count = lambda table: db.session.execute(text(f"SELECT count(*) FROM {table}")).scalar()  # noqa: E731
        tables = ("users", "permits", "inspections", "audit_entries")
        before = {table: count(table) for table in tables}
        db.session.remove()
        assert before["users"] and before["permits"]
        downgrade(revision="0001")
        upgrade()
        assert {table: count(table) for table in tables} == before
        db.session.remove()
        downgrade(revision="base")
        db.engine.dispose()


def test_the_plans_easement_text_becomes_an_easement_record_and_back(tmp_path):
    """0015: the O&M plan's easements, one text until then, become a record with that text as its purpose
    (§380-14 C(2)(d)), recorded when the plan was; going down, the records are one text again."""
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": _empty_database_url(tmp_path),
                      "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000"})
    with app.app_context():
        upgrade()  # the demo data needs today's tables; then back to before the easement records
        assert app.test_cli_runner().invoke(args=["demo", "load"]).exit_code == 0
        db.session.remove()
        downgrade(revision="0014")
        permit_id = db.session.execute(text("SELECT id FROM permits ORDER BY number LIMIT 1")).scalar()
        db.session.execute(text("DELETE FROM om_plans WHERE permit_id = :p"), {"p": permit_id})
        db.session.execute(text(
            "INSERT INTO om_plans (id, permit_id, easements, registry_reference, recorded_on) "
            "VALUES ('plan-1', :p, 'Access over Lot 4 to Basin B-1', 'Book 25170, Page 88', '2026-10-08')"),
            {"p": permit_id})
        db.session.commit()
        db.session.remove()
        upgrade()
        rows = db.session.execute(text("SELECT purpose, location, registry_reference, recorded_on FROM easements "
                                       "WHERE permit_id = :p"), {"p": permit_id}).all()
        assert [(purpose, location, reference, str(recorded)) for purpose, location, reference, recorded in rows] == [
            ("Access over Lot 4 to Basin B-1", None, "Book 25170, Page 88", "2026-10-08")]
        db.session.remove()
        downgrade(revision="0014")
        assert db.session.execute(text("SELECT easements FROM om_plans WHERE permit_id = :p"),
                                  {"p": permit_id}).scalar() == "Access over Lot 4 to Basin B-1"
        db.session.remove()
        downgrade(revision="base")
        db.engine.dispose()
