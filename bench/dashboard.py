"""Server time and SQL queries of the dashboard, the permit page, My day, a commit and a sync pull, state-wide.

Builds, in a temporary SQLite database, `permits` permits (default 50,000) spread evenly over `towns` towns
(default 50: the built-in town profiles, and copies of Longmeadow's under other names for the rest), each
with its history (50 submitted inspections, 10 corrective actions, areas, structures, storms, stop-work
orders, and audit entries written as rows, unchained, for the sync pull to read), stores every permit's
open obligations as `flask dashboard refresh` does, then requests each page through the Flask test client.
One inspector ("the field inspector") is assigned to 200 permits of the first town and holds them on a
device. The same is built again at a small scale (`small` permits, default 500, in one town), and the
figures that must not grow with the record are printed at both.

Prints, one per line (N: the permits of the big build, T: those of one town, S: those of the small one):
  build_database_s                       time to build the big database
  obligations_refresh_N_s                working out and storing the open obligations of every permit, as
                                         `flask dashboard refresh` does (target <= 60)
  obligations_refresh_N_cpu_s            the CPU time of that refresh (SQLite works in the same process), which
                                         another program on the machine does not lengthen as it does the wall time
  obligations_stored_N                   open obligations stored for the N permits
  change_commit_one_permit_S_median_ms   a change to one permit (a corrective action added) committed, its
                                         obligations worked out again and stored in the same transaction, with
                                         S permits in the record
  change_commit_one_permit_N_median_ms   the same with N permits (target <= 50, and no more than with S)
  change_commit_statements_S             SQL statements of that commit, with S permits
  change_commit_statements_N             the same with N permits (the same number)
  dashboard_admin_N_permits_median_ms    median server time of the dashboard of the admin of all towns, over
                                         the N permits (target <= 300)
  dashboard_admin_N_permits_min_ms       fastest of those runs
  dashboard_admin_queries_N              SQL statements run by that request (target <= 10)
  dashboard_agent_T_permits_median_ms    the same for the agent of one town of T permits (target <= 300)
  dashboard_agent_queries_T              SQL statements run by that request (target <= 10)
  dashboard_agent_S_permits_median_ms    the agent's dashboard at the small scale
  dashboard_N_rows_due_or_overdue        obligations due or overdue over all N permits
  permit_page_S_median_ms                a permit's page for its town's agent, with S permits in the record
  permit_page_N_median_ms                the same with N permits (no slower than with S)
  permit_page_queries_S                  SQL statements of that request, with S permits
  permit_page_queries_N                  the same with N permits
  my_day_S_median_ms                     My day of the field inspector (200 permits), with S permits in the record
  my_day_N_median_ms                     the same with N permits (no slower than with S)
  my_day_queries_S / my_day_queries_N    SQL statements of that request
  sync_pull_200_of_S_median_ms           the field inspector's device (a token) pulling every change to its 200
                                         permits since its last pull, page by page, with S permits in the record
  sync_pull_200_of_N_median_ms           the same with N permits (no slower than with S)
  sync_pull_queries_S / sync_pull_queries_N  SQL statements of that pull
  sync_pull_changes                      changes the pull brings (the same at both scales)
  load_average_1min                      the machine's load when done (the figures are wall times)

Run from the repository root: python -m bench.dashboard [--runs 7] [--permits 50000] [--towns 50] [--small 500]
(a quick run: --permits 2000 --towns 5); --keep FOLDER keeps the two databases, to look into a query plan.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import re
import statistics
import tempfile
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import event, func, insert, select

from inspect_app import create_app
from inspect_app.accounts.models import User
from inspect_app.audit.models import AuditEntry
from inspect_app.pages.dashboard.services import Filters, town_board
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from inspect_app.profiles import PROFILE_FOLDER
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
from sync.services import create_device

PASSWORD = "bench password 1"
INSPECTIONS_PER_PERMIT = 50
ACTIONS_PER_PERMIT = 10
STATUSES = ["active"] * 14 + ["issued", "stop_work", "final_submissions", "completed", "active", "active"]
# The permits the field inspector holds on a device, and the audit entries of each permit before and after
# the device's last pull (a sync pull reads audit entries; the bench writes them as rows, unchained).
HELD = 200
ENTRIES_BEFORE, ENTRIES_SINCE = 4, 2


def town_profiles(folder: Path, towns: int) -> Path | None:
    """A PROFILE_DIR with copies of Longmeadow's profile as further towns, up to `towns` in all."""
    built_in = len(list(PROFILE_FOLDER.glob("*.toml")))
    if towns <= built_in:
        return None
    folder.mkdir()
    text = (PROFILE_FOLDER / "longmeadow.toml").read_text()
    for n in range(built_in, towns):
        copy = re.sub(r'^key = "longmeadow"$', f'key = "town{n:02d}"', text, count=1, flags=re.MULTILINE)
        copy = re.sub(r'^town = "Longmeadow"$', f'town = "Town {n:02d}"', copy, count=1, flags=re.MULTILINE)
        (folder / f"town{n:02d}.toml").write_text(copy)
    return folder


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


def audit_entries(permit_ids: list[str], count: int, at: dt.datetime, seq: int) -> int:
    """`count` audit entries on each permit, interleaved (the way a busy record commits); returns the last seq."""
    rows = []
    for _ in range(count):
        for pid in permit_ids:
            seq += 1
            rows.append(dict(seq=seq, commit_seq=seq, at=at, action="permit.edit", entity="permits", entity_id=pid,
                             permit_id=pid, before={"status": "issued"}, after={"status": "active"}))
    for start in range(0, len(rows), 20_000):
        db.session.execute(insert(AuditEntry), rows[start:start + 20_000])
    db.session.commit()
    return seq


@contextmanager
def counted(app):
    """The SQL statements run inside the block, as a list filled as they run."""
    statements: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", count)


def timed_get(app, client, url: str, runs: int, headers: dict | None = None) -> tuple[list[float], int, str]:
    """Server times (ms) of `runs` requests of `url`, the SQL statements of the last one, and its body."""
    times = []
    with counted(app) as statements:
        for _ in range(runs):
            statements.clear()
            start = time.perf_counter()
            response = client.get(url, headers=headers)
            times.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200, (url, response.status_code)
    return times, len(statements), response.text


def timed_pull(app, client, token: str, cursor: int, runs: int) -> tuple[list[float], int, int]:
    """Times (ms) of pulling every change since `cursor`, page by page, as `sync.client.SyncClient.pull` does;
    the SQL statements of the last pull and the changes it brought."""
    times, headers = [], {"Authorization": f"Bearer {token}"}
    with counted(app) as statements:
        for _ in range(runs):
            statements.clear()
            start, at, changes = time.perf_counter(), cursor, 0
            while True:
                response = client.get(f"/sync/changes?cursor={at}", headers=headers)
                assert response.status_code == 200, response.status_code
                page = response.get_json()
                changes += len(page["changes"])
                at = page["cursor"]
                if not page["more"]:
                    break
            times.append((time.perf_counter() - start) * 1000)
    return times, len(statements), changes


def signed_in_client(app, email: str):
    client = app.test_client()
    response = client.post("/login", data={"email": email, "password": PASSWORD})
    assert response.status_code == 303, response.status_code
    return client


def refresh(scope=None) -> tuple[int, int]:
    """As `flask dashboard refresh` does, for the permits of `scope` (default: all): (permits, obligations stored)."""
    now, permits, stored = utcnow(), 0, 0
    for batch in obligations.batches(scope):
        stored += obligations.refresh_permits(batch, now, skip_busy=True)
        db.session.commit()
        permits += len(batch)
    return permits, stored


def timed_change(app, permit_id: str, finding_id: str, runs: int) -> tuple[list[float], int]:
    """Times (ms) of committing one new corrective action on one permit, obligations recomputed included;
    and the SQL statements of the last commit."""
    times = []
    with counted(app) as statements, app.app_context():
        for _ in range(runs):
            found = utcnow()
            statements.clear()
            start = time.perf_counter()
            db.session.add(CorrectiveAction(finding_id=finding_id, permit_id=permit_id, kind="routine_maintenance",
                                            description="Re-stake", owner_name="Contractor", discovered_at=found,
                                            due_at=found + dt.timedelta(days=1), status="open", revision=1))
            db.session.commit()
            times.append((time.perf_counter() - start) * 1000)
    return times, len(statements)


@dataclass
class Built:
    """A record built for the bench: its app, and who and what the figures are measured with."""

    app: object
    admin_email: str
    agent_email: str  # the first town's agent
    inspector_email: str  # the field inspector, assigned to HELD permits of the first town
    token: str  # the field inspector's device token
    cursor: int  # the device's last pull
    town_permits: int
    permit_id: str  # an active permit of the first town, held by the field inspector
    finding_id: str


def build_record(folder: Path, permits: int, towns: int, now: dt.datetime) -> Built:
    """`permits` permits over `towns` towns in a new SQLite database in `folder`, obligations not yet stored."""
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder / 'bench.sqlite3'}",
                      "BLOB_ROOT": str(folder / "blobs"), "WTF_CSRF_ENABLED": False,
                      "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
                      "PROFILE_DIR": town_profiles(folder / "towns", towns)})
    rng = random.Random(5)
    with app.app_context():
        db.create_all()
        all_towns = ensure_jurisdictions()
        # The built-in towns first, so that a quick run (few towns) has Longmeadow and Southborough.
        chosen = sorted(all_towns, key=lambda t: (t.profile_key.startswith("town"), t.name))[:towns]
        per_town = permits // len(chosen)
        agents = [build(town, per_town, now, rng) for town in chosen]
        admin = User(id=new_id(), email="admin@state.example.org", name="State admin", role="admin",
                     jurisdiction_id=None, password_hash=agents[0].password_hash)
        field = User(id=new_id(), email="field@example.org", name="Field inspector", role="inspector",
                     password_hash=agents[0].password_hash)
        db.session.add_all([admin, field])
        first = chosen[0].id
        held = list(db.session.scalars(select(Permit.id).where(Permit.jurisdiction_id == first)
                                       .order_by(Permit.number).limit(HELD)))
        db.session.execute(insert(PermitAssignment), [dict(id=new_id(), permit_id=pid, user_id=field.id,
                                                           capacity="design_engineer", assigned_at=now) for pid in held])
        _device, token = create_device(None, field, "bench tablet")
        db.session.commit()
        every = list(db.session.scalars(select(Permit.id).order_by(Permit.id)))
        start = db.session.scalar(select(func.max(AuditEntry.seq))) or 0
        cursor = audit_entries(every, ENTRIES_BEFORE, now - dt.timedelta(days=1), start)
        audit_entries(every, ENTRIES_SINCE, now, cursor)
        permit_id, finding_id = db.session.execute(
            select(Finding.permit_id, Finding.id).join(Permit, Permit.id == Finding.permit_id)
            .where(Permit.id.in_(held), Permit.status == "active").order_by(Permit.number).limit(1)).one()
        assert db.session.scalar(select(func.count()).select_from(Inspection)) == per_town * len(chosen) * INSPECTIONS_PER_PERMIT
        return Built(app, admin.email, agents[0].email, field.email, token, cursor, per_town, permit_id, finding_id)


def measure(built: Built, runs: int, *, dashboards: bool = True) -> dict[str, float]:
    """The figures of one record: a commit, the permit page, My day, a sync pull (and the dashboards)."""
    app, out = built.app, {}
    change_times, out["change_statements"] = timed_change(app, built.permit_id, built.finding_id, runs * 3)
    out["change_ms"] = statistics.median(change_times)
    agent = signed_in_client(app, built.agent_email)
    times, out["permit_page_queries"], _ = timed_get(app, agent, f"/permits/{built.permit_id}", runs)
    out["permit_page_ms"] = statistics.median(times)
    inspector = signed_in_client(app, built.inspector_email)
    times, out["my_day_queries"], _ = timed_get(app, inspector, "/dashboard/my-day", runs)
    out["my_day_ms"] = statistics.median(times)
    times, out["pull_queries"], out["pull_changes"] = timed_pull(app, app.test_client(), built.token, built.cursor, runs)
    out["pull_ms"] = statistics.median(times)
    assert out["pull_changes"] == HELD * ENTRIES_SINCE, out["pull_changes"]
    times, out["agent_queries"], page = timed_get(app, agent, "/dashboard/", runs)
    out["agent_ms"] = statistics.median(times)
    assert "What is due and what is late" in page and f"Across {built.town_permits} permits" in page
    if dashboards:
        times, out["admin_queries"], page = timed_get(app, signed_in_client(app, built.admin_email), "/dashboard/", runs)
        out["admin_ms"], out["admin_min_ms"] = statistics.median(times), min(times)
        with app.app_context():
            board = town_board(select(Permit), Filters(), utcnow())
            out["due_or_overdue"] = board.counts["due"] + board.counts["overdue"]
            out["admin_permits"] = board.permits
        assert f"Across {out['admin_permits']} permits" in page
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, default=7, help="requests timed per figure")
    parser.add_argument("--runs", dest="runs_option", type=int, help="the same, as an option")
    parser.add_argument("--permits", type=int, default=50_000, help="permits of the big record (default 50,000)")
    parser.add_argument("--towns", type=int, default=50, help="towns they are spread over (default 50)")
    parser.add_argument("--small", type=int, default=500, help="permits of the small record (default 500)")
    parser.add_argument("--keep", type=Path, help="build the records in this (new) folder and keep them there")
    args = parser.parse_args()
    if min(args.small, args.permits // max(1, args.towns)) < HELD:
        parser.error(f"the field inspector holds {HELD} permits of one town: --small and --permits/--towns "
                     f"must be at least {HELD}")
    runs, now = args.runs_option or args.runs, utcnow()
    if args.keep:
        args.keep.mkdir(parents=True)
    with (nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory()) as folder:
        (Path(folder) / "small").mkdir()
        small = build_record(Path(folder) / "small", args.small, 1, now)
        with small.app.app_context():
            refresh()
        at_small = measure(small, runs, dashboards=False)

        (Path(folder) / "big").mkdir()
        start = time.perf_counter()
        big = build_record(Path(folder) / "big", args.permits, args.towns, now)
        print(f"build_database_s={time.perf_counter() - start:.1f}")
        with big.app.app_context():
            start, cpu = time.perf_counter(), time.process_time()
            permits, stored = refresh()
            refreshed, refreshed_cpu = time.perf_counter() - start, time.process_time() - cpu
        n, s, t = permits, args.small, big.town_permits
        print(f"obligations_refresh_{n}_s={refreshed:.1f}")
        print(f"obligations_refresh_{n}_cpu_s={refreshed_cpu:.1f}")
        print(f"obligations_stored_{n}={stored}")
        at_big = measure(big, runs)
        print(f"change_commit_one_permit_{s}_median_ms={at_small['change_ms']:.1f}")
        print(f"change_commit_one_permit_{n}_median_ms={at_big['change_ms']:.1f}")
        print(f"change_commit_statements_{s}={at_small['change_statements']}")
        print(f"change_commit_statements_{n}={at_big['change_statements']}")
        print(f"dashboard_admin_{n}_permits_median_ms={at_big['admin_ms']:.0f}")
        print(f"dashboard_admin_{n}_permits_min_ms={at_big['admin_min_ms']:.0f}")
        print(f"dashboard_admin_queries_{n}={at_big['admin_queries']}")
        print(f"dashboard_agent_{t}_permits_median_ms={at_big['agent_ms']:.0f}")
        print(f"dashboard_agent_queries_{t}={at_big['agent_queries']}")
        print(f"dashboard_agent_{s}_permits_median_ms={at_small['agent_ms']:.0f}")
        print(f"dashboard_{n}_rows_due_or_overdue={at_big['due_or_overdue']}")
        for name, label in (("permit_page", "permit_page"), ("my_day", "my_day")):
            print(f"{label}_{s}_median_ms={at_small[name + '_ms']:.1f}")
            print(f"{label}_{n}_median_ms={at_big[name + '_ms']:.1f}")
            print(f"{label}_queries_{s}={at_small[name + '_queries']}")
            print(f"{label}_queries_{n}={at_big[name + '_queries']}")
        print(f"sync_pull_{HELD}_of_{s}_median_ms={at_small['pull_ms']:.1f}")
        print(f"sync_pull_{HELD}_of_{n}_median_ms={at_big['pull_ms']:.1f}")
        print(f"sync_pull_queries_{s}={at_small['pull_queries']}")
        print(f"sync_pull_queries_{n}={at_big['pull_queries']}")
        print(f"sync_pull_changes={at_big['pull_changes']}")
        print(f"load_average_1min={os.getloadavg()[0]:.1f}")
        assert at_big["admin_permits"] == permits


if __name__ == "__main__":
    main()
