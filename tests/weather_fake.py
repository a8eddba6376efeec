"""A fake meteostat data server on 127.0.0.1: a real `stations.db` and real gzipped hourly CSVs.

meteostat's own code downloads these over HTTP exactly as it would from the real service, so tests
exercise the library and our wrapper end to end. Reuse it from any test package:

    fake = FakeMeteostat()
    fake.add_station("72509", "Boston Logan", 42.36, -71.01)   # every station before start()
    fake.start()                                               # session scope; fake.stop() at the end
    # before each test (cheap), since another package may have pointed weather elsewhere:
    weather.source.configure(fake.base_url, cache_dir, timeout_s=1.0)
    fake.publish_hourly("72509", hours(dt.datetime(2024, 5, 1, tzinfo=dt.UTC), 24, temp=14.0, prcp=0.2))
    fake.hang("/hourly/2024/72509.csv.gz")                     # accept and never answer
    fake.fail("/hourly/2024/72509.csv.gz", 503)                # or answer with a server error

A yearly file with no published hours answers 404, as meteostat does before an hour is published.
meteostat keeps the station list on disk, so declare every station before the first lookup.
"""
from __future__ import annotations

import csv
import datetime as dt
import gzip
import io
import secrets
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_PARAMETERS = ("temp", "prcp", "wspd", "wdir", "coco", "snwd")


@dataclass(frozen=True)
class Hour:
    """One station-hour as meteostat publishes it; `time` is the hour's UTC label."""

    time: dt.datetime
    temp: float | None = None
    prcp: float | None = None
    wspd: float | None = None
    wdir: int | None = None
    coco: int | None = None
    snwd: float | None = None  # snow depth, cm
    source: str = "isd_lite"  # e.g. "isd_lite", "metar", or a model such as "metno_forecast"


@dataclass(frozen=True)
class _Station:
    id: str
    name: str
    latitude: float
    longitude: float
    elevation: int
    country: str
    region: str
    timezone: str


class FakeMeteostat:
    """A meteostat look-alike with per-path behaviour: serve, 404 (not yet published), 500, slow, or hang."""

    def __init__(self) -> None:
        self._stations: dict[str, _Station] = {}
        self._hours: dict[str, dict[dt.datetime, Hour]] = {}
        self._behaviour: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[str] = []
        self.base_url = ""
        # Its own path on the port: meteostat keeps the station list on disk by endpoint (weather/fetcher.py),
        # and a port an earlier fake used (this run's, or a run before) must not serve that fake's list.
        self._prefix = f"/{secrets.token_hex(8)}"

    # -- what the server holds ---------------------------------------------------------------

    def add_station(self, station_id: str, name: str, latitude: float, longitude: float, *,
                    elevation: int = 20, country: str = "US", region: str = "MA",
                    timezone: str = "America/New_York") -> None:
        """Put a station in the station list (declare all of them before the first lookup)."""
        with self._lock:
            self._stations[station_id] = _Station(station_id, name, latitude, longitude, elevation,
                                                  country, region, timezone)

    def publish_hourly(self, station_id: str, hours: Iterable[Hour]) -> None:
        """Add (or replace) hours in the station's yearly files, as meteostat does when data arrives."""
        with self._lock:
            table = self._hours.setdefault(station_id, {})
            for hour in hours:
                label = hour.time.astimezone(dt.UTC).replace(tzinfo=None)
                table[label] = hour

    def withdraw_hourly(self, station_id: str) -> None:
        """Remove every hour of a station, so its files answer 404."""
        with self._lock:
            self._hours.pop(station_id, None)

    def hang(self, path: str) -> None:
        """Make `path` accept the connection and never answer."""
        self._behaviour[path] = "hang"

    def slow(self, path: str, seconds: float) -> None:
        """Make `path` answer, but only after `seconds` (a service slow under load)."""
        self._behaviour[path] = f"slow {seconds}"

    def fail(self, path: str, status: int = 500) -> None:
        """Make `path` answer with a server error."""
        self._behaviour[path] = str(status)

    def serve(self, path: str) -> None:
        """Return `path` to normal service."""
        self._behaviour.pop(path, None)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, port: int = 0) -> str:
        """Listen on 127.0.0.1 (`port`, or a free one) and return the base URL."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                fake._answer(self)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return  # keep test output quiet

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-meteostat",
                                        daemon=True)
        self._thread.start()
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}{self._prefix}"
        return self.base_url

    def stop(self) -> None:
        """Release hung requests and shut the server down."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- answering -------------------------------------------------------------------------

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        path = request.path.split("?", 1)[0]
        if not path.startswith(f"{self._prefix}/"):
            request.send_error(404)  # another fake's address
            return
        path = path.removeprefix(self._prefix)
        self.requests.append(path)
        behaviour = self._behaviour.get(path, "serve")
        if behaviour == "hang":
            # Accept and say nothing until the test session ends; the client must give up by itself.
            self._stopping.wait()
            return
        if behaviour.startswith("slow "):
            self._stopping.wait(float(behaviour.split()[1]))
        elif behaviour != "serve":
            request.send_error(int(behaviour))
            return
        body = self._body(path)
        if body is None:
            request.send_error(404)
            return
        request.send_response(200)
        request.send_header("Content-Type", "application/octet-stream")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    def _body(self, path: str) -> bytes | None:
        if path == "/stations.db":
            return self._stations_db()
        parts = path.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "hourly" and parts[2].endswith(".csv.gz"):
            return self._hourly_csv(parts[2].removesuffix(".csv.gz"), int(parts[1]))
        return None

    def _stations_db(self) -> bytes:
        """The station list in meteostat's SQLite layout (tables stations, names, identifiers, inventory)."""
        conn = sqlite3.connect(":memory:")
        try:
            conn.executescript(
                "CREATE TABLE stations (id TEXT PRIMARY KEY, country TEXT, region TEXT, latitude REAL,"
                " longitude REAL, elevation INTEGER, timezone TEXT);"
                "CREATE TABLE names (station TEXT, language TEXT, name TEXT);"
                "CREATE TABLE identifiers (station TEXT, key TEXT, value TEXT);"
                "CREATE TABLE inventory (station TEXT, provider TEXT, parameter TEXT, start TEXT,"
                " end TEXT, completeness REAL);"
            )
            with self._lock:
                stations = list(self._stations.values())
            for s in stations:
                conn.execute("INSERT INTO stations VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (s.id, s.country, s.region, s.latitude, s.longitude, s.elevation,
                              s.timezone))
                conn.execute("INSERT INTO names VALUES (?, 'en', ?)", (s.id, s.name))
                conn.execute("INSERT INTO identifiers VALUES (?, 'wmo', ?)", (s.id, s.id))
            conn.commit()
            return conn.serialize()
        finally:
            conn.close()

    def _hourly_csv(self, station_id: str, year: int) -> bytes | None:
        """One station-year as meteostat's gzipped CSV; None (404) when nothing is published."""
        with self._lock:
            hours = sorted((label, h) for label, h in self._hours.get(station_id, {}).items()
                           if label.year == year)
        if not hours:
            return None
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        header = ["year", "month", "day", "hour"]
        for name in _PARAMETERS:
            header += [name, f"{name}_source"]
        writer.writerow(header)
        for label, hour in hours:
            row: list[object] = [label.year, label.month, label.day, label.hour]
            for name in _PARAMETERS:
                value = getattr(hour, name)
                row += ["", ""] if value is None else [value, hour.source]
            writer.writerow(row)
        return gzip.compress(text.getvalue().encode())


def hours(start: dt.datetime, count: int, **values: object) -> list[Hour]:
    """`count` consecutive hours from `start` (an aware UTC label), all with the same values."""
    return [Hour(start + dt.timedelta(hours=i), **values) for i in range(count)]  # type: ignore[arg-type]


def recent_hour(hours_ago: int) -> dt.datetime:
    """The UTC hourly label `hours_ago` before now, for cases inside meteostat's publication lag."""
    now = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
    return now - dt.timedelta(hours=hours_ago)
