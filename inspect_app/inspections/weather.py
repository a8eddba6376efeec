"""A report's weather, (e) and (f) of the report: filled from stored station-hours or one bounded lookup,
filled later while the hours are not final (backfill), and which reports answered a storm (CGP 2022 Part 4.2).

The weather domain keeps the stations, their hours and the storm events; this module puts them on a report,
so weather never needs to know what a report is.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from blinker import Namespace
from sqlalchemy import or_, select

from inspect_app.audit import services as audit
from inspect_app.extensions import db
from inspect_app.inspections.canonical import RecordAltered, check_parts, reseal_record
from inspect_app.inspections.models import Inspection
from inspect_app.inspections.queries import weather_pending
from inspect_app.permits.models import Permit
from inspect_app.types import utcnow
from inspect_app.weather import services as weather
from inspect_app.weather import source
from inspect_app.weather.models import StormEvent

# Recent reports that may still change: within meteostat's publication lag, plus the hour being filled.
RECENT = source.PUBLICATION_LAG + dt.timedelta(hours=1)
WEATHER_FIELDS = ("weather_status", "temperature_c", "conditions", "wind_kmh", "wind_direction_deg",
                   "precip_24h_mm", "precip_hours", "station_id", "station_name", "station_distance_m",
                   "weather_sources", "weather_attribution", "weather_stations", "weather_provisional")


@dataclass(frozen=True)
class _Plan:
    """What a lookup gave for one inspection, before anything is written."""

    inspection: Inspection
    result: source.WeatherResult
    fetched: bool  # from meteostat now (store its rows) rather than from our store
    performed_at: dt.datetime | None = None  # the report's time the lookup was for
    # The stations whose hours of the window the lookup took from our store (`weather.held_windows`),
    # with those hours as read: a result made of these alone has nothing new to store or read back.
    held: Mapping[str, tuple[source.HourlyObservation, ...]] = field(default_factory=dict)


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
    held = None  # stored hours this lookup used: only when it is made here, not reused from `asked`
    if key not in asked:  # several reports of one site and hour in one backfill: ask once
        # A report just started reuses the stations' hours we hold; a later fill asks for them again,
        # since a published hour may still gain values (or lose a model's) before it is final.
        listed = weather.station_list(permit.latitude, permit.longitude, now)
        held = (weather.held_windows(*source.inspection_window(inspection.performed_at), now,
                                     weather.near_stations(listed, permit.latitude, permit.longitude))
                if inspection.weather_fetched_at is None else None)
        asked[key] = source.lookup(permit.latitude, permit.longitude, inspection.performed_at,
                                   deadline_s=weather.deadline_s(), held=held, station_list=listed)
        weather.keep_station_list(asked[key].station_list_fetched, now)
    if asked[key].status == "pending" and not asked[key].provisional:
        # The service could not be asked: the permit's rain station, if its stored hours are final.
        fallback = _permit_fallback(inspection, now)
        if fallback is not None:
            return _Plan(inspection, fallback, fetched=False, performed_at=inspection.performed_at)
    return _Plan(inspection, asked[key], fetched=True, performed_at=inspection.performed_at,
                 held=held or {})


def _permit_fallback(inspection: Inspection, now: dt.datetime) -> source.WeatherResult | None:
    """For a report with no station of its own while meteostat cannot be reached: every value from the
    permit's rain station (the sweep's and chart's), when its stored hours of the window are final."""
    if inspection.weather_stations or inspection.station_id:
        return None  # its own stations were tried from the store already
    known = weather.permit_station(_permit_of(inspection))
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
    known = weather.permit_station(_permit_of(inspection)) if hints else None
    if known is not None:
        # The precipitation station the sweep and chart use; the other parameters as recorded. A report
        # with no station of its own yet walks the nearest stations per parameter (spec "Weather") in
        # `source.lookup`, which reuses the hours we hold (`held_windows`) instead of fetching them.
        shared = {**dict.fromkeys(source.PARAMETER_GROUPS, known[0]), **hints[0], "precipitation": known[0]}
        if shared not in hints:
            hints.append(shared)
    return hints


def _stored_result(stations: Stations, at: dt.datetime, now: dt.datetime,
                   fetched_at: dt.datetime | None = None,
                   held: Mapping[str, tuple[source.HourlyObservation, ...]] | None = None) -> source.WeatherResult:
    """The result our store gives for `stations`; `held`: hours of the window read from it already in this
    request, by station (used only with `fetched_at`, which they do not tell)."""
    first, last = source.inspection_window(at)
    rows: list[source.HourlyObservation] = []
    last_fetched: list[dt.datetime] = []
    for station_id in sorted({station.id for station in stations.values()}):
        if held and fetched_at is not None and station_id in held:
            rows.extend(held[station_id])
            continue
        found, fetched = weather.stored_observations(station_id, first, last)
        rows.extend(found)
        last_fetched += [fetched] if fetched else []
    present = {row.station_id for row in rows}
    usable = {group: station for group, station in stations.items() if station.id in present}
    return source.summarize(rows, usable, at, fetched_at=fetched_at or max(last_fetched, default=None), now=now)


def _apply(plan: _Plan, now: dt.datetime) -> str:
    """Store what was fetched and fill the report from our store; returns the weather status after."""
    inspection, result = plan.inspection, plan.result
    # Every chosen station's hours came from our store (a report started where the sweep or another report
    # stored them): storing them again would change nothing (`store_observations` keeps an hour it holds).
    from_store = bool(result.stations) and all(s.station.id in plan.held for s in result.stations)
    if plan.fetched and result.rows and not from_store:
        weather.store_observations(result.rows, now=now)
    rain = result.station_for("precipitation")
    if plan.fetched and rain is not None:
        # The sweep, the chart and the report share the site's precipitation station.
        weather.remember_station(_permit_of(inspection), rain.station, now)
    if result.status == "pending" and not result.provisional:
        return inspection.weather_status  # pending stays pending; a filled report keeps its values
    if result.provisional and inspection.weather_fetched_at is not None and not inspection.weather_provisional:
        return inspection.weather_status  # final values already there are never replaced by provisional ones
    if plan.fetched and result.stations:
        # Fill from what we keep, which may be an earlier copy of an hour than meteostat sent now.
        result = _stored_result({s.parameter: s.station for s in result.stations}, inspection.performed_at,
                                now, result.fetched_at, held=plan.held if from_store else None)
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
    if all(getattr(inspection, name) == values[name] for name in WEATHER_FIELDS) \
            and inspection.weather_fetched_at is not None:
        return  # nothing new: leave the report (and its audit log) as it is
    if inspection.is_submitted:
        # A new version may differ from the signed one in its weather alone: not one whose other parts changed.
        check_parts(inspection)
    was_pending = weather_pending(inspection)
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
        if was_pending and not weather_pending(inspection):
            # §380-16 C(4)(f)[1]: the report sent after the inspection "shall include" (e) and (f); it went with
            # them pending. Its recipients get it again, complete, once (reporting/notification.py receives it).
            weather_filled.send(inspection)


# Sent in the transaction that fills in the weather a submitted report was signed without, after its new seal: the
# report layer mails it again, complete (a domain does not import the layer above it: docs/architecture.md).
weather_filled = Namespace().signal("weather-filled")


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
                   Inspection.performed_at >= now - RECENT),
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
        try:
            after = _apply(plan, now) if plan is not None else inspection.weather_status
            reason = plan.result.reason if plan is not None else ""
        except RecordAltered as altered:  # left as it is, and said: `flask audit verify` names it too
            after, reason = inspection.weather_status, str(altered)
        outcomes.append(BackfillOutcome(inspection.id, _permit_of(inspection).number, inspection.performed_at,
                                        before, after, reason))
    return outcomes


# -- reports that answered a storm (the rainfall chart) -----------------------------------------

@dataclass(frozen=True)
class StormAnswer:
    """A submitted inspection made within the 24 hours a storm gave for one (CGP 2022 Part 4.2)."""

    inspection_id: str
    performed_at: dt.datetime
    storm_days: tuple[dt.date, ...]


def _answer_spans(event: StormEvent) -> list[tuple[dt.datetime, dt.datetime]]:
    """When an inspection answers a storm on time (CGP 2022 Part 4.2, as the engine reads it): from the
    moment the rain reached the threshold to 24 hours later, and for a multi-day storm from its end to 24
    hours later. An event of the old record (a calendar day) counts as reached at the day's end."""
    if event.reached_at is None or event.ended_at is None:
        reached = weather.local_midnight(event.day + dt.timedelta(days=1))
        return [(reached, reached + weather.ANSWER_WINDOW)]
    spans = [(event.reached_at, event.reached_at + weather.ANSWER_WINDOW)]
    if event.multi_day:
        spans.append((event.ended_at, event.ended_at + weather.ANSWER_WINDOW))
    return spans


def storm_answers(permit: Permit, storms: Sequence[StormEvent]) -> tuple[StormAnswer, ...]:
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
