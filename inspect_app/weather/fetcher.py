"""The process that talks to meteostat: `python -m inspect_app.weather.fetcher`, one request per line.

meteostat brings pandas and numpy (about 160 MB), so no app process imports this module (issue 18: an app
server's worker stays small however many reports it looks weather up for). `weather.source` starts this
process when a lookup needs the network, writes one JSON request per line on its standard input and reads
one JSON answer per line from its standard output; the process ends when its input closes (the app
process ended) or after `IDLE_S` without a request, so its memory is held only while lookups happen.

A request: {"settings": [endpoint_base, cache_dir, timeout_s], "op": "nearby" | "hourly" | "ready", "args": {...}}.
An answer: {"ok": true, "value": ..., "failures": n} or {"ok": false, "kind": ..., "message": ...,
"expected": bool}. `failures` counts meteostat's warnings: it returns nothing both for "404, no file" (logged
at INFO) and for a timeout or server error (logged at WARNING or ERROR), and only the log tells them apart.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import logging
import select
import socket
import sys
import traceback
from pathlib import Path
from typing import Any

import meteostat as ms
import meteostat.providers.meteostat.daily as daily_provider
import meteostat.providers.meteostat.hourly as hourly_provider
import pandas as pd
import requests
from meteostat.enumerations import TTL

IDLE_S = 600  # an idle fetcher ends; the next lookup starts another
# meteostat's parameter names, in a row's order; `snwd` (snow depth) is read for snowmelt (CGP 2022 Parts 4.2-4.3).
PARAMETERS = ("temp", "prcp", "wspd", "wdir", "coco", "snwd")
_DEFAULT_ENDPOINTS = (list(type(ms.config).stations_db_endpoints), type(ms.config).hourly_endpoint,
                      type(ms.config).daily_endpoint)


class _FailureCounter(logging.Handler):
    """Counts meteostat's warnings and errors during one request."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def apply_settings(endpoint_base: str | None, cache_dir: Path, timeout_s: float) -> None:
    """Point meteostat at `endpoint_base` (None: the real service) with bounded, uncached requests."""
    if endpoint_base is None:
        stations_endpoints, hourly_endpoint, daily_endpoint = _DEFAULT_ENDPOINTS
        stations_endpoints = list(stations_endpoints)
    else:
        base = endpoint_base.rstrip("/")
        stations_endpoints = [f"{base}/stations.db"]
        hourly_endpoint = f"{base}/hourly/{{year}}/{{station}}.csv.gz"
        daily_endpoint = f"{base}/daily/{{year}}/{{station}}.csv.gz"
    cache_dir.mkdir(parents=True, exist_ok=True)
    # One station-list file per endpoint, so switching endpoints never reuses another's list.
    endpoint_key = hashlib.sha256(stations_endpoints[0].encode()).hexdigest()[:12]
    ms.config.stations_db_endpoints = stations_endpoints
    ms.config.stations_db_file = str(cache_dir / f"stations-{endpoint_key}.db")
    ms.config.cache_directory = str(cache_dir)
    # meteostat's data cache would serve a current-year file for up to 30 days (new hours never
    # appear) and a failed refresh overwrites a good entry; the app keeps its own station+hour store.
    ms.config.cache_enable = False
    # The staleness test is max(ttl, cache_ttl): this makes the station list refresh weekly.
    ms.config.cache_ttl = TTL.WEEK
    ms.config.network_timeout = timeout_s  # requests takes a float
    # Retries sleep 1, 2, 4 s between attempts: far past any deadline. A later lookup is the retry.
    ms.config.network_max_retries = 0
    ms.config.hourly_endpoint = hourly_endpoint
    ms.config.daily_endpoint = daily_endpoint
    # The provider modules copy their endpoint into a module global when first imported, so ms.config
    # alone is ignored once they are loaded: set the globals too.
    hourly_provider.ENDPOINT = hourly_endpoint
    daily_provider.ENDPOINT = daily_endpoint
    # pandas reads the yearly files with urllib, which has no timeout of its own; this process makes
    # one request at a time, so the default socket timeout bounds every read.
    socket.setdefaulttimeout(timeout_s)


def nearby(latitude: float, longitude: float, radius_m: int, limit: int) -> list[dict[str, Any]]:
    """The stations within `radius_m`, nearest first, with what `hourly` needs to know of each."""
    found = ms.stations.nearby(ms.Point(latitude, longitude), radius=radius_m, limit=limit)
    return [{"id": str(station_id), "name": str(meta["name"]), "distance_m": float(meta["distance"]),
             "country": meta["country"], "region": meta["region"], "latitude": float(meta["latitude"]),
             "longitude": float(meta["longitude"]), "timezone": meta["timezone"]}
            for station_id, meta in found.iterrows()]


def hourly(station: dict[str, Any], start: str, end: str) -> list[list[Any]]:
    """A station's hours from `start` to `end` (naive UTC, ISO), each as [hour, temp, prcp, wspd, wdir, coco,
    snwd, sources]; `station` is a `nearby` entry, or {"id": ...} alone for a station named by id."""
    known = ms.Station(id=station["id"], name=station["name"], country=station["country"],
                       region=station["region"], latitude=station["latitude"], longitude=station["longitude"],
                       timezone=station["timezone"]) if "name" in station else station["id"]
    series = ms.hourly(known, dt.datetime.fromisoformat(start), dt.datetime.fromisoformat(end),
                       parameters=[ms.Parameter(p) for p in PARAMETERS])
    frame = series.fetch(sources=True)
    if frame is None or frame.empty:
        return []
    rows = []
    for label, record in frame.iterrows():
        values = [_value(record.get(name)) for name in PARAMETERS]
        sources = ";".join(f"{name}={record[f'{name}_source']}" for name, value in zip(PARAMETERS, values)
                           if value is not None)
        rows.append([pd.Timestamp(label).to_pydatetime().isoformat(), *values, sources])
    return rows


def _value(raw: Any) -> float | None:
    return None if raw is None or pd.isna(raw) else float(raw)


def ready() -> bool:
    """Nothing to do: the answer says this process has started."""
    return True


OPERATIONS = {"nearby": nearby, "hourly": hourly, "ready": ready}


def answer(request: dict[str, Any], counter: _FailureCounter, applied: list[Any]) -> dict[str, Any]:
    """Run one request; every error becomes an answer, `expected` when the service could not be reached."""
    settings = request["settings"]
    try:
        if settings != applied:
            apply_settings(settings[0], Path(settings[1]), float(settings[2]))
            applied[:] = settings
        counter.count = 0
        # meteostat writes its station list in place when it fetches it: one process at a time.
        with open(Path(settings[1]) / "stations.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            value = OPERATIONS[request["op"]](**request["args"])
        return {"ok": True, "value": value, "failures": counter.count}
    except Exception as error:
        # meteostat raises a bare Exception when the station list cannot be downloaded.
        expected = isinstance(error, (OSError, requests.RequestException)) or (
            type(error) is Exception and "download" in str(error))
        message = str(error) if expected else "".join(traceback.format_exception(error))
        return {"ok": False, "kind": type(error).__name__, "message": message, "expected": expected}


def main() -> None:
    """Answer requests until the input closes or stays quiet for IDLE_S."""
    counter = _FailureCounter()
    logging.getLogger("meteostat").addHandler(counter)
    answers, sys.stdout = sys.stdout, sys.stderr  # whatever a library prints must not garble an answer
    applied: list[Any] = []
    while select.select([sys.stdin], [], [], IDLE_S)[0]:
        line = sys.stdin.readline()
        if not line:
            return
        print(json.dumps(answer(json.loads(line), counter, applied)), file=answers, flush=True)


if __name__ == "__main__":
    main()
