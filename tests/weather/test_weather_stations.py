"""Which station each value comes from (spec "Weather": the nearest station with data for that parameter),
provisional weather on site while hours are unpublished, quiet logs when meteostat is unreachable, and
meteostat loaded only by the fetcher process, never by the app's."""
from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from inspect_app.extensions import db
from inspect_app.inspections import weather as report_weather
from inspect_app.inspections.models import Inspection
from inspect_app.weather import services, source
from weather_fake import FakeMeteostat, hours, recent_hour

UTC = dt.UTC
H = dt.timedelta(hours=1)
ROOT = Path(__file__).resolve().parents[2]


def reread(inspection: Inspection) -> Inspection:
    db.session.expire_all()
    return db.session.get(Inspection, inspection.id)


def test_each_value_comes_from_the_nearest_station_with_data_for_it(app_meteostat, permit_at, report):
    # The nearest station (3 km) reports temperature but has no rain gauge; the mesonet at 9 km has rain.
    performed = dt.datetime(2024, 4, 16, 14, 20, tzinfo=UTC)
    first = performed.replace(minute=0) - 23 * H
    app_meteostat.publish_hourly("TMP1", hours(first - 48 * H, 72, temp=11.0, wspd=12.0, wdir=225))
    app_meteostat.publish_hourly("PCP1", hours(first - 48 * H, 48, temp=9.0, prcp=0.0) + hours(first, 24, temp=9.0, prcp=0.3)
                                 + hours(first + 24 * H, 17, temp=9.0, prcp=0.0))
    permit = permit_at("split", cgp_schedule="every_14_days_and_storm", issued_on=dt.date(2024, 1, 2),
                       construction_started_on=dt.date(2024, 1, 3))
    inspection = report(permit, performed)

    report_weather.fill_inspection_weather(inspection, now=performed + dt.timedelta(days=10))
    db.session.commit()

    filled = reread(inspection)
    assert (filled.weather_status, filled.temperature_c, filled.wind_kmh, filled.precip_24h_mm, filled.precip_hours) == (
        "complete", 11.0, 12.0, 7.2, 24)
    # The report says where each value came from: name, id, distance and the hours it covered.
    assert [(s["parameter"], s["station_id"], s["name"], s["distance_m"], s["hours"]) for s in filled.weather_stations] == [
        ("temperature", "TMP1", "Thermometer Only Airport", 3000, 24),
        ("wind", "TMP1", "Thermometer Only Airport", 3000, 24),
        ("precipitation", "PCP1", "Rain Gauge Mesonet", 9000, 24),
    ]
    assert (filled.station_id, filled.station_distance_m) == ("PCP1", 9000.0)  # (f) is the precipitation's
    # The storm sweep and the rainfall chart use the same station for precipitation: 7.2 mm in those
    # 24 hours, 0.25 in reached after 22 of them.
    outcome = services.sweep_storms(2, now=first + 34 * H)
    db.session.commit()
    assert [(e.station_id, e.reached_at, e.depth_mm) for _, e in outcome.created] == [("PCP1", first + 21 * H, 7.2)]
    assert services.permit_rainfall(permit, now=first + 34 * H).station.id == "PCP1"


def test_provisional_weather_on_site_then_the_final_values(app_meteostat, permit_at, report, signed_in, make):
    # An hour back, so the visit is in the past at any minute of the hour the test runs in.
    performed = recent_hour(1) + dt.timedelta(minutes=10)
    first = performed.replace(minute=0) - 23 * H
    # 21 of the 24 hours are published so far: 0.31 in (7.9 mm), the latest 3 hours before the visit.
    app_meteostat.publish_hourly("PRV1", hours(first - 24 * H, 24, temp=5.0, prcp=0.0)
                                 + hours(first, 19, temp=14.0, prcp=0.4, coco=8)
                                 + hours(first + 19 * H, 1, temp=14.0, prcp=0.3, coco=8)
                                 + hours(first + 20 * H, 1, temp=15.0, prcp=0.0, coco=8))
    permit = permit_at("provisional")
    inspection = report(permit, performed, status="submitted", latitude=permit.latitude, longitude=permit.longitude)

    report_weather.fill_inspection_weather(inspection)
    db.session.commit()

    on_site = reread(inspection)
    assert (on_site.weather_status, on_site.weather_provisional, on_site.precip_24h_mm, on_site.precip_hours) == (
        "pending", True, 7.9, 21)
    assert on_site.temperature_c == 15.0  # the latest published, 3 hours old
    page = signed_in(make.user("agent")).get(f"/inspections/{inspection.id}")
    assert page.status_code == 200, page.status_code
    text = " ".join(page.get_data(as_text=True).split())
    assert "Provisional weather." in text
    assert "0.31 in over the last 21 h; 3 h not published yet" in text
    assert 'Latest observation</dt><dd>' in text and "3 h before the inspection <span class=\"muted\">(provisional)" in text
    assert "<dt>Temperature</dt><dd>59 °F</dd>" in text and "<dt>Conditions</dt><dd>Rain</dd>" in text

    app_meteostat.publish_hourly("PRV1", hours(first + 21 * H, 3, temp=16.0, prcp=0.0, coco=3))
    report_weather.backfill_pending()
    db.session.commit()

    final = reread(inspection)
    assert (final.weather_status, final.weather_provisional, final.precip_24h_mm, final.precip_hours,
            final.temperature_c) == ("complete", False, 7.9, 24, 16.0)


def test_an_unreachable_service_logs_one_line_without_a_traceback(fake_meteostat, site, offline, caplog):
    caplog.set_level(logging.WARNING, logger="inspect_app.weather.source")

    result = source.lookup(*site("normal"), dt.datetime(2024, 5, 14, 12, tzinfo=UTC))

    assert result.status == "pending" and result.reason == "the weather service could not be reached"
    ours = [r for r in caplog.records if r.name == "inspect_app.weather.source"]
    assert len(ours) == 1 and ours[0].exc_info is None
    assert "could not be reached" in ours[0].getMessage() and "download" in ours[0].getMessage()


def test_a_fetcher_that_hangs_is_stopped_and_the_next_lookup_starts_another(fake_meteostat):
    # A fetcher that stops answering (here: stopped by a signal) must not hold this process's lookups for good.
    [hung] = fetcher_pids()
    os.kill(hung, signal.SIGSTOP)
    began = time.monotonic()
    with pytest.raises(source.FetchFailed, match="did not answer"):
        source.start_fetcher()
    assert time.monotonic() - began < 15  # the fixture's sockets give up after 0.5 s: 10 s is its limit
    assert hung not in fetcher_pids()  # stopped and reaped, not left behind

    source.start_fetcher()  # the next request starts a new one, which answers
    [started] = fetcher_pids()
    assert started != hung


def test_hours_that_came_after_the_chart_gave_up_are_kept_for_the_next_chart_of_that_station(
        app_meteostat, quiet_workers):
    # Under load the service (or the fetcher) is slower than a chart waits. What it sends late is kept for
    # the next chart of the station, not thrown away and asked for again by each chart in turn.
    first = dt.datetime(2024, 5, 1, tzinfo=UTC)
    last = first + 47 * H
    path = "/hourly/2024/SLW1.csv.gz"
    app_meteostat.publish_hourly("SLW1", hours(first, 48, temp=10.0, prcp=0.5))
    app_meteostat.slow(path, 1.0)  # the fixture's sockets wait 2 s: it does come
    try:
        rows, why = source.station_hours("SLW1", first, last, deadline_s=0.3)
        assert rows is None and why == "the weather service did not answer within 0.3 s"
        until = time.monotonic() + 15
        while any(t.name == "weather-lookup" for t in threading.enumerate()) and time.monotonic() < until:
            time.sleep(0.05)  # the lookup ends once the service has answered
        asked = len(app_meteostat.requests)

        rows, why = source.station_hours("SLW1", first, last, deadline_s=0.3)
        assert why == "" and app_meteostat.requests[asked:] == []  # at once, with no new request
        assert [(row.hour, row.precip_mm) for row in rows] == [(first + n * H, 0.5) for n in range(48)]

        # Taken once: the next chart asks the service again (for its own hours, here the second day).
        app_meteostat.serve(path)
        rows, why = source.station_hours("SLW1", first + 24 * H, last, deadline_s=3.0)
        assert why == "" and len(rows) == 24 and app_meteostat.requests[asked:] == [path]
    finally:
        app_meteostat.serve(path)


def test_charts_of_one_station_opened_at_once_read_its_hours_once(app_meteostat, quiet_workers):
    # A town's inspectors open permit pages at the start of the day: each page's chart asks for the same
    # station's 60 days, none of them in the database yet. One read of the station's files serves them all.
    first = dt.datetime(2024, 6, 1, tzinfo=UTC)
    last = first + 47 * H
    path = "/hourly/2024/SLW1.csv.gz"
    app_meteostat.publish_hourly("SLW1", hours(first, 48, temp=10.0, prcp=1.5))
    app_meteostat.slow(path, 0.5)  # slow enough for the three charts to ask while the first is reading
    asked = len(app_meteostat.requests)
    answers: list = []
    try:
        charts = [threading.Thread(target=lambda: answers.append(source.station_hours("SLW1", first, last,
                                                                                      deadline_s=5.0)))
                  for _ in range(3)]
        for chart in charts:
            chart.start()
        for chart in charts:
            chart.join(15)
    finally:
        app_meteostat.serve(path)
    assert [why for _rows, why in answers] == ["", "", ""]
    assert all([(row.hour, row.precip_mm) for row in rows] == [(first + n * H, 1.5) for n in range(48)]
               for rows, _why in answers)
    assert app_meteostat.requests[asked:].count(path) == 1

    # A later chart of other hours of the station asks the service for them.
    _rows, why = source.station_hours("SLW1", last + H, last + 2 * H, deadline_s=5.0)
    assert why == "" and app_meteostat.requests[asked:].count(path) == 2


def fetcher_pids() -> list[int]:
    """The weather fetcher processes this test process started (children running inspect_app.weather.fetcher)."""
    found = subprocess.run(["pgrep", "-P", str(os.getpid()), "-f", "inspect_app.weather.fetcher"],
                           capture_output=True, text=True).stdout
    return [int(pid) for pid in found.split()]


def test_the_app_process_never_imports_meteostat_or_pandas_even_to_look_weather_up(tmp_path):
    # In a fresh process: pages, a page naming a report's weather sources, and a lookup through the fetcher
    # process (weather.fetcher), which alone loads meteostat.
    script = (
        "import datetime as dt, sys\n"
        "from pathlib import Path\n"
        "from weather_fake import FakeMeteostat, hours\n"
        "from inspect_app import create_app\n"
        "from inspect_app.extensions import db\n"
        "from inspect_app.weather import source\n"
        "fake = FakeMeteostat()\n"
        "fake.add_station('IMP1', 'Import Field', 42.0, -72.0)\n"
        "fake.start()\n"
        "at = dt.datetime(2024, 5, 14, 12, tzinfo=dt.UTC)\n"
        "fake.publish_hourly('IMP1', hours(at - dt.timedelta(hours=23), 24, temp=14.0, prcp=0.2))\n"
        f"app = create_app({{'TESTING': True, 'SQLALCHEMY_DATABASE_URI': 'sqlite:///{tmp_path}/pages.sqlite3',\n"
        "                  'WEATHER_ENDPOINT': fake.base_url})\n"
        "with app.app_context():\n"
        "    db.create_all()\n"
        "client = app.test_client()\n"
        "assert client.get('/login').status_code == 200\n"
        "assert client.get('/').status_code in (200, 302)\n"
        "with app.test_request_context():\n"
        "    named = app.jinja_env.filters['weather_sources']('temperature=isd_lite; precipitation=metno_forecast (model)')\n"
        "assert named == ('temperature: NOAA ISD Lite (observation); '\n"
        "                 'precipitation: MET Norway Forecast (model-filled)'), named\n"
        "print(sorted(m for m in ('meteostat', 'pandas', 'numpy') if m in sys.modules))\n"
        f"source.configure(fake.base_url, Path('{tmp_path}') / 'cache', timeout_s=5.0)\n"
        "result = source.lookup(42.0, -72.0, at, deadline_s=60.0)\n"
        "assert (result.status, result.station.id, result.precip_24h_mm) == ('complete', 'IMP1', 4.8), result\n"
        "print(sorted(m for m in ('meteostat', 'pandas', 'numpy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "tests"), "SECRET_KEY": "probe",
                               "BLOB_ROOT": str(tmp_path / "blobs")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "[]"]


def test_a_fake_service_on_a_port_an_earlier_one_used_serves_its_own_stations(tmp_path):
    """meteostat keeps the station list on disk by endpoint. A fake on a port that an earlier fake used (the
    earlier test's, or a run's before) must not get that fake's list: a storm sweep once reported "no station
    within 50 km" that way, though its own fake had the station."""
    days = (dt.date(2024, 5, 12), dt.date(2024, 5, 14))
    first, second = FakeMeteostat(), FakeMeteostat()
    first.add_station("DRY1", "Dry", 42.06, -72.57)
    second.add_station("WET1", "Wet", 42.06, -72.57)
    second.publish_hourly("WET1", hours(dt.datetime(2024, 5, 12, tzinfo=UTC), 72, temp=10.0, prcp=0.5))
    try:
        source.configure(first.start(), tmp_path, timeout_s=5.0)
        assert source.daily_precipitation(42.05, -72.58, *days, deadline_s=10.0).station is None
        port = urlsplit(first.base_url).port
        first.stop()
        source.configure(second.start(port), tmp_path, timeout_s=5.0)
        found = source.daily_precipitation(42.05, -72.58, *days, deadline_s=10.0)
        assert found.station is not None and found.station.id == "WET1"
    finally:
        first.stop()
        second.stop()
