"""The stored record turned into the schedule engine's facts, for many permits at once.

`load_records(scope)` reads every table the engine needs with one query per table, whatever the number
of permits: each query is filtered by the permits of `scope` (a query of permits) as a subquery, only
the columns the engine reads are selected, and the rows are grouped by permit in Python. Nothing is
lazily loaded, so the number of SQL statements never grows with the number of permits.

Where the record keeps only a date (a permit's issue, completion, extension request, a waiver's grant), the
date is read on the town's calendar: issue, extension request and waiver at the start of the day,
completion at its end. Construction start (§380-2, "the first land-disturbing activity") is kept with its
time; a permit of the old record with only the day is read as the end of it, so an inspection made that day
still counts as the inspection before construction (§380-16 C(4)(b)[1]).
"""
from __future__ import annotations

import datetime as dt
import gc
from collections import defaultdict
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, lru_cache

from flask import current_app
from sqlalchemy import BindParameter, CompoundSelect, Select, and_, bindparam, case, exists, func, literal, or_, select
from sqlalchemy import union_all
from sqlalchemy.orm import aliased

from inspect_app import inspection_types
from inspect_app.accounts.models import User
from inspect_app.accounts.policy import shown
from inspect_app.certifications.models import NoticeToCorrect as NoticeToCorrectRow
from inspect_app.certifications.models import OMCertification
from inspect_app.completion.models import CertificateOfCompletion
from inspect_app.conditions.models import FrozenPeriod as FrozenPeriodRow
from inspect_app.conditions.models import SnowmeltDischarge as SnowmeltRow
from inspect_app.enforcement.models import StopWorkOrder as StopWorkOrderRow
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction as CorrectiveActionRow
from inspect_app.inspections.models import Finding as FindingRow
from inspect_app.inspections.models import ChecklistAnswer
from inspect_app.inspections.models import Inspection as InspectionRow
from inspect_app.permits.models import Jurisdiction, Permit, PermitAssignment, StormwaterStructure
from inspect_app.profiles.schema import Profile
from inspect_app.rules import (
    Area,
    AreaEvent,
    CorrectiveAction,
    FactsError,
    FrozenPeriod,
    Inspection,
    NoticeToCorrect,
    PermitFacts,
    Report,
    SnowmeltDischarge,
    StopWorkOrder,
    Storm,
    Structure,
    ViolationFinding,
    Waiver,
)
from inspect_app.rules.calendar import zone
from inspect_app.rules.storms import gauge_storm
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import UTCDateTime
from inspect_app.waivers.models import Waiver as WaiverRow
from inspect_app.weather.models import StormEvent

# The engine reads the inspections that meet the routine schedule (CGP schedule, storms, pre-construction), the
# first walk-through and final, and those of a completed project (§380-14 A(3)); pre-bury inspections reach it
# through each structure. Others it ignores.
_ROUTINE = inspection_types.meeting("inspection")
[_WALK_THROUGH] = inspection_types.keys_where(makes_punch_list=True)
[_FINAL] = inspection_types.keys_where(part="system_acceptance")
_AFTER_COMPLETION = inspection_types.keys_where(after_completion=True)
ENGINE_INSPECTION_TYPES = (_ROUTINE, _WALK_THROUGH, _FINAL, *_AFTER_COMPLETION)
_DAY = dt.timedelta(days=1)
# The columns `load_records` reads, table by table (with the labels shown beside obligations): a change
# to any of them can change what a permit owes, so `schedule.obligations` works the permit out again.
READS: dict[type, tuple[str, ...]] = {
    Permit: ("jurisdiction_id", "status", "cgp_schedule", "sensitive_waters", "issued_on", "construction_started_on",
             "construction_started_at", "completed_on", "extension_requested_on", "extension_granted_on", "start_extended_to",
             "decision_filed_on"),
    DisturbedArea: ("permit_id", "name"),
    AreaStatusEvent: ("area_id", "status", "at"),
    StormwaterStructure: ("permit_id", "name", "is_underground", "backfilled_at"),
    InspectionRow: ("permit_id", "type", "status", "amends_id", "performed_at", "gauge_precip_mm",
                    "submitted_at", "blank"),
    ChecklistAnswer: ("inspection_id", "subject_id"),
    CorrectiveActionRow: ("permit_id", "kind", "discovered_at", "completed_at", "description", "created_at",
                          "finding_id"),
    FindingRow: ("permit_id", "is_violation", "status", "description"),
    StormEvent: ("permit_id", "day", "depth_mm", "started_at", "reached_at", "ended_at", "multi_day"),
    StopWorkOrderRow: ("permit_id", "issued_at", "lifted_at"),
    OMCertification: ("permit_id", "status", "submitted_at"),
    NoticeToCorrectRow: ("permit_id", "issued_at", "cured_at"),
    CertificateOfCompletion: ("permit_id", "issued_at"),
    FrozenPeriodRow: ("permit_id", "suspended", "starts_at", "ends_at"),
    SnowmeltRow: ("permit_id", "discharge_at", "snow_mm", "seen_on_site"),
    WaiverRow: ("permit_id", "requirement", "structure_id", "granted_on", "reason", "granted_by_id"),
}


@dataclass(frozen=True, slots=True)
class PermitSummary:
    """What the screens and exports show about a permit beside its obligations."""

    id: str
    number: str
    site_address: str
    status: str
    cgp_schedule: str
    latitude: float
    longitude: float
    issued_on: dt.date
    construction_started_on: dt.date | None
    jurisdiction_id: str
    town: str
    profile_key: str
    inspector_ids: tuple[str, ...] = ()
    inspector_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Record:
    """One permit ready for the engine: its facts and town profile, or the problem that stops that."""

    permit: PermitSummary
    facts: PermitFacts | None
    profile: Profile | None
    problem: str | None = None
    # What an obligation's subject is called on screen: an area's name, a corrective action's task...
    labels: dict[str, str] = field(default_factory=dict)


@lru_cache(maxsize=4096)
def _day_bounds(day: dt.date, timezone: str) -> tuple[dt.datetime, dt.datetime]:
    """The first and last instant (UTC) of a local calendar day; many permits share the same days."""
    tz = zone(timezone)
    return (dt.datetime.combine(day, dt.time.min, tzinfo=tz).astimezone(dt.UTC),
            dt.datetime.combine(day, dt.time.max, tzinfo=tz).astimezone(dt.UTC))


def _start_of(day: dt.date | None, timezone: str) -> dt.datetime | None:
    return None if day is None else _day_bounds(day, timezone)[0]


def _end_of(day: dt.date | None, timezone: str) -> dt.datetime | None:
    return None if day is None else _day_bounds(day, timezone)[1]


def _grouped(rows) -> dict[str, list]:
    """Rows whose first column is a permit id, as lists of the remaining columns by permit."""
    out: dict[str, list] = defaultdict(list)
    for row in rows:
        out[row[0]].append(row[1:])
    return out


def _ids(scope: Select) -> Select:
    """The permit ids of `scope` (a query of permits), for use as a subquery."""
    return scope.with_only_columns(Permit.id).order_by(None)


def load_records(scope: Select | None = None, *, permit_ids: Collection[str] | None = None,
                 open_at: dt.datetime | None = None, profiles: dict[str, Profile] | None = None,
                 schedule_only: bool = False) -> list[Record]:
    """Facts and profile of every permit in `scope` (a query of permits), or of the permits `permit_ids`,
    with one query per table.

    With `open_at`, only what decides the *open* obligations as of that moment is read (for the engine's
    `history=False`, which gives exactly the open obligations of the full history): corrective actions
    and notices not yet done, storms only where the permit's schedule has storm inspections, and of the
    inspections the first of each type and the last two erosion-control ones (see `_open_inspections`).

    With `schedule_only`, only the permit and its areas are read (two queries instead of thirteen): what
    decides the schedule in force (`rules.schedule_in_force`), which a report restates each time its draft
    is saved; the other facts are left empty, so such a record is for that question alone.

    By `permit_ids` (the schedule's refresh before every commit that changes a record), the queries are
    built once per process and only their parameters change: building them took as long as running them.

    Most permits have no row in a dozen of the tables read (stop-work orders, waivers, frozen periods, storms...):
    one statement first asks which of them hold a row for these permits, and the others are not read
    (`_mostly_empty`). A permit with none of them is read in 6 statements instead of 17.
    """
    profiles = profiles if profiles is not None else current_app.extensions["profiles"]
    if permit_ids is not None:
        queries = _queries_by_id(open_at is not None, schedule_only, _storm_towns(profiles))
        parameters = {"permit_ids": list(permit_ids), "open_at": open_at}
    else:
        queries = _queries(_ids(scope), open_at, schedule_only, _storm_towns(profiles))
        parameters = {}

    permits = db.session.execute(queries["permits"], parameters).all()  # flushes what is pending first
    if not permits:
        return []
    # The rest on the same connection without the ORM's part: they select columns, not objects.
    connection = db.session.connection()

    # Which of the tables a permit most often has no row in hold one for these permits, in one statement: the
    # queries of the others would return nothing (each reads only rows its table holds for these permits).
    held = (frozenset(connection.execute(queries[_HELD], parameters).scalars()) if _HELD in queries
            else frozenset(_MOSTLY_EMPTY))

    def run(name: str):
        if name in _MOSTLY_EMPTY and name not in held:
            return []
        # All rows at once: the cursor holds them all already, and fetching them one by one cost a tenth
        # of the load when a permit's areas have long histories.
        return connection.execute(queries[name], parameters).all()

    area_rows = _grouped(run("areas"))
    frozen = _grouped(run("frozen"))
    if schedule_only:
        # rules.schedule_in_force reads the permit's frequency, sensitive waters, its areas' history and its
        # frozen periods alone.
        assigned = structures = inspections = storms = gauges = actions = notices = orders = certifications = {}
        findings = reports = snowmelts = waivers = {}
    else:
        snowmelts = _grouped(run("snowmelts"))
        waivers = _grouped(run("waivers"))
        assigned = _grouped(run("assigned"))
        structures = _grouped(run("structures"))
        if open_at is not None:
            inspections = _open_inspections(run("inspections"))
            for pid, *row in run("inspections_after_completion"):
                inspections.setdefault(pid, []).append(tuple(row))
        else:
            inspections = _grouped(run("inspections"))
        findings = _grouped(run("findings"))
        reports = _grouped(run("reports"))
        storms = _grouped(run("storms"))
        gauges = _grouped(run("gauges"))
        actions = _grouped(run("actions"))
        notices = _grouped(run("notices"))
        orders = _grouped(run("orders"))
        certifications = _grouped(run("certifications"))
    records = []
    for row in permits:
        (pid, number, address, status, schedule, lat, lon, issued_on, started_on, town_id, town, key,
         sensitive, completed_on, extension_on, granted_on, certificate_at, extended_to, filed_on, started_at) = row
        people = assigned.get(pid, ())
        summary = PermitSummary(
            id=pid, number=number, site_address=address, status=status, cgp_schedule=schedule,
            latitude=lat, longitude=lon, issued_on=issued_on, construction_started_on=started_on,
            jurisdiction_id=town_id, town=town, profile_key=key,
            inspector_ids=tuple(p[0] for p in people), inspector_names=tuple(p[1] for p in people),
        )
        profile = profiles.get(key)
        if profile is None:
            records.append(Record(summary, None, None, f"The town profile {key!r} is not loaded."))
            continue
        tz = profile.timezone
        try:
            started = started_at or _end_of(started_on, tz)
            completed = certificate_at or (_end_of(completed_on, tz) if status == "completed" else None)
            if completed is not None and started is not None and completed < started:
                completed = started  # a certificate on the day work began: completion can't precede the start
            facts = PermitFacts(
                id=pid, number=number, status=status, cgp_schedule=schedule, sensitive_waters=bool(sensitive),
                issued_at=_start_of(issued_on, tz), construction_started_at=started, completed_at=completed,
                extension_requested_at=_start_of(extension_on, tz), extension_granted_at=_start_of(granted_on, tz),
                start_extended_to=_start_of(extended_to, tz), decision_filed_at=_start_of(filed_on, tz),
                areas=_areas(area_rows.get(pid, ())),
                structures=tuple(Structure(id=i, name=n, backfilled_at=b, pre_bury_inspected_at=p)
                                 for i, n, b, p in structures.get(pid, ())),
                inspections=tuple(Inspection(id=i, kind=k, at=a) for i, k, a in inspections.get(pid, ())),
                storms=(*(_storm(*row, tz) for row in storms.get(pid, ())),
                        *(gauge_storm(at, depth) for at, depth in gauges.get(pid, ()))),
                corrective_actions=tuple(CorrectiveAction(id=i, kind=k, discovered_at=d, completed_at=c)
                                         for i, k, d, c, _ in actions.get(pid, ())),
                stop_work_orders=tuple(StopWorkOrder(id=i, issued_at=s, lifted_at=f)
                                       for i, s, f in orders.get(pid, ())),
                om_certifications=tuple(at for (at,) in certifications.get(pid, ())),
                notices_to_correct=tuple(NoticeToCorrect(id=i, issued_at=s, corrected_at=c)
                                         for i, s, c in notices.get(pid, ())),
                violation_findings=tuple(ViolationFinding(id=i, discovered_at=at, description=text, documented_at=doc)
                                         for i, at, text, doc in findings.get(pid, ())),
                reports=tuple(Report(id=i, kind=k, at=at, submitted_at=sub) for i, k, at, sub in reports.get(pid, ())),
                frozen_periods=tuple(FrozenPeriod(start=a, end=b, suspended=bool(sus))
                                     for sus, a, b in frozen.get(pid, ())),
                snowmelts=tuple(SnowmeltDischarge(at=at, snow_mm=mm, seen_on_site=bool(site))
                                for at, mm, site in snowmelts.get(pid, ())),
                waivers=tuple(Waiver(id=i, requirement=req, granted_at=_start_of(on, tz), reason=why, granted_by=who,
                                     subject=f"structure:{sid}" if sid else None)
                              for i, req, sid, on, why, who in waivers.get(pid, ())),
            )
        except FactsError as error:
            records.append(Record(summary, None, profile, f"The record cannot be evaluated: {error}"))
            continue
        labels = {f"corrective_action:{i}": text for i, _, _, _, text in actions.get(pid, ())}
        labels |= {f"finding:{i}": text for i, _, text, _ in findings.get(pid, ())}
        records.append(Record(summary, facts, profile, labels=labels))
    return records


def _storm_towns(profiles: dict[str, Profile]) -> tuple[str, ...]:
    """The towns whose rules ask for a storm inspection on every schedule (§380-11 C(3)(f); profile
    `storm.every_schedule`): their 7-day permits owe storm inspections too."""
    return tuple(sorted(key for key, profile in profiles.items() if profile.storm.every_schedule))


@cache
def _queries_by_id(open_: bool, schedule_only: bool, storm_towns: tuple[str, ...] = ()) -> dict[str, Select]:
    """`_queries` for the permits of the parameter `permit_ids` (as of the parameter `open_at` if `open_`),
    built once: the same subquery of ids that `_ids` makes of `select(Permit).where(Permit.id.in_(...))`."""
    ids = select(Permit.id).where(Permit.id.in_(bindparam("permit_ids", expanding=True)))
    return _queries(ids, bindparam("open_at", type_=UTCDateTime()) if open_ else None, schedule_only, storm_towns)


def _queries(ids: Select, open_at: dt.datetime | BindParameter | None, schedule_only: bool,
             storm_towns: tuple[str, ...] = ()) -> dict[str, Select]:
    """The queries `load_records` runs, by name, for the permits whose ids `ids` selects (see there)."""
    queries = {
        "permits": (
            select(Permit.id, Permit.number, Permit.site_address, Permit.status, Permit.cgp_schedule,
                   Permit.latitude, Permit.longitude, Permit.issued_on, Permit.construction_started_on,
                   Permit.jurisdiction_id, Jurisdiction.name, Jurisdiction.profile_key, Permit.sensitive_waters,
                   Permit.completed_on, Permit.extension_requested_on, Permit.extension_granted_on,
                   CertificateOfCompletion.issued_at, Permit.start_extended_to, Permit.decision_filed_on,
                   Permit.construction_started_at)
            .join(Jurisdiction, Jurisdiction.id == Permit.jurisdiction_id)
            .outerjoin(CertificateOfCompletion, CertificateOfCompletion.permit_id == Permit.id)
            .where(Permit.id.in_(ids))
            .order_by(Permit.number)
        ),
        "areas": (
            select(DisturbedArea.permit_id, DisturbedArea.id, DisturbedArea.name, AreaStatusEvent.status,
                   AreaStatusEvent.at)
            .outerjoin(AreaStatusEvent, AreaStatusEvent.area_id == DisturbedArea.id)
            .where(DisturbedArea.permit_id.in_(ids))
        ),
        # CGP 2022 Part 4.4: frozen conditions change the schedule in force.
        "frozen": (
            select(FrozenPeriodRow.permit_id, FrozenPeriodRow.suspended, FrozenPeriodRow.starts_at,
                   FrozenPeriodRow.ends_at)
            .where(FrozenPeriodRow.permit_id.in_(ids))
        ),
    }
    if schedule_only:
        return queries
    queries["assigned"] = (
        select(PermitAssignment.permit_id, PermitAssignment.user_id, User.name)
        .join(User, User.id == PermitAssignment.user_id)
        .where(PermitAssignment.permit_id.in_(ids))
        .order_by(PermitAssignment.permit_id, User.name)
    )
    # §380-16 C(4)(c): a structure counts as inspected before backfill once a submitted pre-bury
    # inspection answered its checklist items.
    pre_bury = (
        select(ChecklistAnswer.subject_id.label("structure_id"),
               func.min(InspectionRow.performed_at).label("inspected_at"))
        .join(InspectionRow, InspectionRow.id == ChecklistAnswer.inspection_id)
        .where(InspectionRow.permit_id.in_(ids), InspectionRow.type.in_(inspection_types.keys_where(covers="structure")),
               InspectionRow.status == "submitted", ChecklistAnswer.subject_id != "")
        .group_by(ChecklistAnswer.subject_id)
        .subquery()
    )
    queries["structures"] = (
        select(StormwaterStructure.permit_id, StormwaterStructure.id, StormwaterStructure.name,
               StormwaterStructure.backfilled_at, pre_bury.c.inspected_at)
        .outerjoin(pre_bury, pre_bury.c.structure_id == StormwaterStructure.id)
        .where(StormwaterStructure.permit_id.in_(ids), StormwaterStructure.is_underground.is_(True))
    )
    queries["inspections"] = _open_inspections_query(ids, open_at) if open_at is not None else _all_inspections(ids)
    # Every inspection of a completed project (one a year or so): each may meet a period missed before it.
    queries["inspections_after_completion"] = _all_inspections(ids).where(InspectionRow.type.in_(_AFTER_COMPLETION))
    storm_query = (
        select(StormEvent.permit_id, StormEvent.day, StormEvent.depth_mm, StormEvent.started_at,
               StormEvent.reached_at, StormEvent.ended_at, StormEvent.multi_day)
        .where(StormEvent.permit_id.in_(ids))
    )
    gauge_query = _gauge_readings(ids)
    action_query = (
        select(CorrectiveActionRow.permit_id, CorrectiveActionRow.id, CorrectiveActionRow.kind,
               CorrectiveActionRow.discovered_at, CorrectiveActionRow.completed_at, CorrectiveActionRow.description)
        # A draft's actions are its author's alone until it is submitted (the submission recomputes, and
        # the deadline still counts from discovery, CGP Part 5.2).
        .where(CorrectiveActionRow.permit_id.in_(ids), shown(None, CorrectiveActionRow))
    )
    notice_query = (
        select(NoticeToCorrectRow.permit_id, NoticeToCorrectRow.id, NoticeToCorrectRow.issued_at,
               NoticeToCorrectRow.cured_at)
        .where(NoticeToCorrectRow.permit_id.in_(ids))
    )
    if open_at is not None:
        # CGP 2022 Parts 4.2, 4.3: storm inspections only on the 14-day schedule or sensitive waters, and on
        # every schedule in a town that asks for them after any storm (§380-11 C(3)(f)).
        owes_storms = or_(Permit.sensitive_waters.is_(True), Permit.cgp_schedule == "every_14_days_and_storm",
                          Permit.jurisdiction_id.in_(select(Jurisdiction.id)
                                                     .where(Jurisdiction.profile_key.in_(storm_towns))))
        storm_query = storm_query.join(Permit, Permit.id == StormEvent.permit_id).where(owes_storms)
        gauge_query = gauge_query.join(Permit, Permit.id == InspectionRow.permit_id).where(owes_storms)
        action_query = action_query.where(or_(CorrectiveActionRow.completed_at.is_(None),
                                              CorrectiveActionRow.completed_at > open_at))
        notice_query = notice_query.where(or_(NoticeToCorrectRow.cured_at.is_(None),
                                              NoticeToCorrectRow.cured_at > open_at))
    # CGP 2022 Part 5.2: a violation found with no corrective action opened yet is still owed, from the
    # inspection that found it (submitted reports only: a draft is not the record). CGP 2022 Part 5.4: its
    # corrective action is documented when the first action was recorded, and no sooner than the report that
    # found it was submitted (a draft's action is its author's alone); a violation documented stays on the
    # record, met on time or late, whatever became of it since.
    first_action = (select(func.min(func.coalesce(CorrectiveActionRow.created_at, CorrectiveActionRow.discovered_at)))
                    .where(CorrectiveActionRow.finding_id == FindingRow.id).scalar_subquery())
    reported = func.coalesce(InspectionRow.submitted_at, InspectionRow.performed_at)
    documented = case((first_action.is_(None), None), (first_action > reported, first_action), else_=reported)
    finding_query = (
        select(FindingRow.permit_id, FindingRow.id, InspectionRow.performed_at, FindingRow.description, documented)
        .join(InspectionRow, InspectionRow.id == FindingRow.inspection_id)
        .where(FindingRow.permit_id.in_(ids), FindingRow.is_violation.is_(True), InspectionRow.status == "submitted",
               or_(FindingRow.status != "corrected", first_action.is_not(None)))
    )
    if open_at is not None:
        finding_query = finding_query.where(or_(and_(first_action.is_(None), FindingRow.status != "corrected"),
                                                documented > open_at))
    queries["findings"] = finding_query
    # CGP 2022 Part 4.7.1: every report within 24 hours of its inspection (for what is open: the drafts).
    # A submitted report with no submission time recorded counts as submitted when it was made. A blank draft
    # (a Start with nothing kept since, `Inspection.blank`) is no inspection yet: it owes no report.
    submitted_at = case((InspectionRow.status == "draft", None),
                        else_=func.coalesce(InspectionRow.submitted_at, InspectionRow.performed_at))
    report_query = (select(InspectionRow.permit_id, InspectionRow.id, InspectionRow.type, InspectionRow.performed_at,
                           submitted_at)
                    .where(InspectionRow.permit_id.in_(ids), InspectionRow.amends_id.is_(None),
                           or_(InspectionRow.status != "draft", InspectionRow.blank.is_(False))))
    if open_at is not None:
        report_query = report_query.where(or_(InspectionRow.status == "draft", submitted_at > open_at))
    queries[_HELD] = _held_question(ids)
    queries |= {
        "reports": report_query, "storms": storm_query, "gauges": gauge_query, "actions": action_query,
        "notices": notice_query,
        "snowmelts": (
            select(SnowmeltRow.permit_id, SnowmeltRow.discharge_at, SnowmeltRow.snow_mm, SnowmeltRow.seen_on_site)
            .where(SnowmeltRow.permit_id.in_(ids))
        ),
        "waivers": (
            select(WaiverRow.permit_id, WaiverRow.id, WaiverRow.requirement, WaiverRow.structure_id,
                   WaiverRow.granted_on, WaiverRow.reason, User.name)
            .join(User, User.id == WaiverRow.granted_by_id)
            .where(WaiverRow.permit_id.in_(ids))
        ),
        "orders": (
            select(StopWorkOrderRow.permit_id, StopWorkOrderRow.id, StopWorkOrderRow.issued_at,
                   StopWorkOrderRow.lifted_at)
            .where(StopWorkOrderRow.permit_id.in_(ids))
        ),
        # A certification found deficient does not certify the year (§380-14 C(2)(l)).
        "certifications": (
            select(OMCertification.permit_id, OMCertification.submitted_at)
            .where(OMCertification.permit_id.in_(ids), OMCertification.status != "deficient")
        ),
    }
    return queries


# The queries of `_queries` that read a table most permits have no row in, each with a condition every row it
# reads meets: where no row of these permits meets it, the query is not run (`load_records`).
_HELD = "held"


def _mostly_empty(ids: Select) -> dict[str, object]:
    return {
        "frozen": FrozenPeriodRow.permit_id.in_(ids),
        "snowmelts": SnowmeltRow.permit_id.in_(ids),
        "waivers": WaiverRow.permit_id.in_(ids),
        "structures": and_(StormwaterStructure.permit_id.in_(ids), StormwaterStructure.is_underground.is_(True)),
        "inspections_after_completion": and_(InspectionRow.permit_id.in_(ids),
                                             InspectionRow.type.in_(_AFTER_COMPLETION)),
        "findings": and_(FindingRow.permit_id.in_(ids), FindingRow.is_violation.is_(True)),
        "storms": StormEvent.permit_id.in_(ids),
        "gauges": and_(InspectionRow.permit_id.in_(ids), InspectionRow.gauge_precip_mm > 0),
        "actions": CorrectiveActionRow.permit_id.in_(ids),
        "notices": NoticeToCorrectRow.permit_id.in_(ids),
        "orders": StopWorkOrderRow.permit_id.in_(ids),
        "certifications": OMCertification.permit_id.in_(ids),
    }


_MOSTLY_EMPTY = frozenset(_mostly_empty(select(Permit.id)))


def _held_question(ids: Select) -> CompoundSelect:
    """The names of `_mostly_empty`'s queries with a row to read for the permits `ids` selects (named once, in a
    WITH: a list of ids is sent once, not once a table)."""
    named = ids.cte("held_permits")
    return union_all(*(select(literal(name)).where(exists().where(condition))
                       for name, condition in _mostly_empty(select(named.c.id)).items()))


def _submitted(ids: Select):
    """Submitted reports of the engine's types (drafts are not the record; an amendment restates a
    report rather than recording another visit)."""
    return and_(InspectionRow.permit_id.in_(ids), InspectionRow.status == "submitted",
                InspectionRow.amends_id.is_(None), InspectionRow.type.in_(ENGINE_INSPECTION_TYPES))


def _all_inspections(ids: Select) -> Select:
    """Every inspection the engine reads, as (permit id, id, type, performed_at) rows."""
    return (select(InspectionRow.permit_id, InspectionRow.id, InspectionRow.type, InspectionRow.performed_at)
            .where(_submitted(ids)))


def _open_inspections_query(ids: Select, now: dt.datetime | BindParameter) -> Select:
    """The inspections that decide the open obligations as of `now`, one row per permit (`_open_inspections`).

    For what is still open the engine reads: whether any erosion-control inspection was made (before
    construction), the last one (the CGP chain restarts at every inspection), the one before it (storms
    whose last day began before it are settled, and the storms after it are met by the inspections at
    or after their start, which are among these two), and the first walk-through and final.
    Each is one correlated lookup per permit, which an index on inspections (permit_id, type, status,
    amends_id, performed_at) answers without reading the table. The reports are named by their place
    ("first-final", "last-2-erosion_control"), not their ids: the engine never shows inspection ids.
    """

    def nth(kind: str, n: int = 0, newest: bool = False):
        order = InspectionRow.performed_at.desc() if newest else InspectionRow.performed_at
        return (
            select(InspectionRow.performed_at)
            .where(InspectionRow.permit_id == Permit.id, InspectionRow.type == kind,
                   InspectionRow.status == "submitted", InspectionRow.amends_id.is_(None),
                   InspectionRow.performed_at <= now)
            .order_by(order).limit(1).offset(n).scalar_subquery()
        )

    return select(
        Permit.id, nth(_ROUTINE), nth(_ROUTINE, 2, newest=True), nth(_ROUTINE, 1, newest=True),
        nth(_ROUTINE, 0, newest=True), nth(_WALK_THROUGH), nth(_FINAL),
    ).where(Permit.id.in_(ids))


def _open_inspections(rows) -> dict[str, list]:
    """The rows of `_open_inspections_query` as (place, type, performed_at) by permit."""
    out: dict[str, list] = {}
    for pid, first, third_last, second_last, last, walk_through, final in rows:
        found = []
        if third_last is not None:  # with two or fewer, the last two are all of them
            found.append((f"first-{_ROUTINE}", _ROUTINE, first))
        found += [(f"last-{n}-{_ROUTINE}", _ROUTINE, at)
                  for n, at in ((2, second_last), (1, last)) if at is not None]
        found += [(f"first-{kind}", kind, at) for kind, at in ((_WALK_THROUGH, walk_through), (_FINAL, final))
                  if at is not None]
        out[pid] = found
    return out


def _areas(rows) -> tuple[Area, ...]:
    """Areas with their status timelines, from (area id, name, status, at) rows (status None: no events)."""
    names: dict[str, str] = {}
    events: dict[str, list[AreaEvent]] = defaultdict(list)
    for area_id, name, status, at in rows:
        names[area_id] = name
        if status is not None:
            events[area_id].append(AreaEvent(status=status, at=at))
    return tuple(Area(id=i, name=n, events=tuple(events.get(i, ()))) for i, n in names.items())


# A report's amendment: made once, since each new alias has its columns worked out again (milliseconds,
# at every commit that changes a permit's record).
_AMENDMENT = aliased(InspectionRow, name="amendment")


def _gauge_readings(ids: Select) -> Select:
    """(permit id, performed_at, gauge mm) of the submitted reports with an on-site rain-gauge reading.

    CGP 2022 Part 4.2 lets a gauge stand for a station: a reading of the threshold or more is a storm. A
    report corrected by a submitted amendment gives way to the amendment's reading.
    """
    corrected = (select(_AMENDMENT.id).where(_AMENDMENT.amends_id == InspectionRow.id,
                                             _AMENDMENT.status == "submitted").exists())
    return (
        select(InspectionRow.permit_id, InspectionRow.performed_at, InspectionRow.gauge_precip_mm)
        .where(InspectionRow.permit_id.in_(ids), InspectionRow.status == "submitted",
               InspectionRow.gauge_precip_mm > 0, ~corrected)
    )


def _storm(day: dt.date, depth_mm: float, started: dt.datetime | None, reached: dt.datetime | None,
           ended: dt.datetime | None, multi_day: bool, timezone: str) -> Storm:
    """A storm event of the weather record (CGP 2022 Part 4.2): from hourly data, the moment its rolling
    24-hour total reached the threshold and its end; a row of the old record is a local calendar day."""
    if reached is None or started is None or ended is None:
        return _calendar_day_storm(day, depth_mm, timezone)
    return Storm(start=started, end=ended, depth_mm=depth_mm, reached_at=reached, multi_day=bool(multi_day))


@lru_cache(maxsize=65536)
def _calendar_day_storm(day: dt.date, depth_mm: float, timezone: str) -> Storm:
    """A storm day of the old weather record: the town's local calendar day (taken as reached at its end).

    Facts are frozen, so one storm day seen at many permits of a town is made once and shared.
    """
    return Storm(start=_start_of(day, timezone), end=_start_of(day + _DAY, timezone), depth_mm=depth_mm)


def subject_label(subject: str, record: Record) -> str:
    """What an obligation is about, in words: the area's or structure's name, the storm's day..."""
    if subject in record.labels:
        return record.labels[subject]
    facts = record.facts
    thing, _, key = subject.partition(":")
    if facts is None:
        return subject
    if thing == "permit":
        return "Whole site"
    if thing == "area":
        return next((f"Area {a.name}" for a in facts.areas if str(a.id) == key), "An area")
    if thing == "structure":
        return next((s.name for s in facts.structures if str(s.id) == key), "A structure")
    if thing == "storm":
        day = key.removesuffix(":end")
        try:
            start = dt.datetime.fromisoformat(day)
        except ValueError:
            return "Storm"
        if start.tzinfo is not None and record.profile is not None:  # the town's day, as the storm's reason says it
            start = start.astimezone(zone(record.profile.timezone))
        return f"{'End of storm' if key.endswith(':end') else 'Storm'} of {start.date().isoformat()}"
    if thing == "snowmelt":
        try:
            at = dt.datetime.fromisoformat(key)
        except ValueError:
            return "Snowmelt discharge"
        return f"Snowmelt discharge of {at.astimezone(zone(record.profile.timezone) if record.profile else dt.UTC).date().isoformat()}"
    if thing == "om_certification":
        return f"Year {key}"
    if thing == "om_inspection":  # the profile's interval: "Year 1" when it is yearly
        months = next((kind.interval.months for kind in record.profile.inspection_types if kind.interval is not None
                       and "om_inspection" in inspection_types.spec(kind.key).meets), None) if record.profile else None
        return f"Year {key}" if months == 12 else f"Period {key}"
    if thing == "corrective_action":
        return "Corrective action"
    if thing == "notice_to_correct":
        return "Notice to correct"
    if thing == "inspection":  # the report owed (kind "report"): which inspection it is of, by its type and time
        report = next((r for r in facts.reports if str(r.id) == key), None)
        if report is None or record.profile is None:
            return "Inspection report"
        name = next((kind.name for kind in record.profile.inspection_types if kind.key == report.kind), report.kind)
        return f"{name} of {report.at.astimezone(zone(record.profile.timezone)):%Y-%m-%d %H:%M}"
    if thing == "finding":
        return "Violation found"
    return subject


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while many permits' facts are built and evaluated.

    The facts are some 100,000 small acyclic objects, freed by reference counting; left on, the
    collector runs over them again and again, measured at about a third of the load time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
