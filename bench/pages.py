"""Server time and SQL statements of each page of the load bench, one request at a time.

Where the time of bench/load.py goes: the same PostgreSQL (its own, fsync on), the same town and the same
fake meteostat, but each page requested alone through the Flask test client (no HTTP, no other load),
RUNS times. Prints, for each page:
  page_<name>_median_ms   median server time
  page_<name>_median_cpu_ms   median CPU time of this process (fairer than wall time on a busy machine;
                          a weather fetcher process's CPU is not in it)
  page_<name>_queries     SQL statements run by the last request
and with `--profile NAME` the functions that took the time of that page (cProfile, cumulative), or with
`--profile all` of one request of each page together.

Run from the repository root: python -m bench.pages [--runs N] [--profile NAME]
"""
from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import os
import pstats
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import event

from bench.load import PASSWORD, ROOT, build_town, fake_weather, postgres
from inspect_app import create_app
from inspect_app.extensions import db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--profile", help="print where the time of this page goes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pages-bench-") as folder_name:
        folder = Path(folder_name)
        folder.chmod(0o755)
        (folder / "pg").mkdir()
        weather = fake_weather()
        try:
            with postgres(folder / "pg") as url:
                env = os.environ | {"DATABASE_URL": url, "FLASK_APP": "inspect_app", "PYTHONPATH": str(ROOT),
                                    "SECRET_KEY": "pages-bench"}
                subprocess.run([sys.executable, "-m", "flask", "db", "upgrade"], cwd=ROOT, env=env, check=True,
                               capture_output=True)
                town = build_town(url, folder / "blobs", weather_endpoint=weather.base_url)
                measure(url, folder / "blobs", weather.base_url, town, args.runs, args.profile)
        finally:
            weather.stop()
    print(f"load_average_1min={os.getloadavg()[0]:.2f}")


def measure(url: str, blobs: Path, weather_url: str, town: dict, runs: int, profile: str | None) -> None:
    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "BLOB_ROOT": str(blobs), "SECRET_KEY": "pages-bench",
                      "WEATHER_ENDPOINT": weather_url, "WTF_CSRF_ENABLED": False})
    rng = random.Random(3)
    inspector, agent, device = town["inspectors"][0], town["agents"][0], town["devices"][0]
    as_inspector, as_agent = app.test_client(), app.test_client()
    for client, account in ((as_inspector, inspector), (as_agent, agent)):
        assert client.post("/login", data={"email": account["email"], "password": PASSWORD}).status_code == 303
    drafts: list[str] = []
    revisions = {area: 1 for area in device["areas"]}
    steps = iter(("activity_ceased", "stabilization_initiated") * 1000)

    def start():
        answer = as_inspector.post(f"/permits/{rng.choice(inspector['permits'])}/inspections",
                                   data={"type": "erosion_control"})
        drafts.append(answer.headers["Location"].rsplit("/", 1)[-1])
        return answer

    def save():
        draft = drafts[-1]
        page = as_inspector.get(f"/inspections/{draft}").text
        form = {name: "yes" for name in set(re.findall(r'name="(answer-[^"]+)"', page))}
        form |= {"evaluation": "compliant", "notes": "Silt fence intact.",
                 "performed_at": dt.datetime.now().strftime("%Y-%m-%dT%H:%M")}
        return as_inspector.post(f"/inspections/{draft}", data=form)

    def push():
        status, now = next(steps), dt.datetime.now(dt.UTC)
        areas = rng.sample(list(revisions), 10)
        ops = [{"op_id": str(uuid.uuid4()), "kind": "area.status", "record_id": area, "base_revision": revisions[area],
                "device_time": now.isoformat(), "payload": {"status": status, "at": now.isoformat()}} for area in areas]
        answer = as_inspector.post("/sync/push", json={"ops": ops, "sent_at": now.isoformat()},
                                   headers={"Authorization": f"Bearer {device['token']}"})
        for area, result in zip(areas, answer.json["results"], strict=True):
            assert result["status"] == "applied", result
            revisions[area] = result["revision"]
        return answer

    pages = {
        "permit_page": lambda: as_inspector.get(f"/permits/{rng.choice(inspector['permits'])}"),
        "rainfall_chart": lambda: as_inspector.get(f"/permits/{rng.choice(inspector['permits'])}/rainfall",
                                                   headers={"HX-Request": "true", "HX-Target": "rainfall"}),
        "report_page": lambda: as_inspector.get(f"/inspections/{rng.choice(inspector['reports'])}"),
        "start_inspection": start,
        "draft_page": lambda: as_inspector.get(f"/inspections/{drafts[-1]}"),
        "save_draft": save,
        "dashboard": lambda: as_agent.get("/dashboard/"),
        "sync_push_10_ops": push,
        "sync_pull": lambda: as_inspector.get("/sync/changes?cursor=0",
                                              headers={"Authorization": f"Bearer {device['token']}"}),
    }
    statements: list[str] = []
    with app.app_context():
        event.listen(db.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    every = cProfile.Profile() if profile == "all" else None
    for name, request in pages.items():
        times, cpu_times = [], []
        for _ in range(runs):
            statements.clear()
            began, began_cpu = time.perf_counter(), time.process_time()
            answer = request()
            times.append((time.perf_counter() - began) * 1000)
            cpu_times.append((time.process_time() - began_cpu) * 1000)
            assert answer.status_code in (200, 303), (name, answer.status_code)
        print(f"page_{name}_median_ms={statistics.median(times):.0f}")
        print(f"page_{name}_median_cpu_ms={statistics.median(cpu_times):.0f}")
        print(f"page_{name}_queries={len(statements)}")
        if name == profile:
            profiler = cProfile.Profile()
            profiler.runcall(request)
            pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(50)
            pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(40)
        if every is not None:
            every.runcall(request)
    if every is not None:  # one of each page, together: what every request pays for
        pstats.Stats(every, stream=sys.stdout).sort_stats("tottime").print_stats(60)
        pstats.Stats(every, stream=sys.stdout).sort_stats("cumulative").print_stats(120)


if __name__ == "__main__":
    main()
