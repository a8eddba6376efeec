"""Server time and SQL queries of the town dashboard over a big record.

Builds, in a temporary SQLite database, 5,000 permits in one town (250,000 submitted inspections and
50,000 corrective actions, plus areas, structures, storms and stop-work orders) and 500 permits in the
other, stores every permit's open obligations (what `flask dashboard refresh` does), then requests
`/dashboard/` through the Flask test client as each town's agent.

Prints, one per line:
  build_database_s                   time to build the database
  obligations_refresh_5000_s         working out and storing the open obligations of the 5,000 permits
  obligations_refresh_500_s          the same for the 500 permits of the other town
  obligations_stored_5000            open obligations stored for the 5,000 permits
  change_commit_one_permit_median_ms a change to one permit (a corrective action added) committed, its
                                     obligations worked out again and stored in the same transaction
  dashboard_5000_permits_median_ms   median server time of the dashboard for the agent of 5,000 permits (target <= 300)
  dashboard_5000_permits_min_ms      fastest of those runs
  dashboard_queries_5000             SQL statements run by that request
  dashboard_500_permits_median_ms    the same for the town of 500 permits
  dashboard_queries_500              SQL statements run by that request (the same as for 5,000)
  dashboard_5000_rows_due_or_overdue obligations due or overdue over all 5,000 permits
  load_average_1min                  the machine's load when done (the figures are wall times)

Run from the repository root: python -m bench.dashboard [runs]
"""
from __future__ import annotations

import datetime as dt
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import event, insert, select

from inspect_app import create_app
from inspect_app.accounts.models import User
from inspect_app.pages.dashboard.services import Filters, town_board
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from inspect_app.schedule import obligations
from inspect_app.permits.models import (
    Jurisdiction,
    Permit,
    PermitAssignment,
    StormwaterStructure,
)
from inspect_app.permits.services import ensure_jurisdictions
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import new_id, utcnow
from inspect_app.weather.models import StormEvent

PASSWORD = "bench password 1"
INSPECTIONS_PER_PERMIT = 50
ACTIONS_PER_PERMIT = 10
STATUSES = ["active"] * 14 + ["issued", "stop_work", "final_submissions", "completed", "active", "active"]


def build(town: Jurisdiction, permits: int, now: dt.datetime, rng: random.Random) -> User:
    """`permits` permits in `town` with their history; returns the town's agent."""
    agent = User(id=new_id(), email=f"agent@{town.profile_key}.example.org", name=f"{town.name} agent", role="agent",
                 jurisdiction_id=town.id, password_hash="")
    agent.set_password(PASSWORD)
    inspectors = [User(id=new_id(), email=f"inspector{i}@{town.profile_key}.example.org", name=f"Inspector {i}",
                       role="inspector", password_hash=agent.password_hash) for i in range(max(1, permits // 100))]
    db.session.add_all([agent, *inspectors])
    db.session.flush()
    rows: dict[type, list[dict]] = {model: [] for model in (
        Permit, PermitAssignment, DisturbedArea, AreaStatusEvent, StormwaterStructure, Inspection, Finding,
        CorrectiveAction, StormEvent, StopWorkOrder)}
    storm_days = sorted({(now - dt.timedelta(days=rng.randint(1, 300))).date() for _ in range(12)})
    for n in range(permits):
        pid, status = new_id(), rng.choice(STATUSES)
        issued = (now - dt.timedelta(days=rng.randint(200, 700))).date()
        started = None if status == "issued" else (now - dt.timedelta(days=7 * INSPECTIONS_PER_PERMIT - 3)).date()
        rows[Permit].append(dict(
            id=pid, jurisdiction_id=town.id, number=f"{town.name[:2].upper()}-{n:05d}",
            site_address=f"{n} Main Street, {town.name}, MA", latitude=42.05 + rng.random() / 50,
            longitude=-72.58 + rng.random() / 50, owner_name="Owner LLC", applicant_name="Applicant Inc.",
            disturbed_acres=1.5, is_redevelopment=False, sensitive_waters=rng.random() < 0.1,
            cgp_schedule=rng.choice(("every_7_days", "every_14_days_and_storm")), issued_on=issued,
            construction_started_on=started, completed_on=(now - dt.timedelta(days=30)).date()
            if status == "completed" else None, status=status, revision=1, created_at=now, updated_at=now))
        rows[PermitAssignment].append(dict(id=new_id(), permit_id=pid, user_id=rng.choice(inspectors).id,
                                           capacity="design_engineer", assigned_at=now))
        for a in range(2):
            # Most areas are stabilized in time; now and then one has ceased and waits for stabilization.
            area, ceased = new_id(), now - dt.timedelta(days=rng.randint(1, 120))
            steps = ["disturbed", "activity_ceased"] + (["stabilization_initiated", "stabilized"] if rng.random() < 0.9 else [])
            rows[DisturbedArea].append(dict(id=area, permit_id=pid, name=f"Area {a}", acres=0.5, status=steps[-1],
                                            status_since=ceased, revision=1, has_conflict=False))
            for k, step in enumerate(steps):
                rows[AreaStatusEvent].append(dict(id=new_id(), area_id=area, status=step, recorded_at=now,
                                                  at=ceased + dt.timedelta(days=3 * k - 30 * (k == 0))))
        for s in range(2):
            rows[StormwaterStructure].append(dict(id=new_id(), permit_id=pid, name=f"Pipe {s}", kind="pipe",
                                                  is_underground=True, revision=1))
        # Weekly inspections up to now (or to completion); an issued permit has only its pre-construction one.
        last = now - dt.timedelta(days=rng.randint(0, 9)) if status != "completed" else now - dt.timedelta(days=31)
        inspection_ids = []
        for i in range(INSPECTIONS_PER_PERMIT):
            iid = new_id()
            inspection_ids.append(iid)
            at = last - dt.timedelta(days=7 * i, hours=rng.randint(0, 8))
            kind = "erosion_control" if i % 10 else "periodic"
            if status == "issued":
                at, kind = dt.datetime.combine(issued, dt.time(14), tzinfo=dt.UTC) + dt.timedelta(minutes=i), "initial"
            rows[Inspection].append(dict(
                id=iid, permit_id=pid, type=kind, status="submitted",
                performed_at=at, location_source="permit", inspector_name="Inspector", inspector_credentials="PE",
                weather_status="complete", details={}, notice_given=True, under_stop_work=False, created_at=now))
        finding = new_id()
        rows[Finding].append(dict(id=finding, inspection_id=inspection_ids[-1], permit_id=pid, description="Silt fence down",
                                  severity="minor", is_violation=False, is_automatic=False, status="open", created_at=now))
        for c in range(ACTIONS_PER_PERMIT):
            # Most corrective actions were done within their deadline; a few are still open.
            found = now - dt.timedelta(days=rng.randint(0, 300), hours=rng.randint(0, 23))
            done = found + dt.timedelta(days=rng.randint(0, 6), hours=rng.randint(1, 20))
            done = None if rng.random() < 0.05 or done > now else done
            rows[CorrectiveAction].append(dict(
                id=new_id(), finding_id=finding, permit_id=pid, kind=rng.choice(("routine_maintenance", "significant_repair")),
                description="Repair", owner_name="Contractor", discovered_at=found, due_at=found + dt.timedelta(days=7),
                status="completed" if done else "open", completed_at=done, revision=1))
        for day in storm_days:
            rows[StormEvent].append(dict(id=new_id(), permit_id=pid, day=day, depth_mm=rng.choice((4.0, 8.0, 15.0)),
                                         detected_at=now))
        if status == "stop_work":
            rows[StopWorkOrder].append(dict(id=new_id(), permit_id=pid, reason="Sediment in the street",
                                            issued_by_id=agent.id, issued_at=now - dt.timedelta(days=3)))
    for model, batch in rows.items():
        if batch:
            db.session.execute(insert(model), batch)
    db.session.commit()
    return agent


def timed_dashboard(app, client, runs: int) -> tuple[list[float], int, str]:
    """Server times (ms) of `runs` dashboard requests, the SQL statements of the last one, and its page."""
    statements: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    times = []
    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        for _ in range(runs):
            statements.clear()
            start = time.perf_counter()
            response = client.get("/dashboard/")
            times.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200, response.status_code
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return times, len(statements), response.text


def signed_in_client(app, email: str):
    client = app.test_client()
    response = client.post("/login", data={"email": email, "password": PASSWORD})
    assert response.status_code == 303, response.status_code
    return client


def refresh(scope) -> tuple[int, int]:
    """As `flask dashboard refresh` does, for the permits of `scope`: (permits, obligations stored)."""
    now, permits, stored = utcnow(), 0, 0
    for batch in obligations.batches(scope):
        stored += obligations.refresh_permits(batch, now, skip_busy=True)
        db.session.commit()
        permits += len(batch)
    return permits, stored


def timed_change(app, permit_id: str, finding_id: str, runs: int) -> list[float]:
    """Times (ms) of committing one new corrective action on one permit, obligations recomputed included."""
    times = []
    with app.app_context():
        for _ in range(runs):
            found = utcnow()
            start = time.perf_counter()
            db.session.add(CorrectiveAction(finding_id=finding_id, permit_id=permit_id, kind="routine_maintenance",
                                            description="Re-stake", owner_name="Contractor", discovered_at=found,
                                            due_at=found + dt.timedelta(days=1), status="open", revision=1))
            db.session.commit()
            times.append((time.perf_counter() - start) * 1000)
    return times


def main(runs: int = 7) -> None:
    with tempfile.TemporaryDirectory() as folder:
        app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{Path(folder) / 'bench.sqlite3'}",
                          "BLOB_ROOT": str(Path(folder) / "blobs"), "WTF_CSRF_ENABLED": False,
                          "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000"})
        rng, now = random.Random(5), utcnow()
        start = time.perf_counter()
        with app.app_context():
            db.create_all()
            towns = {t.profile_key: t for t in ensure_jurisdictions()}
            big = build(towns["longmeadow"], 5000, now, rng)
            small = build(towns["southborough"], 500, now, rng)
            big_email, small_email = big.email, small.email
            big_town, small_town = towns["longmeadow"].id, towns["southborough"].id
            counted = {
                "inspections": db.session.query(Inspection).count(),
                "corrective_actions": db.session.query(CorrectiveAction).count(),
            }
        print(f"build_database_s={time.perf_counter() - start:.1f}")
        assert counted == {"inspections": 5500 * INSPECTIONS_PER_PERMIT, "corrective_actions": 5500 * ACTIONS_PER_PERMIT}
        with app.app_context():
            start = time.perf_counter()
            permits, stored = refresh(select(Permit).where(Permit.jurisdiction_id == big_town))
            refresh_big = time.perf_counter() - start
            start = time.perf_counter()
            refresh(select(Permit).where(Permit.jurisdiction_id == small_town))
            refresh_small = time.perf_counter() - start
            assert permits == 5000
            permit_id, finding_id = db.session.execute(
                select(Finding.permit_id, Finding.id).join(Permit, Permit.id == Finding.permit_id)
                .where(Permit.jurisdiction_id == big_town, Permit.status == "active").limit(1)).one()
        print(f"obligations_refresh_5000_s={refresh_big:.1f}")
        print(f"obligations_refresh_500_s={refresh_small:.1f}")
        print(f"obligations_stored_5000={stored}")
        change_times = timed_change(app, permit_id, finding_id, runs * 3)
        print(f"change_commit_one_permit_median_ms={statistics.median(change_times):.1f}")
        big_times, big_queries, page = timed_dashboard(app, signed_in_client(app, big_email), runs)
        small_times, small_queries, _ = timed_dashboard(app, signed_in_client(app, small_email), runs)
        with app.app_context():
            board = town_board(select(Permit).where(Permit.jurisdiction_id == big_town), Filters(), utcnow())
            due_or_overdue = board.counts["due"] + board.counts["overdue"]
        print(f"dashboard_5000_permits_median_ms={statistics.median(big_times):.0f}")
        print(f"dashboard_5000_permits_min_ms={min(big_times):.0f}")
        print(f"dashboard_queries_5000={big_queries}")
        print(f"dashboard_500_permits_median_ms={statistics.median(small_times):.0f}")
        print(f"dashboard_queries_500={small_queries}")
        print(f"dashboard_5000_rows_due_or_overdue={due_or_overdue}")
        print(f"load_average_1min={os.getloadavg()[0]:.1f}")
        assert "What is due and what is late" in page and "Across 5000 permits" in page
        assert big_queries == small_queries


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
