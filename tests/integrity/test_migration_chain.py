"""The migration chains the audit entries already there, and from then on the guards hold."""
from __future__ import annotations

import pytest
from flask_migrate import downgrade, upgrade
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from inspect_app import create_app
from inspect_app.extensions import db
from tests.test_migrations import _empty_database_url


def test_existing_entries_are_chained_by_the_migration(tmp_path):
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": _empty_database_url(tmp_path),
                      "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000"})
    with app.app_context():
        upgrade(revision="0004")
        with db.engine.begin() as connection:  # entries written before the chain existed
            for n in range(1, 6):
                connection.execute(text(
                    "INSERT INTO audit_entries (seq, commit_seq, at, action, entity, entity_id, after) "
                    "VALUES (:n, :n, '2026-06-01 10:00:00', 'permit.update', 'permits', 'p-1', :after)"),
                    {"n": n, "after": f'{{"note": "change {n}"}}'})
            if connection.dialect.name == "postgresql":  # numbers given by hand: move the counters past them
                connection.execute(text("SELECT setval(pg_get_serial_sequence('audit_entries', 'seq'), 5)"))
                connection.execute(text("SELECT setval('audit_commit_seq', 5)"))
        upgrade()
        runner = app.test_cli_runner()
        result = runner.invoke(args=["audit", "verify"])
        assert result.exit_code == 0, result.output
        assert result.output.startswith("5 entries verified")
        hashes = db.session.execute(text("SELECT prev_hash, hash FROM audit_entries ORDER BY commit_seq")).all()
        assert all(before.hash == after.prev_hash for before, after in zip(hashes, hashes[1:]))
        db.session.remove()
        with pytest.raises(IntegrityError), db.engine.begin() as connection:
            connection.execute(text("DELETE FROM audit_entries WHERE seq = 3"))
        assert runner.invoke(args=["demo", "load"]).exit_code == 0  # the app writes on, chained after them
        result = runner.invoke(args=["audit", "verify"])
        assert result.exit_code == 0, result.output
        db.session.remove()
        downgrade(revision="base")
        db.engine.dispose()
