"""Time of a report's weather, the storm sweep and the rainfall chart, against a fake meteostat.

Starts the tests' fake meteostat server on 127.0.0.1 (a real stations.db and gzipped hourly CSVs,
read by meteostat's own code), an app on a temporary SQLite database pointed at it, and measures:

  fill_lookup_median_ms     fill_inspection_weather() that asks meteostat (a window not stored yet)
  fill_stored_median_ms     fill_inspection_weather() answered from stored station-hours (no request)
  sweep_per_permit_ms       sweep_storms(3) over 20 active permits, per permit
  sweep_500_permits_s       `flask compliance sweep`'s work (sweep_storms(3) and its commit, which stores
                            the permits' obligations) over 500 permits around 20 stations, a storm at each
  station_files_fetched     hourly files meteostat read in that sweep: each station's once (20)
  chart_fresh_median_ms     GET /permits/<id>/rainfall that fetches 60 days (a new permit each time)
  chart_stored_median_ms    the same request within the hour: drawn from stored hours only
  hung_fill_s               fill_inspection_weather() with a server that accepts and never answers
                            (WEATHER_DEADLINE_S = 3: the bound any request waits at most)
  weather_fetcher_start_s   starting the fetcher process (meteostat, pandas) until it answers, before the
                            figures above (a worker's first lookup, or one after 10 idle minutes, pays it)

Run from the repository root: python -m bench.weather [runs] (or python bench/weather.py [runs]).
"""
from __future__ import annotations

import datetime as dt
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, Python puts bench/ first on the path, where bench/sync.py would shadow the app's
# `sync` package: take it off, and put the repository root first.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the fake meteostat server lives with the tests

from inspect_app import create_app  # noqa: E402
from inspect_app.accounts.services import create_user  # noqa: E402
from inspect_app.extensions import db  # noqa: E402
from inspect_app.inspections import weather as report_weather  # noqa: E402
from inspect_app.inspections.models import Inspection  # noqa: E402
from inspect_app.permits import services as permits  # noqa: E402
from inspect_app.weather import services, source  # noqa: E402
from inspect_app.weather.models import StormEvent  # noqa: E402
from inspect_app.permits.models import Permit  # noqa: E402
from sqlalchemy import delete, update  # noqa: E402
from weather_fake import FakeMeteostat, hours  # noqa: E402

UTC = dt.UTC
SITE = (42.05, -72.58)
HUNG_SITE = (44.05, -72.58)
# 20 stations 1° of longitude apart (about 80 km: each permit's nearest is its own), 25 permits around each.
SWEEP_STATIONS = [(f"SW{n:02d}", 46.0, -90.0 + n) for n in range(20)]
PASSWORD = "bench password 1"


def median_ms(runs: int, work: Callable[[int], object]) -> float:
    times = []
    for i in range(runs):
        started = time.perf_counter()
        work(i)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(runs: int) -> None:
    fake = FakeMeteostat()
    fake.add_station("BNCH", "Bench Airport", SITE[0] + 0.05, SITE[1])
    fake.add_station("HUNG", "Hung Airport", HUNG_SITE[0] + 0.02, HUNG_SITE[1])
    now = dt.datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    fake.publish_hourly("BNCH", hours(now - dt.timedelta(days=400), 400 * 24, temp=12.0, prcp=0.3,
                                      wspd=10.0, wdir=200, coco=7))
    fake.publish_hourly("HUNG", hours(dt.datetime(2024, 3, 1, tzinfo=UTC), 48, temp=1.0))
    for station_id, latitude, longitude in SWEEP_STATIONS:
        fake.add_station(station_id, f"Sweep Field {station_id}", latitude, longitude)
        # Dry for 5 days, then 0.5 mm an hour for 16 hours ending 10 hours ago: one storm at each.
        fake.publish_hourly(station_id, hours(now - dt.timedelta(days=5), 5 * 24, prcp=0.0, temp=10.0)
                            + hours(now - dt.timedelta(hours=26), 16, prcp=0.5, temp=10.0))
    fake.hang("/hourly/2024/HUNG.csv.gz")
    fake.start()
    with tempfile.TemporaryDirectory() as folder:
        app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder}/bench.sqlite3",
                          "WEATHER_ENDPOINT": fake.base_url, "WEATHER_DEADLINE_S": 3.0,
                          "BLOB_ROOT": f"{folder}/blobs", "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
                          "WTF_CSRF_ENABLED": False})
        with app.app_context():
            db.create_all()
            town = permits.ensure_jurisdictions()[0]
            agent = create_user("agent@example.org", "Bench Agent", "agent", PASSWORD, jurisdiction=town)

            def permit(n: int, site: tuple[float, float] = SITE, schedule: str = "every_7_days"):
                made = permits.create_permit(
                    None, jurisdiction_id=town.id, number=f"BENCH-{n:04d}", site_address=f"{n} Main St",
                    latitude=site[0], longitude=site[1], owner_name="Owner", applicant_name="Applicant",
                    disturbed_acres=Decimal("1.0"), cgp_schedule=schedule,
                    issued_on=dt.date(2025, 1, 1))
                if made.status != "active":
                    permits.change_status(None, made, "active")
                db.session.commit()
                return made

            def report(site_permit, at: dt.datetime) -> Inspection:
                made = Inspection(permit_id=site_permit.id, type="erosion_control", performed_at=at,
                                  inspector_name="Bench", inspector_credentials="PE")
                db.session.add(made)
                db.session.commit()
                return made

            # The fetcher process starts with the first lookup (or, in a cron job, before it): timed apart.
            started = time.perf_counter()
            source.start_fetcher()
            fetcher_start_s = time.perf_counter() - started
            site = permit(0)
            base = now - dt.timedelta(days=200)
            looked_up = [report(site, base + dt.timedelta(days=i)) for i in range(runs)]
            lookup_ms = median_ms(runs, lambda i: (report_weather.fill_inspection_weather(looked_up[i]),
                                                   db.session.commit()))
            again = [report(site, base + dt.timedelta(days=i, minutes=20)) for i in range(runs)]
            asked = len(fake.requests)
            stored_ms = median_ms(runs, lambda i: (report_weather.fill_inspection_weather(again[i]),
                                                   db.session.commit()))
            assert len(fake.requests) == asked, "stored fills must not ask meteostat"

            for n in range(1, 21):
                permit(n)
            started = time.perf_counter()
            services.sweep_storms(3)
            db.session.commit()
            sweep_ms = (time.perf_counter() - started) * 1000 / 21

            client = app.test_client()
            signed_in = client.post("/login", data={"email": agent.email, "password": PASSWORD})
            assert signed_in.status_code == 303, "the bench could not sign in"

            def chart(i: int) -> None:
                answer = client.get(f"/permits/{chart_permits[i].id}/rainfall", headers={"HX-Request": "true"})
                assert answer.status_code == 200 and "<svg" in answer.text

            chart_permits = [permit(100 + i) for i in range(runs)]
            fresh_ms = median_ms(runs, chart)
            cached_ms = median_ms(runs, chart)

            hung = report(permit(999, HUNG_SITE), dt.datetime(2024, 3, 2, 12, tzinfo=UTC))
            started = time.perf_counter()
            report_weather.fill_inspection_weather(hung)
            hung_s = time.perf_counter() - started
            assert hung.weather_status == "pending"

            # The sweep of a town: 500 permits (the earlier ones too), 25 around each of 20 stations.
            for n in range(500):
                _, latitude, longitude = SWEEP_STATIONS[n % 20]
                permit(2000 + n, (latitude - 0.05 - (n // 20) * 0.004, longitude + 0.01),
                       schedule="every_14_days_and_storm")
            # Only these 500 are swept: the permits measured above are taken out of construction.
            db.session.execute(update(Permit).where(~Permit.number.like("BENCH-2%")).values(status="lapsed"))
            db.session.execute(delete(StormEvent))
            db.session.commit()
            asked = len(fake.requests)
            started = time.perf_counter()
            outcome = services.sweep_storms(3)
            db.session.commit()
            sweep_500_s = time.perf_counter() - started
            files = [path for path in fake.requests[asked:] if path.startswith("/hourly/")]
            assert outcome.checked == 500, outcome.checked
            assert len(outcome.created) == 500, f"expected a storm at each permit, found {len(outcome.created)}"
            assert len(set(files)) == len(files), "a station's file was fetched twice"
    fake.stop()

    print(f"fill_lookup_median_ms={lookup_ms:.0f}")
    print(f"fill_stored_median_ms={stored_ms:.1f}")
    print(f"sweep_per_permit_ms={sweep_ms:.0f}")
    print(f"chart_fresh_median_ms={fresh_ms:.0f}")
    print(f"chart_stored_median_ms={cached_ms:.0f}")
    print(f"hung_fill_s={hung_s:.2f}")
    print(f"sweep_500_permits_s={sweep_500_s:.1f}")
    print(f"station_files_fetched={len(files)}")
    print(f"weather_fetcher_start_s={fetcher_start_s:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
