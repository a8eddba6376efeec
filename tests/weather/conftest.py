"""One fake meteostat server for the session; each test case has its own stations at its own site.

meteostat downloads the station list once (it is cached per endpoint) and fixes its endpoints at
first load, so one server runs for the session with every station declared up front;
weather.source.configure points meteostat at it (and patches the fixed endpoints). Sites
are about 220 km apart, further than the 50 km search radius, so no case sees another's stations.
meteostat's own data cache is off (weather.source.configure), so a file published mid-test is seen.
"""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspect_app.weather import source
from weather_fake import FakeMeteostat

SOCKET_TIMEOUT_S = 0.5  # short, so workers stuck on a hung path end quickly
# The whole-app tests' sockets wait longer: on a busy machine (CI's two cores, a browser test beside) the
# fake server's answer can take more than half a second, and a lookup given up too soon is a failed test.
# Those that hang a path ask for `short_socket_timeout`.
APP_SOCKET_TIMEOUT_S = 2.0
KM_PER_DEGREE_LATITUDE = 6371.0 * 3.141592653589793 / 180  # meteostat's great-circle earth

# site name -> (latitude, longitude) of the inspection
SITES = {
    "normal": (30.0, -72.0),
    "incomplete": (32.0, -72.0),
    "metar_only": (34.0, -72.0),
    "model": (36.0, -72.0),
    "fallback": (38.0, -72.0),
    "pending": (40.0, -72.0),
    "partial": (42.0, -72.0),
    "hang": (44.0, -72.0),
    "busy": (46.0, -72.0),
    "server_error": (48.0, -72.0),
    "new_year": (50.0, -72.0),
    "rain": (52.0, -72.0),
    "nowhere": (54.0, -72.0),
}

# station id -> (site, kilometres north of the site, name)
STATIONS = {
    "NRM1": ("normal", 5.0, "Normal Field"),
    "NRM2": ("normal", 15.0, "Normal Hill"),
    "INC1": ("incomplete", 3.0, "Gappy Airport"),
    "MTR1": ("metar_only", 4.0, "Metar Only Airfield"),
    "MDL1": ("model", 6.0, "Model Fill Station"),
    "FBK1": ("fallback", 2.0, "Never Published"),
    "FBK2": ("fallback", 8.0, "Other Months Only"),
    "FBK3": ("fallback", 20.0, "Has The Hours"),
    "FBK4": ("fallback", 60.0, "Too Far Away"),
    "PND1": ("pending", 7.0, "Late Publisher"),
    "PRT1": ("partial", 7.0, "Half Published"),
    "HNG1": ("hang", 3.0, "Silent Server"),
    "BSY1": ("busy", 3.0, "Busy Silent Server"),
    "ERR1": ("server_error", 3.0, "Broken Mirror"),
    "ERR2": ("server_error", 12.0, "Working Mirror"),
    "NYR1": ("new_year", 9.0, "New Year Station"),
    "RAIN": ("rain", 4.0, "Rain Gauge Field"),
}


@pytest.fixture(scope="session")
def meteostat_cache(tmp_path_factory) -> Path:
    """The session's meteostat cache directory (the station list is kept there)."""
    return tmp_path_factory.mktemp("meteostat-cache")


def _serve_stations(stations: dict, sites: dict) -> Iterator[FakeMeteostat]:
    """A fake meteostat with these stations, each `km_north` of its site, for the whole session."""
    fake = FakeMeteostat()
    for station_id, (site, km_north, name) in stations.items():
        latitude, longitude = sites[site]
        fake.add_station(station_id, name, latitude + km_north / KM_PER_DEGREE_LATITUDE, longitude)
    fake.start()
    yield fake
    fake.stop()
    _wait_for_workers()


@pytest.fixture(scope="session")
def meteostat_server() -> Iterator[FakeMeteostat]:
    """The session's fake server, with every station of every case declared."""
    yield from _serve_stations(STATIONS, SITES)


@pytest.fixture
def fake_meteostat(meteostat_server, meteostat_cache) -> FakeMeteostat:
    """The fake server, with weather.source pointed at it."""
    # Again before every test (it is cheap): another test package may have pointed weather.source
    # at its own server since; the station list stays cached per endpoint, so nothing is refetched.
    source.configure(meteostat_server.base_url, meteostat_cache, timeout_s=SOCKET_TIMEOUT_S)
    # The test's deadlines are about the service, not about starting the fetcher process (once a session).
    source.start_fetcher()
    return meteostat_server


def _wait_for_workers(limit_s: float = 5.0) -> None:
    """Let workers stuck on a hung server reach their socket timeout before the next test."""
    until = time.monotonic() + limit_s
    while worker_threads() and time.monotonic() < until:
        time.sleep(0.05)


def worker_threads() -> list[threading.Thread]:
    """The weather worker threads alive now."""
    return [t for t in threading.enumerate() if t.name == "weather-lookup"]


@pytest.fixture
def quiet_workers() -> Iterator[None]:
    """Start and end a test with no weather worker alive (a hang test leaves one for about a second)."""
    _wait_for_workers()
    yield
    _wait_for_workers()


@pytest.fixture
def site(fake_meteostat):
    """The (latitude, longitude) of a named test site, with the fake server running."""
    return lambda name: SITES[name]


@pytest.fixture
def distance_m():
    """How far a station is from its site, the way meteostat measures it (due north)."""
    return lambda station_id: STATIONS[station_id][1] * 1000


@pytest.fixture
def live_workers():
    """A function giving the weather worker threads alive at the moment it is called."""
    return worker_threads


@pytest.fixture
def offline(fake_meteostat, meteostat_cache, tmp_path) -> Iterator[None]:
    """weather.source pointed at a port nobody listens on, then back at the fake server."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    source.configure(f"http://127.0.0.1:{closed_port}", tmp_path / "offline-cache",
                     timeout_s=SOCKET_TIMEOUT_S)
    yield
    source.configure(fake_meteostat.base_url, meteostat_cache, timeout_s=SOCKET_TIMEOUT_S)


# -- the app's weather layer (services, views, commands) -------------------------------------------
# A second fake server, with its own stations, for tests that run the whole app: its station list is
# its own file in the cache (configure() keys it by endpoint), so neither server sees the other's.

# site name -> (latitude, longitude) of a permit; 2° of latitude apart, far beyond the 50 km radius
APP_SITES = {
    "report": (37.0, -80.0),
    "shared": (39.0, -80.0),
    "late": (41.0, -80.0),
    "gauge": (43.0, -80.0),
    "hung": (45.0, -80.0),
    "storm": (47.0, -80.0),
    "chart": (35.0, -80.0),
    "gappy": (33.0, -80.0),
    "split": (49.0, -80.0),
    "final": (51.0, -80.0),
    "provisional": (53.0, -80.0),
    "refill": (31.0, -80.0),
    "split_held": (29.0, -80.0),
    "start_held": (27.0, -80.0),
    # The inspector's observed weather (test_observed_weather.py): a station that never reports, one that has
    # reported by the signing, one that reports after it.
    "observed_pending": (37.0, -70.0),
    "observed_reported": (39.0, -70.0),
    "observed_later": (41.0, -70.0),
    # A station whose files come slower than a chart waits (test_weather_stations.py).
    "slow": (43.0, -70.0),
    # A report whose answers were changed outside the app after signing (test_weather_reports.py).
    "altered": (45.0, -70.0),
}
# station id -> (site, kilometres north of the site, name)
APP_STATIONS = {
    "RPT1": ("report", 5.0, "Report Field"),
    "SHR1": ("shared", 3.0, "Shared Airport"),
    "LTE1": ("late", 6.0, "Late Publisher Field"),
    "GAU1": ("gauge", 4.0, "Gauge Check Airport"),
    "HNG9": ("hung", 2.0, "Silent Airport"),
    "STM1": ("storm", 8.0, "Storm Watch Field"),
    "CHT1": ("chart", 7.0, "Chart Valley Airport"),
    "GAP1": ("gappy", 4.0, "Gappy Field"),
    # The nearest station reports temperature but no precipitation; the rain comes from one farther away.
    "TMP1": ("split", 3.0, "Thermometer Only Airport"),
    "PCP1": ("split", 9.0, "Rain Gauge Mesonet"),
    "FIN1": ("final", 5.0, "Final Phase Field"),
    "PRV1": ("provisional", 5.0, "Slow Publisher Field"),
    "RFL1": ("refill", 6.0, "Refill Field"),
    "TMP2": ("split_held", 3.0, "Second Thermometer Airport"),
    "PCP2": ("split_held", 9.0, "Second Rain Mesonet"),
    "STH1": ("start_held", 5.0, "Start Held Field"),
    "OBP1": ("observed_pending", 5.0, "Never Published Field"),
    "OBR1": ("observed_reported", 5.0, "Prompt Publisher Field"),
    "OBL1": ("observed_later", 5.0, "Later Publisher Field"),
    "SLW1": ("slow", 5.0, "Slow Answer Field"),
    "ALT1": ("altered", 5.0, "Altered Report Field"),
}


@pytest.fixture(scope="session")
def app_meteostat_server() -> Iterator[FakeMeteostat]:
    """The session's fake server for whole-app tests, with the stations of APP_STATIONS."""
    yield from _serve_stations(APP_STATIONS, APP_SITES)


@pytest.fixture
def app_meteostat(app, app_meteostat_server, meteostat_cache) -> FakeMeteostat:
    """The app (made first: create_app configures weather) pointed at the whole-app fake server."""
    app.config.update(WEATHER_ENDPOINT=app_meteostat_server.base_url, WEATHER_DEADLINE_S=3.0)
    source.configure(app_meteostat_server.base_url, meteostat_cache, timeout_s=APP_SOCKET_TIMEOUT_S)
    source.start_fetcher()  # as fake_meteostat does
    return app_meteostat_server


@pytest.fixture
def short_socket_timeout(app_meteostat, meteostat_cache) -> None:
    """The whole-app fake server's sockets give up after SOCKET_TIMEOUT_S, for a test that hangs a path: the
    lookup stuck on it then ends (and frees the fetcher) soon after the test's deadline."""
    source.configure(app_meteostat.base_url, meteostat_cache, timeout_s=SOCKET_TIMEOUT_S)


@pytest.fixture
def permit_at(make):
    """`permit_at(site, status="active", **fields)`: a permit at one of APP_SITES, in that status."""
    from inspect_app.extensions import db
    from inspect_app.permits import services as permits

    path = {"issued": [], "active": ["active"], "stop_work": ["active", "stop_work"],
            "final_submissions": ["active", "final_submissions"]}

    def permit_at(site: str, status: str = "active", **fields):
        latitude, longitude = APP_SITES[site]
        permit = make.permit(latitude=latitude, longitude=longitude, **fields)
        for step in path[status]:
            if permit.status != step:  # a permit made with a construction start is active already
                permits.change_status(None, permit, step, by_its_act=True)  # a stop-work as its order does
        db.session.commit()
        return permit

    return permit_at


@pytest.fixture
def report():
    """`report(permit, performed_at, **fields)`: an erosion-control inspection report of the permit."""
    from inspect_app.extensions import db
    from inspect_app.inspections.models import Inspection

    def report(permit, performed_at, **fields):
        fields.setdefault("inspector_name", "Pat Inspector")
        fields.setdefault("inspector_credentials", "PE No. 40001, CPESC No. 1")
        fields.setdefault("type", "erosion_control")
        inspection = Inspection(permit_id=permit.id, performed_at=performed_at, **fields)
        db.session.add(inspection)
        db.session.commit()
        return inspection

    return report
