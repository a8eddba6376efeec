"""Weather kept in our own database: station-hours, the storm sweep and the rainfall chart (a report's
weather is put on it from these by inspections/weather.py).

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
from functools import cache, lru_cache
from pathlib import Path

from flask import Flask, current_app
from sqlalchemy import Select, bindparam, case, func, literal_column, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.dialects import postgresql, sqlite

from inspect_app.audit import services as audit
from inspect_app.extensions import db
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
# meteostat parameter → WeatherObservation / HourlyObservation attribute.
_PARAMETERS = (("temp", "temperature_c"), ("prcp", "precip_mm"), ("wspd", "wind_kmh"),
               ("wdir", "wind_direction_deg"), ("coco", "condition_code"), ("snwd", "snow_depth_cm"))


def init_app(app: Flask) -> None:
    """Point meteostat at `WEATHER_ENDPOINT` with its station list in instance/meteostat-cache."""
    deadline_s = float(app.config["WEATHER_DEADLINE_S"])
    # Sockets give up a little before the deadline, so a failing fetch is reported, not timed out.
    timeout_s = float(app.config.get("WEATHER_SOCKET_TIMEOUT_S") or min(2.5, deadline_s * 0.8))
    source.configure(app.config.get("WEATHER_ENDPOINT"), Path(app.instance_path) / "meteostat-cache",
                     timeout_s=timeout_s)


def deadline_s() -> float:
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
        select(*_OBSERVATION_COLUMNS)
        .where(WeatherObservation.station_id == station_id, WeatherObservation.hour >= first,
               WeatherObservation.hour <= last)
        .order_by(WeatherObservation.hour)
    ).all()
    return tuple(_observation(row) for row in found), max((row.fetched_at for row in found), default=None)


_OBSERVATION_COLUMNS = (WeatherObservation.station_id, WeatherObservation.hour, WeatherObservation.temperature_c,
                        WeatherObservation.precip_mm, WeatherObservation.wind_kmh,
                        WeatherObservation.wind_direction_deg, WeatherObservation.condition_code,
                        WeatherObservation.sources, WeatherObservation.fetched_at, WeatherObservation.snow_depth_cm)


def _observation(row) -> source.HourlyObservation:
    """A stored hour, from a row of `_OBSERVATION_COLUMNS`."""
    return source.HourlyObservation(*row[:7], sources=row.sources or "", snow_depth_cm=row.snow_depth_cm)


def stored_rain(station_id: str, start_day: dt.date,
                end_day: dt.date) -> tuple[tuple[source.DayRainfall, ...], str, dt.datetime | None]:
    """A station's stored rain per local day from `start_day` to `end_day`, the attribution of the hours
    that have it, and when the newest stored hour was fetched: what a rainfall chart reads. The database
    adds the hours up by day (a chart covers 1,440 of them) as `source.daily_totals` would, in tenths of a mm."""
    bounds = source.day_bounds(start_day, end_day)
    # The row labelled H holds the hour ending at H, so it belongs to the day that hour began in.
    parameters = {f"day_{index}_ends": ends + HOUR for index, ends in enumerate(bounds[1:-1])}
    parameters |= {"station_id": station_id, "first_hour": bounds[0] + HOUR, "last_hour": bounds[-1]}
    groups = db.session.execute(_rain_by_day(len(bounds) - 1), parameters).all()
    totals = [[0, 0] for _ in bounds[:-1]]  # per day: (rain in tenths of a mm, hours with data)
    for group in groups:
        totals[group.day][0] += int(group.tenths or 0)
        totals[group.day][1] += group.measured
    measured = {group.sources for group in groups if group.measured}  # hours with a rain value
    attribution = source.attribution(source.source_in(sources, "prcp") for sources in measured) if measured else ""
    return (source.day_rainfall(start_day, bounds, [(tenths, count) for tenths, count in totals]), attribution,
            max((group.fetched_at for group in groups), default=None))


@lru_cache(maxsize=8)
def _rain_by_day(days: int) -> Select:
    """`stored_rain`'s statement for a chart of `days` local days, built once per process (it has a branch a
    day: building it took as long as running it); the days' bounds and the station are its parameters."""
    hour_type = WeatherObservation.hour.type
    hours = (select(_day_of_hour(0, days - 1).label("day"), WeatherObservation.precip_mm,
                    func.coalesce(WeatherObservation.sources, "").label("sources"), WeatherObservation.fetched_at)
             .where(WeatherObservation.station_id == bindparam("station_id"),
                    WeatherObservation.hour >= bindparam("first_hour", type_=hour_type),
                    WeatherObservation.hour <= bindparam("last_hour", type_=hour_type))
             .subquery())
    # By day and sources, so one statement also gives the providers of the hours with rain.
    return (select(hours.c.day, hours.c.sources, func.count(hours.c.precip_mm).label("measured"),
                   func.sum(func.round(hours.c.precip_mm * 10)).label("tenths"),
                   func.max(hours.c.fetched_at).label("fetched_at"))
            .group_by(hours.c.day, hours.c.sources))


def _day_of_hour(first: int, last: int):
    """SQL: the index, from `first` to `last`, of the day the row's hour falls in, by halving the days at each
    step: 6 comparisons a row for 60 days, not 30 on average in a list of one branch a day. Parameter
    `day_<i>_ends` is the first hour label after day i; the index is a literal, so PostgreSQL reads it as an
    integer (a parameter would be text)."""
    if first >= last:  # one day (or, for an empty range, none: then no hour is read)
        return literal_column(str(first))
    middle = (first + last) // 2
    ends = bindparam(f"day_{middle}_ends", type_=WeatherObservation.hour.type)
    return case((WeatherObservation.hour < ends, _day_of_hour(first, middle)), else_=_day_of_hour(middle + 1, last))


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
    return _unheld_hours(station_id, first, last, now, _last_asked(station_id))


def _unheld_hours(station_id: str, first: dt.datetime, last: dt.datetime, now: dt.datetime,
                  asked: dt.datetime | None) -> tuple[dt.datetime, dt.datetime] | None:
    """`unheld_hours`, the station last asked at `asked` (read by the caller)."""
    last = min(last, now.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0))
    start = _walk_start(first, asked, now)
    if last < start:
        # Every hour up to `last` is known: none worth asking for, whatever is stored (a chart opened again
        # within the hour it last asked, the usual case, reads no hours for this).
        return None
    # Only the hours not known to be unpublished need reading (`_missing_hours_of`): after the last ask
    # when it was recent, else from the publication lag before it (a chart's 60 days are mostly older).
    recent = asked is not None and now - asked < CHART_REFRESH
    if asked is None:
        after = first
    else:
        after = asked if recent else asked - source.PUBLICATION_LAG
    held = db.session.scalars(_held_hours(recent), {"station_id": station_id, "first": first, "last": last,
                                                    "after": after})
    missing = _missing_hours_of(set(held), first, last, asked, now)
    return (missing[0], missing[-1]) if missing else None


@cache
def _held_hours(after_only: bool) -> Select:
    """`unheld_hours`' statement, built once per process (building a statement cost about what running it
    did): the station's hours with rain from `first` to `last`, and from `after` on (after it, with
    `after_only`)."""
    hour = WeatherObservation.hour
    return select(hour).where(
        WeatherObservation.station_id == bindparam("station_id"), hour >= bindparam("first", type_=hour.type),
        hour <= bindparam("last", type_=hour.type), WeatherObservation.precip_mm.is_not(None),
        hour > bindparam("after", type_=hour.type) if after_only else hour >= bindparam("after", type_=hour.type))


def _last_asked(station_id: str) -> dt.datetime | None:
    """When meteostat was last asked for the station's recent hours (by a permit's rainfall chart)."""
    return db.session.scalar(_LAST_ASKED_AT, {"station_id": station_id})


_ASKED = PermitStation.__table__.alias("asked")
_LAST_ASKED = select(func.max(_ASKED.c.rainfall_fetched_at))  # by any permit's chart at the station (a `where` names it)
_LAST_ASKED_AT = _LAST_ASKED.where(_ASKED.c.station_id == bindparam("station_id"))


def _walk_start(first: dt.datetime, asked: dt.datetime | None, now: dt.datetime) -> dt.datetime:
    """The first hourly label from `first` on not known to be unpublished (see `_missing_hours_of`)."""
    hour = first
    if asked is not None:
        recent = now - asked < CHART_REFRESH
        known_until = asked if recent else asked - source.PUBLICATION_LAG  # recent: up to it; else before it
        if known_until >= first:
            hour = first + (known_until - first) // HOUR * HOUR  # the last hourly label not after it
            if recent or hour < known_until:
                hour += HOUR
    return hour


def _missing_hours_of(held: set[dt.datetime], first: dt.datetime, last: dt.datetime,
                      asked: dt.datetime | None, now: dt.datetime) -> list[dt.datetime]:
    """The hourly labels from `first` to `last` neither held nor known to be unpublished (see `unheld_hours`).

    The hours known to be unpublished come first: those up to the last ask when it was recent, else those older
    than the publication lag before it. The walk starts after them (a chart's 60 days are 1,440 hours)."""
    hour = _walk_start(first, asked, now)
    missing = []
    while hour <= last:
        if hour not in held:
            missing.append(hour)
        hour += HOUR
    return missing


def held_windows(first: dt.datetime, last: dt.datetime, now: dt.datetime,
                  near: frozenset[str] | None) -> dict[str, tuple[source.HourlyObservation, ...]]:
    """Stations whose every hour from `first` to `last` (up to now) we store or know to be unpublished,
    with those hours: a report's lookup then walks the nearest stations without fetching these again.
    `near`: the stations within the site's search radius (None: not known, every station is looked at)."""
    upto = min(last, now.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0))
    # One statement: every stored hour of the window, each with when its station was last asked (`_last_asked`).
    asked = select(PermitStation.station_id, func.max(PermitStation.rainfall_fetched_at).label("asked"))
    if near is not None:
        asked = asked.where(PermitStation.station_id.in_(near))
    asked = asked.group_by(PermitStation.station_id).subquery()
    query = (select(*_OBSERVATION_COLUMNS, asked.c.asked)
             .outerjoin(asked, asked.c.station_id == WeatherObservation.station_id)
             .where(WeatherObservation.hour >= first, WeatherObservation.hour <= last)
             .order_by(WeatherObservation.station_id, WeatherObservation.hour))
    if near is not None:
        query = query.where(WeatherObservation.station_id.in_(near))
    by_station: dict[str, list] = {}
    for row in db.session.execute(query):
        by_station.setdefault(row.station_id, []).append(row)
    held: dict[str, tuple[source.HourlyObservation, ...]] = {}
    for station_id, found in by_station.items():
        if not _missing_hours_of({row.hour for row in found}, first, upto, found[0].asked, now):
            held[station_id] = tuple(_observation(row) for row in found)
    return held


def _held_stations(first: dt.datetime, last: dt.datetime, now: dt.datetime,
                   near: frozenset[str] | None) -> dict[str, frozenset[str]]:
    """Stations of the town's permits whose rain hours from `first` to `last` we hold (none worth asking
    for), each with "precipitation" when it has any: the nearest-station choice then needs no fetch.
    `near`: as for `held_windows`."""
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


def near_stations(listed: source.StationList | None, latitude: float, longitude: float) -> frozenset[str] | None:
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


def remember_station(permit: Permit, station: source.Station, now: dt.datetime, *,
                      rainfall: bool = False) -> None:
    values = {"station_id": station.id, "station_name": station.name[:120],
              "distance_m": station.distance_m, "found_at": now}
    if rainfall:
        values["rainfall_fetched_at"] = now
    # An upsert, so two requests finding the station at once cannot collide.
    db.session.execute(_insert(PermitStation).values(permit_id=permit.id, **values)
                       .on_conflict_do_update(index_elements=["permit_id"], set_=values))


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
                                                     deadline_s=deadline_s(), memo=memo,
                                                     station_list=station_list(*site, now))
            keep_station_list(asked[site].station_list_fetched, now)
    for series in asked.values():
        if series.rows:
            store_observations(series.rows, now=now)
    # The hours fetched and stored, from the swept days' first hour (less a day of context) to now.
    swept_from = local_midnight(first_day)
    scans: dict[tuple[str, float], StormScan] = {}
    created: list[tuple[str, StormEvent]] = []
    revised: list[tuple[str, StormEvent]] = []
    pending: list[tuple[str, str]] = []
    melts: dict[tuple[str, float], tuple[FoundSnowmelt, ...]] = {}
    snowmelts: list[tuple[str, SnowmeltDischarge]] = []
    for permit in permits:
        rainfall = asked[(permit.latitude, permit.longitude)]
        if rainfall.station is not None:
            remember_station(permit, rainfall.station, now)
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
    return local_midnight(first_day) + HOUR, local_midnight(last_day + dt.timedelta(days=1))


def local_midnight(day: dt.date) -> dt.datetime:
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


# A chart's statements, built once (building one cost about what running it did); values are their parameters.
_PERMIT_STATION = (select(PermitStation.station_id, PermitStation.station_name, PermitStation.distance_m,
                          PermitStation.found_at, _LAST_ASKED.where(_ASKED.c.station_id == PermitStation.station_id)
                          .scalar_subquery().label("asked"))
                   .where(PermitStation.permit_id == bindparam("permit_id")))
_CHART_STORMS = (select(StormEvent).where(StormEvent.permit_id == bindparam("permit_id"),
                                          StormEvent.day >= bindparam("first"), StormEvent.day <= bindparam("last"))
                 .order_by(StormEvent.day, StormEvent.reached_at))


def permit_rainfall(permit: Permit, *, days: int = CHART_DAYS, now: dt.datetime | None = None) -> Rainfall:
    """The last `days` local days of rain at a permit, with its storm events."""
    now = now or utcnow()
    end_day = now.astimezone(source.LOCAL_TZ).date()
    start_day = end_day - dt.timedelta(days=days - 1)
    first_label, last_label = _day_labels(start_day, end_day)
    known = db.session.execute(_PERMIT_STATION, {"permit_id": permit.id}).first()
    station = source.Station(known.station_id, known.station_name, known.distance_m) if known else None
    status, reason = "", ""
    if known is None or now - known.found_at >= STATION_RECHECK:
        # Which station is nearest with rain data for these days (spec "Weather"): asked of meteostat.
        listed = station_list(permit.latitude, permit.longitude, now)
        series = source.daily_precipitation(permit.latitude, permit.longitude, start_day, end_day,
                                            deadline_s=deadline_s(), station_list=listed,
                                            held=_held_stations(first_label, last_label, now,
                                                                near_stations(listed, permit.latitude, permit.longitude)))
        keep_station_list(series.station_list_fetched, now)
        if series.rows:
            store_observations(series.rows, now=now)
        if series.station is not None:
            remember_station(permit, series.station, now, rainfall=True)
            station = series.station
        if series.status == "pending" or series.station is None:
            status, reason = series.status, series.reason
    else:
        # The station is known: only the hours we do not hold yet are asked for, once an hour at most.
        span = _unheld_hours(station.id, first_label, last_label, now, known.asked)
        if span is not None:
            fetched, why = source.station_hours(station.id, *span, deadline_s=deadline_s())
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
    storms = tuple(db.session.scalars(_CHART_STORMS, {"permit_id": permit.id, "first": start_day, "last": end_day}))
    return Rainfall(permit.id, start_day, end_day, totals, station, status, reason, attribution, fetched_at,
                    profile_of(permit).storm.threshold_mm, storms)
