"""Weather kept in our own database: reports' weather, the storm sweep and the rainfall chart.

Spec "Weather" and §380-16 C(4)(f)[1](e),(f): a report carries the weather at the time and the
precipitation of the previous 24 hours from the nearest station with data. Every station-hour
fetched from meteostat is stored (by station and hour) and the report is filled from what we store,
so the same hour is fetched once and a report never changes because meteostat's cache did. Every
lookup is bounded by `WEATHER_DEADLINE_S` (see `weather.source`).

Services change state and only flush; the caller (a view, a command, the sync code) commits.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from flask import Flask, current_app
from sqlalchemy import case, func, literal_column, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.dialects import postgresql, sqlite

from inspect_app.audit import services as audit
from inspect_app.extensions import db
from inspect_app.inspections.canonical import reseal_record
from inspect_app.inspections.models import Inspection
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.conditions.models import SnowmeltDischarge
from inspect_app.rules.storms import HOUR, PERIOD_HOURS, FoundSnowmelt, FoundStorm, StormScan, find_snowmelts, find_storms
from inspect_app.types import new_id, utcnow
from inspect_app.weather import source
from inspect_app.weather.models import PermitStation, StationArea, StormEvent, WeatherObservation

# CGP 2022 Part 4: inspections (and so storm inspections) run while the site is under construction, until
# the certificate of completion (§380-18), so through final submissions too, and under a stop-work order:
# the order stops construction, not the duty to keep controls working.
SWEEP_STATUSES = ("active", "stop_work", "final_submissions")
MAX_SWEEP_DAYS = 31
# Snow can lie for weeks before it melts: the sweep looks this far back for a snow storm whose melt it sees.
SNOW_LOOKBACK = dt.timedelta(days=30)
CHART_DAYS = 60
CHART_REFRESH = dt.timedelta(hours=1)  # the chart asks meteostat at most once an hour per station
STATION_RECHECK = dt.timedelta(days=1)  # the chart asks again which station is nearest with data
STATION_LIST_TTL = dt.timedelta(days=7)  # a kept station list is used this long (meteostat's own refresh)
ANSWER_WINDOW = dt.timedelta(hours=24)  # CGP 2022 Part 4.2: inspect within 24 hours of a storm
# Recent reports that may still change: within meteostat's publication lag, plus the hour being filled.
_RECENT = source.PUBLICATION_LAG + dt.timedelta(hours=1)
# meteostat parameter → WeatherObservation / HourlyObservation attribute.
_PARAMETERS = (("temp", "temperature_c"), ("prcp", "precip_mm"), ("wspd", "wind_kmh"),
               ("wdir", "wind_direction_deg"), ("coco", "condition_code"), ("snwd", "snow_depth_cm"))
_WEATHER_FIELDS = ("weather_status", "temperature_c", "conditions", "wind_kmh", "wind_direction_deg",
                   "precip_24h_mm", "precip_hours", "station_id", "station_name", "station_distance_m",
                   "weather_sources", "weather_attribution", "weather_stations", "weather_provisional")


def init_app(app: Flask) -> None:
    """Point meteostat at `WEATHER_ENDPOINT` with its station list in instance/meteostat-cache."""
    deadline_s = float(app.config["WEATHER_DEADLINE_S"])
    # Sockets give up a little before the deadline, so a failing fetch is reported, not timed out.
    timeout_s = float(app.config.get("WEATHER_SOCKET_TIMEOUT_S") or min(2.5, deadline_s * 0.8))
    source.configure(app.config.get("WEATHER_ENDPOINT"), Path(app.instance_path) / "meteostat-cache",
                     timeout_s=timeout_s)


def _deadline_s() -> float:
    return float(current_app.config["WEATHER_DEADLINE_S"])


# -- the station-hour store --------------------------------------------------------------------

def _insert(model):  # type: ignore[no-untyped-def]
    """An INSERT that can say ON CONFLICT, on SQLite and PostgreSQL alike."""
    dialect = db.session.get_bind().dialect.name
    if dialect == "postgresql":
        return postgresql.insert(model)
    if dialect == "sqlite":
        return sqlite.insert(model)
    raise RuntimeError(f"weather storage supports SQLite and PostgreSQL, not {dialect}")


def stored_observations(station_id: str, first: dt.datetime,
                        last: dt.datetime) -> tuple[tuple[source.HourlyObservation, ...], dt.datetime | None]:
    """A station's stored hours with labels from `first` to `last` (inclusive), and when last fetched."""
    found = db.session.execute(
        select(WeatherObservation.station_id, WeatherObservation.hour, WeatherObservation.temperature_c,
               WeatherObservation.precip_mm, WeatherObservation.wind_kmh,
               WeatherObservation.wind_direction_deg, WeatherObservation.condition_code,
               WeatherObservation.sources, WeatherObservation.fetched_at, WeatherObservation.snow_depth_cm)
        .where(WeatherObservation.station_id == station_id, WeatherObservation.hour >= first,
               WeatherObservation.hour <= last)
        .order_by(WeatherObservation.hour)
    ).all()
    rows = tuple(source.HourlyObservation(*row[:7], sources=row.sources or "", snow_depth_cm=row.snow_depth_cm)
                 for row in found)
    return rows, max((row.fetched_at for row in found), default=None)


def stored_rain(station_id: str, start_day: dt.date,
                end_day: dt.date) -> tuple[tuple[source.DayRainfall, ...], str, dt.datetime | None]:
    """A station's stored rain per local day from `start_day` to `end_day`, the attribution of the hours
    that have it, and when the newest stored hour was fetched: what a rainfall chart reads. The database
    adds the hours up by day (a chart covers 1,440 of them) as `source.daily_totals` would, in tenths of a mm."""
    bounds = source.day_bounds(start_day, end_day)
    # The row labelled H holds the hour ending at H, so it belongs to the day that hour began in.
    # The day's index as a literal, so PostgreSQL reads it as an integer (a parameter would be text).
    day = case(*((WeatherObservation.hour < ends + HOUR, literal_column(str(index)))
                 for index, ends in enumerate(bounds[1:-1])), else_=literal_column(str(len(bounds) - 2)))
    hours = (select(day.label("day"), WeatherObservation.precip_mm,
                    func.coalesce(WeatherObservation.sources, "").label("sources"), WeatherObservation.fetched_at)
             .where(WeatherObservation.station_id == station_id, WeatherObservation.hour >= bounds[0] + HOUR,
                    WeatherObservation.hour <= bounds[-1])
             .subquery())
    # By day and sources, so one statement also gives the providers of the hours with rain.
    groups = db.session.execute(
        select(hours.c.day, hours.c.sources, func.count(hours.c.precip_mm).label("measured"),
               func.sum(func.round(hours.c.precip_mm * 10)).label("tenths"),
               func.max(hours.c.fetched_at).label("fetched_at"))
        .group_by(hours.c.day, hours.c.sources)).all()
    totals = [[0, 0] for _ in bounds[:-1]]  # per day: (rain in tenths of a mm, hours with data)
    for group in groups:
        totals[group.day][0] += int(group.tenths or 0)
        totals[group.day][1] += group.measured
    measured = {group.sources for group in groups if group.measured}  # hours with a rain value
    attribution = source.attribution(source.source_in(sources, "prcp") for sources in measured) if measured else ""
    return (source.day_rainfall(start_day, bounds, [(tenths, count) for tenths, count in totals]), attribution,
            max((group.fetched_at for group in groups), default=None))


def store_observations(rows: Iterable[source.HourlyObservation], *, now: dt.datetime | None = None) -> int:
    """Keep fetched station-hours; an hour already stored is replaced only by a better one. Count stored."""
    now = now or utcnow()
    by_station: dict[str, list[source.HourlyObservation]] = {}
    for row in rows:
        by_station.setdefault(row.station_id, []).append(row)
    stored = 0
    for station_id, fetched in by_station.items():
        existing = {o.hour: o for o in db.session.scalars(
            select(WeatherObservation).where(WeatherObservation.station_id == station_id,
                                             WeatherObservation.hour >= min(r.hour for r in fetched),
                                             WeatherObservation.hour <= max(r.hour for r in fetched)))}
        new = []
        for row in fetched:
            old = existing.get(row.hour)
            if old is None:
                new.append(_observation_values(row, now))
            elif _same(row, old):
                continue  # the hour as we hold it, sent again
            elif _improves(row, old):
                for name, value in _observation_values(row, now).items():
                    setattr(old, name, value)
                stored += 1
        if new:
            # DO NOTHING: a request filling the same hours at the same moment stored them first.
            db.session.execute(_insert(WeatherObservation).on_conflict_do_nothing(
                index_elements=["station_id", "hour"]), new)
            stored += len(new)
    db.session.flush()
    return stored


def _observation_values(row: source.HourlyObservation, now: dt.datetime) -> dict:
    values = {attribute: getattr(row, attribute) for _, attribute in _PARAMETERS}
    return values | {"station_id": row.station_id, "hour": row.hour, "sources": row.sources[:200],
                     "fetched_at": now}


def _same(new: source.HourlyObservation, old: WeatherObservation) -> bool:
    return (all(getattr(new, attribute) == getattr(old, attribute) for _, attribute in _PARAMETERS)
            and new.sources[:200] == (old.sources or ""))


def _improves(new: source.HourlyObservation, old: WeatherObservation) -> bool:
    """Whether a fetched hour should replace the stored one.

    The first observation of an hour stands, so a report never changes because meteostat's copy did;
    an hour that was missing a value, or had it filled by a model, gives way to what the station
    published later.
    """
    stored = source.HourlyObservation(old.station_id, old.hour, old.temperature_c, old.precip_mm,
                                      old.wind_kmh, old.wind_direction_deg, old.condition_code,
                                      old.sources or "", old.snow_depth_cm)
    for parameter, attribute in _PARAMETERS:
        if getattr(new, attribute) is None:
            continue
        if getattr(old, attribute) is None:
            return True
        if source._is_model(stored.source_of(parameter)) and not source._is_model(new.source_of(parameter)):
            return True
    return False


def unheld_hours(station_id: str, first: dt.datetime, last: dt.datetime,
                 now: dt.datetime) -> tuple[dt.datetime, dt.datetime] | None:
    """The span of a station's hourly labels from `first` to `last` worth asking meteostat for, or None.

    An hour is held once stored with its precipitation. An hour missing when the station was last asked
    (by any permit's chart) is not asked for again within `CHART_REFRESH`, nor ever when it was older
    than the publication lag by then: such hours are taken as never coming (as `needs_weather` does).
    """
    last = min(last, now.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0))
    if last < first:
        return None
    asked = _last_asked(station_id)
    query = select(WeatherObservation.hour).where(
        WeatherObservation.station_id == station_id, WeatherObservation.hour >= first,
        WeatherObservation.hour <= last, WeatherObservation.precip_mm.is_not(None))
    # Only the hours not known to be unpublished need reading (`_missing_hours_of`): after the last ask
    # when it was recent, else from the publication lag before it (a chart's 60 days are mostly older).
    if asked is not None:
        recent = now - asked < CHART_REFRESH
        query = query.where(WeatherObservation.hour > asked if recent
                            else WeatherObservation.hour >= asked - source.PUBLICATION_LAG)
    missing = _missing_hours_of(set(db.session.scalars(query)), first, last, asked, now)
    return (missing[0], missing[-1]) if missing else None


def _last_asked(station_id: str) -> dt.datetime | None:
    """When meteostat was last asked for the station's recent hours (by a permit's rainfall chart)."""
    return db.session.scalar(select(func.max(PermitStation.rainfall_fetched_at))
                             .where(PermitStation.station_id == station_id))


def _missing_hours_of(held: set[dt.datetime], first: dt.datetime, last: dt.datetime,
                      asked: dt.datetime | None, now: dt.datetime) -> list[dt.datetime]:
    """The hourly labels from `first` to `last` neither held nor known to be unpublished (see `unheld_hours`)."""
    missing = []
    hour = first
    while hour <= last:
        known_unpublished = asked is not None and hour <= asked and (
            now - asked < CHART_REFRESH or hour < asked - source.PUBLICATION_LAG)
        if hour not in held and not known_unpublished:
            missing.append(hour)
        hour += HOUR
    return missing


def _held_windows(first: dt.datetime, last: dt.datetime, now: dt.datetime,
                  near: frozenset[str] | None) -> dict[str, tuple[source.HourlyObservation, ...]]:
    """Stations whose every hour from `first` to `last` (up to now) we store or know to be unpublished,
    with those hours: a report's lookup then walks the nearest stations without fetching these again.
    `near`: the stations within the site's search radius (None: not known, every station is looked at)."""
    upto = min(last, now.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0))
    held: dict[str, tuple[source.HourlyObservation, ...]] = {}
    query = select(WeatherObservation.station_id).distinct().where(
        WeatherObservation.hour >= first, WeatherObservation.hour <= last)
    station_ids = db.session.scalars(query if near is None else query.where(WeatherObservation.station_id.in_(near)))
    for station_id in list(station_ids):
        rows, _ = stored_observations(station_id, first, last)
        if not _missing_hours_of({row.hour for row in rows}, first, upto, _last_asked(station_id), now):
            held[station_id] = rows
    return held


def _held_stations(first: dt.datetime, last: dt.datetime, now: dt.datetime,
                   near: frozenset[str] | None) -> dict[str, frozenset[str]]:
    """Stations of the town's permits whose rain hours from `first` to `last` we hold (none worth asking
    for), each with "precipitation" when it has any: the nearest-station choice then needs no fetch.
    `near`: as for `_held_windows`."""
    held: dict[str, frozenset[str]] = {}
    query = select(PermitStation.station_id).distinct()
    for station_id in db.session.scalars(query if near is None else query.where(PermitStation.station_id.in_(near))):
        if unheld_hours(station_id, first, last, now) is None:
            has_rain = db.session.scalar(select(WeatherObservation.hour).where(
                WeatherObservation.station_id == station_id, WeatherObservation.hour >= first,
                WeatherObservation.hour <= last, WeatherObservation.precip_mm.is_not(None)).limit(1))
            held[station_id] = frozenset({"precipitation"}) if has_rain is not None else frozenset()
    return held


def station_list(latitude: float, longitude: float, now: dt.datetime) -> source.StationList | None:
    """A kept station list, asked within STATION_LIST_TTL, that covers the site (the newest such), if any."""
    with db.session.no_autoflush:  # a list just kept is in the session: no write for a read
        kept = [area for area in db.session.new if isinstance(area, StationArea)]
        kept += db.session.scalars(select(StationArea).where(StationArea.asked_at >= now - STATION_LIST_TTL)
                                   .order_by(StationArea.asked_at.desc()))
    lists = (area.as_list() for area in kept)
    return next((listed for listed in lists if listed.covers(latitude, longitude)), None)


def _near(listed: source.StationList | None, latitude: float, longitude: float) -> frozenset[str] | None:
    """The ids of the stations within the search radius of a site, from a kept list (None: no list)."""
    return None if listed is None else frozenset(station["id"] for station in listed.nearest(latitude, longitude))


def keep_station_list(listed: source.StationList | None, now: dt.datetime) -> None:
    """Keep a station list a lookup asked meteostat for (None: it asked for none), for every app server.

    Added, not flushed: the lookups of a sweep or backfill that follow find it in the session, and it is
    written with the caller's first write (a slow lookup never holds a write transaction).
    """
    if listed is not None:
        db.session.add(StationArea(latitude=listed.latitude, longitude=listed.longitude, radius_m=listed.radius_m,
                                   stations=list(listed.stations), asked_at=now))


def permit_station(permit: Permit) -> tuple[source.Station, dt.datetime | None] | None:
    """The station last found for the permit's site, and when its rainfall was last fetched."""
    found = db.session.execute(
        select(PermitStation.station_id, PermitStation.station_name, PermitStation.distance_m,
               PermitStation.rainfall_fetched_at).where(PermitStation.permit_id == permit.id)
    ).first()
    if found is None:
        return None
    return (source.Station(found.station_id, found.station_name, found.distance_m),
            found.rainfall_fetched_at)


def _remember_station(permit: Permit, station: source.Station, now: dt.datetime, *,
                      rainfall: bool = False) -> None:
    values = {"station_id": station.id, "station_name": station.name[:120],
              "distance_m": station.distance_m, "found_at": now}
    if rainfall:
        values["rainfall_fetched_at"] = now
    # An upsert, so two requests finding the station at once cannot collide.
    db.session.execute(_insert(PermitStation).values(permit_id=permit.id, **values)
                       .on_conflict_do_update(index_elements=["permit_id"], set_=values))


# -- a report's weather -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Plan:
    """What a lookup gave for one inspection, before anything is written."""

    inspection: Inspection
    result: source.WeatherResult
    fetched: bool  # from meteostat now (store its rows) rather than from our store
    performed_at: dt.datetime | None = None  # the report's time the lookup was for


def fill_inspection_weather(inspection: Inspection, *, now: dt.datetime | None = None) -> None:
    """Fill a report's weather (e), (f) from stored station-hours, else one bounded lookup.

    Leaves it pending when the hours cannot be had now, never touches an on-site gauge reading, and
    changes nothing else of the report; a submitted report's weather may be filled later (backfill).
    """
    now = now or utcnow()
    plan = _plan(inspection, now, {})
    if plan is not None:
        _apply(plan, now)


def look_up_inspection_weather(inspection: Inspection, *, now: dt.datetime | None = None) -> _Plan | None:
    """The reading half of `fill_inspection_weather`, to run before the caller writes anything.

    SQLite has one writer at a time: a request that has written holds the lock until it commits, so
    the (bounded, but seconds long) meteostat lookup is made first and applied with `apply_looked_up`.
    """
    with db.session.no_autoflush:
        return _plan(inspection, now or utcnow(), {})


def apply_looked_up(plan: _Plan | None, inspection: Inspection, *, now: dt.datetime | None = None) -> None:
    """Fill the report from a lookup made earlier; if its time changed since, look up again."""
    now = now or utcnow()
    if plan is not None and plan.performed_at == inspection.performed_at:
        _apply(plan, now)
    elif plan is not None or needs_weather(inspection, now):
        fill_inspection_weather(inspection, now=now)


def needs_weather(inspection: Inspection, now: dt.datetime | None = None) -> bool:
    """Whether a report's weather is pending, or not final yet, so a later lookup may change it."""
    now = now or utcnow()
    if inspection.weather_fetched_at is None or inspection.weather_status == "pending" \
            or inspection.weather_provisional:
        return True
    _, window_end = source.inspection_window(inspection.performed_at)
    if now - window_end >= source.PUBLICATION_LAG:
        return False  # hours not published by now are taken as never coming
    complete = (inspection.station_id is not None
                and (inspection.precip_hours or 0) >= source.MIN_PRECIP_HOURS)
    model_filled = "(model)" in (inspection.weather_sources or "")
    return not complete or model_filled


def _plan(inspection: Inspection, now: dt.datetime,
          asked: dict[tuple[float, float, dt.datetime], source.WeatherResult]) -> _Plan | None:
    """The weather for a report, from our store when that is final, else from one bounded lookup."""
    if not needs_weather(inspection, now) or inspection.performed_at > now:
        return None  # final already, or a time still to come
    permit = _permit_of(inspection)
    for stations in _station_hints(inspection):
        stored = _stored_result(stations, inspection.performed_at, now)
        # Only a complete, final result: an incomplete one may just be hours we never fetched.
        if stored.status == "complete" and stored.final:
            return _Plan(inspection, stored, fetched=False, performed_at=inspection.performed_at)
    _, window_end = source.inspection_window(inspection.performed_at)
    key = (permit.latitude, permit.longitude, window_end)
    if key not in asked:  # several reports of one site and hour in one backfill: ask once
        # A report just started reuses the stations' hours we hold; a later fill asks for them again,
        # since a published hour may still gain values (or lose a model's) before it is final.
        listed = station_list(permit.latitude, permit.longitude, now)
        held = (_held_windows(*source.inspection_window(inspection.performed_at), now,
                              _near(listed, permit.latitude, permit.longitude))
                if inspection.weather_fetched_at is None else None)
        asked[key] = source.lookup(permit.latitude, permit.longitude, inspection.performed_at,
                                   deadline_s=_deadline_s(), held=held, station_list=listed)
        keep_station_list(asked[key].station_list_fetched, now)
    if asked[key].status == "pending" and not asked[key].provisional:
        # The service could not be asked: the permit's rain station, if its stored hours are final.
        fallback = _permit_fallback(inspection, now)
        if fallback is not None:
            return _Plan(inspection, fallback, fetched=False, performed_at=inspection.performed_at)
    return _Plan(inspection, asked[key], fetched=True, performed_at=inspection.performed_at)


def _permit_fallback(inspection: Inspection, now: dt.datetime) -> source.WeatherResult | None:
    """For a report with no station of its own while meteostat cannot be reached: every value from the
    permit's rain station (the sweep's and chart's), when its stored hours of the window are final."""
    if inspection.weather_stations or inspection.station_id:
        return None  # its own stations were tried from the store already
    known = permit_station(_permit_of(inspection))
    if known is None:
        return None
    stored = _stored_result(dict.fromkeys(source.PARAMETER_GROUPS, known[0]), inspection.performed_at, now)
    return stored if stored.status == "complete" and stored.final else None


def _permit_of(inspection: Inspection) -> Permit:
    # A report not flushed yet has its permit_id but no loaded relationship.
    permit = inspection.permit or db.session.get(Permit, inspection.permit_id)
    if permit is None:
        raise ValueError("the inspection belongs to no permit, so it has no site to look up weather for")
    return permit


Stations = dict[str, source.Station]  # parameter group -> station


def _station_hints(inspection: Inspection) -> list[Stations]:
    """The station choices to try from our store: the report's own, then the permit's rain station."""
    hints: list[Stations] = []
    recorded = {item["parameter"]: source.Station(item["station_id"], item["name"], float(item["distance_m"]))
                for item in inspection.weather_stations or () if item.get("parameter") in source.PARAMETER_GROUPS}
    if recorded:
        hints.append(recorded)
    elif inspection.station_id and inspection.station_name and inspection.station_distance_m is not None:
        station = source.Station(inspection.station_id, inspection.station_name, inspection.station_distance_m)
        hints.append(dict.fromkeys(source.PARAMETER_GROUPS, station))
    known = permit_station(_permit_of(inspection)) if hints else None
    if known is not None:
        # The precipitation station the sweep and chart use; the other parameters as recorded. A report
        # with no station of its own yet walks the nearest stations per parameter (spec "Weather") in
        # `source.lookup`, which reuses the hours we hold (`_held_windows`) instead of fetching them.
        shared = {**dict.fromkeys(source.PARAMETER_GROUPS, known[0]), **hints[0], "precipitation": known[0]}
        if shared not in hints:
            hints.append(shared)
    return hints


def _stored_result(stations: Stations, at: dt.datetime, now: dt.datetime,
                   fetched_at: dt.datetime | None = None) -> source.WeatherResult:
    first, last = source.inspection_window(at)
    rows: list[source.HourlyObservation] = []
    last_fetched: list[dt.datetime] = []
    for station_id in sorted({station.id for station in stations.values()}):
        found, fetched = stored_observations(station_id, first, last)
        rows.extend(found)
        last_fetched += [fetched] if fetched else []
    present = {row.station_id for row in rows}
    usable = {group: station for group, station in stations.items() if station.id in present}
    return source.summarize(rows, usable, at, fetched_at=fetched_at or max(last_fetched, default=None), now=now)


def _apply(plan: _Plan, now: dt.datetime) -> str:
    """Store what was fetched and fill the report from our store; returns the weather status after."""
    inspection, result = plan.inspection, plan.result
    if plan.fetched and result.rows:
        store_observations(result.rows, now=now)
    rain = result.station_for("precipitation")
    if plan.fetched and rain is not None:
        # The sweep, the chart and the report share the site's precipitation station.
        _remember_station(_permit_of(inspection), rain.station, now)
    if result.status == "pending" and not result.provisional:
        return inspection.weather_status  # pending stays pending; a filled report keeps its values
    if result.provisional and inspection.weather_fetched_at is not None and not inspection.weather_provisional:
        return inspection.weather_status  # final values already there are never replaced by provisional ones
    if plan.fetched and result.stations:
        # Fill from what we keep, which may be an earlier copy of an hour than meteostat sent now.
        result = _stored_result({s.parameter: s.station for s in result.stations}, inspection.performed_at,
                                now, result.fetched_at)
    _write(inspection, result, now)
    return inspection.weather_status


def _write(inspection: Inspection, result: source.WeatherResult, now: dt.datetime) -> None:
    """Copy a result into the report's weather fields (only those), with an audit entry.

    A provisional result (hours of the window not published yet) is written as such: status pending,
    `weather_provisional` set, the values known so far; the final values replace it when published.
    """
    station = result.station
    values = {
        # Spec "Weather": an inspector's on-site gauge reading wins over the station's 24-hour total.
        "weather_status": "gauge" if inspection.gauge_precip_mm is not None else result.status,
        "temperature_c": result.temperature_c,
        "conditions": result.conditions,
        "wind_kmh": result.wind_kmh,
        "wind_direction_deg": result.wind_direction_deg,
        "precip_24h_mm": result.precip_24h_mm,
        "precip_hours": result.precip_hours,
        "station_id": station.id if station else None,
        "station_name": station.name[:120] if station else None,
        "station_distance_m": station.distance_m if station else None,
        "weather_sources": result.sources or None,
        "weather_attribution": result.attribution[:300] or None,
        "weather_stations": [s.as_record() for s in result.stations] or None,
        "weather_provisional": result.provisional,
    }
    if all(getattr(inspection, name) == values[name] for name in _WEATHER_FIELDS) \
            and inspection.weather_fetched_at is not None:
        return  # nothing new: leave the report (and its audit log) as it is
    before = audit.snapshot(inspection)
    for name, value in values.items():
        setattr(inspection, name, value)
    inspection.weather_fetched_at = result.fetched_at or now
    # A submitted report is immutable except this: its pending weather filled in later, on record.
    action = "inspection.weather_backfill" if inspection.is_submitted else "inspection.weather_fill"
    audit.record(None, action, inspection, before)
    if inspection.is_submitted:
        # The record's hash covers its weather: seal it again, on record, with the filled values.
        reseal_record(None, inspection)


@dataclass(frozen=True)
class BackfillOutcome:
    """What a backfill did to one report."""

    inspection_id: str
    permit_number: str
    performed_at: dt.datetime
    before: str
    after: str
    reason: str  # why it is still pending or incomplete; "" when complete


def backfill_pending(limit: int | None = None, *, now: dt.datetime | None = None) -> list[BackfillOutcome]:
    """Fill every report whose weather is pending or not final yet (oldest first), each lookup bounded."""
    if limit is not None and limit < 1:
        raise ValueError("limit must be a positive number of reports")
    now = now or utcnow()
    candidates = db.session.scalars(
        select(Inspection)
        .where(or_(Inspection.weather_status == "pending", Inspection.weather_fetched_at.is_(None),
                   Inspection.performed_at >= now - _RECENT),
               Inspection.performed_at <= now)
        .order_by(Inspection.performed_at, Inspection.id)
    )
    due = [i for i in candidates if needs_weather(i, now)][:limit]
    # Every lookup first, then every write: a slow weather service never holds a write transaction.
    asked: dict[tuple[float, float, dt.datetime], source.WeatherResult] = {}
    with db.session.no_autoflush:  # a station list kept by one lookup is written with the writes
        plans = [(inspection, inspection.weather_status, _plan(inspection, now, asked)) for inspection in due]
    outcomes = []
    for inspection, before, plan in plans:
        after = _apply(plan, now) if plan is not None else inspection.weather_status
        reason = plan.result.reason if plan is not None else ""
        outcomes.append(BackfillOutcome(inspection.id, _permit_of(inspection).number, inspection.performed_at,
                                        before, after, reason))
    return outcomes


# -- storm events (CGP 2022 Parts 4.2, 4.3) -----------------------------------------------------

@dataclass(frozen=True)
class SweepOutcome:
    """What one sweep found: storm events made or revised, and the permits whose rain is not all known."""

    checked: int
    created: tuple[tuple[str, StormEvent], ...]  # (permit number, event)
    deepened: tuple[tuple[str, StormEvent], ...]  # revised: more hours published since
    pending: tuple[tuple[str, str], ...]  # (permit number, reason): the service failed, or hours are missing
    stations_fetched: int = 0  # station files read from meteostat in this run
    snowmelts: tuple[tuple[str, SnowmeltDischarge], ...] = ()  # (permit number, discharge) found from snow depth


def sweep_storms(days: int = 3, *, now: dt.datetime | None = None) -> SweepOutcome:
    """Record the storm events of the last `days` local days at every permit still under CGP inspections.

    From the stored hourly data of each permit's precipitation station (fetched first, each station's
    file once per run): a storm starts the 24-hour clock at the moment its rolling 24-hour total reaches
    the profile's threshold (`rules.storms`). Hours without data are said in `pending`, never read as
    dry. The storm events and the permits' stored obligations change in the caller's one transaction.
    """
    if not 1 <= days <= MAX_SWEEP_DAYS:
        raise ValueError(f"days must be between 1 and {MAX_SWEEP_DAYS}")
    now = now or utcnow()
    last_day = now.astimezone(source.LOCAL_TZ).date()
    first_day = last_day - dt.timedelta(days=days - 1)
    permits = db.session.scalars(select(Permit).where(Permit.status.in_(SWEEP_STATUSES))
                                 .order_by(Permit.number, Permit.id)).all()
    # Every lookup first, then every write: a slow weather service never holds a write transaction.
    # The day before the first is fetched too, so a window reaching into it is whole. Permits on the
    # same coordinates share one lookup, and permits sharing a station share its fetched file.
    memo: source.FetchMemo = {}
    asked: dict[tuple[float, float], source.RainfallSeries] = {}
    for permit in permits:
        site = (permit.latitude, permit.longitude)
        if site not in asked:
            asked[site] = source.daily_precipitation(*site, first_day - dt.timedelta(days=1), last_day,
                                                     deadline_s=_deadline_s(), memo=memo,
                                                     station_list=station_list(*site, now))
            keep_station_list(asked[site].station_list_fetched, now)
    for series in asked.values():
        if series.rows:
            store_observations(series.rows, now=now)
    # The hours fetched and stored, from the swept days' first hour (less a day of context) to now.
    swept_from = _local_midnight(first_day)
    scans: dict[tuple[str, float], StormScan] = {}
    created: list[tuple[str, StormEvent]] = []
    revised: list[tuple[str, StormEvent]] = []
    pending: list[tuple[str, str]] = []
    melts: dict[tuple[str, float], tuple[FoundSnowmelt, ...]] = {}
    snowmelts: list[tuple[str, SnowmeltDischarge]] = []
    for permit in permits:
        rainfall = asked[(permit.latitude, permit.longitude)]
        if rainfall.station is not None:
            _remember_station(permit, rainfall.station, now)
        if rainfall.status == "pending":
            pending.append((permit.number, rainfall.reason))
            continue
        if rainfall.station is None:
            pending.append((permit.number, rainfall.reason))
            continue
        threshold_mm = profile_of(permit).storm.threshold_mm
        known = _known_storms(permit, swept_from)
        # Start early enough to see the whole of a storm already recorded that reaches into these days.
        scan_from = min([swept_from, *(e.started_at for e in known if e.started_at)]) - PERIOD_HOURS * HOUR
        key = (rainfall.station.id, threshold_mm, scan_from)
        if key not in scans:
            scans[key] = _scan(rainfall.station.id, scan_from, now, threshold_mm)
        scan = scans[key]
        for found in scan.storms:
            if found.ended_at < swept_from:
                continue  # before the swept days: recorded by an earlier sweep
            made, changed = _record_storm(permit, found, rainfall.station.id, known, now)
            created += [(permit.number, made)] if made else []
            revised += [(permit.number, changed)] if changed else []
        gaps = [span for span in scan.missing_spans() if span[1] >= swept_from]
        if gaps:
            pending.append((permit.number, _missing_hours(rainfall.station, gaps)))
        # CGP 2022 Parts 4.2, 4.3: the snowmelt discharges the same station's snow depth shows.
        snow_mm = profile_of(permit).snowmelt.threshold_mm
        if (rainfall.station.id, snow_mm) not in melts:
            melts[(rainfall.station.id, snow_mm)] = _scan_snow(rainfall.station.id, swept_from - SNOW_LOOKBACK,
                                                                now, snow_mm)
        for melt in melts[(rainfall.station.id, snow_mm)]:
            made = _record_snowmelt(permit, melt, rainfall.station.id, now)
            snowmelts += [(permit.number, made)] if made else []
    db.session.flush()
    return SweepOutcome(len(permits), tuple(created), tuple(revised), tuple(pending),
                        stations_fetched=len({station for station, _, _ in memo}), snowmelts=tuple(snowmelts))


def _scan_snow(station_id: str, first: dt.datetime, now: dt.datetime, threshold_mm: float) -> tuple[FoundSnowmelt, ...]:
    """The snowmelt discharges in a station's stored hours from `first` to the last full hour before `now`."""
    first = first.replace(minute=0, second=0, microsecond=0)
    last = now.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    rows, _ = stored_observations(station_id, first, last)
    return find_snowmelts({row.hour: row.snow_depth_cm for row in rows}, {row.hour: row.temperature_c for row in rows},
                          first, last, threshold_mm)


def _record_snowmelt(permit: Permit, found: FoundSnowmelt, station_id: str, now: dt.datetime) -> SnowmeltDischarge | None:
    """Record the permit's snowmelt discharge found from the station once; None when it is already recorded."""
    exists = db.session.scalar(select(SnowmeltDischarge.id).where(
        SnowmeltDischarge.permit_id == permit.id, SnowmeltDischarge.seen_on_site.is_(False),
        SnowmeltDischarge.snowfall_at == found.snowfall_at))
    if exists is not None:
        return None
    discharge = SnowmeltDischarge(id=new_id(), permit_id=permit.id, discharge_at=found.discharge_at,
                                  snow_mm=found.snow_mm, seen_on_site=False, station_id=station_id,
                                  snowfall_at=found.snowfall_at, recorded_at=now)
    try:
        with db.session.begin_nested():
            db.session.add(discharge)
    except IntegrityError:
        return None  # a concurrent sweep recorded it first
    audit.record(None, "snowmelt.detect", discharge)
    return discharge


def _scan(station_id: str, first: dt.datetime, now: dt.datetime, threshold_mm: float) -> StormScan:
    """The storms in a station's stored hours from `first` to the last full hour before `now`."""
    first = first.replace(minute=0, second=0, microsecond=0)
    last = now.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    rows, _ = stored_observations(station_id, first, last)
    return find_storms({row.hour: row.precip_mm for row in rows}, first, last, threshold_mm)


def _missing_hours(station: source.Station, gaps: Sequence[tuple[dt.datetime, dt.datetime]]) -> str:
    """'Storm Field has no rain data for 5 hour(s): …' so a gap is said, never taken as a dry spell."""
    hours = sum(round((last - first) / HOUR) + 1 for first, last in gaps)
    spans = ", ".join(f"{_local(first - HOUR)} to {_local(last)}" for first, last in gaps[:3])
    more = f" and {len(gaps) - 3} more" if len(gaps) > 3 else ""
    return (f"{station.name} has no rain data for {hours} hour(s) ({spans}{more}); a storm in them "
            "cannot be ruled out")


def _day_labels(first_day: dt.date, last_day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """The first and last hourly labels of these local days (a label ends its hour)."""
    return _local_midnight(first_day) + HOUR, _local_midnight(last_day + dt.timedelta(days=1))


def _local_midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=source.LOCAL_TZ).astimezone(dt.UTC)


def _local(at: dt.datetime) -> str:
    return at.astimezone(source.LOCAL_TZ).strftime("%Y-%m-%d %H:%M")


def _known_storms(permit: Permit, since: dt.datetime) -> list[StormEvent]:
    """The permit's storm events found from hourly data that may still reach into the swept days."""
    return list(db.session.scalars(
        select(StormEvent).where(StormEvent.permit_id == permit.id, StormEvent.reached_at.is_not(None),
                                 or_(StormEvent.ended_at >= since - PERIOD_HOURS * HOUR,
                                     StormEvent.ongoing.is_(True)),
                                 # A storm left "ongoing" by a station that stopped publishing is let go.
                                 StormEvent.started_at >= since - dt.timedelta(days=MAX_SWEEP_DAYS))
        .order_by(StormEvent.reached_at)))


def _record_storm(permit: Permit, found: FoundStorm, station_id: str, known: list[StormEvent],
                  now: dt.datetime) -> tuple[StormEvent | None, StormEvent | None]:
    """Make the permit's storm event once (created, None), or revise the one it is (None, event)."""
    values = {"day": found.reached_at.astimezone(source.LOCAL_TZ).date(), "depth_mm": found.depth_mm,
              "station_id": station_id, "started_at": found.start, "reached_at": found.reached_at,
              "ended_at": found.ended_at, "multi_day": found.multi_day, "hours_missing": found.hours_missing,
              "ongoing": found.ongoing}
    # The same rain seen again (more hours published since): the event that overlaps it.
    same = next((e for e in known if e.started_at and e.ended_at
                 and e.started_at < found.ended_at and found.start < e.ended_at), None)
    if same is None:
        # Added through the session, so the permit's obligations are worked out again in this same
        # transaction (schedule.obligations); the savepoint makes a concurrent sweep's equal row harmless.
        event = StormEvent(id=new_id(), permit_id=permit.id, detected_at=now, **values)
        try:
            with db.session.begin_nested():
                db.session.add(event)
        except IntegrityError:
            return None, None  # a concurrent sweep recorded the same moment first
        known.append(event)
        audit.record(None, "storm_event.create", event)
        return event, None
    if all(getattr(same, name) == value for name, value in values.items()):
        return None, None
    before = audit.snapshot(same)
    for name, value in values.items():
        setattr(same, name, value)
    audit.record(None, "storm_event.revise", same, before)
    return None, same


# -- the rainfall chart ------------------------------------------------------------------------

@dataclass(frozen=True)
class StormAnswer:
    """A submitted inspection made within the 24 hours a storm gave for one (CGP 2022 Part 4.2)."""

    inspection_id: str
    performed_at: dt.datetime
    storm_days: tuple[dt.date, ...]


@dataclass(frozen=True)
class Rainfall:
    """A permit's daily rain for the chart, from stored station-hours."""

    permit_id: str
    start_day: dt.date
    end_day: dt.date
    days: tuple[source.DayRainfall, ...]
    station: source.Station | None
    status: str  # complete, incomplete or pending
    reason: str
    attribution: str
    fetched_at: dt.datetime | None
    threshold_mm: float
    storms: tuple[StormEvent, ...]
    answers: tuple[StormAnswer, ...]


def permit_rainfall(permit: Permit, *, days: int = CHART_DAYS, now: dt.datetime | None = None) -> Rainfall:
    """The last `days` local days of rain at a permit, with its storm events and the inspections after."""
    now = now or utcnow()
    end_day = now.astimezone(source.LOCAL_TZ).date()
    start_day = end_day - dt.timedelta(days=days - 1)
    first_label, last_label = _day_labels(start_day, end_day)
    known = db.session.execute(
        select(PermitStation.station_id, PermitStation.station_name, PermitStation.distance_m,
               PermitStation.found_at).where(PermitStation.permit_id == permit.id)).first()
    station = source.Station(known.station_id, known.station_name, known.distance_m) if known else None
    status, reason = "", ""
    if known is None or now - known.found_at >= STATION_RECHECK:
        # Which station is nearest with rain data for these days (spec "Weather"): asked of meteostat.
        listed = station_list(permit.latitude, permit.longitude, now)
        series = source.daily_precipitation(permit.latitude, permit.longitude, start_day, end_day,
                                            deadline_s=_deadline_s(), station_list=listed,
                                            held=_held_stations(first_label, last_label, now,
                                                                _near(listed, permit.latitude, permit.longitude)))
        keep_station_list(series.station_list_fetched, now)
        if series.rows:
            store_observations(series.rows, now=now)
        if series.station is not None:
            _remember_station(permit, series.station, now, rainfall=True)
            station = series.station
        if series.status == "pending" or series.station is None:
            status, reason = series.status, series.reason
    else:
        # The station is known: only the hours we do not hold yet are asked for, once an hour at most.
        span = unheld_hours(station.id, first_label, last_label, now)
        if span is not None:
            fetched, why = source.station_hours(station.id, *span, deadline_s=_deadline_s())
            if fetched is None:
                status, reason = "pending", why
            else:
                store_observations(fetched, now=now)
                db.session.execute(update(PermitStation).where(PermitStation.permit_id == permit.id)
                                   .values(rainfall_fetched_at=now))
    if station is not None:
        totals, attribution, fetched_at = stored_rain(station.id, start_day, end_day)
    else:
        totals, attribution, fetched_at = source.daily_totals((), start_day, end_day), "", None
    if not status:
        # Today is never whole yet; any earlier day with hours missing is flagged.
        missing = sum(1 for day in totals[:-1] if not day.complete)
        status = "incomplete" if missing else "complete"
        reason = (f"{station.name} is missing precipitation hours on {missing} day(s); those days show"
                  " only the hours published" if missing and station else "")
    storms = tuple(db.session.scalars(
        select(StormEvent).where(StormEvent.permit_id == permit.id, StormEvent.day >= start_day,
                                 StormEvent.day <= end_day).order_by(StormEvent.day, StormEvent.reached_at)))
    return Rainfall(permit.id, start_day, end_day, totals, station, status, reason, attribution, fetched_at,
                    profile_of(permit).storm.threshold_mm, storms, _storm_answers(permit, storms))


def _answer_spans(event: StormEvent) -> list[tuple[dt.datetime, dt.datetime]]:
    """When an inspection answers a storm on time (CGP 2022 Part 4.2, as the engine reads it): from the
    moment the rain reached the threshold to 24 hours later, and for a multi-day storm from its end to 24
    hours later. An event of the old record (a calendar day) counts as reached at the day's end."""
    if event.reached_at is None or event.ended_at is None:
        reached = _local_midnight(event.day + dt.timedelta(days=1))
        return [(reached, reached + ANSWER_WINDOW)]
    spans = [(event.reached_at, event.reached_at + ANSWER_WINDOW)]
    if event.multi_day:
        spans.append((event.ended_at, event.ended_at + ANSWER_WINDOW))
    return spans


def _storm_answers(permit: Permit, storms: Sequence[StormEvent]) -> tuple[StormAnswer, ...]:
    """Submitted inspections made within the 24 hours a storm gave for them."""
    if not storms:
        return ()
    spans = [(s.day, begins, ends) for s in storms for begins, ends in _answer_spans(s)]
    inspections = db.session.scalars(
        select(Inspection).where(Inspection.permit_id == permit.id, Inspection.status == "submitted",
                                 Inspection.performed_at >= min(s[1] for s in spans),
                                 Inspection.performed_at <= max(s[2] for s in spans))
        .order_by(Inspection.performed_at))
    answers = []
    for inspection in inspections:
        answered = tuple(dict.fromkeys(day for day, begins, ends in spans if begins <= inspection.performed_at <= ends))
        if answered:
            answers.append(StormAnswer(inspection.id, inspection.performed_at, answered))
    return tuple(answers)
