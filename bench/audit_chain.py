"""Time and memory for `flask audit verify`: walking a hash-chained audit log of 100,000 entries.

The log is written as the app writes it (each entry's hash over its canonical content and the hash before
it), into a temporary SQLite database, or the database named by BENCH_DATABASE_URL (an empty one: its
tables are made and dropped). Then `audit.services.verify_chain` walks it, streamed, as the command does.

Prints, one per line:
  audit_chain_entries                   entries in the log
  audit_verify_s_per_100k_entries       wall time of one whole verify, scaled to 100,000 entries
  audit_verify_entries_per_s            entries verified per second
  audit_verify_traced_peak_mb           peak of Python allocations during a second verify (tracemalloc; streamed,
                                        so it should not grow with the log: compare runs of 10,000 and 100,000)
  audit_records_s_per_100k_entries      wall time of the final records' check (`verify_records`), scaled: every
                                        entry is of a report whose row is not there, the most its search for
                                        deleted records has to look at

Run from the repository root: python -m bench.audit_chain [entries]
"""
from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import time
import tracemalloc


def _app(url: str):
    os.environ.setdefault("SECRET_KEY", "bench-only")
    from inspect_app import create_app

    return create_app({"SQLALCHEMY_DATABASE_URI": url, "BLOB_ROOT": tempfile.mkdtemp()})


def write_log(count: int) -> None:
    """`count` entries like the app's (a snapshot of a few fields before and after), chained in order."""
    from inspect_app.audit import chain
    from inspect_app.audit.models import AuditEntry
    from inspect_app.extensions import db

    table = AuditEntry.__table__
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    prev = chain.GENESIS
    batch = []
    for seq in range(1, count + 1):
        row = {"seq": seq, "commit_seq": seq, "at": start + dt.timedelta(seconds=seq), "actor_id": None,
               "action": "inspection.update", "entity": "inspections", "entity_id": f"{seq:036d}",
               "permit_id": f"{seq % 500:036d}",
               "before": {"status": "draft", "notes": "Silt fence checked along the frontage.", "n": seq},
               "after": {"status": "draft", "notes": "Silt fence re-trenched along the frontage.", "n": seq}}
        # Hash what the database gives back: SQLite keeps times naive (UTC), as the app's type does.
        digest = chain.entry_hash(prev, row)
        batch.append({**row, "prev_hash": prev, "hash": digest})
        prev = digest
        if len(batch) == 5000:
            db.session.execute(table.insert(), batch)
            batch = []
    if batch:
        db.session.execute(table.insert(), batch)
    db.session.commit()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as root:
        url = os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{root}/bench.sqlite3"
        from inspect_app.audit import services as audit
        from inspect_app.extensions import db

        with _app(url).app_context():
            db.create_all()
            try:
                write_log(count)
                db.session.remove()
                begin = time.perf_counter()
                found = audit.verify_chain()
                seconds = time.perf_counter() - begin
                db.session.remove()
                tracemalloc.start()
                audit.verify_chain()
                traced_peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                if found.broken is not None or found.verified != count:
                    raise SystemExit(f"the chain did not verify: {found}")
                db.session.remove()
                begin = time.perf_counter()
                records = audit.verify_records()
                records_seconds = time.perf_counter() - begin
                if records.problems:  # drafts: none of them is final, so none is missing
                    raise SystemExit(f"the records did not verify: {records.problems[:3]}")
            finally:
                db.session.remove()
                db.drop_all()
    print(f"audit_chain_entries={count}")
    print(f"audit_verify_s_per_100k_entries={seconds * 100_000 / count:.2f}")
    print(f"audit_verify_entries_per_s={count / seconds:.0f}")
    print(f"audit_verify_traced_peak_mb={traced_peak / 2**20:.1f}")
    print(f"audit_records_s_per_100k_entries={records_seconds * 100_000 / count:.2f}")


if __name__ == "__main__":
    main()
