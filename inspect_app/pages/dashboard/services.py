"""What the dashboard, *my day*, the timeline and the exports show.

The dashboard, *my day*, the calendar and the exports read each permit's open obligations from
`permit_obligations` (kept current by `schedule.obligations`), with the filters, the status as of
`now`, the order and the page all worked out by the database: a fixed number of queries, and no engine
run per request. The timeline of one permit runs the engine over its whole history.
"""
from __future__ import annotations

import datetime as dt
import math
import secrets
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

from flask import current_app
from sqlalchemy import BindParameter, ColumnElement, Select, bindparam, case, false, func, literal, select, true

from inspect_app import inspection_types
from inspect_app.accounts.models import User
from inspect_app.accounts.policy import ACTIONS
from inspect_app.audit import services as audit
from inspect_app.extensions import db
from inspect_app.permits.models import Jurisdiction, Permit, PermitAssignment
from inspect_app.rules import Obligation, obligations
from inspect_app.rules.calendar import end_of_day, local_date, zone
from inspect_app.schedule.facts import PermitSummary, Record, load_records
from inspect_app.permits.models import StormwaterStructure
from inspect_app.schedule.models import PermitObligation, PermitScheduleProblem
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import LOCAL_TZ, TOWN_TIMEZONE, UTCDateTime

# Obligations an inspector meets by inspecting: these go on the inspector's calendar. Not those of a type an
# inspector may not start (the O&M facility inspection is the town's own, §380-14 A(3)).
INSPECTION_KINDS = tuple(obligation for kind in inspection_types.TYPES.values() if "inspector" in ACTIONS[kind.action]
                         for obligation in kind.meets)
SORTS = ("late", "least_late", "permit")
PER_PAGE = 50
_Ob = PermitObligation
# What a screen shows about a permit, in PermitSummary's order.
_SUMMARY = (Permit.id, Permit.number, Permit.site_address, Permit.status, Permit.cgp_schedule, Permit.latitude,
            Permit.longitude, Permit.issued_on, Permit.construction_started_on, Permit.jurisdiction_id,
            Jurisdiction.name, Jurisdiction.profile_key)


@dataclass(frozen=True, slots=True)
class Row:
    """One obligation of one permit, as a screen lists it, with what it is about in words."""

    permit: PermitSummary
    obligation: Obligation
    subject: str


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

    @property
    def cards(self) -> list[PermitCard]:
        """The rows by permit, for the narrow (tablet) layout."""
        return cards(self.rows)


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

    def query(self) -> dict[str, str | int]:
        """The filters as a link's query string gives them (the page aside): what links between the list, its
        pages and the map carry, never the raw query string, whose keys could be `url_for`'s own."""
        values = {"town": self.town, "kind": self.kind, "inspector": self.inspector, "sort": self.sort,
                  "days": self.days} | ({"upcoming": "1"} if self.upcoming else {})
        return {key: value for key, value in values.items() if value != ""}


def late_by(obligation: Obligation, now: dt.datetime) -> dt.timedelta | None:
    """How far past its deadline an open obligation is; negative while there is still time."""
    return None if obligation.due_at is None else now - obligation.due_at


def describe_late(obligation: Obligation, now: dt.datetime) -> str:
    """'3 days late', '5 hours left', 'no fixed deadline', in plain words."""
    if obligation.status == "waived":
        return "waived"
    if obligation.status == "met":
        if obligation.met_at is not None and obligation.due_at is not None and obligation.met_at > obligation.due_at:
            return f"met {_span(obligation.met_at - obligation.due_at)} late"
        return "met on time"
    delta = late_by(obligation, now)
    if delta is None:
        return "no fixed deadline"
    return f"{_span(delta)} late" if delta > dt.timedelta(0) else f"{_span(-delta)} left"


def _moment(at: dt.datetime, now: dt.datetime) -> str:
    """'2:14 PM' today, 'Fri 11:59 PM' within the week ahead, 'Dec 14 11:59 PM' otherwise (local time)."""
    local, today = at.astimezone(LOCAL_TZ), now.astimezone(LOCAL_TZ).date()
    if local.date() == today:
        return local.strftime("%-I:%M %p")
    if today < local.date() < today + dt.timedelta(days=7):
        return local.strftime("%a %-I:%M %p")
    return local.strftime("%b %-d %-I:%M %p")


def when_due(obligation: Obligation, now: dt.datetime) -> str:
    """'due by 2:14 PM', 'overdue since Dec 1 11:59 PM (2 days late)', 'opens Fri 7:00 AM', in plain words."""
    if obligation.status == "overdue":
        return f"overdue since {_moment(obligation.due_at, now)} ({describe_late(obligation, now)})"
    if obligation.status == "due":
        return f"due by {_moment(obligation.due_at, now)}" if obligation.due_at else "due now (no fixed deadline)"
    return f"opens {_moment(obligation.opens_at, now)}" if obligation.opens_at else "upcoming"


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


def scoped(scope: Select, *, town: str = "", inspector: str = "") -> Select:
    """`scope` (a query of permits) narrowed to one town and to the permits one inspector is assigned to."""
    if town:
        scope = scope.where(Permit.jurisdiction_id == town)
    if inspector:
        scope = scope.where(Permit.id.in_(select(PermitAssignment.permit_id)
                                          .where(PermitAssignment.user_id == inspector)))
    return scope


def _ids(scope: Select) -> Select:
    """The permit ids of `scope` (a query of permits), for use as a subquery."""
    return scope.with_only_columns(Permit.id).order_by(None)


def _in_scope(column, scope: Select) -> ColumnElement[bool]:
    """SQL: `column` (a permit id) is one of the permits of `scope`; no condition at all when `scope` is every
    permit (the admin of all towns): a list of every permit's id, looked up row by row, cost that dashboard
    more than all else with 50,000 permits."""
    if scope.whereclause is None:
        return true()
    return column.in_(_ids(scope))


def _permit_count(scope: Select) -> int:
    return db.session.scalar(scope.with_only_columns(func.count(Permit.id)).order_by(None)) or 0


def _open_rows(ids: Select | ColumnElement[bool], now: dt.datetime) -> Select:
    """Stored obligations of the permits `ids` (or those that meet a condition of `_in_scope`), with their
    permit and their status as of `now`."""
    of_permits = ids if isinstance(ids, ColumnElement) else _Ob.permit_id.in_(ids)
    return (
        select(*_SUMMARY, _Ob.kind, _Ob.subject, _Ob.opens_at, _Ob.due_at, _Ob.status_at(now), _Ob.reason,
               _Ob.citation, _Ob.about)
        .select_from(_Ob)
        .join(Permit, Permit.id == _Ob.permit_id)
        .join(Jurisdiction, Jurisdiction.id == Permit.jurisdiction_id)
        .where(of_permits)
    )


def _row(values) -> Row:
    permit = PermitSummary(*values[:12])
    kind, subject, opens_at, due_at, status, reason, citation, about = values[12:]
    return Row(permit, Obligation(permit.id, kind, subject, opens_at, due_at, status, None, reason, citation), about)


def _ordered(query: Select, sort: str) -> Select:
    """Most late first (open-ended last); latest deadline first; or by permit number."""
    no_deadline = _Ob.due_at.is_(None)
    if sort == "permit":
        return query.order_by(Permit.number, no_deadline, _Ob.due_at, _Ob.kind, _Ob.subject, _Ob.id)
    if sort == "least_late":
        return query.order_by(no_deadline, _Ob.due_at.desc(), Permit.number, _Ob.kind, _Ob.subject, _Ob.id)
    return query.order_by(no_deadline, _Ob.due_at, Permit.number, _Ob.kind, _Ob.subject, _Ob.id)


def permit_open(permit_id: str, now: dt.datetime) -> list[Row]:
    """One permit's open obligations, overdue first, then due, then upcoming; soonest deadline first in each."""
    return [_row(values) for values in db.session.execute(_permit_open(), {"permit_id": permit_id, "now": now})]


@cache
def _permit_open() -> Select:
    """`permit_open`'s statement, built once per process (building it cost about what running it did)."""
    now = bindparam("now", type_=UTCDateTime())
    pressing = case((_Ob.overdue_at(now), 0), (_Ob.opens_at <= now, 1), else_=2)
    return _open_rows(_Ob.permit_id == bindparam("permit_id"), now).order_by(
        pressing, _Ob.due_at.is_(None), _Ob.due_at, _Ob.opens_at, _Ob.kind, _Ob.subject, _Ob.id)


# How bad a status is, worst first: a permit's card shows its worst.
STATUS_RANK = {"overdue": 0, "due": 1, "upcoming": 2}


@dataclass(frozen=True, slots=True)
class Owed:
    """A row, and how many more rows of the same duty (permit, kind, subject) it stands for.

    A chain of missed routine inspections is one duty: the next inspection made meets them all
    (rules/engine.py), so a short screen shows the first and counts the rest.
    """

    row: Row
    more: int = 0


def owed(rows: list[Row]) -> list[Owed]:
    """`rows` with each repeat of a duty folded into its first row, in their order."""
    first: dict[tuple[str, str, str], int] = {}
    out: list[Owed] = []
    for row in rows:
        key = (row.permit.id, row.obligation.kind, row.obligation.subject)
        if key in first:
            at = first[key]
            out[at] = Owed(out[at].row, out[at].more + 1)
        else:
            first[key] = len(out)
            out.append(Owed(row))
    return out


@dataclass(frozen=True, slots=True)
class PermitCard:
    """One permit's rows of a screen, for the narrow (tablet) dashboard: its worst status and its items."""

    permit: PermitSummary
    worst: str
    items: tuple[Owed, ...]


def cards(rows: list[Row]) -> list[PermitCard]:
    """`rows` grouped by permit, in the order each permit first appears (so the screen's sort holds)."""
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row.permit.id, []).append(row)
    return [PermitCard(items[0].permit, min((r.obligation.status for r in items), key=STATUS_RANK.__getitem__),
                       tuple(owed(items))) for items in grouped.values()]


def _problems(ids: Select | ColumnElement[bool]) -> list[tuple[PermitSummary, str]]:
    """The permits of `ids` (or those that meet a condition of `_in_scope`) whose record the engine could not
    evaluate, and why."""
    of_permits = ids if isinstance(ids, ColumnElement) else PermitScheduleProblem.permit_id.in_(ids)
    rows = db.session.execute(
        select(*_SUMMARY, PermitScheduleProblem.problem)
        .select_from(PermitScheduleProblem)
        .join(Permit, Permit.id == PermitScheduleProblem.permit_id)
        .join(Jurisdiction, Jurisdiction.id == Permit.jurisdiction_id)
        .where(of_permits)
        .order_by(Permit.number)
    )
    return [(PermitSummary(*row[:12]), row[12]) for row in rows]


def town_board(scope: Select, filters: Filters, now: dt.datetime, per_page: int = PER_PAGE) -> Board:
    """The town dashboard: due and overdue obligations (and upcoming ones within `days`) of `scope`."""
    scope = scoped(scope, town=filters.town, inspector=filters.inspector)
    obligations_in_scope = _in_scope(_Ob.permit_id, scope)
    # The counts above the list follow its filters: the type shown, and the upcoming window when one is asked.
    if filters.kind:
        obligations_in_scope = obligations_in_scope & (_Ob.kind == filters.kind)
    shown = _Ob.due_or_overdue_at(now)
    upcoming = true()
    if filters.upcoming:
        upcoming = _upcoming_by(now + dt.timedelta(days=filters.days))
        shown = shown | upcoming
    overdue, due, later, matching = db.session.execute(
        select(func.count().filter(_Ob.overdue_at(now)), func.count().filter(_Ob.due_at_time(now)),
               func.count().filter((_Ob.status_at(now) == "upcoming") & upcoming), func.count().filter(shown))
        .where(obligations_in_scope)
    ).one()
    counts = Counter(overdue=overdue, due=due, upcoming=later)
    pages = max(1, math.ceil(matching / per_page))
    page = min(max(1, filters.page), pages)
    shown = shown & _deadline_cutoff(obligations_in_scope & shown, filters.sort, page * per_page)
    query = _ordered(_open_rows(obligations_in_scope, now).where(shown), filters.sort)
    rows = [_row(values) for values in db.session.execute(query.limit(per_page).offset((page - 1) * per_page))]
    return Board(rows=rows, now=now, counts=counts, permits=_permit_count(scope),
                 problems=_problems(_in_scope(PermitScheduleProblem.permit_id, scope)),
                 page=page, pages=pages, total=matching)


def _deadline_cutoff(where: ColumnElement[bool], sort: str, depth: int) -> ColumnElement[bool]:
    """SQL: among the rows `where`, those that can be in the first `depth` rows of `sort` ('late', 'least_late')
    by their deadline alone; no condition for the order by permit.

    The first `depth` rows sorted by deadline (open-ended ones last) all have a deadline on the near side of
    the `depth`-th deadline, which one walk of the index of deadlines finds: the page is then sorted from
    those rows, not from every due or overdue obligation of the state (220,000 of 50,000 permits).
    """
    if sort not in ("late", "least_late"):
        return true()
    order = _Ob.due_at if sort == "late" else _Ob.due_at.desc()
    cutoff = db.session.scalar(select(_Ob.due_at).where(where, _Ob.due_at.is_not(None))
                               .order_by(order).limit(1).offset(depth - 1))
    if cutoff is None:  # fewer rows with a deadline than that: the open-ended ones may be on the page
        return true()
    return _Ob.due_at <= cutoff if sort == "late" else _Ob.due_at >= cutoff


def _upcoming_by(horizon: dt.datetime) -> ColumnElement[bool]:
    """Upcoming before `horizon`: its window opens, or its deadline falls, before it."""
    return (_Ob.opens_at <= horizon) | (_Ob.due_at <= horizon)


def _end_of_today(now: dt.datetime) -> ColumnElement:
    """The end of `now`'s local day on the calendar of each permit's town, as an SQL expression."""
    def end(timezone: str):
        tz = zone(timezone)
        return literal(end_of_day(local_date(now, tz), tz), UTCDateTime())

    ends = {key: end(profile.timezone) for key, profile in current_app.extensions["profiles"].items()}
    if not ends:
        return end(TOWN_TIMEZONE)
    return case(ends, value=Jurisdiction.profile_key, else_=end(TOWN_TIMEZONE))


def my_day(scope: Select, now: dt.datetime) -> Board:
    """An inspector's day: overdue obligations, then those due by the end of today, then open-ended ones."""
    ids = _ids(scope)
    # Due with no fixed deadline counts too: e.g. a pre-bury inspection, due before backfill whenever that is.
    today = _Ob.overdue_at(now) | (_Ob.due_at_time(now) & (_Ob.due_at.is_(None) | (_Ob.due_at <= _end_of_today(now))))
    rows = [_row(values) for values in db.session.execute(_ordered(_open_rows(ids, now).where(today), "late"))]
    return Board(rows=rows, now=now, counts=Counter(row.obligation.status for row in rows),
                 permits=_permit_count(scope), problems=_problems(ids), total=len(rows))


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
    """A permit with the counts of its open obligations, for the map and the GeoJSON and CSV exports."""

    permit: PermitSummary
    due: int
    overdue: int
    next_due_at: dt.datetime | None
    problem: str | None = None
    upcoming: int = 0  # counted only when asked for (the map's "also upcoming within")

    @property
    def worst(self) -> str:
        """The worst status of its open obligations: overdue, due, upcoming, or clear (none of these)."""
        return "overdue" if self.overdue else "due" if self.due else "upcoming" if self.upcoming else "clear"


def permit_statuses(scope: Select, now: dt.datetime, kind: str = "",
                    upcoming_by: dt.datetime | None = None) -> list[PermitStatus]:
    """Every permit of `scope` with its number of due and overdue obligations and its next deadline;
    only obligations of `kind` if given, and the upcoming ones before `upcoming_by` counted if given."""
    ids = _ids(scope)
    due = _Ob.due_at_time(now)
    upcoming = (~_Ob.due_or_overdue_at(now) & _upcoming_by(upcoming_by)) if upcoming_by else false()
    of_kind = [_Ob.kind == kind] if kind else []
    counts = (
        select(_Ob.permit_id, func.count().filter(due).label("due"),
               func.count().filter(_Ob.overdue_at(now)).label("overdue"),
               func.min(case((due, _Ob.due_at))).label("next_due_at"),
               func.count().filter(upcoming).label("upcoming"))
        .where(_Ob.permit_id.in_(ids), *of_kind)
        .group_by(_Ob.permit_id)
        .subquery()
    )
    rows = db.session.execute(
        select(*_SUMMARY, counts.c.due, counts.c.overdue, counts.c.next_due_at, PermitScheduleProblem.problem,
               counts.c.upcoming)
        .join(Jurisdiction, Jurisdiction.id == Permit.jurisdiction_id)
        .outerjoin(counts, counts.c.permit_id == Permit.id)
        .outerjoin(PermitScheduleProblem, PermitScheduleProblem.permit_id == Permit.id)
        .where(Permit.id.in_(ids))
        .order_by(Permit.number)
    ).all()
    inspectors: dict[str, list[tuple[str, str]]] = {}
    for pid, user_id, name in db.session.execute(
        select(PermitAssignment.permit_id, PermitAssignment.user_id, User.name)
        .join(User, User.id == PermitAssignment.user_id)
        .where(PermitAssignment.permit_id.in_(ids))
        .order_by(PermitAssignment.permit_id, User.name)
    ):
        inspectors.setdefault(pid, []).append((user_id, name))
    out = []
    for row in rows:
        people = inspectors.get(row[0], ())
        permit = PermitSummary(*row[:12], inspector_ids=tuple(p[0] for p in people),
                               inspector_names=tuple(p[1] for p in people))
        due_count, overdue_count, next_due_at, problem, upcoming_count = row[12:]
        out.append(PermitStatus(permit, due_count or 0, overdue_count or 0, next_due_at, problem, upcoming_count or 0))
    return out


def permit_map(scope: Select, filters: Filters, now: dt.datetime) -> list[PermitStatus]:
    """The permits of `scope` under the dashboard's filters, each with its counts for its worst status: only
    obligations of the kind chosen, and the upcoming ones within the days chosen when asked for."""
    horizon = now + dt.timedelta(days=filters.days) if filters.upcoming else None
    return permit_statuses(scoped(scope, town=filters.town, inspector=filters.inspector), now, filters.kind, horizon)


def inspector_calendar(scope: Select, inspector_id: str, now: dt.datetime) -> list[Row]:
    """The inspections an inspector has to make, with a deadline, on the permits they are assigned to."""
    ids = _ids(scoped(scope, inspector=inspector_id))
    query = _open_rows(ids, now).where(_Ob.kind.in_(INSPECTION_KINDS), _Ob.due_at.is_not(None))
    return [_row(values) for values in db.session.execute(_ordered(query, "late"))]


def new_calendar_key(user: User) -> str:
    """A new secret for the user's calendar subscription link; the old link stops working."""
    before = audit.snapshot(user)
    user.calendar_key = secrets.token_urlsafe(32)
    audit.record(user, "user.calendar_link", user, before)
    return user.calendar_key


# The schedule engine's two stabilization duties of a disturbed area (subject "area:<id>").
STABILIZATION_KINDS = ("stabilization", "stabilization_complete")


def stabilization_clocks(permit_ids: Select, now: dt.datetime) -> dict[str, Obligation]:
    """The next open stabilization deadline of each disturbed area of `permit_ids`, by area id, as the
    schedule engine stored it (CGP 2022 Part 2.2.14.a; §380-11 C(3)(a)): initiate, then complete."""
    rows = db.session.execute(_clocks_query(_Ob.permit_id.in_(permit_ids), now))
    return _first_of_each_area(Obligation(pid, kind, subject, opens_at, due_at, status, None, reason, citation)
                               for pid, kind, subject, opens_at, due_at, status, reason, citation in rows)


def clocks_of(rows: list[Row]) -> dict[str, Obligation]:
    """`stabilization_clocks` of one permit from its `permit_open` rows, read already for its page (its site map):
    no statement of its own."""
    latest = dt.datetime.max.replace(tzinfo=dt.UTC)
    return _first_of_each_area(sorted(
        (row.obligation for row in rows if row.obligation.kind in STABILIZATION_KINDS),
        key=lambda ob: (ob.due_at is None, ob.due_at or latest, ob.kind)))  # as `_clocks_query` orders them


def _clocks_query(of_permits: ColumnElement[bool], now: dt.datetime | BindParameter) -> Select:
    return (select(_Ob.permit_id, _Ob.kind, _Ob.subject, _Ob.opens_at, _Ob.due_at, _Ob.status_at(now), _Ob.reason,
                   _Ob.citation)
            .where(of_permits, _Ob.kind.in_(STABILIZATION_KINDS))
            .order_by(_Ob.due_at, _Ob.kind))


def _first_of_each_area(obligations) -> dict[str, Obligation]:
    """The first of `obligations` (soonest deadline first) of each area, by area id."""
    clocks: dict[str, Obligation] = {}
    for ob in obligations:
        clocks.setdefault(ob.subject.removeprefix("area:"), ob)
    return clocks


@dataclass(frozen=True, slots=True)
class SitePlace:
    """A disturbed area or a structure that has its point on the site map, for the GeoJSON export."""

    feature: str  # "disturbed_area" or "structure"
    id: str
    permit_number: str
    name: str
    latitude: float
    longitude: float
    status: str  # an area's status, or a structure's kind
    clock: Obligation | None = None  # an area's next stabilization deadline


def site_places(scope: Select, now: dt.datetime) -> list[SitePlace]:
    """The areas (with their stabilization clocks) and structures with a point, of the permits of `scope`."""
    ids = _ids(scope)
    clocks = stabilization_clocks(ids, now)
    places = []
    for feature, model, status in (("disturbed_area", DisturbedArea, DisturbedArea.status),
                                   ("structure", StormwaterStructure, StormwaterStructure.kind)):
        rows = db.session.execute(
            select(model.id, Permit.number, model.name, model.latitude, model.longitude, status)
            .join(Permit, Permit.id == model.permit_id)
            .where(model.permit_id.in_(ids), model.latitude.is_not(None))
            .order_by(Permit.number, model.name))
        places += [SitePlace(feature, *row, clock=clocks.get(row[0])) for row in rows]
    return places
