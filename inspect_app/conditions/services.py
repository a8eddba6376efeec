"""Recording frozen conditions and snowmelt discharges seen on site (CGP 2022 Parts 4.2-4.4).

Each change writes the audit log in the same transaction and only flushes: the caller commits. The schedule
engine reads these records (rules/engine.py); the permit's stored obligations follow at the commit.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import joinedload

from inspect_app import held_rows
from inspect_app.audit import services as audit
from inspect_app.conditions.models import FrozenPeriod, SnowmeltDischarge
from inspect_app.extensions import db
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.rules import short_citation
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import LOCAL_TZ, utcnow
from inspect_app.units import in_to_mm, inches

# CGP 2022 Part 4: inspections run while the site is under construction.
UNDER_CONSTRUCTION = ("active", "stop_work", "final_submissions")
# Snow recorded on site, in inches: the deepest 24-hour snowfalls on record in Massachusetts are under 40 in.
MAX_SNOW_IN = 120


class ConditionError(ValueError):
    """A record the site's conditions do not allow; `field` names the form field it is about."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def periods_of(permit: Permit) -> list[FrozenPeriod]:
    """The permit's frozen-conditions periods, newest first."""
    if held_rows.none_of(FrozenPeriod.permit_id, permit.id):
        return []
    query = (select(FrozenPeriod).where(FrozenPeriod.permit_id == permit.id)
             .options(joinedload(FrozenPeriod.recorded_by), joinedload(FrozenPeriod.ended_by)))
    return list(db.session.scalars(query.order_by(FrozenPeriod.starts_at.desc())))


def discharges_of(permit: Permit) -> list[SnowmeltDischarge]:
    """The permit's snowmelt discharges, from the station and seen on site, newest first."""
    if held_rows.none_of(SnowmeltDischarge.permit_id, permit.id):
        return []
    query = (select(SnowmeltDischarge).where(SnowmeltDischarge.permit_id == permit.id)
             .options(joinedload(SnowmeltDischarge.recorded_by)))
    return list(db.session.scalars(query.order_by(SnowmeltDischarge.discharge_at.desc())))


def _when(at: dt.datetime) -> str:
    return at.astimezone(LOCAL_TZ).strftime("%b %-d, %Y %-I:%M %p")


def _check_moment(permit: Permit, at: dt.datetime, field: str, what: str) -> None:
    if at > utcnow() + dt.timedelta(minutes=5):
        raise ConditionError(field, f"{what} cannot be in the future.")
    if permit.construction_started_on is None or at.astimezone(LOCAL_TZ).date() < permit.construction_started_on:
        raise ConditionError(field, f"{what} must be after construction started: CGP inspections begin with it.")


def record_frozen(actor, permit: Permit, suspended: bool, starts_at: dt.datetime, note: str) -> FrozenPeriod:
    """CGP 2022 Part 4.4: record the beginning of frozen conditions on the site, with what the site does.

    Inspections may be suspended only while land disturbance is suspended and every disturbed area is
    stabilized; with work going on they drop to once a month. Either rests on runoff being unlikely because
    frozen conditions are likely to last the profile's `frozen.min_months` or more: the note says why.
    """
    rule = profile_of(permit).frozen
    note = (note or "").strip()
    if permit.status not in UNDER_CONSTRUCTION:
        raise ConditionError("starts_at", "Frozen conditions change the CGP inspections, which run only while the "
                                          "site is under construction.")
    _check_moment(permit, starts_at, "starts_at", "The beginning of frozen conditions")
    if not note:
        raise ConditionError("note", f"Say why runoff is unlikely: frozen conditions likely to last {rule.min_months} "
                                     f"months or more ({short_citation(rule.citation)}).")
    periods = periods_of(permit)
    open_ = next((p for p in periods if p.ends_at is None), None)
    if open_ is not None:
        raise ConditionError("starts_at", f"Frozen conditions recorded on {_when(open_.starts_at)} have not ended; "
                                          "record their end first.")
    ended = max((p for p in periods if p.ends_at > starts_at), key=lambda p: p.ends_at, default=None)
    if ended is not None:
        raise ConditionError("starts_at", f"Frozen conditions are already recorded from {_when(ended.starts_at)} to "
                                          f"{_when(ended.ends_at)}: new ones begin after them.")
    if suspended:
        unstable = db.session.scalars(select(DisturbedArea.name).where(DisturbedArea.permit_id == permit.id,
                                                                       DisturbedArea.status != "stabilized")
                                      .order_by(DisturbedArea.name)).all()
        if unstable:
            raise ConditionError("suspended", "Inspections may be suspended only once every disturbed area is "
                                              f"stabilized ({short_citation(rule.citation)}); not yet: "
                                              f"{', '.join(unstable)}. With work going on, inspections drop to once "
                                              "a month instead.")
        unstable = _not_stabilized_since(permit, starts_at)
        if unstable:
            raise ConditionError("starts_at", "Inspections may be suspended only from a time every disturbed area was "
                                              f"stabilized ({short_citation(rule.citation)}); on {_when(starts_at)} "
                                              f"not yet, or disturbed since: {', '.join(unstable)}. Give the time "
                                              "the last of them was stabilized, or later.")
    period = FrozenPeriod(permit_id=permit.id, suspended=suspended, starts_at=starts_at, note=note,
                          recorded_by_id=actor.id)
    db.session.add(period)
    audit.record(actor, "frozen.begin", period)
    return period


def _not_stabilized_since(permit: Permit, moment: dt.datetime) -> list[str]:
    """The areas of `permit` not stabilized at `moment` by their status timeline, or disturbed again (or added)
    after it: inspections suspended from then would not have been owed nothing (a suspension recorded back to a day
    an area was still disturbed would erase the inspections missed since)."""
    areas = {area.id: area.name for area in permit.areas}
    then, since = {}, set()
    for area_id, status, at in db.session.execute(
            select(AreaStatusEvent.area_id, AreaStatusEvent.status, AreaStatusEvent.at)
            .where(AreaStatusEvent.area_id.in_(areas)).order_by(AreaStatusEvent.at)):
        if at <= moment:
            then[area_id] = status
        elif status != "stabilized":
            since.add(area_id)
    return sorted(name for area_id, name in areas.items()
                  if then.get(area_id, "stabilized") != "stabilized" or area_id in since)


def end_frozen(actor, period: FrozenPeriod, ends_at: dt.datetime) -> FrozenPeriod:
    """CGP 2022 Part 4.4: record that frozen conditions ended (thawing began, or discharges became likely):
    the permit's regular schedule applies again from then."""
    if period.ends_at is not None:
        raise ConditionError("ends_at", f"These frozen conditions already ended on {_when(period.ends_at)}.")
    if ends_at <= period.starts_at:
        raise ConditionError("ends_at", f"The end must be after the beginning, {_when(period.starts_at)}.")
    if ends_at > utcnow() + dt.timedelta(minutes=5):
        raise ConditionError("ends_at", "The end cannot be in the future.")
    before = audit.snapshot(period)
    period.ends_at, period.ended_by_id = ends_at, actor.id
    audit.record(actor, "frozen.end", period, before)
    return period


def record_snowmelt(actor, permit: Permit, discharge_at: dt.datetime, snow_in: float, note: str | None) -> SnowmeltDischarge:
    """CGP 2022 Parts 4.2, 4.3: a discharge caused by snowmelt seen on site, and the snow of the storm it melted
    from (inches within 24 hours, as measured or reported for the site). Of 3.25 in or more (the profile's
    `snowmelt.threshold_mm`), an inspection is owed within 24 hours of the discharge."""
    if permit.status not in UNDER_CONSTRUCTION:
        raise ConditionError("discharge_at", "A snowmelt discharge changes the CGP inspections, which run only "
                                             "while the site is under construction.")
    _check_moment(permit, discharge_at, "discharge_at", "The discharge")
    if snow_in is None or not 0 < snow_in <= MAX_SNOW_IN:
        raise ConditionError("snow_in", f"Give the snow of the storm, in inches: more than 0, at most {MAX_SNOW_IN}.")
    taken = db.session.scalar(select(SnowmeltDischarge.id).where(
        SnowmeltDischarge.permit_id == permit.id, SnowmeltDischarge.discharge_at == discharge_at,
        SnowmeltDischarge.seen_on_site.is_(True)))
    if taken is not None:
        raise ConditionError("discharge_at", f"A discharge seen on site at {_when(discharge_at)} is already recorded.")
    discharge = SnowmeltDischarge(permit_id=permit.id, discharge_at=discharge_at, snow_mm=in_to_mm(snow_in),
                                  seen_on_site=True, note=(note or "").strip() or None, recorded_by_id=actor.id)
    db.session.add(discharge)
    audit.record(actor, "snowmelt.record", discharge)
    return discharge


def owes_inspection(permit: Permit, discharge: SnowmeltDischarge) -> bool:
    """Whether the discharge's snow reached the town's threshold (CGP 2022 Parts 4.2, 4.3)."""
    return discharge.snow_mm >= profile_of(permit).snowmelt.threshold_mm - 1e-6


def threshold_words(permit: Permit) -> str:
    """'3.25 in of snow within 24 hours (CGP 2022 Parts 4.2, 4.3)'."""
    rule = profile_of(permit).snowmelt
    return f"{inches(rule.threshold_mm)} of snow within 24 hours ({short_citation(rule.citation)})"
