"""Weather from meteostat for a report: conditions at the inspection and the previous 24 hours' rain.

Spec "Weather": the nearest station with data, its distance, temperature, conditions, wind and the
precipitation in the 24 hours before the inspection (§380-16 C(4)(f)[1](e),(f)). Values are SI, as
stored; the *_to_* helpers convert for display.

Every network call is bounded: a lookup runs in a daemon worker thread that the caller waits on for
at most `deadline_s`; at most `MAX_IN_FLIGHT` workers exist at once (a further lookup is answered
*pending* at once instead of starting a thread); and each fetch's sockets time out after the
configured `timeout_s`, so a worker stuck on a server that accepts and never answers ends by itself
(the first failure ends its walk over stations, so it lives at most about 3 × `timeout_s`: the
station list plus two yearly files). So threads never pile up, even through a long outage.

Each parameter comes from the nearest station (within `SEARCH_RADIUS_M`) that has data for it in the
window (spec "Weather"): many airport and mesonet stations report temperature but no precipitation, so
the rain may come from a station a little farther away than the temperature. `WeatherResult.stations`
records each choice with the hours it covered.

meteostat (and with it pandas and numpy, about 160 MB) never enters an app process: each worker thread
asks a fetcher process (`weather.fetcher`, started on the first lookup, ended when idle) for the stations
near a site and for a station's hours, and this module does the rest; what pages need to know of meteostat's
providers and condition codes is in `weather.providers`.

This module keeps no store: `lookup` returns the hourly rows it used (`HourlyObservation`, shaped
like `weather.models.WeatherObservation`) and `summarize` / `daily_totals` rebuild a result from
stored rows alone, so the database layer can cache what was fetched and never trust meteostat's cache.
"""
from __future__ import annotations

import atexit
import bisect
import contextlib
import datetime as dt
import json
import logging
import math
import queue
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeVar
from zoneinfo import ZoneInfo

from inspect_app.types import LOCAL_TZ
from inspect_app.units import compass_point
from inspect_app.weather import providers

Status = Literal["complete", "incomplete", "pending"]
T = TypeVar("T")

SEARCH_RADIUS_M = 50_000  # a station farther than this is not "representative" of the site
MAX_CANDIDATES = 5  # nearest stations tried, in order, for one with data
# A station list is asked for this far around a site, so it holds the search radius of every site within
# AREA_RADIUS_M - SEARCH_RADIUS_M (100 km) of it: a town's permits and reports share one list.
AREA_RADIUS_M = 150_000
AREA_LIMIT = 2_000  # stations in one list at most; a fuller list covers only to its farthest station
EARTH_RADIUS_M = 6_371_000  # meteostat's, in its distance
MIN_PRECIP_HOURS = 20  # of 24: fewer and the 24-hour total is reported as incomplete, never as zero
NOW_LOOKBACK = dt.timedelta(hours=2)  # an hourly value this old still describes "the time of inspection"
# Recent hours can lag a day or more and regional outages of days have been seen; after this long
# the hours a station has not published are taken as never coming, so the result is final.
PUBLICATION_LAG = dt.timedelta(days=7)
MAX_IN_FLIGHT = 4  # worker threads alive at once, hung or not
MAX_RAINFALL_DAYS = 400
# What a report shows, and the meteostat parameter whose data decides which station gives it.
PARAMETER_GROUPS = {"temperature": "temp", "conditions": "coco", "wind": "wspd", "precipitation": "prcp"}
_ATTRIBUTE = {"temp": "temperature_c", "prcp": "precip_mm", "wspd": "wind_kmh", "wdir": "wind_direction_deg",
              "coco": "condition_code", "snwd": "snow_depth_cm"}


# -- results ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class HourlyObservation:
    """One station-hour as fetched; `hour` is meteostat's UTC label and `precip_mm` the hour ending then."""

    station_id: str
    hour: dt.datetime
    temperature_c: float | None
    precip_mm: float | None
    wind_kmh: float | None
    wind_direction_deg: float | None
    condition_code: int | None
    sources: str  # "temp=isd_lite;prcp=isd_lite;...", one provider (or several) per value present
    snow_depth_cm: float | None = None  # snow on the ground (meteostat's `snwd`), where the station reports it

    def source_of(self, parameter: str) -> str | None:
        """The provider(s) of one meteostat parameter (temp, prcp, wspd, wdir, coco) in this hour."""
        return source_in(self.sources, parameter)


def source_in(sources: str, parameter: str) -> str | None:
    """The provider(s) of one meteostat parameter in an hour's `sources` ("temp=isd_lite;prcp=metar")."""
    for part in sources.split(";"):
        name, _, source = part.partition("=")
        if name == parameter and source:
            return source
    return None


@dataclass(frozen=True)
class Station:
    """The station a result came from."""

    id: str
    name: str
    distance_m: float


@dataclass(frozen=True)
class WeatherResult:
    """Weather for one inspection: the values, where they came from, and whether they are final."""

    status: Status
    reason: str  # why not complete, in words an inspector can read; "" when complete
    final: bool  # False: a later lookup may still change it (pending, model-filled, or too recent)
    at_utc: dt.datetime
    window_start_utc: dt.datetime  # first hourly label counted (T's hour − 23 h)
    window_end_utc: dt.datetime  # last hourly label counted: the hour of the inspection itself
    station: Station | None
    temperature_c: float | None
    condition_code: int | None
    conditions: str | None
    wind_kmh: float | None
    wind_direction_deg: float | None
    wind_direction: str | None  # compass point, e.g. "SW"
    precip_24h_mm: float | None  # sum of the hours that have data; None when no hour has
    precip_hours: int  # hours of the 24 with precipitation data
    precip_model_hours: int  # of those, hours filled by a model rather than observed
    sources: str  # per value, e.g. "temperature=metar; precipitation=isd_lite"; "(model)" marks models
    model_filled: tuple[str, ...]  # values (temperature, conditions, wind, precipitation) from a model
    attribution: str
    fetched_at: dt.datetime | None
    rows: tuple[HourlyObservation, ...]  # every hour used, for the station+hour store
    # Each parameter's station (the nearest with data for it) and the hours of the window it covered.
    stations: tuple[ParameterStation, ...] = ()
    # Hours of the window still to be published, and the time of the latest conditions shown: while
    # hours are missing within the publication lag the values are provisional, the best known so far.
    precip_hours_unpublished: int = 0
    observed_at: dt.datetime | None = None
    station_list_fetched: StationList | None = None  # asked of meteostat for this lookup (to keep)

    @property
    def provisional(self) -> bool:
        """Values known now that later hours may still change (shown on site, marked provisional)."""
        return self.status == "pending" and self.station is not None and bool(self.rows)

    def station_for(self, parameter: str) -> ParameterStation | None:
        """The station chosen for one of PARAMETER_GROUPS (temperature, conditions, wind, precipitation)."""
        return next((s for s in self.stations if s.parameter == parameter), None)


@dataclass(frozen=True)
class ParameterStation:
    """The station one parameter of a report came from, and how many hours of the window it covered."""

    parameter: str  # a key of PARAMETER_GROUPS
    station: Station
    hours: int
    latest: dt.datetime | None = None  # the label of its latest hour with this parameter in the window

    def as_record(self) -> dict[str, Any]:
        """The form stored on the report (inspections.weather_stations)."""
        return {"parameter": self.parameter, "station_id": self.station.id, "name": self.station.name,
                "distance_m": round(self.station.distance_m), "hours": self.hours,
                "latest": self.latest.isoformat() if self.latest else None}


@dataclass(frozen=True)
class DayRainfall:
    """Rain on one local day (the town's time zone): hours ending after midnight up to the next midnight."""

    day: dt.date
    precip_mm: float | None  # None when no hour of the day has data
    hours_with_data: int
    hours_in_day: int  # 23 or 25 on daylight-saving days

    @property
    def complete(self) -> bool:
        """Whether few enough hours are missing for the total to count (the 20-of-24 rule)."""
        return self.hours_with_data >= self.hours_in_day - (24 - MIN_PRECIP_HOURS)


@dataclass(frozen=True)
class RainfallSeries:
    """Daily rain totals at a site, for the storm sweep and the rainfall chart."""

    status: Status
    reason: str
    station: Station | None
    days: tuple[DayRainfall, ...]
    attribution: str
    fetched_at: dt.datetime | None
    rows: tuple[HourlyObservation, ...]
    station_list_fetched: StationList | None = None  # asked of meteostat for this series (to keep)


@dataclass(frozen=True)
class StationList:
    """Meteostat's stations within `radius_m` of a point, as its station list had them when asked.

    A site whose whole search radius lies inside finds its nearest stations here (`nearest`), exactly as
    meteostat would list them, without asking again: the caller keeps lists (weather.services) so the
    reports and charts of a town ask meteostat's station list once a week, not at every lookup.
    """

    latitude: float
    longitude: float
    radius_m: float
    stations: tuple[dict[str, Any], ...]  # as the fetcher's `nearby` gives them, distance_m apart

    def covers(self, latitude: float, longitude: float) -> bool:
        """Whether every station within SEARCH_RADIUS_M of the site is in this list."""
        return distance_m(self.latitude, self.longitude, latitude, longitude) + SEARCH_RADIUS_M <= self.radius_m

    def nearest(self, latitude: float, longitude: float) -> list[dict[str, Any]]:
        """The stations within SEARCH_RADIUS_M of the site, nearest first, each with its distance_m."""
        found = [station | {"distance_m": distance_m(latitude, longitude, station["latitude"], station["longitude"])}
                 for station in self.stations]
        return sorted((s for s in found if s["distance_m"] <= SEARCH_RADIUS_M), key=lambda s: s["distance_m"])


def distance_m(latitude: float, longitude: float, other_latitude: float, other_longitude: float) -> float:
    """Meteostat's distance between two points (its station list's formula, rounded as it rounds)."""
    lat, other_lat = math.radians(latitude), math.radians(other_latitude)
    cosine = (math.cos(lat) * math.cos(other_lat) * math.cos(math.radians(other_longitude - longitude))
              + math.sin(lat) * math.sin(other_lat))
    return round(EARTH_RADIUS_M * math.acos(max(-1.0, min(1.0, cosine))), 1)


# -- configuration ---------------------------------------------------------------------------

@dataclass
class _Settings:
    timeout_s: float = 0.0
    configured: bool = False
    endpoint_base: str | None = None
    cache_dir: Path | None = None


_settings = _Settings()
_in_flight = threading.BoundedSemaphore(MAX_IN_FLIGHT)
_settings_lock = threading.Lock()


def configure(endpoint_base: str | None, cache_dir: Path, timeout_s: float = 2.5) -> None:
    """Point lookups at `endpoint_base` (None: the real service) with bounded, uncached requests.

    Cheap: the fetcher process applies the settings with each request.
    """
    if timeout_s <= 0:
        raise ValueError("timeout_s must be a positive number of seconds")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with _settings_lock:
        _settings.endpoint_base, _settings.cache_dir, _settings.timeout_s = endpoint_base, cache_dir, timeout_s
        _settings.configured = True
    _late.forget()  # hours kept from the service these settings replace


# -- the fetcher process ---------------------------------------------------------------------

_PROJECT_ROOT = Path(__file__).resolve().parents[2]  # where `python -m inspect_app.weather.fetcher` runs
_IDLE_RETIRE_S = 300  # a fetcher idle this long is replaced, well before it would end by itself


@dataclass
class _Fetcher:
    """This process's one fetcher process: requests take turns (`lock`), so a worker never holds more
    than one copy of meteostat and pandas however many of its threads look weather up."""

    lock: threading.Lock
    process: subprocess.Popen[str] | None = None
    used_at: float = 0.0


_fetcher = _Fetcher(threading.Lock())


@atexit.register
def _stop_fetcher() -> None:
    """When this process ends: close the fetcher's input, on which it ends, and reap it."""
    process = _fetcher.process  # not under the lock: a hung lookup's thread may hold it as the process ends
    if process is None:
        return
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def start_fetcher() -> None:
    """Start the fetcher process now if it is not running, and wait until it answers: a batch job (the
    storm sweep, the backfill) calls this first, so its first lookup's deadline is not spent starting it."""
    if not _settings.configured:
        raise RuntimeError("call weather.source.configure() at start-up before looking up weather")
    _fetch("ready")


def _retire(process: subprocess.Popen[str]) -> None:
    """Stop a fetcher outright, reap it and close its pipes."""
    process.kill()
    process.wait()
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):  # a write the dead process never read cannot be flushed
                pipe.close()


def _answer_deadline_s(timeout_s: float) -> float:
    """How long the fetcher may take to answer one request: each of its few downloads gives up after
    `timeout_s`, so one that takes far longer hangs (and holds every lookup of this process behind it)."""
    return 10 * timeout_s + 5


def _answer_line(process: subprocess.Popen[str], deadline_s: float) -> str:
    """The fetcher's answer (one line), or "" when none comes within `deadline_s`."""
    ready, _, _ = select.select([process.stdout], [], [], deadline_s)
    return process.stdout.readline() if ready else ""  # type: ignore[union-attr]


class FetchFailed(Exception):
    """The fetcher could not do a request; `expected` when the weather service could not be reached."""

    def __init__(self, kind: str, message: str, expected: bool) -> None:
        super().__init__(message)
        self.kind, self.expected = kind, expected


def _fetch(op: str, **args: Any) -> tuple[Any, int]:
    """One request to the fetcher process (started if need be): its value and the number of failures
    meteostat logged while answering it."""
    with _settings_lock:
        request = {"settings": [_settings.endpoint_base, str(_settings.cache_dir), _settings.timeout_s],
                   "op": op, "args": args}
    with _fetcher.lock:
        process = _fetcher.process
        if process is None or process.poll() is not None or time.monotonic() - _fetcher.used_at > _IDLE_RETIRE_S:
            if process is not None:
                _retire(process)
            process = _fetcher.process = subprocess.Popen(
                [sys.executable, "-m", "inspect_app.weather.fetcher"], cwd=_PROJECT_ROOT,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            process.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
            line = _answer_line(process, _answer_deadline_s(request["settings"][2]))
        except OSError:
            line = ""
        _fetcher.used_at = time.monotonic()
        if not line:  # it ended, or hangs: it is stopped, and the next request starts another
            _retire(process)
            _fetcher.process = None
            raise FetchFailed("EOFError", "the weather fetcher did not answer", expected=False)
    answer = json.loads(line)
    if not answer["ok"]:
        raise FetchFailed(answer["kind"], answer["message"], answer["expected"])
    return answer["value"], answer["failures"]


# -- bounded worker --------------------------------------------------------------------------

class _Busy(Exception):
    pass


def _run_bounded(work: Callable[[], T], deadline_s: float) -> T:
    """Run `work` in a daemon thread; TimeoutError after `deadline_s`, _Busy if too many are running."""
    if not _in_flight.acquire(blocking=False):
        raise _Busy
    answer: queue.SimpleQueue[tuple[bool, object]] = queue.SimpleQueue()

    def run() -> None:
        try:
            answer.put((True, work()))
        except Exception as exc:  # handed to the caller, who turns it into "pending"
            answer.put((False, exc))
        finally:
            _in_flight.release()

    # Daemon: a worker still waiting on a socket must not hold up the process's exit.
    threading.Thread(target=run, name="weather-lookup", daemon=True).start()
    try:
        ok, value = answer.get(timeout=deadline_s)
    except queue.Empty:
        raise TimeoutError from None
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


@dataclass(frozen=True)
class _Fetched:
    stations: dict[str, Station]  # parameter group -> the nearest station with data for it
    rows: tuple[HourlyObservation, ...]  # the chosen stations' rows
    failed: bool  # the service failed (timeout, server error) before every parameter had a station
    fetched_at: dt.datetime
    station_list_fetched: StationList | None = None


# Rows already fetched in one run (a sweep), by (station, first label, last label): each station's
# file is read once however many permits it serves.
FetchMemo = dict[tuple[str, dt.datetime, dt.datetime], tuple[HourlyObservation, ...]]


def _fetch_per_parameter(latitude: float, longitude: float, start: dt.datetime, end: dt.datetime,
                         exclude: frozenset[str], wanted: Sequence[str],
                         memo: FetchMemo | None = None, held: Mapping[str, frozenset[str]] | None = None,
                         station_list: StationList | None = None) -> _Fetched:
    """In a worker: for each wanted parameter group, the nearest station with data for it in [start, end]
    (naive UTC), walking the stations within the radius nearest first.

    `held`: stations whose hours of the window the caller already stores, with the groups they have
    data for; such a station is chosen (or passed over) from that, without fetching its file again.
    `station_list`: a list the caller keeps; asked of meteostat (and returned) when it does not cover the site.
    """
    fetched_list = None
    if station_list is None or not station_list.covers(latitude, longitude):
        station_list = fetched_list = _station_list(latitude, longitude)
    nearby = station_list.nearest(latitude, longitude)
    chosen: dict[str, Station] = {}
    rows: list[HourlyObservation] = []
    tried = 0
    for meta in nearby:
        station_id = meta["id"]
        if station_id in exclude:
            continue
        if tried == MAX_CANDIDATES or len(chosen) == len(wanted):
            break
        tried += 1
        found = Station(station_id, meta["name"], meta["distance_m"])
        if held is not None and station_id in held:
            for group in wanted:
                if group not in chosen and group in held[station_id]:
                    chosen[group] = found
            continue
        key = (station_id, start, end)
        fetched = memo.get(key) if memo is not None else None
        if fetched is None:
            fetched, failed = _hourly(meta, start, end)
            if failed:
                # A nearer station may have data we could not read: never fall back past it.
                return _Fetched({}, (), True, dt.datetime.now(dt.UTC), fetched_list)
            if memo is not None:
                memo[key] = fetched
        used = False
        for group in wanted:
            attribute = _ATTRIBUTE[PARAMETER_GROUPS[group]]
            if group not in chosen and any(getattr(r, attribute) is not None for r in fetched):
                chosen[group] = found
                used = True
        if used:
            rows.extend(fetched)
    return _Fetched(chosen, tuple(rows), False, dt.datetime.now(dt.UTC), fetched_list)


def _station_list(latitude: float, longitude: float) -> StationList:
    """Meteostat's stations within AREA_RADIUS_M of the site, through the fetcher."""
    found, _ = _fetch("nearby", latitude=latitude, longitude=longitude, radius_m=AREA_RADIUS_M, limit=AREA_LIMIT)
    radius_m = AREA_RADIUS_M if len(found) < AREA_LIMIT else found[-1]["distance_m"]
    return StationList(latitude, longitude, radius_m,
                       tuple({k: v for k, v in station.items() if k != "distance_m"} for station in found))


def _hourly(station: dict[str, Any], start: dt.datetime, end: dt.datetime
            ) -> tuple[tuple[HourlyObservation, ...], bool]:
    """A station's hours from `start` to `end` (naive UTC) through the fetcher, and whether meteostat
    failed while reading them (then the rows may lack hours that exist)."""
    fetched, failures = _fetch("hourly", station=station, start=start.isoformat(), end=end.isoformat())
    rows = tuple(HourlyObservation(station["id"], dt.datetime.fromisoformat(hour).replace(tzinfo=dt.UTC),
                                   temperature_c=temp, precip_mm=prcp, wind_kmh=wspd, wind_direction_deg=wdir,
                                   condition_code=None if coco is None else int(coco), sources=sources,
                                   snow_depth_cm=snwd)
                 for hour, temp, prcp, wspd, wdir, coco, snwd, sources in fetched)
    return rows, failures > 0


def _unreachable(what: str, error: Exception) -> str:
    """Log a failed lookup: one line with the reason when the service cannot be reached (it happens
    every time the network is down), a traceback only for an error nobody expected."""
    log = logging.getLogger(__name__)
    # The fetcher tells which of its errors mean "could not be reached" (weather.fetcher.answer).
    expected = error.expected if isinstance(error, FetchFailed) else isinstance(error, OSError)
    kind = error.kind if isinstance(error, FetchFailed) else type(error).__name__
    if expected:
        log.warning("%s: the weather service could not be reached (%s: %s)", what, kind, error)
    else:
        log.error("%s failed unexpectedly", what, exc_info=error)
    return "the weather service could not be reached"


# -- the inspection's weather ----------------------------------------------------------------

def inspection_window(at_utc: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """First and last hourly labels of the 24 hours ending at the inspection (both inclusive)."""
    # An hourly row labelled H holds the rain of the hour ending at H. The window is the 24 rows
    # up to the label of the inspection's own hour, floor(T): the rain of the 24 hours ending at
    # the last full hour at or before T. Rain after the inspection is never counted.
    end = _utc(at_utc).replace(minute=0, second=0, microsecond=0)
    return end - dt.timedelta(hours=23), end


def lookup(latitude: float, longitude: float, at_utc: dt.datetime, *, deadline_s: float = 3.0,
           exclude_stations: Iterable[str] = (),
           held: Mapping[str, tuple[HourlyObservation, ...]] | None = None,
           station_list: StationList | None = None) -> WeatherResult:
    """Weather at the inspection, each parameter from the nearest station with data for it; pending if
    it cannot be had now.

    `held`: stations whose hours of the window the caller stores already, with those hours; the
    nearest-station walk uses them as they are instead of fetching those stations' files again.
    `station_list`: one the caller keeps (see `StationList`); a new one is asked for if it does not
    cover the site, and returned in the result's `station_list_fetched` for the caller to keep.
    """
    _check_ready(latitude, longitude, deadline_s)
    start, end = inspection_window(at_utc)
    exclude = frozenset(exclude_stations)
    memo: FetchMemo = {(station_id, _naive(start), _naive(end)): rows for station_id, rows in (held or {}).items()}
    try:
        fetched = _run_bounded(
            lambda: _fetch_per_parameter(latitude, longitude, _naive(start), _naive(end), exclude,
                                         tuple(PARAMETER_GROUPS), memo, station_list=station_list),
            deadline_s)
    except TimeoutError:
        return _pending(at_utc, f"the weather service did not answer within {deadline_s:g} s")
    except _Busy:
        return _pending(at_utc, "earlier weather requests are still waiting on the service")
    except Exception as error:
        return _pending(at_utc, _unreachable("weather lookup", error))
    if fetched.failed:
        return _pending(at_utc, "the weather service failed to send a station's data")
    result = summarize(fetched.rows, fetched.stations, at_utc, fetched_at=fetched.fetched_at,
                       now=dt.datetime.now(dt.UTC))
    return replace(result, station_list_fetched=fetched.station_list_fetched)


def summarize(rows: Sequence[HourlyObservation], stations: Mapping[str, Station] | Station | None,
              at_utc: dt.datetime, *, fetched_at: dt.datetime | None, now: dt.datetime) -> WeatherResult:
    """The inspection's weather from hourly rows (fresh or stored); no I/O.

    `stations` gives each parameter group's station (a single Station: all of them); each value is read
    from its own station's rows only.
    """
    if isinstance(stations, Station):
        stations = {group: stations for group in PARAMETER_GROUPS}
    stations = dict(stations or {})
    start, end = inspection_window(at_utc)
    window = tuple(sorted((r for r in rows if start <= r.hour <= end), key=lambda r: r.hour))

    def rows_of(group: str) -> tuple[HourlyObservation, ...]:
        station = stations.get(group)
        return tuple(r for r in window if station is not None and r.station_id == station.id)

    settled = _utc(now) - end >= PUBLICATION_LAG
    precip_station = stations.get("precipitation")
    precip_rows = rows_of("precipitation")
    precip = [r for r in precip_rows if r.precip_mm is not None]
    precip_model = [r for r in precip if _is_model(r.source_of("prcp"))]
    temperature = _latest(rows_of("temperature"), end, lambda r: r.temperature_c is not None)
    condition = _latest(rows_of("conditions"), end, lambda r: r.condition_code is not None)
    wind = _latest(rows_of("wind"), end, lambda r: r.wind_kmh is not None)

    used = {"temperature": temperature and temperature.source_of("temp"),
            "conditions": condition and condition.source_of("coco"),
            "wind": wind and wind.source_of("wspd"),
            "precipitation": _joined(r.source_of("prcp") for r in precip)}
    model_filled = tuple(name for name, source in used.items() if _is_model(source))
    used_rows = tuple(r for r in window if any(s.id == r.station_id for s in stations.values()))
    def covered(group: str) -> ParameterStation:
        attribute = _ATTRIBUTE[PARAMETER_GROUPS[group]]
        hours = [r.hour for r in rows_of(group) if getattr(r, attribute) is not None]
        return ParameterStation(group, stations[group], len(hours), max(hours, default=None))

    chosen = tuple(covered(group) for group in PARAMETER_GROUPS if group in stations)
    published = max((r.hour for r in precip_rows), default=None)
    unpublished = 0 if published is None else round((end - published) / dt.timedelta(hours=1))

    if not stations or not used_rows:
        status: Status = "incomplete" if settled else "pending"
        reason = (f"no station within {SEARCH_RADIUS_M // 1000} km has published these hours"
                  + ("" if settled else " yet"))
    elif precip_station is None:
        status = "incomplete" if settled else "pending"
        reason = (f"no station within {SEARCH_RADIUS_M // 1000} km has published precipitation for these hours"
                  + ("" if settled else " yet"))
    elif unpublished > 0 and not settled:
        status = "pending"
        reason = (f"{precip_station.name} has not yet published the last {unpublished} hour(s) before the "
                  "inspection")
    elif len(precip) >= MIN_PRECIP_HOURS:
        status, reason = "complete", ""
    else:
        status = "incomplete"
        reason = (f"{precip_station.name} has precipitation for only {len(precip)} of the 24 hours; "
                  "the total is not the full 24 hours")
    if status == "pending" and precip_station is not None:
        # Provisional, for the inspector on site: the latest conditions published, however old (the
        # result says when they were observed), until the hour of the inspection is published.
        temperature = temperature or _latest(rows_of("temperature"), end, lambda r: r.temperature_c is not None,
                                             lookback=None)
        condition = condition or _latest(rows_of("conditions"), end, lambda r: r.condition_code is not None,
                                         lookback=None)
        wind = wind or _latest(rows_of("wind"), end, lambda r: r.wind_kmh is not None, lookback=None)
        used |= {"temperature": temperature and temperature.source_of("temp"),
                 "conditions": condition and condition.source_of("coco"), "wind": wind and wind.source_of("wspd")}
        model_filled = tuple(name for name, source in used.items() if _is_model(source))
    final = settled or (status == "complete" and not model_filled)
    observed = temperature or condition or wind

    return WeatherResult(
        status=status, reason=reason, final=final, at_utc=_utc(at_utc),
        window_start_utc=start, window_end_utc=end, station=precip_station or next(iter(stations.values()), None),
        temperature_c=temperature.temperature_c if temperature else None,
        condition_code=condition.condition_code if condition else None,
        conditions=providers.condition_name(condition.condition_code) if condition else None,
        wind_kmh=wind.wind_kmh if wind else None,
        wind_direction_deg=wind.wind_direction_deg if wind else None,
        wind_direction=(compass_point(wind.wind_direction_deg)
                        if wind and wind.wind_direction_deg is not None else None),
        precip_24h_mm=_total_mm(r.precip_mm for r in precip) if precip else None,  # type: ignore[misc]
        precip_hours=len(precip), precip_model_hours=len(precip_model),
        sources=_describe_sources(used), model_filled=model_filled,
        attribution=attribution(used.values()) if used_rows else "",
        fetched_at=fetched_at, rows=used_rows, stations=chosen,
        precip_hours_unpublished=unpublished if precip_station else 0,
        observed_at=observed.hour if observed else None)


# -- daily rainfall (storm sweep, 60-day chart) ----------------------------------------------

def daily_precipitation(latitude: float, longitude: float, start_day: dt.date, end_day: dt.date, *,
                        deadline_s: float = 3.0, exclude_stations: Iterable[str] = (),
                        memo: FetchMemo | None = None,
                        held: Mapping[str, frozenset[str]] | None = None,
                        station_list: StationList | None = None) -> RainfallSeries:
    """Rain per local day from the hourly data of the nearest station with precipitation data.

    `memo` (one per run) keeps each station's rows so permits sharing a station fetch its file once.
    `held`: stations whose hours the caller stores already (see `_fetch_per_parameter`); their rows
    are not in the result, so its days and status then speak only of the stations fetched.
    `station_list`: as for `lookup`.
    """
    # Hourly, not meteostat's daily series: a daily row does not say how many hours it holds (so a
    # day with 3 reported hours would pass for a dry day), and its day is not the town's local day,
    # which is the day the chart speaks of (23 or 25 hours on clock-change days).
    _check_ready(latitude, longitude, deadline_s)
    if end_day < start_day:
        raise ValueError("end_day must not be before start_day")
    if (end_day - start_day).days + 1 > MAX_RAINFALL_DAYS:
        raise ValueError(f"ask for at most {MAX_RAINFALL_DAYS} days of rainfall at once")
    first, last = _rainfall_window(start_day, end_day)
    exclude = frozenset(exclude_stations)
    try:
        fetched = _run_bounded(
            lambda: _fetch_per_parameter(latitude, longitude, _naive(first), _naive(last), exclude,
                                         ("precipitation",), memo, held, station_list),
            deadline_s)
    except TimeoutError:
        return _pending_series(start_day, end_day,
                               f"the weather service did not answer within {deadline_s:g} s")
    except _Busy:
        return _pending_series(start_day, end_day,
                               "earlier weather requests are still waiting on the service")
    except Exception as error:
        return _pending_series(start_day, end_day, _unreachable("rainfall lookup", error))
    if fetched.failed:
        return _pending_series(start_day, end_day, "the weather service failed to send a station's data")
    station = fetched.stations.get("precipitation")
    days = daily_totals(fetched.rows, start_day, end_day)
    if station is None:
        status: Status = "incomplete"
        reason = f"no station within {SEARCH_RADIUS_M // 1000} km has precipitation for these days"
    elif all(day.complete for day in days):
        status, reason = "complete", ""
    else:
        status = "incomplete"
        missing = sum(1 for day in days if not day.complete)
        reason = f"{station.name} is missing precipitation hours on {missing} day(s)"
    return RainfallSeries(status=status, reason=reason, station=station, days=days,
                          attribution=attribution(r.source_of("prcp") for r in fetched.rows),
                          fetched_at=fetched.fetched_at, rows=fetched.rows,
                          station_list_fetched=fetched.station_list_fetched)


class _LateHours:
    """A station's hours fetched lately, kept a while for the next lookups of that station.

    - Hours that came after their caller had stopped waiting (its deadline) are kept `KEEP_S` for the next
      lookup, which takes them. Else, under load, each chart of a slow station asked for the same 60 days
      again, gave up again at its deadline, and threw away what the fetcher had read for it: the station
      stayed "pending" however often it was asked, and the fetcher never stopped reading its files.
    - Hours that came in time are shared `SHARE_S` with the lookups of the same station that waited for this
      one (its lock): charts of one station opened at once read its files once, not once each, while the
      first one's hours are not yet in the database."""

    KEEP_S = 600.0
    SHARE_S = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._station_locks: dict[str, threading.Lock] = {}
        # station id -> (until, first, last, rows, taken once only)
        self._kept: dict[str, tuple[float, dt.datetime, dt.datetime, tuple[HourlyObservation, ...], bool]] = {}

    def lock_of(self, station_id: str) -> threading.Lock:
        with self._lock:
            return self._station_locks.setdefault(station_id, threading.Lock())

    def keep(self, station_id: str, first: dt.datetime, last: dt.datetime,
             rows: tuple[HourlyObservation, ...], *, late: bool) -> None:
        """Keep a fetch's hours: `late` (its caller gave up) for the next lookup alone, else shared a while."""
        with self._lock:
            now = time.monotonic()
            for stale in [key for key, (until, *_) in self._kept.items() if now >= until]:
                del self._kept[stale]
            self._kept[station_id] = (now + (self.KEEP_S if late else self.SHARE_S), first, last, rows, late)

    def forget(self) -> None:
        with self._lock:
            self._kept.clear()

    def take(self, station_id: str, first: dt.datetime, last: dt.datetime) -> tuple[HourlyObservation, ...] | None:
        """The kept hours from `first` to `last`, if a lookup kept them all, else None (hours that came late
        are taken once: no longer kept)."""
        with self._lock:
            kept = self._kept.get(station_id)
            if kept is None or time.monotonic() >= kept[0] or not (kept[1] <= first and last <= kept[2]):
                return None
            if kept[4]:
                del self._kept[station_id]
        return tuple(row for row in kept[3] if first <= row.hour <= last)


_late = _LateHours()


def station_hours(station_id: str, first: dt.datetime, last: dt.datetime, *,
                  deadline_s: float = 3.0) -> tuple[tuple[HourlyObservation, ...] | None, str]:
    """One known station's hours from `first` to `last` (UTC labels, inclusive), bounded by `deadline_s`.

    For hours missing from the store of a station already chosen (the nearest with data): the choice
    is not made again. Returns (rows, "") or (None, why) when the service failed or did not answer.
    """
    if not _settings.configured:
        raise RuntimeError("call weather.source.configure() at start-up before looking up weather")
    if not deadline_s > 0:
        raise ValueError("deadline_s must be a positive number of seconds")
    if last < first:
        return (), ""

    gave_up = threading.Event()
    deadline = time.monotonic() + deadline_s

    def fetch() -> tuple[HourlyObservation, ...] | None:
        with _late.lock_of(station_id):  # a lookup of the same station waits for this one, then takes its hours
            kept = _late.take(station_id, first, last)
            if kept is not None:
                return kept
            rows, failed = _hourly({"id": station_id}, _naive(first), _naive(last))
            if not failed:
                # Late if the caller gave up, or will as this answer reaches it: kept for the next lookup.
                _late.keep(station_id, first, last, rows, late=gave_up.is_set() or time.monotonic() >= deadline)
            return None if failed else rows

    try:
        rows = _run_bounded(fetch, deadline_s)
    except TimeoutError:
        gave_up.set()  # if the hours come, they are kept for the next lookup of the station
        return None, f"the weather service did not answer within {deadline_s:g} s"
    except _Busy:
        return None, "earlier weather requests are still waiting on the service"
    except Exception as error:
        return None, _unreachable("station hours lookup", error)
    if rows is None:
        return None, "the weather service failed to send a station's data"
    return rows, ""


def daily_totals(rows: Iterable[HourlyObservation], start_day: dt.date, end_day: dt.date,
                 tz: ZoneInfo = LOCAL_TZ) -> tuple[DayRainfall, ...]:
    """Rain per local day from hourly rows (fresh or stored); no I/O."""
    bounds = day_bounds(start_day, end_day, tz)
    by_day: list[list[float]] = [[] for _ in bounds[:-1]]
    for row in rows:
        if row.precip_mm is None:
            continue
        # The row labelled H holds the hour ending at H, so it belongs to the day that hour began in.
        index = bisect.bisect_right(bounds, row.hour - dt.timedelta(hours=1)) - 1
        if 0 <= index < len(by_day):
            by_day[index].append(row.precip_mm)
    return day_rainfall(start_day, bounds, [(_tenths(values), len(values)) for values in by_day])


def day_bounds(start_day: dt.date, end_day: dt.date, tz: ZoneInfo = LOCAL_TZ) -> tuple[dt.datetime, ...]:
    """Each local day's first instant in UTC, from `start_day` to the day after `end_day`: day i runs from
    bounds[i] up to bounds[i + 1], so it holds the hourly labels from bounds[i] + 1 h to bounds[i + 1] (a
    label ends its hour). What the database groups stored hours by (`weather.services.stored_rain`)."""
    return tuple(_local_midnight(start_day + dt.timedelta(days=i), tz)
                 for i in range((end_day - start_day).days + 2))


def day_rainfall(start_day: dt.date, bounds: Sequence[dt.datetime],
                 totals: Sequence[tuple[int, int]]) -> tuple[DayRainfall, ...]:
    """The days of `day_bounds` from each one's (rain in tenths of a mm, hours with data), in order; no I/O."""
    return tuple(DayRainfall(day=start_day + dt.timedelta(days=i), precip_mm=tenths / 10 if hours else None,
                             hours_with_data=hours, hours_in_day=round((ends - begins).total_seconds() / 3600))
                 for i, ((tenths, hours), begins, ends) in enumerate(zip(totals, bounds, bounds[1:])))


def _rainfall_window(start_day: dt.date, end_day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    first = _local_midnight(start_day, LOCAL_TZ) + dt.timedelta(hours=1)
    last = _local_midnight(end_day + dt.timedelta(days=1), LOCAL_TZ)
    return first, last


# -- small helpers ---------------------------------------------------------------------------

def attribution(sources: Iterable[str | None]) -> str:
    """The licence attribution for data from these providers, to show wherever the weather is shown."""
    # Meteostat's bulk data is CC BY 4.0; some providers behind it ask to be named too.
    parts = ["Meteostat (CC BY 4.0)"]
    for provider_id in sorted({p for s in sources if s for p in s.split()}):
        provider = providers.PROVIDERS.get(provider_id)
        if provider and provider.attribution:
            named = f"{provider.attribution} ({provider.licence})" if provider.licence else provider.attribution
            if named not in parts:
                parts.append(named)
    return ", ".join(parts)


def _is_model(source: str | None) -> bool:
    return source is not None and any(providers.is_model(provider_id) for provider_id in source.split())


def _describe_sources(used: dict[str, str | None]) -> str:
    parts = [f"{name}={source}{' (model)' if _is_model(source) else ''}"
             for name, source in used.items() if source]
    return "; ".join(parts)[:200]  # fits the report's column


def _joined(sources: Iterable[str | None]) -> str | None:
    seen = list(dict.fromkeys(p for s in sources if s for p in s.split()))
    return " ".join(seen) or None


def _latest(rows: Sequence[HourlyObservation], end: dt.datetime, has: Callable[[HourlyObservation], bool],
            lookback: dt.timedelta | None = NOW_LOOKBACK) -> HourlyObservation | None:
    for row in reversed(rows):
        if lookback is not None and row.hour < end - lookback:
            return None
        if has(row):
            return row
    return None


def _total_mm(values: Iterable[float]) -> float:
    return _tenths(values) / 10


def _tenths(values: Iterable[float]) -> int:
    # meteostat gives precipitation to 0.1 mm; adding tenths as integers keeps a 6.4 mm day 6.4,
    # not 6.3999999, which matters against the 6.35 mm (0.25 in) storm threshold (the database adds
    # stored hours the same way: `weather.services.stored_rain`).
    return sum(round(v * 10) for v in values)


def _local_midnight(day: dt.date, tz: ZoneInfo) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=tz).astimezone(dt.UTC)


def _utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        raise ValueError("times must be timezone-aware (UTC or local), not naive")
    return value.astimezone(dt.UTC)


def _naive(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.UTC).replace(tzinfo=None)  # meteostat's times are naive UTC


def _check_ready(latitude: float, longitude: float, deadline_s: float) -> None:
    if not _settings.configured:
        raise RuntimeError("call weather.source.configure() at start-up before looking up weather")
    for name, value, limit in (("latitude", latitude, 90), ("longitude", longitude, 180)):
        if not isinstance(value, (int, float)) or not math.isfinite(value) or abs(value) > limit:
            raise ValueError(f"{name} must be a number between -{limit} and {limit}")
    if not deadline_s > 0:
        raise ValueError("deadline_s must be a positive number of seconds")


def _pending(at_utc: dt.datetime, reason: str) -> WeatherResult:
    start, end = inspection_window(at_utc)
    return WeatherResult(
        status="pending", reason=reason, final=False, at_utc=_utc(at_utc), window_start_utc=start,
        window_end_utc=end, station=None, temperature_c=None, condition_code=None, conditions=None,
        wind_kmh=None, wind_direction_deg=None, wind_direction=None, precip_24h_mm=None,
        precip_hours=0, precip_model_hours=0, sources="", model_filled=(), attribution="",
        fetched_at=None, rows=())


def _pending_series(start_day: dt.date, end_day: dt.date, reason: str) -> RainfallSeries:
    return RainfallSeries(status="pending", reason=reason, station=None,
                          days=daily_totals((), start_day, end_day), attribution="",
                          fetched_at=None, rows=())
