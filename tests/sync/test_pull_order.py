"""The pull cursor never passes over a change still to come, even when writers commit out of order."""
from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _entry(session: Session, permit, note: str) -> AuditEntry:
    entry = AuditEntry(action="area.status", entity="disturbed_areas", entity_id=permit.areas[0].id,
                       permit_id=permit.id, after={"note": note})
    session.add(entry)
    session.flush()
    return entry


def _pull(client, token: str, cursor: int) -> tuple[list[str], int]:
    page = client.get(f"/sync/changes?cursor={cursor}&limit=1000", headers=bearer(token)).json
    return [c["after"].get("note") for c in page["changes"]], page["cursor"]


def test_a_change_written_first_and_committed_last_is_still_pulled(app, make, client, device_token):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time: transactions cannot commit out of order")
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad"])
    token = device_token(inspector)
    _, cursor = _pull(client, token, 0)
    slow, quick = Session(db.engine), Session(db.engine)
    try:
        first = _entry(slow, permit, "written first, committed last")
        second = _entry(quick, permit, "written second, committed first")
        assert first.seq < second.seq
        quick.commit()
        notes, cursor = _pull(client, token, cursor)
        assert notes == ["written second, committed first"]
        slow.commit()
        notes, cursor = _pull(client, token, cursor)
        assert notes == ["written first, committed last"]
    finally:
        slow.close()
        quick.close()


def test_a_savepoint_release_takes_no_number_and_no_lock_only_the_commit_does(app, make):
    permit = make.permit(areas=["Pad"])
    with Session(db.engine) as session:
        with session.begin_nested():  # as a sync push applies each operation
            seq = _entry(session, permit, "inside a savepoint").seq
        if db.engine.dialect.name == "postgresql":
            held = session.execute(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                                        "AND pid = pg_backend_pid()")).scalar()
            assert held == 0
        assert session.execute(text("SELECT commit_seq FROM audit_entries WHERE seq = :seq"),
                               {"seq": seq}).scalar() is None
        session.commit()
    stamped = db.session.execute(text("SELECT commit_seq FROM audit_entries WHERE seq = :seq"),
                                 {"seq": seq}).scalar()
    assert stamped is not None
