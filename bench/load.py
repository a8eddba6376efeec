"""The app under load as a town runs it: gunicorn and PostgreSQL, 50 people at once, driven by locust.

Starts, all on this machine and all stopped at the end (also on Ctrl-C or an error):
- a PostgreSQL server of its own (a temporary folder, a Unix socket only, fsync on, as in production),
  migrated with `flask db upgrade`;
- a town loaded into it: 300 permits in two towns, 20 inspectors, 3 agents, a year of weekly reports
  with checklist answers, findings, corrective actions and photos (real JPEGs and renditions in a
  temporary BLOB_ROOT), the dashboard's stored obligations, what the hourly storm sweep stores (each
  permit's rain station, the station list around the town, the last days' hours), the 60 days of rain
  the permit pages' charts opened before have stored, and a sync device per inspector;
- the tests' fake meteostat on 127.0.0.1, so starting a report and the rainfall chart look weather up
  over HTTP as they do in production;
- gunicorn on 127.0.0.1 (4 workers x 4 threads);
- locust, headless, in a process of its own (bench/locustfile.py): 38 inspectors opening permit pages
  (and the rainfall chart the page then loads), reading reports, starting reports and saving drafts;
  6 agent sessions reading the dashboard, permit pages and reports; 6 tablets pushing area status
  changes and pulling changes; 0.5-1.5 s think time.

Prints `name=value` lines:
  load_users, load_seconds      users and how long they ran
  load_requests, load_rps       requests answered, and per second
  load_p50_ms, load_p95_ms, load_p99_ms   over every request but sign-in (target p95 <= 250)
  load_errors                   failed requests, sign-in included (target 0); what they met, by kind, goes
                                to stderr
  load_<page>_p50_ms / _p95_ms / _p99_ms / _requests   the same per page
  load_login_p95_ms             signing in (once per user, at the start; a password hash is slow on purpose)
  load_worker_rss_mb            the largest gunicorn worker's resident set after the run (weather looked up)
  worker_rss_mb                 a fresh gunicorn worker after serving 100 pages (permit pages, reports, the
                                dashboard) but no weather lookup (target <= 90)
  load_app_cpu_ms_per_request   CPU time of the gunicorn workers and their weather fetchers per request
                                answered (fairer than wall time when other work shares the machine)
  load_db_cpu_ms_per_request    the same for the PostgreSQL server's processes
  load_weather_fetcher_cpu_ms_per_request   the part of the app's CPU that its weather fetchers spent (the
                                processes the workers start to run meteostat; one retired meanwhile is not in it)
  load_generator_cpu_ms_per_request   the same for locust (it shares the machine's cores with the app)
  load_signed_in_app_cpu_ms_per_request, load_signed_in_db_cpu_ms_per_request   the same two once every
                                user has signed in (sign-in hashes a password, slowly on purpose), over
                                load_signed_in_seconds_measured seconds: the pages' own cost
  start_inspection_statements   the SQL statements of one Start of an inspection, counted through the test
                                client after the run (target <= 20)
  load_<kind>_alone_cpu_ms, load_<kind>_statements   each kind of request alone, after the run, 60 times
                                through the test client in this process: its CPU and SQL statements per
                                request, with no other request, no HTTP server and no sign-in in it
  load_app_cpu_ms_per_request_alone   those, weighted by the run's count of each kind: what the pages
                                themselves cost; the rest of load_app_cpu_ms_per_request is the HTTP server,
                                sign-in and requests sharing the cores
  host_reference_ms_before, host_reference_ms_after   the host's speed just before and after the load: the
                                CPU time of a fixed piece of Python work with no app in it (a Jinja table,
                                JSON, a sort), median of 101 rounds: compare the app's CPU figures across
                                hosts, or runs hours apart, with it beside them
  load_cpu_steal_pct            of the machine's CPU time during the load, the part its host ran something
                                else while this machine's cores were ready (a virtual machine's noisy neighbours)
  load_average_1min             the machine's load when done (the load generator runs on this machine too)
With --soak (10 minutes instead of 1):
  soak_seconds, soak_errors (target 0), soak_p95_first_minute_ms, soak_p95_last_minute_ms,
  soak_rss_first_minute_mb, soak_rss_end_mb (the workers' resident sets summed), soak_rss_growth_pct
  (target <= 10)

Run from the repository root: python -m bench.load [--soak] [--users N] [--seconds S] [--workers N --threads N] [--statements N]
"""
from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from decimal import Decimal
from http.cookiejar import CookieJar
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the fake meteostat lives with the tests

from PIL import Image  # noqa: E402
from sqlalchemy import create_engine, insert, select, text  # noqa: E402

from bench.dashboard import counted  # noqa: E402

from inspect_app import create_app, freeze_startup_objects  # noqa: E402
from inspect_app.accounts.services import create_user  # noqa: E402
from inspect_app.blobs.store import DiskStore  # noqa: E402
from inspect_app.schedule import obligations  # noqa: E402
from inspect_app.extensions import db  # noqa: E402
from inspect_app.inspections.models import CorrectiveAction, Finding  # noqa: E402
from inspect_app.inspections.models import ChecklistAnswer, Inspection  # noqa: E402
from inspect_app.permits import services as permits  # noqa: E402
from inspect_app.permits.models import Permit, PermitAssignment, StormwaterStructure  # noqa: E402
from inspect_app.blobs.models import Blob  # noqa: E402
from inspect_app.photos.models import Photo  # noqa: E402
from inspect_app.photos.processing import make_renditions  # noqa: E402
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea  # noqa: E402
from inspect_app.types import new_id, utcnow  # noqa: E402
from inspect_app.weather import services as weather, source  # noqa: E402
from sync.services import create_device  # noqa: E402
from weather_fake import FakeMeteostat, hours  # noqa: E402

PASSWORD = "load bench password"
PERMITS = {"longmeadow": 240, "southborough": 60}
INSPECTORS = 20
AGENTS = {"longmeadow": 2, "southborough": 1}
PHOTOS_PER_REPORT = 2
WORKERS, THREADS = 4, 4
# As docs/deploy/inspect-app.service runs gunicorn. With gunicorn's default 2 s keep-alive, a user whose
# next request comes about 2 s after the last (think time, or a load generator starved of CPU) may send it
# on a connection gunicorn is closing, and get no answer (RemoteDisconnected, or the connection reset).
# --preload: the master makes the app and forks the workers from it (wsgi.py), so they share its memory.
PRODUCTION_FLAGS = ("--preload", "--keep-alive", "75", "--timeout", "60")
# And with the unit's Environment=: one malloc arena for the worker's threads, no docstrings or asserts
# loaded (the unit says why).
PRODUCTION_ENV = {"MALLOC_ARENA_MAX": "1", "PYTHONOPTIMIZE": "2"}
STATIONS = {"longmeadow": ("72508", 42.05, -72.58), "southborough": ("74490", 42.30, -71.52)}
WEATHER_SOURCES = "temperature=isd_lite; conditions=isd_lite; wind=isd_lite; precipitation=isd_lite"


# --- PostgreSQL -----------------------------------------------------------------------------------

@contextmanager
def postgres(folder: Path, statements: bool = False):
    """A PostgreSQL server on a Unix socket in `folder`, fsync on; yields its SQLAlchemy URL. With
    `statements`, pg_stat_statements is loaded (`top_statements` reads it)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    bindir = found[-1].parent if found else Path(shutil.which("initdb") or "initdb").parent
    run_as = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
    folder.chmod(0o755)
    if os.getuid() == 0:
        shutil.chown(folder, "postgres")
    data = folder / "data"
    subprocess.run([*run_as, bindir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                    "--locale=C.UTF-8"], check=True, capture_output=True)
    # Production settings where they matter to speed: fsync and synchronous commit stay on (the default).
    options = f"-c listen_addresses='' -c unix_socket_directories='{folder}' -c max_connections=200"
    if statements:
        options += " -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on"
    subprocess.run([*run_as, bindir / "pg_ctl", "-D", data, "-l", folder / "server.log", "-w", "-o", options,
                    "start"], check=True, capture_output=True)
    try:
        subprocess.run([*run_as, bindir / "createdb", "-h", folder, "-U", "postgres", "inspect"], check=True)
        yield f"postgresql+psycopg://postgres@/inspect?host={folder}"
    finally:
        subprocess.run([*run_as, bindir / "pg_ctl", "-D", data, "-m", "immediate", "stop"], capture_output=True)


# --- the town -------------------------------------------------------------------------------------

def photo_pool(count: int, rng: random.Random) -> list[bytes]:
    """Site-photo-like JPEGs (gradients under noise) of 1600x1200, as a tablet's camera app shrinks them."""
    pool = []
    for n in range(count):
        gradient = Image.linear_gradient("L").resize((1600, 1200))
        bands = [Image.blend(gradient.rotate(90 * ((n + b) % 4)).resize((1600, 1200)),
                             Image.effect_noise((1600, 1200), 30 + 10 * b), 0.3) for b in range(3)]
        out = io.BytesIO()
        Image.merge("RGB", bands).save(out, "JPEG", quality=rng.choice((80, 85, 90)))
        pool.append(out.getvalue())
    return pool


def settle(url: str) -> None:
    """What autovacuum and the checkpointer have long done in a town that is up and running, done before the
    run rather than in it: the tables just loaded vacuumed and analyzed (so the planner knows their sizes),
    and their pages written out. (On a fresh load, both ran during the measured minute.)"""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.execute(text("VACUUM (ANALYZE)"))
            connection.execute(text("CHECKPOINT"))
    finally:
        engine.dispose()


def build_town(url: str, blob_root: Path, seed: int = 18, weather_endpoint: str | None = None) -> dict:
    """Load the town into the migrated database; returns what the locustfile needs to know.

    With `weather_endpoint` (the fake meteostat), the storm sweep runs once, as its hourly timer has in a
    town that is up and running (docs/deploy.md): each permit's rain station, the station list around the
    town and the last days' hours are stored, as they would be when people start work.
    """
    rng, now = random.Random(seed), utcnow()
    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "BLOB_ROOT": str(blob_root), "SECRET_KEY": "load-bench",
                      "WEATHER_ENDPOINT": weather_endpoint})
    store = DiskStore(blob_root)
    with app.app_context():
        towns = {t.profile_key: t for t in permits.ensure_jurisdictions()}
        inspectors = [create_user(f"inspector{i:02d}@example.org", f"Inspector {i:02d}", "inspector", PASSWORD,
                                  pe_number=f"4{i:04d}", certification="CPESC") for i in range(INSPECTORS)]
        agents = {key: [create_user(f"agent{i}@{key}.example.org", f"{towns[key].name} agent {i}", "agent", PASSWORD,
                                    jurisdiction=towns[key]) for i in range(n)] for key, n in AGENTS.items()}
        devices = [(user, create_device(None, user, "field tablet")[1]) for user in inspectors]
        db.session.flush()

        photos = []
        for original in photo_pool(8, rng):
            display, thumb, _print = make_renditions(original)
            shas = [store.put_bytes(data) for data in (original, display, thumb)]
            for sha, data in zip(shas, (original, display, thumb), strict=True):
                db.session.add(Blob(sha256=sha, size=len(data), content_type="image/jpeg"))
            photos.append(shas)
        db.session.flush()

        rows: dict[type, list[dict]] = {model: [] for model in (
            Permit, PermitAssignment, DisturbedArea, AreaStatusEvent, StormwaterStructure, Inspection,
            ChecklistAnswer, Finding, CorrectiveAction, Photo)}
        held = {u.id: {"email": u.email, "permits": [], "reports": [], "areas": []} for u in inspectors}
        town_of = {key: {"permits": [], "reports": []} for key in towns}
        n = 0
        for key, count in PERMITS.items():
            town = towns[key]
            items = [i.key for i in app.extensions["profiles"][key].inspection_type("erosion_control").checklist
                     if i.per == "site"]
            for _ in range(count):
                n += 1
                pid, inspector = new_id(), inspectors[n % INSPECTORS]
                weeks = rng.randint(4, 52)  # construction began up to a year ago
                started = now - dt.timedelta(weeks=weeks, days=rng.randint(0, 6))
                latitude, longitude = STATIONS[key][1] + rng.random() / 40, STATIONS[key][2] + rng.random() / 40
                rows[Permit].append(dict(
                    id=pid, jurisdiction_id=town.id, number=f"{key[:2].upper()}-SWP-{n:04d}",
                    site_address=f"{n} Elm Street, {town.name}, MA", latitude=latitude, longitude=longitude, owner_name=f"Owner {n} LLC",
                    applicant_name=f"Builder {n} Inc.", disturbed_acres=Decimal("1.5"), is_redevelopment=False,
                    sensitive_waters=rng.random() < 0.1, cgp_schedule=rng.choice(("every_7_days", "every_14_days_and_storm")),
                    issued_on=(started - dt.timedelta(days=30)).date(), construction_started_on=started.date(),
                    status="active", revision=1, created_at=now, updated_at=now))
                rows[PermitAssignment].append(dict(id=new_id(), permit_id=pid, user_id=inspector.id,
                                                   capacity="design_engineer", assigned_at=now))
                held[inspector.id]["permits"].append(pid)
                town_of[key]["permits"].append(pid)
                for a in range(3):
                    area = new_id()
                    rows[DisturbedArea].append(dict(id=area, permit_id=pid, name=f"Area {a + 1}", acres=Decimal("0.5"),
                                                    status="disturbed", status_since=started, revision=1,
                                                    has_conflict=False))
                    rows[AreaStatusEvent].append(dict(id=new_id(), area_id=area, status="disturbed", at=started,
                                                      recorded_at=started))
                    held[inspector.id]["areas"].append(area)
                for s in range(2):
                    rows[StormwaterStructure].append(dict(id=new_id(), permit_id=pid, name=f"Catch basin CB-{s + 1}",
                                                          kind="catch_basin", is_underground=True, revision=1))
                for week in range(weeks):
                    iid, at = new_id(), started + dt.timedelta(weeks=week, hours=rng.randint(1, 8))
                    rows[Inspection].append(dict(
                        id=iid, permit_id=pid, type="erosion_control", status="submitted", performed_at=at,
                        latitude=latitude, longitude=longitude, location_source="permit", inspector_id=inspector.id,
                        inspector_name=inspector.name, inspector_credentials=inspector.credentials,
                        weather_status="complete", temperature_c=12.0, conditions="Overcast", precip_24h_mm=2.0,
                        # As the app stores a lookup's result: the report page names the sources.
                        station_id=STATIONS[key][0], station_name=f"{key.title()} station", station_distance_m=5600.0,
                        weather_sources=WEATHER_SOURCES, weather_attribution="Meteostat (CC BY 4.0)",
                        evaluation="compliant", notes="Perimeter controls in place.", details={"controls": []},
                        notice_given=False, under_stop_work=False, signer_name=inspector.name,
                        signer_credentials=inspector.credentials, signed_at=at, submitted_at=at, created_at=at,
                        created_by_id=inspector.id))
                    held[inspector.id]["reports"].append(iid)
                    town_of[key]["reports"].append(iid)
                    rows[ChecklistAnswer].extend(dict(id=new_id(), inspection_id=iid, item_key=item, subject_id="",
                                                      answer=rng.choice(("yes", "yes", "yes", "no", "na")))
                                                 for item in items)
                    finding = None
                    if rng.random() < 0.2:
                        finding = new_id()
                        rows[Finding].append(dict(id=finding, inspection_id=iid, permit_id=pid, severity="minor",
                                                  description="Silt fence undermined at the outlet.", is_violation=False,
                                                  is_automatic=False, status="open", created_at=at))
                        done = at + dt.timedelta(days=rng.randint(1, 6))
                        rows[CorrectiveAction].append(dict(
                            id=new_id(), finding_id=finding, permit_id=pid, kind="routine_maintenance",
                            description="Re-trench the silt fence.", owner_name="Site contractor", discovered_at=at,
                            due_at=at + dt.timedelta(days=7), status="completed" if done < now else "open",
                            completed_at=done if done < now else None, revision=1))
                    for p in range(PHOTOS_PER_REPORT):
                        original, display, thumb = rng.choice(photos)
                        rows[Photo].append(dict(
                            id=new_id(), permit_id=pid, original_sha256=original, display_sha256=display,
                            thumb_sha256=thumb, width=1600, height=1200, taken_at=at, caption=f"View {p + 1}",
                            inspection_id=iid, finding_id=finding if p == 0 else None, uploaded_by_id=inspector.id,
                            created_at=at))
        for model, batch in rows.items():
            for start in range(0, len(batch), 5000):
                db.session.execute(insert(model), batch[start:start + 5000])
        db.session.commit()
        for batch in obligations.batches():  # what `flask dashboard refresh` stores
            obligations.refresh_permits(batch, utcnow())
            db.session.commit()
        if weather_endpoint is not None:  # what `flask compliance sweep --days 3` stores
            source.start_fetcher()
            weather.sweep_storms(3)
            db.session.commit()
            # And what the rainfall charts opened on the days before stored: each station's 60 days. (The
            # first chart of a station in a new town reads them from meteostat, once; in the first minute
            # of a run, that was most of the weather fetchers' CPU, which a town up and running never spends.)
            for key in PERMITS:
                weather.permit_rainfall(db.session.get(Permit, town_of[key]["permits"][0]))
                db.session.commit()
        counts = {model.__tablename__: len(batch) for model, batch in rows.items()}
        assert db.session.scalar(select(db.func.count()).select_from(Inspection)) == counts["inspections"]
        town = {
            "password": PASSWORD,
            "inspectors": [held[u.id] for u in inspectors],
            "agents": [{"email": a.email, **town_of[key]} for key, made in agents.items() for a in made],
            # Each tablet changes the areas of its own inspector's permits only: a conflict would be a bug.
            "devices": [{"token": token, "areas": held[user.id]["areas"]} for user, token in devices],
            "counts": counts,
        }
        db.session.remove()
        db.engine.dispose()
    settle(url)
    return town


# --- servers --------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


@contextmanager
def gunicorn(env: dict[str, str], workers: int, threads: int):
    """gunicorn serving wsgi:app on 127.0.0.1; yields (base url, master process)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--workers", str(workers), "--threads", str(threads),
         "--bind", f"127.0.0.1:{port}", *PRODUCTION_FLAGS, "--graceful-timeout", "5", "--log-level", "warning",
         "wsgi:app"],
        cwd=ROOT, env=env | PRODUCTION_ENV, start_new_session=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz")
        yield f"http://127.0.0.1:{port}", server
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()


def worker_rss_mb(master: subprocess.Popen) -> list[float]:
    """Resident set (MB) of each worker of a gunicorn master, from /proc."""
    sizes = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(master.pid) and "VmRSS" in fields:
            sizes.append(int(fields["VmRSS"].split()[0]) / 1024)
    return sizes


def tree_cpu_s(root_pid: int, depth: int = 0) -> float:
    """CPU time (user + system, seconds) of a process and every process under it, from /proc: those alive now,
    and those ended whose parent has waited for them (in their parent's time, as /proc counts them); with
    `depth`, of those at least that many levels under it alone (2 under gunicorn's master: the weather fetchers
    its workers started)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        # Its own time and its ended children's it has waited for (cutime, cstime): a PostgreSQL backend whose
        # connection was closed, or a fetcher retired, is counted in its parent once gone.
        parent[pid], cpu[pid] = int(fields[1]), sum(int(field) for field in fields[11:15]) / tick
    def under(pid: int) -> bool:
        levels = 0
        while pid > 1:
            if pid == root_pid:
                return levels >= depth
            pid, levels = parent.get(pid, 1), levels + 1
        return False
    return sum(seconds for pid, seconds in cpu.items() if under(pid))


# A fixed piece of Python work with no part of the app in it, shaped like a page's: a Jinja table with
# autoescaping, JSON both ways, a sort and string formatting. Its CPU time is the host's speed at that moment
# (its clock, what shares its cores and caches), so runs on different hosts, or an hour apart on one, can be told
# apart from changes to the app: an app's CPU per request that moved with it moved with the host.
_REFERENCE_ROWS = [{"name": f"Area <{i}> & north slope", "when": f"2026-{i % 12 + 1:02d}-{i % 28 + 1:02d}", "n": i,
                    "status": ("disturbed", "activity ceased", "stabilized")[i % 3]} for i in range(300)]


def host_reference_ms(rounds: int = 101) -> float:
    """The median CPU time (ms, this thread's) of one round of the fixed reference work."""
    from jinja2 import Environment

    template = Environment(autoescape=True).from_string(
        "<table>{% for row in rows %}<tr><td>{{ row.name }}</td><td>{{ row.when }}</td>"
        "<td>{{ row.status|title }}</td><td>{{ '%05d'|format(row.n) }}</td></tr>{% endfor %}</table>")
    times = []
    for _ in range(rounds):
        began = time.thread_time()
        html = template.render(rows=_REFERENCE_ROWS)
        rows = json.loads(json.dumps(_REFERENCE_ROWS))
        rows.sort(key=lambda row: (row["status"], row["when"], -row["n"]))
        summary = Counter(row["status"] for row in rows)
        text = ";".join(f"{row['name']}={row['n']:x}" for row in rows) + repr(summary) + html[:10]
        if len(text) < 10:  # never: keeps the work from being skipped by a later optimizer
            raise AssertionError
        times.append(time.thread_time() - began)
    return sorted(times)[len(times) // 2] * 1000


def cpu_steal_ticks() -> tuple[int, int]:
    """(stolen, all) CPU ticks of this machine so far, from /proc/stat: time a virtual machine's cores were
    ready to run but its host ran something else."""
    fields = [int(field) for field in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def children_cpu_s() -> float:
    """CPU time (user + system, seconds) of this process's children that have ended and been waited for:
    across `run_locust`, the load generator's alone (the servers end later)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def fake_weather() -> FakeMeteostat:
    """Meteostat on 127.0.0.1 with a station near each town and 400 days of hourly data."""
    fake = FakeMeteostat()
    now = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
    for key, (station, lat, lon) in STATIONS.items():
        fake.add_station(station, f"{key.title()} station", lat + 0.05, lon)
        fake.publish_hourly(station, hours(now - dt.timedelta(days=400), 401 * 24, temp=12.0, prcp=0.2,
                                           wspd=10.0, wdir=200, coco=7))
    fake.start()
    return fake


# --- the runs -------------------------------------------------------------------------------------

def run_locust(url: str, town_file: Path, record: Path, users: int, seconds: int,
               on_the_way: list[tuple[float, Callable[[], object]]] | None = None) -> list[tuple[float, str, float, bool, str | None]]:
    """locust, headless, for `seconds`; returns every request it made. Calls `on_the_way` at their times."""
    env = os.environ | {"LOAD_TOWN": str(town_file), "LOAD_RECORD": str(record)}
    spawn_rate = max(1, users // 10)  # everyone is in within the first 10 s
    crowd = subprocess.Popen(
        [sys.executable, "-m", "locust", "-f", str(ROOT / "bench" / "locustfile.py"), "--headless", "--host", url,
         "--users", str(users), "--spawn-rate", str(spawn_rate), "--run-time", f"{seconds}s", "--stop-timeout", "30",
         "--only-summary", "--loglevel", "WARNING", "--exit-code-on-error", "0"],
        cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    began = time.monotonic()
    try:
        for at, call in sorted(on_the_way or [], key=lambda pair: pair[0]):
            time.sleep(max(0.0, at - (time.monotonic() - began)))
            call()
        crowd.wait(seconds + 180)
    finally:
        if crowd.poll() is None:
            os.killpg(crowd.pid, signal.SIGKILL)
            crowd.wait()
    return [tuple(r) for r in json.loads(record.read_text())]


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile: the smallest value with at least q % of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)] if ordered else float("nan")


def report(records: list, seconds: float, users: int) -> None:
    """Print the figures of a run: overall (sign-in apart) and per page."""
    work = [r for r in records if r[1] != "login"]
    times = [r[2] for r in work]
    print(f"load_users={users}")
    print(f"load_seconds={seconds:.0f}")
    print(f"load_requests={len(work)}")
    print(f"load_rps={len(work) / seconds:.1f}")
    for q in (50, 95, 99):
        print(f"load_p{q}_ms={percentile(times, q):.0f}")
    print(f"load_errors={sum(r[3] for r in records)}")
    for name in sorted({r[1] for r in records}):
        mine = [r[2] for r in records if r[1] == name]
        slug = name.replace(" ", "_").replace("(", "").replace(")", "")
        print(f"load_{slug}_requests={len(mine)}")
        for q in (50, 95, 99):
            print(f"load_{slug}_p{q}_ms={percentile(mine, q):.0f}")
        failed = sum(r[3] for r in records if r[1] == name)
        if failed:
            print(f"load_{slug}_errors={failed}")
    explain_errors(records)


def explain_errors(records: list) -> None:
    """What the failed requests met, most frequent first, on stderr (a `name=value` line is a figure)."""
    kinds = Counter(f"{r[1]}: {r[4]}" for r in records if r[3])
    for kind, count in kinds.most_common(10):
        print(f"{count} x {kind}", file=sys.stderr)


def signed_in_cpu(records: list, marks: list[tuple[float, float, float]], end: tuple[float, ...]) -> None:
    """The app's and the database's CPU per request once everyone has signed in: from the first mark after
    the last sign-in answered to the end, over the requests answered that began after that mark."""
    signed_in = max((r[0] + r[2] / 1000 for r in records if r[1] == "login"), default=0.0)
    after = [mark for mark in marks if mark[0] >= signed_in]
    if not after:
        return  # sign-in lasted the whole run
    at, app_cpu, db_cpu = after[0]
    answered = sum(1 for r in records if r[0] >= at and not r[3])
    if answered:
        print(f"load_signed_in_seconds_measured={max(r[0] + r[2] / 1000 for r in records) - at:.0f}")
        print(f"load_signed_in_app_cpu_ms_per_request={(end[0] - app_cpu) * 1000 / answered:.1f}")
        print(f"load_signed_in_db_cpu_ms_per_request={(end[1] - db_cpu) * 1000 / answered:.1f}")


def csrf_token(html: str) -> str:
    """The CSRF token a page's form carries."""
    return html.split('name="csrf_token"', 1)[1].split('value="', 1)[1].split('"', 1)[0]


def in_process_app(env: dict[str, str]):
    """The app in this process, on the run's database, store and fake meteostat (through its test client)."""
    return create_app({"SQLALCHEMY_DATABASE_URI": env["DATABASE_URL"], "BLOB_ROOT": env["BLOB_ROOT"],
                       "SECRET_KEY": env["SECRET_KEY"], "WEATHER_ENDPOINT": env["WEATHER_ENDPOINT"]})


def pages_without_weather(url: str, town: dict, pages: int = 100) -> None:
    """Sign in as an agent and open permit pages, reports and the dashboard (no weather lookup)."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    login = opener.open(f"{url}/login").read().decode()
    token = csrf_token(login)
    agent = town["agents"][0]
    body = urllib.parse.urlencode({"email": agent["email"], "password": PASSWORD, "csrf_token": token}).encode()
    opener.open(f"{url}/login", body).read()
    rng = random.Random(1)
    for n in range(pages):
        path = ("/dashboard/" if n % 5 == 0 else f"/permits/{rng.choice(agent['permits'])}" if n % 2
                else f"/inspections/{rng.choice(agent['reports'])}")
        with opener.open(url + path) as answer:
            assert answer.status == 200, (path, answer.status)


def start_inspection_statements(env: dict[str, str], town: dict) -> int:
    """The SQL statements one Start of an inspection runs (target <= 20): an inspector signed in through the
    test client starts an erosion-control report on one of their permits, as the locustfile does, and a
    `before_cursor_execute` listener counts what that one request sends to the database."""
    app = in_process_app(env)
    inspector = town["inspectors"][-1]
    client = app.test_client()

    client.post("/login", data={"email": inspector["email"], "password": PASSWORD,
                                "csrf_token": csrf_token(client.get("/login").get_data(as_text=True))})
    permit = inspector["permits"][-1]
    page = client.get(f"/permits/{permit}")  # signed in, and the first request's one-time work done
    assert page.status_code == 200, page.status_code
    with counted(app) as statements:
        answer = client.post(f"/permits/{permit}/inspections",
                             data={"type": "erosion_control", "csrf_token": csrf_token(page.get_data(as_text=True))})
    assert answer.status_code == 303, answer.status_code
    return len(statements)


def cpu_by_kind(env: dict[str, str], town: dict, records: list, runs: int = 60) -> None:
    """Each kind of request alone, after the run, through the test client in this process: its CPU (this
    thread's) and its SQL statements per request, as locust sends it. One request at a time, so no other
    request's time, nor gunicorn's, is in it: what a kind costs in itself, which tells where the load's CPU
    goes. Weighted by the run's count of each kind, they give the CPU per request the pages themselves ask for."""
    app = in_process_app(env)
    freeze_startup_objects()  # as a worker does (wsgi.py): the collector walks only what requests make
    rng = random.Random(7)

    def signed_in(email: str):
        client = app.test_client()
        page = client.get("/login").get_data(as_text=True)
        client.post("/login", data={"email": email, "password": PASSWORD, "csrf_token": csrf_token(page)})
        return client, csrf_token(client.get("/permits/").get_data(as_text=True))

    inspector, agent, device = town["inspectors"][0], town["agents"][0], town["devices"][0]
    (as_inspector, token), (as_agent, _) = signed_in(inspector["email"]), signed_in(agent["email"])
    drafts: list[str] = []
    revisions = {area: 1 for area in device["areas"]}
    bearer = {"Authorization": f"Bearer {device['token']}"}
    cursor = [0]

    def start():
        answer = as_inspector.post(f"/permits/{rng.choice(inspector['permits'])}/inspections",
                                   data={"type": "erosion_control", "csrf_token": token})
        drafts.append(answer.headers["Location"].rsplit("/", 1)[-1])
        return answer

    def save():
        draft = rng.choice(drafts)
        page = as_inspector.get(f"/inspections/{draft}").get_data(as_text=True)
        form = {name: rng.choice(("yes", "no", "na")) for name in set(re.findall(r'name="(answer-[^"]+)"', page))}
        form |= {"csrf_token": token, "evaluation": "compliant", "notes": "Silt fence intact.",
                 "performed_at": dt.datetime.now().strftime("%Y-%m-%dT%H:%M")}
        return lambda: as_inspector.post(f"/inspections/{draft}", data=form)  # the page read is not counted

    def push():
        now, areas = dt.datetime.now(dt.UTC), rng.sample(list(revisions), 10)
        ops = [{"op_id": str(uuid.uuid4()), "kind": "area.status", "record_id": area,
                "base_revision": revisions[area], "device_time": now.isoformat(),
                "payload": {"status": rng.choice(("activity_ceased", "stabilization_initiated")),
                            "at": now.isoformat()}} for area in areas]
        answer = app.test_client().post("/sync/push", json={"ops": ops, "sent_at": now.isoformat()}, headers=bearer)
        for area, result in zip(areas, answer.get_json()["results"], strict=True):
            revisions[area] = result.get("revision", revisions[area])
        return answer

    def pull():
        answer = app.test_client().get(f"/sync/changes?cursor={cursor[0]}", headers=bearer)
        cursor[0] = answer.get_json()["cursor"]
        return answer

    kinds: dict[str, Callable] = {
        "permit page": lambda: as_inspector.get(f"/permits/{rng.choice(inspector['permits'])}"),
        "rainfall chart": lambda: as_inspector.get(f"/permits/{rng.choice(inspector['permits'])}/rainfall",
                                                   headers={"HX-Request": "true", "HX-Target": "rainfall"}),
        "report page": lambda: as_inspector.get(f"/inspections/{rng.choice(inspector['reports'])}"),
        "start inspection": start,
        "draft page": lambda: as_inspector.get(f"/inspections/{rng.choice(drafts)}"),
        "save draft": save,
        "dashboard": lambda: as_agent.get("/dashboard/"),
        "sync pull": pull,
        "sync push": push,
    }
    counts = Counter(r[1] for r in records if r[1] in kinds)
    weighted = 0.0
    for name, request in kinds.items():
        spent, statements = 0.0, 0
        for n in range(5 + runs):
            send = save() if name == "save draft" else request  # a save's form is read before, not counted
            with counted(app) as ran:
                began = time.thread_time()
                answer = send()
                took = time.thread_time() - began
            if answer.status_code not in (200, 303):
                raise SystemExit(f"{name} answered {answer.status_code}")
            if n >= 5:  # the first few warm the caches a worker has warmed long before
                spent, statements = spent + took, statements + len(ran)
        slug = name.replace(" ", "_")
        print(f"load_{slug}_alone_cpu_ms={spent * 1000 / runs:.1f}")
        print(f"load_{slug}_statements={statements / runs:.1f}")
        weighted += counts[name] * spent * 1000 / runs
    print(f"load_app_cpu_ms_per_request_alone={weighted / sum(counts.values()):.1f}")


def reset_statements(url: str) -> None:
    """Forget what pg_stat_statements counted so far (the town's building)."""
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"))
        connection.execute(text("SELECT pg_stat_statements_reset()"))
    engine.dispose()


def top_statements(url: str, count: int) -> None:
    """The `count` statements that took the most of the database's time since `reset_statements`, on stderr:
    calls, how many of them were planned (not run from a prepared plan), planning and execution ms in all, rows,
    and the statement's start."""
    engine = create_engine(url)
    with engine.connect() as connection:
        found = connection.execute(text(
            "SELECT calls, plans, total_plan_time, total_exec_time, rows, query FROM pg_stat_statements"
            " WHERE query NOT LIKE '%pg_stat_statements%'"
            " ORDER BY total_plan_time + total_exec_time DESC LIMIT :count"), {"count": count}).all()
        total = connection.scalar(text("SELECT sum(total_plan_time + total_exec_time), sum(calls)"
                                       " FROM pg_stat_statements"))
    engine.dispose()
    print(f"statements: {total:.0f} ms of planning and execution in all", file=sys.stderr)
    for calls, plans, plan_ms, exec_ms, rows, query in found:
        print(f"{calls:6d} calls {plans:6d} planned {plan_ms:8.0f} ms plan {exec_ms:8.0f} ms exec {rows:7d} rows  "
              f"{' '.join(query.split())[:160]}", file=sys.stderr)


def migrated_database(stack: ExitStack, name: str, statements: bool = False) -> tuple[Path, str, dict[str, str]]:
    """A temporary folder, a PostgreSQL of its own in it (migrated) and the fake meteostat, all stopped
    when `stack` closes; returns (folder, database URL, the environment an app server runs with)."""
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"{name}-")))
    folder.chmod(0o755)  # the server may run as another user (postgres, when this runs as root)
    (folder / "pg").mkdir()
    url = stack.enter_context(postgres(folder / "pg", statements))
    weather = fake_weather()
    stack.callback(weather.stop)
    env = os.environ | {"DATABASE_URL": url, "BLOB_ROOT": str(folder / "blobs"), "SECRET_KEY": name,
                        "PUBLIC_URL": "https://inspections.example-town.gov",
                        "WEATHER_ENDPOINT": weather.base_url, "FLASK_APP": "inspect_app", "PYTHONPATH": str(ROOT)}
    # As a town's upgrade does (docs/deploy.md): migrate, then `flask towns sync` (the towns and their
    # legal holidays, which app servers read instead of importing the holidays package).
    for command in (["db", "upgrade"], ["towns", "sync"]):
        subprocess.run([sys.executable, "-m", "flask", *command], cwd=ROOT, env=env, check=True,
                       capture_output=True)
    return folder, url, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--soak", action="store_true", help="run 10 minutes and report memory growth")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=None, help="default 60, or 600 with --soak")
    parser.add_argument("--workers", type=int, default=WORKERS, help="gunicorn's workers (default: the unit's)")
    parser.add_argument("--threads", type=int, default=THREADS, help="and each one's threads")
    parser.add_argument("--statements", type=int, default=0, metavar="N",
                        help="also name on stderr the N statements that took the database's time (pg_stat_statements)")
    args = parser.parse_args()
    seconds = args.seconds or (600 if args.soak else 60)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so the finally blocks stop every server
    with ExitStack() as stack:
        folder, url, env = migrated_database(stack, "load-bench", statements=args.statements > 0)
        began = time.perf_counter()
        town = build_town(url, folder / "blobs", weather_endpoint=env["WEATHER_ENDPOINT"])
        print(f"load_build_town_s={time.perf_counter() - began:.1f}")
        print("load_town=" + ",".join(f"{k}:{v}" for k, v in town["counts"].items() if v))
        town_file = folder / "town.json"
        town_file.write_text(json.dumps(town))

        if args.statements:
            reset_statements(url)
        reference_before = host_reference_ms()
        base, master = stack.enter_context(gunicorn(env, args.workers, args.threads))
        samples: dict[str, list[float]] = {}
        postmaster = int((folder / "pg" / "data" / "postmaster.pid").read_text().split()[0])
        marks = [(60.0, lambda: samples.__setitem__("first", worker_rss_mb(master)))] if args.soak else []
        # Every 5 s, the CPU time so far, to tell the pages' CPU from the sign-ins' (a slow hash on purpose).
        cpu_marks: list[tuple[float, float, float]] = []
        marks += [(float(at), lambda: cpu_marks.append((time.time(), tree_cpu_s(master.pid), tree_cpu_s(postmaster))))
                  for at in range(5, seconds, 5)]
        cpu_before = tree_cpu_s(master.pid), tree_cpu_s(postmaster), children_cpu_s(), tree_cpu_s(master.pid, 2)
        steal_before = cpu_steal_ticks()
        records = run_locust(base, town_file, folder / "record.json", args.users, seconds, marks)
        cpu_after = tree_cpu_s(master.pid), tree_cpu_s(postmaster), children_cpu_s(), tree_cpu_s(master.pid, 2)
        steal_after = cpu_steal_ticks()
        reference_after = host_reference_ms()
        samples["end"] = worker_rss_mb(master)
        if args.statements:
            top_statements(url, args.statements)
        if not records:
            raise SystemExit("locust made no requests")
        report(records, seconds, args.users)
        print(f"load_worker_rss_mb={max(samples['end']):.0f}")
        answered = sum(1 for r in records if not r[3])
        print(f"load_app_cpu_ms_per_request={(cpu_after[0] - cpu_before[0]) * 1000 / answered:.1f}")
        print(f"load_db_cpu_ms_per_request={(cpu_after[1] - cpu_before[1]) * 1000 / answered:.1f}")
        print(f"load_weather_fetcher_cpu_ms_per_request={(cpu_after[3] - cpu_before[3]) * 1000 / answered:.1f}")
        print(f"load_generator_cpu_ms_per_request={(cpu_after[2] - cpu_before[2]) * 1000 / answered:.1f}")
        signed_in_cpu(records, cpu_marks, cpu_after)
        print(f"host_reference_ms_before={reference_before:.2f}")
        print(f"host_reference_ms_after={reference_after:.2f}")
        stolen, ticks = (after - before for after, before in zip(steal_after, steal_before, strict=True))
        print(f"load_cpu_steal_pct={stolen * 100 / max(ticks, 1):.1f}")
        if args.soak:
            first_minute = min(r[0] for r in records) + 60
            last_minute = max(r[0] for r in records) - 60
            print(f"soak_seconds={seconds}")
            print(f"soak_errors={sum(r[3] for r in records)}")
            print(f"soak_p95_first_minute_ms={percentile([r[2] for r in records if r[0] < first_minute and r[1] != 'login'], 95):.0f}")
            print(f"soak_p95_last_minute_ms={percentile([r[2] for r in records if r[0] >= last_minute], 95):.0f}")
            first, end = sum(samples["first"]), sum(samples["end"])
            print(f"soak_rss_first_minute_mb={first:.0f}")
            print(f"soak_rss_end_mb={end:.0f}")
            print(f"soak_rss_growth_pct={(end - first) / first * 100:.1f}")

        print(f"start_inspection_statements={start_inspection_statements(env, town)}")
        cpu_by_kind(env, town, records)

        # A fresh worker, pages only: what a worker holds before anyone looks weather up.
        with gunicorn(env, 1, THREADS) as (fresh, fresh_master):
            pages_without_weather(fresh, town)
            print(f"worker_rss_mb={max(worker_rss_mb(fresh_master)):.0f}")
    print(f"load_average_1min={os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
