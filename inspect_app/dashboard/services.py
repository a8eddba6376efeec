"""What the dashboard, *my day*, the timeline and the exports show: the engine run over the record.

These functions only read. Each loads the facts of all the permits it covers in a fixed number of
queries (see `facts.load_records`) and runs the pure engine once per permit.
"""
from __future__ import annotations

import datetime as dt
import gc
import math
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import Select, select

from inspect_app.dashboard.facts import PermitSummary, Record, load_records
from inspect_app.permits.models import Permit, PermitAssignment
from inspect_app.rules import Obligation, obligations
from inspect_app.rules.calendar import end_of_day, local_date, zone

# Obligations an inspector meets by inspecting: these go on the inspector's calendar.
INSPECTION_KINDS = ("pre_construction", "inspection", "storm_inspection", "pre_bury", "walk_through")
# What each kind of obligation is called on screen, in the regulations' words.
KINDS = {
    "pre_construction": "Pre-construction inspection",
    "inspection": "Erosion-control inspection",
    "storm_inspection": "Storm inspection",
    "stabilization": "Stabilization",
    "corrective_action": "Corrective action",
    "pre_bury": "Pre-bury inspection",
    "walk_through": "Walk-through",
    "start_of_work": "Start of work",
    "lapse": "Permit lapse",
    "extension_request": "Extension request",
    "om_certification": "O&M certification",
    "cure": "Cure after notice to correct",
}
SORTS = ("late", "least_late", "permit")
PER_PAGE = 50
_FAR = dt.datetime.max.replace(tzinfo=dt.UTC)


@dataclass(frozen=True, slots=True)
class Row:
    """One obligation of one permit, as a screen lists it."""

    permit: PermitSummary
    obligation: Obligation
    record: Record

    @property
    def subject(self) -> str:
        """What the obligation is about, in words (worked out only for the rows shown)."""
        return subject_label(self.obligation.subject, self.record)


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
        return f"{'End of storm' if key.endswith(':end') else 'Storm'} of {start.date().isoformat()}"
    if thing == "om_certification":
        return f"Year {key}"
    if thing == "corrective_action":
        return "Corrective action"
    if thing == "notice_to_correct":
        return "Notice to correct"
    return subject


@dataclass
class Board:
    """The rows of one screen, the counts over every permit it covers, and its page."""

    rows: list[Row]
    now: dt.datetime
    counts: Counter = field(default_factory=Counter)
    permits: int = 0
    problems: list[tuple[PermitSummary, str]] = field(default_factory=list)
    page: int = 1
    pages: int = 1
    total: int = 0


@dataclass(frozen=True)
class Filters:
    """The dashboard's filters, already checked."""

    town: str = ""
    kind: str = ""
    inspector: str = ""
    upcoming: bool = False
    days: int = 7
    sort: str = "late"
    page: int = 1


def late_by(obligation: Obligation, now: dt.datetime) -> dt.timedelta | None:
    """How far past its deadline an open obligation is; negative while there is still time."""
    return None if obligation.due_at is None else now - obligation.due_at


def describe_late(obligation: Obligation, now: dt.datetime) -> str:
    """'3 days late', '5 hours left', 'no fixed deadline', in plain words."""
    if obligation.status == "met":
        if obligation.met_at is not None and obligation.due_at is not None and obligation.met_at > obligation.due_at:
            return f"met {_span(obligation.met_at - obligation.due_at)} late"
        return "met on time"
    delta = late_by(obligation, now)
    if delta is None:
        return "no fixed deadline"
    return f"{_span(delta)} late" if delta > dt.timedelta(0) else f"{_span(-delta)} left"


def _span(delta: dt.timedelta) -> str:
    hours = delta.total_seconds() / 3600
    if hours < 1:
        minutes = max(1, math.floor(delta.total_seconds() / 60))
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    if hours < 48:
        whole = math.floor(hours)
        return f"{whole} hour{'s' if whole != 1 else ''}"
    days = math.floor(hours / 24)
    return f"{days} days"


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a whole town's facts are built and evaluated.

    The facts are some 100,000 small acyclic objects, freed by reference counting; left on, the
    collector runs over them again and again, measured at about a third of the load time (bench/dashboard.py).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def scoped(scope: Select, *, town: str = "", inspector: str = "") -> Select:
    """`scope` (a query of permits) narrowed to one town and to the permits one inspector is assigned to."""
    if town:
        scope = scope.where(Permit.jurisdiction_id == town)
    if inspector:
        scope = scope.where(Permit.id.in_(select(PermitAssignment.permit_id)
                                          .where(PermitAssignment.user_id == inspector)))
    return scope


def open_records(scope: Select, now: dt.datetime) -> tuple[list[Record], list[Row], list[tuple[PermitSummary, str]]]:
    """The records of `scope` read for the open view, and their open obligations."""
    with collector_paused():
        records = load_records(scope, open_at=now)
        rows, problems = open_rows(records, now)
    return records, rows, problems


def open_rows(records: list[Record], now: dt.datetime) -> tuple[list[Row], list[tuple[PermitSummary, str]]]:
    """Every open obligation (upcoming, due, overdue) of the records, and the permits that could not be read."""
    rows: list[Row] = []
    problems: list[tuple[PermitSummary, str]] = []
    for record in records:
        if record.facts is None or record.profile is None:
            problems.append((record.permit, record.problem or "The record cannot be evaluated."))
            continue
        rows.extend(Row(record.permit, ob, record)
                    for ob in obligations(record.facts, record.profile, now, history=False))
    return rows, problems


def _sort_key(sort: str):
    if sort == "permit":
        return lambda row: (row.permit.number, row.obligation.due_at or _FAR)
    if sort == "least_late":
        # Latest deadline first; open-ended ones (nothing to be late for) last.
        return lambda row: (row.obligation.due_at is None, -(row.obligation.due_at or _FAR).timestamp())
    return lambda row: (row.obligation.due_at or _FAR, row.permit.number)  # most late first


def town_board(scope: Select, filters: Filters, now: dt.datetime, per_page: int = PER_PAGE) -> Board:
    """The town dashboard: due and overdue obligations (and upcoming ones within `days`) of `scope`."""
    records, rows, problems = open_records(scoped(scope, town=filters.town, inspector=filters.inspector), now)
    counts = Counter(row.obligation.status for row in rows)
    horizon = now + dt.timedelta(days=filters.days)
    shown = [
        row for row in rows
        if (not filters.kind or row.obligation.kind == filters.kind)
        and (row.obligation.status in ("due", "overdue") or (filters.upcoming and _opens_within(row.obligation, horizon)))
    ]
    shown.sort(key=_sort_key(filters.sort))
    pages = max(1, math.ceil(len(shown) / per_page))
    page = min(max(1, filters.page), pages)
    start = (page - 1) * per_page
    return Board(rows=shown[start:start + per_page], now=now, counts=counts, permits=len(records),
                 problems=problems, page=page, pages=pages, total=len(shown))


def _opens_within(obligation: Obligation, horizon: dt.datetime) -> bool:
    """An upcoming obligation whose window opens, or whose deadline falls, before `horizon`."""
    if obligation.status != "upcoming":
        return False
    return any(at is not None and at <= horizon for at in (obligation.opens_at, obligation.due_at))


def my_day(scope: Select, now: dt.datetime) -> Board:
    """An inspector's day: overdue obligations, then those due by the end of today, then open-ended ones."""
    records, rows, problems = open_records(scope, now)
    today_ends: dict[str, dt.datetime] = {}

    def due_today(row: Row) -> bool:
        ob = row.obligation
        if ob.status == "overdue":
            return True
        if ob.status != "due":
            return False
        if ob.due_at is None:
            return True  # e.g. a pre-bury inspection, due before backfill whenever that is
        tz_key = row.permit.profile_key
        if tz_key not in today_ends:
            tz = zone(_timezone(records, tz_key))
            today_ends[tz_key] = end_of_day(local_date(now, tz), tz)
        return ob.due_at <= today_ends[tz_key]

    shown = sorted((row for row in rows if due_today(row)), key=_sort_key("late"))
    return Board(rows=shown, now=now, counts=Counter(row.obligation.status for row in shown),
                 permits=len(records), problems=problems, total=len(shown))


def _timezone(records: list[Record], profile_key: str) -> str:
    for record in records:
        if record.profile is not None and record.profile.key == profile_key:
            return record.profile.timezone
    return "America/New_York"


def timeline(scope: Select, now: dt.datetime) -> tuple[Record | None, list[Obligation]]:
    """Every obligation of one permit, met ones too, in deadline order."""
    records = load_records(scope)
    if not records:
        return None, []
    record = records[0]
    if record.facts is None or record.profile is None:
        return record, []
    return record, obligations(record.facts, record.profile, now)


@dataclass(frozen=True, slots=True)
class PermitStatus:
    """A permit with the counts of its open obligations, for the GeoJSON and CSV exports."""

    permit: PermitSummary
    due: int
    overdue: int
    next_due_at: dt.datetime | None
    problem: str | None = None


def permit_statuses(scope: Select, now: dt.datetime) -> list[PermitStatus]:
    """Every permit of `scope` with its number of due and overdue obligations and its next deadline."""
    records, rows, problems = open_records(scope, now)
    by_permit: dict[str, list[Obligation]] = {record.permit.id: [] for record in records}
    for row in rows:
        by_permit[row.permit.id].append(row.obligation)
    trouble = {permit.id: problem for permit, problem in problems}
    out = []
    for record in records:
        open_ = by_permit[record.permit.id]
        counts = Counter(ob.status for ob in open_)
        deadlines = [ob.due_at for ob in open_ if ob.status == "due" and ob.due_at is not None]
        out.append(PermitStatus(record.permit, counts["due"], counts["overdue"], min(deadlines, default=None),
                                trouble.get(record.permit.id)))
    return out


def inspector_calendar(scope: Select, inspector_id: str, now: dt.datetime) -> list[Row]:
    """The inspections an inspector has to make, with a deadline, on the permits they are assigned to."""
    _, rows, _ = open_records(scoped(scope, inspector=inspector_id), now)
    return sorted(
        (row for row in rows if row.obligation.kind in INSPECTION_KINDS and row.obligation.due_at is not None),
        key=_sort_key("late"),
    )
