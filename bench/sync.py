"""Sync throughput and resumable upload, against a live central record on 127.0.0.1.

The record is a temporary SQLite database, or the (empty) database named by BENCH_DATABASE_URL or
TEST_DATABASE_URL, whose tables are made and dropped: `tests/postgres.sh python -m bench.sync` runs it on
a throwaway PostgreSQL.

Prints `name=value` lines:
- push_ops_per_s: 1,000 area status operations pushed in batches of 200 (target >= 2000)
- push_cpu_ms_per_op: the CPU time of that push (server and client, one process), per operation: fairer
  than the wall time on a busy machine
- push_sql_per_op: SQL statements the server ran for it, per operation
- replay_ops_per_s: the same 1,000 pushed again, each answered "duplicate" (target >= 10000)
- replay_cpu_ms_per_op: the CPU time of that replay, per operation
- blob_resent_bytes: for an 8 MB blob (a video, as its first bytes tell) whose upload breaks off at 50 %, the bytes sent again after
  resuming (target <= one chunk, chunk_bytes)

The app is served in this process (werkzeug, threaded), set up as wsgi.py sets up a gunicorn worker
(`freeze_startup_objects`).

Run from the repository root as a module, so this file does not shadow the `sync` package:
    python -m bench.sync
"""
from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import socket
import sys
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import event  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from inspect_app import create_app, freeze_startup_objects  # noqa: E402
from inspect_app.accounts.services import create_user  # noqa: E402
from inspect_app.extensions import db  # noqa: E402
from inspect_app.permits import services as permits  # noqa: E402
from inspect_app.types import utcnow  # noqa: E402
from sync.client import SyncClient, new_op  # noqa: E402
from sync.services import create_device  # noqa: E402

OPS = 1000
AREAS = 50
BLOB_BYTES = 8 * 1024 * 1024
CHUNK = 1024 * 1024


def cutting_proxy(target_port: int, cut_after: int) -> tuple[str, threading.Event]:
    """A TCP proxy that breaks the first connection once `cut_after` bytes went up it."""
    listener = socket.create_server(("127.0.0.1", 0))
    cut = threading.Event()
    sent = [0]  # bytes sent up, over every connection

    def pipe(source: socket.socket, sink: socket.socket, count: bool) -> None:
        try:
            while data := source.recv(65536):
                sent[0] += len(data) if count else 0
                if count and not cut.is_set() and sent[0] > cut_after:
                    cut.set()
                    break
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def accept() -> None:
        while True:
            client, _ = listener.accept()
            upstream = socket.create_connection(("127.0.0.1", target_port))
            threading.Thread(target=pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=pipe, args=(upstream, client, False), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", cut


def main() -> None:
    root = Path(tempfile.mkdtemp())
    url = (os.environ.get("BENCH_DATABASE_URL") or os.environ.get("TEST_DATABASE_URL")
           or f"sqlite:///{root / 'central.sqlite3'}")
    app = create_app({"SQLALCHEMY_DATABASE_URI": url,
                      "BLOB_ROOT": str(root / "blobs"), "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000"})
    with app.app_context():
        db.create_all()
        engine = db.engine
        inspector = create_user("bench@example.org", "Bench Inspector", "inspector", "bench-password")
        permits.ensure_jurisdictions()
        jurisdiction = permits.ensure_jurisdictions()[0]
        permit = permits.create_permit(
            None, jurisdiction_id=jurisdiction.id, number="BENCH-1", site_address="1 Main Street",
            latitude=42.05, longitude=-72.58, owner_name="Owner", applicant_name="Applicant",
            disturbed_acres=Decimal("5"), cgp_schedule="every_7_days", issued_on=dt.date(2026, 1, 5))
        permits.assign(None, permit, inspector, "design_engineer")
        start = utcnow() - dt.timedelta(days=2)
        areas = [permits.add_area(None, permit, f"Area {i}", Decimal("0.1"), since=start).id for i in range(AREAS)]
        _device, token = create_device(None, inspector, "bench tablet")
        db.session.commit()

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request in the figures
    freeze_startup_objects()  # as wsgi.py does in each worker, once the app is made
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    client = SyncClient(url, token, batch_size=200)

    statuses = ("activity_ceased", "stabilization_initiated")
    ops = []
    for i in range(OPS):
        area_index, step = i % AREAS, i // AREAS
        at = start + dt.timedelta(minutes=step + 1)
        ops.append(new_op("area.status", areas[area_index], {"status": statuses[step % 2], "at": at.isoformat()},
                          base_revision=step + 1))
    statements = [0]

    def count(*_args) -> None:
        statements[0] += 1

    event.listen(engine, "before_cursor_execute", count)
    began, cpu = time.perf_counter(), time.process_time()
    results = client.push(ops)
    push_s, push_cpu = time.perf_counter() - began, time.process_time() - cpu
    event.remove(engine, "before_cursor_execute", count)
    push_statements = statements[0]
    assert {r["status"] for r in results} == {"applied"}, {r["status"] for r in results}

    began, cpu = time.perf_counter(), time.process_time()
    replay = client.push(ops)
    replay_s, replay_cpu = time.perf_counter() - began, time.process_time() - cpu
    assert {r["status"] for r in replay} == {"duplicate"}

    # A pipe-run video as the server tells it: an MP4 `ftyp` box, then bytes (uploads are checked by type).
    header = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
    data = header + os.urandom(BLOB_BYTES - len(header))
    proxy_url, cut = cutting_proxy(server.server_port, BLOB_BYTES // 2)
    report = SyncClient(proxy_url, token, chunk_size=CHUNK, backoff_s=0.01).upload_blob(data)
    assert cut.is_set() and SyncClient(url, token).blob_status(hashlib.sha256(data).hexdigest())["complete"]
    server.shutdown()
    if not url.startswith("sqlite"):
        with app.app_context():
            db.drop_all()

    print(f"push_database={engine.dialect.name}")
    print(f"push_ops={OPS}")
    print(f"push_s={push_s:.2f}")
    print(f"push_ops_per_s={OPS / push_s:.0f}")
    print(f"push_cpu_ms_per_op={1000 * push_cpu / OPS:.3f}")
    print(f"push_sql_per_op={push_statements / OPS:.2f}")
    print(f"replay_ops_per_s={OPS / replay_s:.0f}")
    print(f"replay_cpu_ms_per_op={1000 * replay_cpu / OPS:.3f}")
    print(f"blob_bytes={BLOB_BYTES}")
    print(f"chunk_bytes={CHUNK}")
    print(f"blob_resumed_from_bytes={report.resumed_from[-1]}")
    print(f"blob_resent_bytes={report.bytes_sent - BLOB_BYTES}")


if __name__ == "__main__":
    main()
