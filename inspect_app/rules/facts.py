"""What the schedule engine reads: a permit's facts and history, as frozen plain data.

The record layer builds these from the database; tests build them by hand. Every datetime must be
timezone-aware; it is stored converted to UTC. Anything malformed raises `FactsError` with a message
that names the field, so a bad record is reported, never half-evaluated.

Times after the `now` the engine is asked about are treated as not having happened yet, so the same
facts can be evaluated "as of" any moment.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal, get_args

from inspect_app.profiles.schema import INSPECTION_TYPE_KEYS

UTC = dt.timezone.utc

Id = int | str
PermitStatus = Literal["issued", "active", "stop_work", "final_submissions", "completed", "lapsed"]
CgpSchedule = Literal["every_7_days", "every_14_days_and_storm"]
AreaStatus = Literal["disturbed", "activity_ceased", "stabilization_initiated", "stabilized"]
CorrectiveKind = Literal["routine_maintenance", "new_or_replacement_control", "significant_repair"]

PERMIT_STATUSES: tuple[str, ...] = get_args(PermitStatus)
CGP_SCHEDULES: tuple[str, ...] = get_args(CgpSchedule)
AREA_STATUSES: tuple[str, ...] = get_args(AreaStatus)
CORRECTIVE_KINDS: tuple[str, ...] = get_args(CorrectiveKind)


class FactsError(ValueError):
    """A permit's facts are malformed; the message names the field and what is wrong."""


def _utc(owner: object, name: str, value: dt.datetime | None, *, required: bool = False) -> None:
    """Check that `owner.name` is an aware datetime (or None when allowed) and store it as UTC."""
    if value is None:
        if required:
            raise FactsError(f"{type(owner).__name__}.{name} is required")
        return
    if not isinstance(value, dt.datetime):
        raise FactsError(f"{type(owner).__name__}.{name} must be a datetime, not {type(value).__name__}")
    if value.utcoffset() is None:
        raise FactsError(f"{type(owner).__name__}.{name} must be timezone-aware (got {value.isoformat()})")
    if value.tzinfo is not UTC:
        object.__setattr__(owner, name, value.astimezone(UTC))


def _one_of(owner: object, name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise FactsError(f"{type(owner).__name__}.{name} must be one of {', '.join(allowed)} (got {value!r})")


def _tuple(owner: object, name: str, value: object, item_type: type) -> None:
    """Store a sequence field as a tuple and check what it holds."""
    try:
        items = tuple(value)  # type: ignore[call-overload]
    except TypeError:
        raise FactsError(f"{type(owner).__name__}.{name} must be a sequence, not {type(value).__name__}") from None
    for item in items:
        if not isinstance(item, item_type):
            raise FactsError(f"{type(owner).__name__}.{name} holds a {type(item).__name__}, not a {item_type.__name__}")
    object.__setattr__(owner, name, items)


@dataclass(frozen=True, slots=True)
class AreaEvent:
    """A disturbed area entered `status` at `at`."""

    status: AreaStatus
    at: dt.datetime

    def __post_init__(self) -> None:
        _one_of(self, "status", self.status, AREA_STATUSES)
        _utc(self, "at", self.at, required=True)


@dataclass(frozen=True, slots=True)
class Area:
    """A disturbed portion of the site and its status timeline (any order; the engine sorts it)."""

    id: Id
    name: str
    events: tuple[AreaEvent, ...] = ()

    def __post_init__(self) -> None:
        _tuple(self, "events", self.events, AreaEvent)


@dataclass(frozen=True, slots=True)
class Structure:
    """An underground drainage, conveyance or infiltration structure that needs a pre-bury inspection."""

    id: Id
    name: str
    backfilled_at: dt.datetime | None = None
    pre_bury_inspected_at: dt.datetime | None = None

    def __post_init__(self) -> None:
        _utc(self, "backfilled_at", self.backfilled_at)
        _utc(self, "pre_bury_inspected_at", self.pre_bury_inspected_at)


@dataclass(frozen=True, slots=True)
class Inspection:
    """A submitted inspection; `kind` is one of the profile's inspection type keys."""

    id: Id
    kind: str
    at: dt.datetime

    def __post_init__(self) -> None:
        _one_of(self, "kind", self.kind, INSPECTION_TYPE_KEYS)
        _utc(self, "at", self.at, required=True)


@dataclass(frozen=True, slots=True)
class Storm:
    """One storm event: rain from `start` to `end` reaching `depth_mm` (CGP 2022 Part 4.2).

    `reached_at` is the moment the rolling 24-hour total first reached the threshold (the 24-hour clock
    starts there); None when only a period's total is known (a calendar day of the old record), which
    is then taken as reached at `end`, the latest it can have been. `multi_day`: the storm went on for
    several days each producing the threshold, so it also needs an inspection after `end`. An on-site
    gauge reading is a storm with start = reading − 24 h and reached_at = end = the reading.
    """

    start: dt.datetime
    end: dt.datetime
    depth_mm: float
    reached_at: dt.datetime | None = None
    multi_day: bool = False

    def __post_init__(self) -> None:
        _utc(self, "start", self.start, required=True)
        _utc(self, "end", self.end, required=True)
        _utc(self, "reached_at", self.reached_at)
        if not self.end > self.start:
            raise FactsError("Storm.end must be after Storm.start")
        if self.reached_at is not None and not self.start < self.reached_at <= self.end:
            raise FactsError("Storm.reached_at must be after Storm.start and no later than Storm.end")
        if not isinstance(self.multi_day, bool):
            raise FactsError("Storm.multi_day must be True or False")
        if not isinstance(self.depth_mm, (int, float)) or not self.depth_mm >= 0:
            raise FactsError(f"Storm.depth_mm must be a number of millimetres, 0 or more (got {self.depth_mm!r})")


@dataclass(frozen=True, slots=True)
class SnowmeltDischarge:
    """A discharge caused by snowmelt at `at`, from a storm that produced `snow_mm` of snow within 24 hours
    (CGP 2022 Parts 4.2, 4.3). Found from a station's hourly snow depth (the melt's first hour), or seen on
    site by an inspector (`seen_on_site`)."""

    at: dt.datetime
    snow_mm: float
    seen_on_site: bool = False

    def __post_init__(self) -> None:
        _utc(self, "at", self.at, required=True)
        if not isinstance(self.snow_mm, (int, float)) or not self.snow_mm >= 0:
            raise FactsError(f"SnowmeltDischarge.snow_mm must be a number of millimetres, 0 or more (got {self.snow_mm!r})")


@dataclass(frozen=True, slots=True)
class FrozenPeriod:
    """Frozen conditions recorded on the site (CGP 2022 Part 4.4): from `start` to `end` (None: still frozen).

    `suspended`: construction is suspended and the ground frozen, so inspections are suspended; otherwise
    work goes on in frozen conditions and inspections are reduced to once a month.
    """

    start: dt.datetime
    end: dt.datetime | None = None
    suspended: bool = True

    def __post_init__(self) -> None:
        _utc(self, "start", self.start, required=True)
        _utc(self, "end", self.end)
        if self.end is not None and not self.end > self.start:
            raise FactsError("FrozenPeriod.end must be after FrozenPeriod.start")
        if not isinstance(self.suspended, bool):
            raise FactsError("FrozenPeriod.suspended must be True or False")


@dataclass(frozen=True, slots=True)
class Waiver:
    """The authority's waiver of one requirement on this permit (Longmeadow §380-8, Southborough §6.2).

    `requirement` is the kind of obligation waived (`pre_bury`, `walk_through`, ...), for every subject or,
    with `subject`, for one (`structure:5`); it stops that obligation from `granted_at` on.
    """

    id: Id
    requirement: str
    granted_at: dt.datetime
    reason: str = ""
    granted_by: str = ""
    subject: str | None = None

    def __post_init__(self) -> None:
        _utc(self, "granted_at", self.granted_at, required=True)
        if not isinstance(self.requirement, str) or not self.requirement:
            raise FactsError("Waiver.requirement must name a requirement")


@dataclass(frozen=True, slots=True)
class CorrectiveAction:
    """A finding's corrective action: what kind of work, when it was found and when it was done."""

    id: Id
    kind: CorrectiveKind
    discovered_at: dt.datetime
    completed_at: dt.datetime | None = None

    def __post_init__(self) -> None:
        _one_of(self, "kind", self.kind, CORRECTIVE_KINDS)
        _utc(self, "discovered_at", self.discovered_at, required=True)
        _utc(self, "completed_at", self.completed_at)


@dataclass(frozen=True, slots=True)
class Report:
    """An inspection report of any type: made at `at`, signed and submitted at `submitted_at` (None: a draft)."""

    id: Id
    kind: str
    at: dt.datetime
    submitted_at: dt.datetime | None = None

    def __post_init__(self) -> None:
        _one_of(self, "kind", self.kind, INSPECTION_TYPE_KEYS)
        _utc(self, "at", self.at, required=True)
        _utc(self, "submitted_at", self.submitted_at)


@dataclass(frozen=True, slots=True)
class ViolationFinding:
    """A violation found at `discovered_at`; `documented_at` is when its corrective action was first
    documented (CGP 2022 Part 5.4), None while none has been."""

    id: Id
    discovered_at: dt.datetime
    description: str = ""
    corrected_at: dt.datetime | None = None
    documented_at: dt.datetime | None = None

    def __post_init__(self) -> None:
        _utc(self, "discovered_at", self.discovered_at, required=True)
        _utc(self, "corrected_at", self.corrected_at)
        _utc(self, "documented_at", self.documented_at)


@dataclass(frozen=True, slots=True)
class StopWorkOrder:
    """A stop-work order, in force from `issued_at` until `lifted_at`."""

    id: Id
    issued_at: dt.datetime
    lifted_at: dt.datetime | None = None

    def __post_init__(self) -> None:
        _utc(self, "issued_at", self.issued_at, required=True)
        _utc(self, "lifted_at", self.lifted_at)


@dataclass(frozen=True, slots=True)
class NoticeToCorrect:
    """The authority's notice to correct a maintenance violation (§380-14 E), and when it was corrected."""

    id: Id
    issued_at: dt.datetime
    corrected_at: dt.datetime | None = None

    def __post_init__(self) -> None:
        _utc(self, "issued_at", self.issued_at, required=True)
        _utc(self, "corrected_at", self.corrected_at)


@dataclass(frozen=True, slots=True)
class PermitFacts:
    """Everything about one permit the schedule engine needs.

    `construction_started_at` is when land-disturbing work began; `completed_at` is the certificate of
    completion (§380-18), which ends the construction phase (and its CGP inspections) and starts the
    O&M phase. `om_certifications` are the times O&M certifications were filed.
    `extension_granted_at` is set when a requested extension of a lapse-after permit was granted.
    """

    id: Id
    number: str
    status: PermitStatus
    cgp_schedule: CgpSchedule
    issued_at: dt.datetime
    sensitive_waters: bool = False
    construction_started_at: dt.datetime | None = None
    completed_at: dt.datetime | None = None
    areas: tuple[Area, ...] = ()
    structures: tuple[Structure, ...] = ()
    inspections: tuple[Inspection, ...] = ()
    storms: tuple[Storm, ...] = ()
    corrective_actions: tuple[CorrectiveAction, ...] = ()
    stop_work_orders: tuple[StopWorkOrder, ...] = ()
    om_certifications: tuple[dt.datetime, ...] = ()
    notices_to_correct: tuple[NoticeToCorrect, ...] = ()
    extension_requested_at: dt.datetime | None = None
    extension_granted_at: dt.datetime | None = None
    violation_findings: tuple[ViolationFinding, ...] = ()
    reports: tuple[Report, ...] = ()
    # §380-10 K: the start deadline as moved by a granted extension (Longmeadow: the DPW Director's
    # discretion, so a date, not a number of years).
    start_extended_to: dt.datetime | None = None
    # §9.7: the date the decision was filed with the Town Clerk, where the permit records it.
    decision_filed_at: dt.datetime | None = None
    snowmelts: tuple[SnowmeltDischarge, ...] = ()
    frozen_periods: tuple[FrozenPeriod, ...] = ()
    waivers: tuple[Waiver, ...] = ()

    def __post_init__(self) -> None:
        _one_of(self, "status", self.status, PERMIT_STATUSES)
        _one_of(self, "cgp_schedule", self.cgp_schedule, CGP_SCHEDULES)
        if not isinstance(self.sensitive_waters, bool):
            raise FactsError("PermitFacts.sensitive_waters must be True or False")
        _utc(self, "issued_at", self.issued_at, required=True)
        for name in ("construction_started_at", "completed_at", "extension_requested_at", "extension_granted_at",
                     "start_extended_to", "decision_filed_at"):
            _utc(self, name, getattr(self, name))
        if self.completed_at is not None and (
            self.construction_started_at is None or self.completed_at < self.construction_started_at
        ):
            raise FactsError("PermitFacts.completed_at needs a construction_started_at on or before it")
        _tuple(self, "areas", self.areas, Area)
        _tuple(self, "structures", self.structures, Structure)
        _tuple(self, "inspections", self.inspections, Inspection)
        _tuple(self, "storms", self.storms, Storm)
        _tuple(self, "corrective_actions", self.corrective_actions, CorrectiveAction)
        _tuple(self, "stop_work_orders", self.stop_work_orders, StopWorkOrder)
        _tuple(self, "notices_to_correct", self.notices_to_correct, NoticeToCorrect)
        _tuple(self, "violation_findings", self.violation_findings, ViolationFinding)
        _tuple(self, "reports", self.reports, Report)
        _tuple(self, "snowmelts", self.snowmelts, SnowmeltDischarge)
        _tuple(self, "frozen_periods", self.frozen_periods, FrozenPeriod)
        _tuple(self, "waivers", self.waivers, Waiver)
        _tuple(self, "om_certifications", self.om_certifications, dt.datetime)
        certifications = []
        for at in self.om_certifications:
            if at.utcoffset() is None:
                raise FactsError(f"PermitFacts.om_certifications must be timezone-aware (got {at.isoformat()})")
            certifications.append(at.astimezone(UTC))
        object.__setattr__(self, "om_certifications", tuple(certifications))
