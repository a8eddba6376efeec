"""The audit log is hash-chained in commit order; `flask audit verify` finds any change made behind its back.

Tampering is done as an attacker with database access would: raw SQL, after dropping the guards' triggers
(which otherwise refuse it, see test_guards.py).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from inspect_app.audit import chain, guards
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db


def _entry(session: Session, permit, note: str) -> AuditEntry:
    entry = AuditEntry(action="area.status", entity="disturbed_areas", entity_id=permit.areas[0].id,
                       permit_id=permit.id, after={"note": note, "é": 1.5})
    session.add(entry)
    session.flush()
    return entry


def _chain() -> list:
    rows = db.session.execute(text("SELECT seq, commit_seq, prev_hash, hash FROM audit_entries "
                                   "ORDER BY commit_seq")).all()
    return rows


def _verify(runner, *args):
    db.session.remove()  # the command reads in its own session what is committed
    return runner.invoke(args=["audit", "verify", *args])


@contextmanager
def _unguarded():
    """A connection with the guards dropped, as an attacker with the database password would have."""
    db.session.remove()  # the test's own reads end here: dropping a trigger waits for every open transaction
    with db.engine.begin() as connection:
        guards.drop(connection)
    try:
        with db.engine.begin() as connection:
            yield connection
    finally:
        with db.engine.begin() as connection:
            guards.drop(connection)
            guards.create(connection, db.metadata)


@pytest.fixture
def logged(make):
    """A permit made through the services: half a dozen real audit entries, committed in several transactions."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad", "Driveway"], structures=["Pipe P-1"])
    # A draft: the factory writes its row with no audit entry, which for a submitted report `flask audit verify`
    # reports as made outside the app (test_record_rows.py).
    make.inspection(permit, status="draft")
    count = db.session.scalar(select(func.count()).select_from(AuditEntry))
    assert count >= 6
    return permit


def test_every_entry_links_to_the_one_committed_before_it(app, logged, runner):
    rows = _chain()
    assert rows[0].prev_hash == chain.GENESIS
    for before, after in zip(rows, rows[1:]):
        assert after.prev_hash == before.hash and after.commit_seq > before.commit_seq
    assert len({row.hash for row in rows}) == len(rows)
    result = _verify(runner)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{len(rows)} entries verified; head: entry {rows[-1].commit_seq} "
                                    f"hash {rows[-1].hash}")


def test_two_writers_committing_out_of_order_chain_in_commit_order(app, make, runner):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time: transactions cannot commit out of order")
    permit = make.permit(areas=["Pad"])
    slow, quick = Session(db.engine), Session(db.engine)
    try:
        first = _entry(slow, permit, "written first, committed last")
        second = _entry(quick, permit, "written second, committed first")
        first_seq, second_seq = first.seq, second.seq
        assert first_seq < second_seq
        quick.commit()
        slow.commit()
    finally:
        slow.close()
        quick.close()
    by_seq = {row.seq: row for row in _chain()}
    assert by_seq[first_seq].commit_seq > by_seq[second_seq].commit_seq
    assert by_seq[first_seq].prev_hash == by_seq[second_seq].hash
    assert _verify(runner).exit_code == 0


def test_many_writers_at_once_keep_one_unbroken_chain(app, make, runner):
    permit = make.permit(areas=["Pad"])
    engine = db.engine
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        try:
            with app.app_context():
                for n in range(8):
                    with Session(engine) as session:
                        _entry(session, permit, f"writer {worker}, change {n}")
                        _entry(session, permit, f"writer {worker}, change {n}, second entry")
                        session.commit()
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    result = _verify(runner)
    assert result.exit_code == 0, result.output
    total = db.session.scalar(select(func.count()).select_from(AuditEntry))
    assert result.output.startswith(f"{total} entries verified")


def test_changed_content_is_found_at_that_entry(app, logged, runner):
    target = _chain()[3]
    with _unguarded() as connection:
        connection.execute(text("UPDATE audit_entries SET action = 'permit.delete' WHERE seq = :seq"),
                           {"seq": target.seq})
    result = _verify(runner)
    assert result.exit_code == 1
    assert f"entry {target.commit_seq} (seq {target.seq}): its content does not match its hash" in result.output
    assert "3 entries before it verified" in result.output


def test_a_changed_entry_given_a_new_hash_breaks_the_next_link(app, logged, runner):
    rows = _chain()
    target, following = rows[2], rows[3]
    with _unguarded() as connection:
        connection.execute(text("UPDATE audit_entries SET actor_id = NULL, entity_id = 'forged' WHERE seq = :seq"),
                           {"seq": target.seq})
        forged = connection.execute(select(AuditEntry.__table__).where(AuditEntry.seq == target.seq)).mappings().one()
        connection.execute(text("UPDATE audit_entries SET hash = :hash WHERE seq = :seq"),
                           {"hash": chain.entry_hash(forged["prev_hash"], forged), "seq": target.seq})
    result = _verify(runner)
    assert result.exit_code == 1
    assert f"entry {following.commit_seq} (seq {following.seq}): its link does not match" in result.output


def test_a_deleted_entry_is_found(app, logged, runner):
    rows = _chain()
    with _unguarded() as connection:
        connection.execute(text("DELETE FROM audit_entries WHERE seq = :seq"), {"seq": rows[4].seq})
    result = _verify(runner)
    assert result.exit_code == 1
    assert f"entry {rows[5].commit_seq} (seq {rows[5].seq}): its link does not match" in result.output


def test_reordered_entries_are_found(app, logged, runner):
    rows = _chain()
    a, b = rows[1], rows[2]
    with _unguarded() as connection:  # swap their places in commit order
        connection.execute(text("UPDATE audit_entries SET commit_seq = -1 WHERE seq = :seq"), {"seq": a.seq})
        connection.execute(text("UPDATE audit_entries SET commit_seq = :c WHERE seq = :seq"),
                           {"c": a.commit_seq, "seq": b.seq})
        connection.execute(text("UPDATE audit_entries SET commit_seq = :c WHERE seq = :seq"),
                           {"c": b.commit_seq, "seq": a.seq})
    result = _verify(runner)
    assert result.exit_code == 1 and f"entry {a.commit_seq} (seq {b.seq})" in result.output


def test_a_whole_rewritten_tail_passes_the_walk_but_not_the_anchor(app, logged, runner):
    """Recomputing every hash after a change hides it from the walk; the head mailed earlier does not match."""
    anchored = runner.invoke(args=["audit", "anchor"])
    assert anchored.exit_code == 0, anchored.output
    rows = _chain()
    head = rows[-1]
    assert f"entry {head.commit_seq} hash {head.hash}" in anchored.output
    with _unguarded() as connection:
        connection.execute(text("UPDATE audit_entries SET entity_id = 'forged' WHERE seq = :seq"),
                           {"seq": rows[1].seq})
        table = AuditEntry.__table__
        stored = connection.execute(select(table).order_by(table.c.commit_seq)).mappings().all()
        for row, prev, digest in chain.link(chain.GENESIS, stored):
            connection.execute(text("UPDATE audit_entries SET prev_hash = :p, hash = :h WHERE seq = :seq"),
                               {"p": prev, "h": digest, "seq": row["seq"]})
    assert _verify(runner).exit_code == 0
    result = _verify(runner, "--anchor", f"{head.commit_seq}:{head.hash}")
    assert result.exit_code == 1
    assert f"entry {head.commit_seq} has hash" in result.output and "rewritten" in result.output
    cut = _verify(runner, "--anchor", f"{head.commit_seq + 50}:{head.hash}")
    assert cut.exit_code == 1 and "is not in the log" in cut.output


def test_an_unsealed_entry_is_found(app, logged, runner):
    rows = _chain()
    with _unguarded() as connection:
        connection.execute(text("UPDATE audit_entries SET hash = NULL, prev_hash = NULL WHERE seq = :seq"),
                           {"seq": rows[-1].seq})
    result = _verify(runner)
    assert result.exit_code == 1 and f"(seq {rows[-1].seq}): it is not sealed" in result.output


def test_the_anchor_is_mailed_where_one_is_set(app, logged, runner, smtp_server):
    received = smtp_server
    app.config.update(AUDIT_ANCHOR_EMAIL="clerk@town.example.org")
    result = runner.invoke(args=["audit", "anchor"])
    assert result.exit_code == 0, result.output
    head = _chain()[-1]
    assert len(received) == 1 and received[0]["To"] == "clerk@town.example.org"
    assert f"entry {head.commit_seq} hash {head.hash}" in received[0].get_payload(decode=True).decode()
    assert "Mailed to clerk@town.example.org" in result.output


def test_an_anchor_that_cannot_be_mailed_says_so(app, logged, runner):
    app.config.update(SMTP_HOST="127.0.0.1", SMTP_PORT=9, AUDIT_ANCHOR_EMAIL="clerk@town.example.org")
    result = runner.invoke(args=["audit", "anchor"])
    assert result.exit_code == 1 and "was not mailed" in result.output
