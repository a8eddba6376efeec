"""The schedule engine: what a permit's record requires, by when, and whether it was done.

`obligations(facts, profile, now)` is pure: it reads frozen facts and a town profile and returns
`Obligation`s, each with a deadline, a status, one plain sentence of reason and a citation.

Statuses, as of `now`:

- **met**: done; `met_at` says when (a `met_at` after `due_at` means it was done late).
- **overdue**: not done, and its deadline has passed (`now > due_at`).
- **due**: not done, its window is open (its trigger has happened, `opens_at <= now`) and it is not late
  yet. `due_at` is None when the deadline is an event still to come: a pre-bury inspection is due
  "before backfill", the pre-construction inspection "before construction starts".
- **upcoming**: known, but its window has not opened (`opens_at` is None or later than `now`): a
  pre-bury inspection before construction has started, the walk-through before the final inspection.
- **waived**: the authority waived the requirement (§380-8, Southborough §6.2) before its deadline; it is no
  longer owed, and its reason and citation say so.

Nothing is reported for a trigger that has not happened: facts dated after `now` are ignored.

Choices made where the rules leave room:

- CGP inspections run from construction start until the certificate of completion, *including* while a
  stop-work order is in force: the order stops construction, not the duty to keep erosion controls
  working, so routine and storm inspections stay due (a storm during a stop-work order says so).
- Routine CGP inspections form a chain: each is due N calendar days after the previous erosion-control
  inspection (or construction start). If a deadline passes unmet, the next one falls due N days after
  that deadline, so no stretch of N days goes without a required inspection; the next inspection made
  meets every missed one (late) up to the window it falls in.
- Construction start (§380-2, "the first land-disturbing activity") is a moment; a permit of the old record with
  only its day is read as the end of that day (schedule/facts.py). Before it, an erosion-control inspection is
  the inspection before construction; a storm reached before it creates no duty.
- Storms (CGP 2022 Part 4.2): each `Storm` fact is one storm event, found from hourly data
  (`rules/storms.py`) or an on-site gauge reading. Its inspection is due 24 hours after the moment the
  rolling 24-hour total reached the threshold (`reached_at`; for a period known only by its total, its
  end), and only an erosion-control inspection at or after that moment answers it. A multi-day storm also
  needs a second, other inspection within 24 hours after its end, made at or after the end. Two readings
  of the same rain (a station's and a gauge's, overlapping in time) are one storm: the earlier moment and
  the deeper total stand. Storm inspections are needed on the 14-day schedule and on every site
  discharging to sensitive waters. Every erosion-control inspection also restarts the routine clock.
- §380-11 C(3)(f), "Inspect stormwater controls at regular intervals and especially following any storm":
  the town asks for an inspection after any storm whatever the CGP schedule, and the stricter rule prevails
  (§380-11 C(1)), so where the profile says so (`storm.every_schedule`, Longmeadow) a 7-day site owes storm
  inspections too, cited to that clause. The town gives no depth or time: a storm is the CGP's storm event
  (the profile's threshold) and the inspection is due within the CGP's 24 hours.
- Snowmelt (CGP 2022 Parts 4.2, 4.3): "within 24 hours of the occurrence of ... a snowmelt discharge from a
  storm event that produces 3.25 inches or more of snow within a 24-hour period". The clock runs from the
  discharge, not the snowfall. A `SnowmeltDischarge` is found from the station's hourly snow depth
  (rules/storms.py: the depth rising by the threshold within 24 hours is the snow storm, the first later hour
  above freezing with the depth falling is the discharge) or seen on site by an inspector, who gives the
  snow of the storm as measured or reported for the site. Discharges within 24 hours of each other are one
  occurrence: the earliest moment stands. It is owed wherever storm inspections are (and not while the site
  is stabilized or in recorded frozen conditions), and met by an erosion-control inspection at or after it.
- Frozen conditions (CGP 2022 Part 4.4): a recorded period with construction suspended (the app records it only
  once every disturbed area is stabilized) suspends inspections: no routine, storm or snowmelt inspection
  falls due in it, none is "missed", and the routine chain starts again from its end (N days after). Work
  resumed on an area ends a suspension at that moment. A period with work going on drops routine inspections
  to once a month (a calendar month after the last) and owes no storm inspections. The forecast that runoff
  is unlikely for three months is the recorder's statement (the period's note); the engine does not judge it.
- When every disturbed area is stabilized, the site drops to monthly inspections and needs no storm
  inspections (CGP 2022 Part 4.4); a site discharging to sensitive waters inspects every 14 days during
  the first month of that. Any area disturbed again brings the full frequency back from that moment.
- Stabilization is two duties per area where activity ceased (rules/stabilization.py): `stabilization`
  (initiate by the end of the next work day, CGP 2022 Part 2.2.14.a.i) and `stabilization_complete`
  (14 days after initiation, 7 for sensitive waters, or the town's stricter limit counted from when the
  activity ceased: §380-11 C(1), C(3)(a)); only "stabilized" completes. If work resumes on the area before
  a deadline, that clock is dropped; one that had already run out stays overdue on the record, except that
  the CGP's duties apply only to areas "temporarily inactive for 14 or more calendar days" (Part
  2.2.14.a.i; profile `stabilization.inactive_days`): work back within 14 days owed no CGP initiation or
  completion, even past the next work day. The town's own limit (Longmeadow's seven days after activity
  ceased "temporarily or permanently") has no such threshold and stays. "Next work day" is read as the next
  business day on the town's calendar (weekends, the legal holidays and the town's own days off skipped):
  the app does not know which days a site works, and the business day is the reading the town can check.
- Waivers (§380-8, Southborough §6.2): only the town's own requirements the profile lists (`waivers`) can be
  waived, never a CGP duty ("allowed by federal ... statutes and regulations", §380-8 A(1)). A waiver stops
  the obligation from the start of the day it was granted; an obligation whose deadline had already passed
  stays overdue on the record (the waiver does not reach back) but can no longer be met. The waiver's date,
  grantor, reason and clause are added to the obligation's reason and citation.
- Reports (CGP 2022 Part 4.7.1): the 24-hour deadline is for the reports of the inspections Part 4 requires
  (the erosion-control inspections), not for the town's own (final, pre-bury...), unless the profile lists
  them (`reporting.report_inspection_types`).
- CGP 2022 Part 5.4: a violation's corrective action is documented when its first corrective action was
  recorded, no sooner than the report that found it was submitted (schedule/facts.py); documented late, the
  obligation is met late and stays on the record.
- Corrective actions run from discovery (CGP 2022 Part 5.2). A violation finding with no action yet is
  owed within 7 calendar days (the kind of work is unknown, so the longest the CGP allows).
- Dates are counted on the town's calendar; a day-based deadline ends at 23:59:59.999999 local time.
  Business days skip weekends, the legal holidays of the profile's country and subdivision (the
  `holidays` package: US-MA) and the town's own listed days; "close of business" is the profile's hour.
- O&M certifications: one per `om_certification.months` period after the certificate of completion,
  made after the period has ended (it certifies the last 12 months, §380-14 C(2)(l)) and due
  `certify_within_days` later; a certification counts for the earliest open period that had ended.
- Inspections of a completed project's facilities (§380-14 A(3), "regular inspections" with no number): one per
  period of the inspection type's `interval` months (the town's policy) from the certificate of completion, due
  by the period's last day; the first inspection of that type made from a period's start meets it, so one made
  after a missed period meets that one late, and its own.

`history=False` returns only what can still be acted on (upcoming, due, overdue) and skips obligations
that were met or can no longer be met (a missed inspection once construction is complete); the
dashboard uses it. Every item it gives is in `history=True` and not met; what it leaves out of
`history=True` is met, or overdue and moot (tests/rules/test_rules_properties.py). Much faster.
"""
from __future__ import annotations

import datetime as dt
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Literal

from inspect_app.inspection_types import accepts_system, meeting, spec
from inspect_app.rules.trace import implements
from inspect_app.profiles.schema import Profile, short_citation
from inspect_app.rules.calendar import (
    UTC,
    add_months,
    close_of_next_business_day,
    days_after,
    end_of_day,
    holidays_of,
    local_date,
    months_after,
    same_time_days_after,
    zone,
)
from inspect_app.rules.facts import FactsError, Id, PermitFacts, Storm
from inspect_app.rules.stabilization import Episode as StabilizationEpisode
from inspect_app.rules.stabilization import episodes as stabilization_episodes
from inspect_app.units import inches

Status = Literal["upcoming", "due", "overdue", "met", "waived"]
Kind = Literal[
    "pre_construction",
    "inspection",
    "storm_inspection",
    "stabilization",
    "stabilization_complete",
    "corrective_action",
    "pre_bury",
    "walk_through",
    "start_of_work",
    "lapse",
    "extension_request",
    "om_certification",
    "cure",
    "report",
    "corrective_action_record",
    "om_inspection",
]

CGP_STANDARD = "CGP 2022 Part 4.2"
CGP_SENSITIVE = "CGP 2022 Part 4.3"
CGP_STABILIZED = "CGP 2022 Part 4.4"
CGP_CORRECTIVE = "CGP 2022 Part 5.2"
# CGP 2022 Part 4.3: sites discharging to sensitive waters inspect every 7 days and after storms.
SENSITIVE_DAYS = 7
SCHEDULE_DAYS = {"every_7_days": 7, "every_14_days_and_storm": 14}
# CGP 2022 Part 4.4: a stabilized site discharging to sensitive waters inspects twice in the first month.
SENSITIVE_STABILIZED_FIRST_MONTH_DAYS = 14
STORM_INSPECTION_WITHIN = dt.timedelta(hours=24)
# CGP 2022 Part 5.2: a new or replacement control or a significant repair within 7 calendar days.
SIGNIFICANT_WORK_DAYS = 7
# A gauge reading converted from inches may land a hair under the threshold in floating point.
_DEPTH_TOLERANCE_MM = 1e-6
_NO_DEADLINE = dt.datetime.max.replace(tzinfo=UTC)
_NEVER = _NO_DEADLINE
_START = attrgetter("start")


@dataclass(frozen=True, slots=True)
class Obligation:
    """One thing the record requires: what, about what, by when, its status, why, and under which rule.

    `subject` names what it is about as `<thing>:<id>`: `permit:7`, `area:3`, `structure:5`,
    `corrective_action:9`, `notice_to_correct:2`, `storm:<start of its rain, ISO 8601>` (with
    `:end` for a multi-day storm's closing inspection), `om_certification:<period number>`.
    `opens_at` is when its window opened (its trigger), `due_at` the last instant it is on time (both
    UTC, either may be None; see the module docstring for the statuses).
    """

    permit_id: Id
    kind: Kind
    subject: str
    opens_at: dt.datetime | None
    due_at: dt.datetime | None
    status: Status
    met_at: dt.datetime | None
    reason: str
    citation: str

    @property
    def late(self) -> bool:
        """Done after its deadline, or not done with the deadline past."""
        if self.due_at is None:
            return False
        return self.status == "overdue" or (self.met_at is not None and self.met_at > self.due_at)




def obligations(facts: PermitFacts, profile: Profile, now: dt.datetime, *, history: bool = True) -> list[Obligation]:
    """Everything the record requires of one permit as of `now`, sorted by deadline (open-ended last)."""
    if not isinstance(now, dt.datetime) or now.utcoffset() is None:
        raise FactsError("now must be a timezone-aware datetime")
    if not isinstance(facts, PermitFacts):
        raise FactsError(f"facts must be PermitFacts, not {type(facts).__name__}")
    return _Evaluation(facts, profile, now.astimezone(UTC), history).run()


@dataclass(frozen=True, slots=True)
class ScheduleInForce:
    """The erosion-control inspection schedule a permit was under at one moment, in words, with its rule."""

    every: str  # "7 calendar days", "month once the whole site is stabilized"
    storms: bool  # an inspection is also due within 24 hours of each storm
    sensitive_waters: bool
    threshold_mm: float
    citation: str
    suspended: bool = False  # CGP 2022 Part 4.4: frozen, construction suspended: no inspection is due

    @property
    def text(self) -> str:
        """'At least every 14 calendar days, and within 24 hours of a storm of 0.25 in or more'."""
        if self.suspended:
            return "Inspections suspended: construction is suspended and the ground is frozen"
        words = f"At least every {self.every}"
        if self.storms:
            words += f", and within 24 hours of a storm of {inches(self.threshold_mm)} or more"
        if self.sensitive_waters:
            words += " (the site discharges to sensitive waters)"
        return words


def schedule_in_force(facts: PermitFacts, profile: Profile, at: dt.datetime) -> ScheduleInForce:
    """The schedule of CGP 2022 Part 4 in force at `at`, as the engine applies it: the permit's chosen
    frequency, sensitive waters (Part 4.3), or the reduced frequency of a stabilized site (Part 4.4)."""
    evaluation = _Evaluation(facts, profile, at.astimezone(UTC), history=False)
    now = evaluation.now
    mode = evaluation._mode_at(now)
    _, every, citation = evaluation._interval_due(now, mode)
    if evaluation._suspension_at(now) is not None:
        return ScheduleInForce(every, False, facts.sensitive_waters, profile.storm.threshold_mm,
                               short_citation(profile.frozen.citation), suspended=True)
    storms = mode is None and evaluation.storms_owed
    if storms and evaluation.storm_citation != citation:
        citation = f"{citation}; {evaluation.storm_citation}"  # the storms are the town's (§380-11 C(3)(f))
    return ScheduleInForce(every, storms, facts.sensitive_waters, profile.storm.threshold_mm, citation)


def _when(at: dt.datetime, tz: dt.tzinfo) -> str:
    local = at.astimezone(tz)
    return f"{_date(local, tz)} at {local.hour % 12 or 12}:{local.minute:02d} {'a.m.' if local.hour < 12 else 'p.m.'}"


# Spelled out here rather than with strftime: independent of the locale, and several times faster.
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _date(at: dt.datetime | dt.date, tz: dt.tzinfo) -> str:
    day = at.astimezone(tz).date() if isinstance(at, dt.datetime) else at
    return f"{_WEEKDAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]} {day.year}"


def _clock(at: dt.time) -> str:
    """5 p.m., 4:30 p.m., noon: a time of day as a notice reads it."""
    if (at.hour, at.minute) == (12, 0):
        return "noon"
    minutes = f":{at.minute:02d}" if at.minute else ""
    return f"{at.hour % 12 or 12}{minutes} {'a.m.' if at.hour < 12 else 'p.m.'}"


@implements("CGP 2022 Part 5.2")
def corrective_action_due(kind: str, discovered_at: dt.datetime, profile: Profile) -> dt.datetime:
    """When a corrective action must be finished, counted from discovery on the town's calendar (CGP 2022 Part 5.2)."""
    tz = zone(profile.timezone)
    if kind == "routine_maintenance":
        # CGP 2022 Part 5.2: routine maintenance by the close of the next business day.
        return close_of_next_business_day(discovered_at, tz, holidays_of(profile), profile.close_of_business)
    # CGP 2022 Part 5.2: new or replacement controls and significant repairs within 7 calendar days.
    return days_after(discovered_at, SIGNIFICANT_WORK_DAYS, tz)


@implements("§9.7")
def lapse_deadline(profile: Profile, issued_at: dt.datetime, decision_filed_at: dt.datetime | None = None,
                   extension_granted_at: dt.datetime | None = None) -> dt.datetime | None:
    """§9.7: the last instant before an unused permit lapses (None where the town's permits do not lapse).

    Counted from the decision's filing with the Town Clerk where recorded, else from issuance, and a
    granted extension adds its years."""
    clock = profile.permit_clock
    if clock is None or clock.kind != "lapse_after":
        return None
    extra = (clock.extension_years or 0) if extension_granted_at is not None else 0
    years = clock.years + extra
    return months_after(decision_filed_at or issued_at, 12 * years, zone(profile.timezone))


@implements("§9.7")
def extension_apply_by(profile: Profile, lapse_at: dt.datetime) -> dt.datetime | None:
    """§9.7: the end of the last day an extension may be applied for, "in writing at least 30 days prior to the
    date when the SMP is due to lapse" (`lapse_at`, before any extension); None where the town sets no such day."""
    clock = profile.permit_clock
    if clock is None or clock.extension_request_days_before is None:
        return None
    tz = zone(profile.timezone)
    return end_of_day(local_date(lapse_at, tz) - dt.timedelta(days=clock.extension_request_days_before), tz)


def _reached(storm: Storm) -> dt.datetime:
    """When a storm's rain reached the threshold: known from hourly data, else the end of its period."""
    return storm.reached_at or storm.end


def _one_storm(a: Storm, b: Storm) -> Storm:
    """Two readings of the same rain as one storm: the earlier moment, the deeper total, the longer span."""
    return Storm(start=min(a.start, b.start), end=max(a.end, b.end), depth_mm=max(a.depth_mm, b.depth_mm),
                 reached_at=min(_reached(a), _reached(b)), multi_day=a.multi_day or b.multi_day)


def _by_deadline(item: Obligation) -> tuple[dt.datetime, str, str]:
    return (item.due_at or _NO_DEADLINE, item.kind, item.subject)


class _Evaluation:
    """One evaluation of one permit: the facts sorted once, each rule scanned once."""

    def __init__(self, facts: PermitFacts, profile: Profile, now: dt.datetime, history: bool) -> None:
        self.facts, self.profile, self.now, self.history = facts, profile, now, history
        self.tz = zone(profile.timezone)
        self.holidays = holidays_of(profile)
        self.out: list[Obligation] = []
        self.permit = f"permit:{facts.id}"
        started, completed = facts.construction_started_at, facts.completed_at
        self.started = started if started is not None and started <= now else None
        self.completed = completed if completed is not None and completed <= now else None
        # One pass over the inspections: erosion-control times (sorted), the first walk-through and final.
        erosion: list[dt.datetime] = []
        self.first_walk_through: dt.datetime | None = None
        self.first_final: dt.datetime | None = None
        # The inspections of a completed project's facilities (§380-14 A(3)), by type, sorted.
        self.after_completion: dict[str, list[dt.datetime]] = {}
        for inspection in facts.inspections:
            at, kind = inspection.at, inspection.kind
            if at > now:
                continue
            declared = spec(kind)
            if declared.after_completion:
                self.after_completion.setdefault(kind, []).append(at)
            if "inspection" in declared.meets:  # the routine schedule's (and so storms' and pre-construction's)
                erosion.append(at)
            elif declared.makes_punch_list:
                if self.first_walk_through is None or at < self.first_walk_through:
                    self.first_walk_through = at
            elif accepts_system(kind) and (self.first_final is None or at < self.first_final):
                self.first_final = at
        erosion.sort()
        self.erosion = erosion
        for times in self.after_completion.values():
            times.sort()
        self.changes, self.change_times = self._whole_site_stabilized()
        sensitive = facts.sensitive_waters
        self.normal_days = SENSITIVE_DAYS if sensitive else SCHEDULE_DAYS[facts.cgp_schedule]
        self.normal_citation = CGP_SENSITIVE if sensitive else CGP_STANDARD
        # CGP 2022 Parts 4.2, 4.3: storm (and snowmelt) inspections on the 14-day schedule and for sensitive
        # waters; a town that asks for them after every storm (§380-11 C(3)(f)) adds the 7-day schedule.
        storm_rule = profile.storm
        cgp_storms = sensitive or facts.cgp_schedule == "every_14_days_and_storm"
        self.storms_owed = cgp_storms or storm_rule.every_schedule
        self.storm_citation = self.normal_citation if cgp_storms else short_citation(storm_rule.every_schedule_citation)
        self.suspensions, self.reductions = self._frozen_periods()
        self.mode_times = sorted({*self.change_times, *(t for period in self.reductions for t in period if t is not None)})
        # §380-8 / §6.2: the waivers the town's rules allow, granted by now, by the requirement they waive.
        allowed = profile.waivers.requirements if profile.waivers is not None else ()
        self.waivers: dict[str, list] = {}
        for waiver in sorted(facts.waivers, key=attrgetter("granted_at")):
            if waiver.requirement in allowed and waiver.granted_at <= now:
                self.waivers.setdefault(waiver.requirement, []).append(waiver)

    def run(self) -> list[Obligation]:
        if self.facts.issued_at > self.now:
            return []
        self._permit_clock()
        self._pre_construction()
        if self.started is not None:
            self._routine_inspections()
            self._storm_inspections()
            self._snowmelt_inspections()
            self._walk_through()
        self._pre_bury()
        self._stabilization()
        self._corrective_actions()
        self._reports()
        self._om_certification()
        self._om_inspections()
        self._cure()
        self.out.sort(key=_by_deadline)
        return self.out

    def _emit(
        self,
        kind: Kind,
        subject: str,
        opens_at: dt.datetime | None,
        due_at: dt.datetime | None,
        met_at: dt.datetime | None,
        citation: str,
        reason: Callable[[], str],
        *,
        moot: bool = False,
    ) -> None:
        """Record an obligation; `moot` marks one that, once overdue, can no longer be met (history only)."""
        waiver = self._waiver_of(kind, subject) if met_at is None and self.waivers else None
        if waiver is not None:
            reason, citation, moot = self._waived(waiver, due_at, reason, citation, moot)
        if met_at is not None:
            status: Status = "met"
        elif waiver is not None and (due_at is None or due_at >= waiver.granted_at):
            status = "waived"
        elif due_at is not None and self.now > due_at:
            status = "overdue"
        elif opens_at is not None and opens_at <= self.now:
            status = "due"
        else:
            status = "upcoming"
        if not self.history and (status in ("met", "waived") or (moot and status == "overdue")):
            return
        self.out.append(
            Obligation(self.facts.id, kind, subject, opens_at, due_at, status, met_at, reason(), citation)
        )

    def _waiver_of(self, kind: str, subject: str):
        """The first waiver in force of requirement `kind` for `subject` (or for every subject), if any."""
        for waiver in self.waivers.get(kind, ()):
            if waiver.subject is None or waiver.subject == subject:
                return waiver
        return None

    @implements("§380-8", "§6.2")
    def _waived(self, waiver, due_at: dt.datetime | None, reason: Callable[[], str], citation: str,
                moot: bool) -> tuple[Callable[[], str], str, bool]:
        """§380-8 (Southborough §6.2): a waived requirement stops from the waiver's grant, and says so. One whose
        deadline had already passed stays overdue on the record (the waiver does not reach back), but can no
        longer be met."""
        rule = self.profile.waivers
        assert rule is not None
        clause, tz = short_citation(rule.citation), self.tz
        late = due_at is not None and due_at < waiver.granted_at
        words = (f" Waived ({clause}) on {_date(waiver.granted_at, tz)}"
                 + (f" by {waiver.granted_by}" if waiver.granted_by else "")
                 + (f": {waiver.reason}" if waiver.reason else "") + "."
                 + (" The deadline had passed before the waiver." if late else ""))

        def waived_reason() -> str:
            return reason() + words

        return waived_reason, f"{citation}; waived under {clause}"[:200], moot or late

    def _settled(self, met_at: dt.datetime | None) -> bool:
        """True when the open-only view can skip an obligation already met (saves working out its deadline)."""
        return not self.history and met_at is not None

    def _seen(self, at: dt.datetime | None) -> dt.datetime | None:
        """`at` if it has happened by now, else None."""
        return at if at is not None and at <= self.now else None

    def _inspection_citation(self, key: str) -> str | None:
        """The town's citation for an inspection type of its program, or None when the town does not require it
        (its program is a policy it has switched off: profile `program.enabled`)."""
        if not self.profile.program.enabled:
            return None
        for kind in self.profile.inspection_types:
            if kind.key == key:
                return self.profile.program.cited(short_citation(kind.citation))
        return None

    # -- permit clocks -------------------------------------------------------------------------------

    @implements("§380-10 K", "§9.7")
    def _permit_clock(self) -> None:
        clock, facts, tz = self.profile.permit_clock, self.facts, self.tz
        if clock is None:
            return  # the town sets no permit clock
        citation, issued, started = short_citation(clock.citation), facts.issued_at, self.started
        if self._settled(started):
            return  # work has begun: the clock has stopped, and a later extension is not needed
        if clock.kind == "start_within":
            # §380-10 K: the project shall begin within N years after issuance, unless the DPW Director
            # grants an extension, which sets a new start deadline.
            start_by = months_after(issued, 12 * clock.years, tz)
            extended_to = self._seen(facts.extension_granted_at) and facts.start_extended_to
            if extended_to:
                start_by = max(start_by, end_of_day(local_date(extended_to, tz), tz))
            self._emit(
                "start_of_work", self.permit, issued, start_by, started, citation,
                lambda: f"Work must begin within {clock.years} years of the permit's issuance on {_date(issued, tz)}"
                + (f", extended to {_date(start_by, tz)}." if extended_to else "."),
            )
            return
        # §9.7: the permit lapses N years after the decision is filed with the Town Clerk (the issue date
        # where the filing is not recorded) unless significant work has begun.
        granted = self._seen(facts.extension_granted_at)
        extended = granted is not None and clock.extension_years is not None
        lapse_at = lapse_deadline(profile=self.profile, issued_at=issued, decision_filed_at=facts.decision_filed_at)
        lapse_by = lapse_deadline(self.profile, issued, facts.decision_filed_at, granted)
        assert lapse_at is not None and lapse_by is not None
        if started is not None and started > lapse_by:
            # §9.7: work begun after the lapse is work without a permit, a violation, not a late start.
            self._emit(
                "lapse", self.permit, issued, lapse_by, None, citation,
                lambda: f"The permit lapsed on {_date(lapse_by, tz)}; work that began on {_date(started, tz)} was "
                "done without a permit, a violation.",
                moot=True,
            )
        else:
            self._emit(
                "lapse", self.permit, issued, lapse_by, started, citation,
                lambda: f"The permit lapses on {_date(lapse_by, tz)} unless significant land-disturbing work has begun"
                + (" (extended on request)." if extended else "."),
            )
        if clock.extension_years is None or clock.extension_request_days_before is None:
            return
        # §9.7: an extension is applied for in writing at least N days before the lapse.
        request_by = extension_apply_by(self.profile, lapse_at)
        requested = self._seen(facts.extension_requested_at)
        if requested is None and started is not None and started <= request_by:
            return  # work began in time: no extension is needed
        self._emit(
            "extension_request", self.permit, issued, request_by, requested, citation,
            lambda: f"Unless work begins, a {clock.extension_years}-year extension must be applied for in writing at "
            f"least {clock.extension_request_days_before} days before the permit lapses on {_date(lapse_at, tz)}.",
            moot=requested is None and (started is not None or self.now > lapse_at),
        )

    # -- inspections -------------------------------------------------------------------------------

    @implements("§380-16 C(4)(b)", "§380-16 C(4)(b)[1]")
    def _pre_construction(self) -> None:
        citation = self._inspection_citation(meeting("inspection"))
        if citation is None or (self.started is None and self.facts.status == "lapsed"):
            return
        first = self.erosion[0] if self.erosion else None
        started = self.started
        met = first if first is not None and (started is None or first <= started) else None
        # §380-16 C(4)(b)[1]: controls inspected before the start of construction.
        self._emit(
            "pre_construction", self.permit, self.facts.issued_at, started, met, citation,
            lambda: "The erosion and sedimentation controls must be inspected, as installed per the filed plan, "
            "before construction starts.",
            moot=met is None and started is not None,
        )

    def _whole_site_stabilized(self) -> tuple[list[tuple[dt.datetime, dt.datetime | None]], list[dt.datetime]]:
        """Each moment the whole site became stabilized (with that time) or stopped being so (None)."""
        areas = self.facts.areas
        if not areas:
            return [], []
        now = self.now
        events = sorted((e.at, i, e.status) for i, area in enumerate(areas) for e in area.events if e.at <= now)
        stabilized = [False] * len(areas)
        count, since = 0, None
        changes: list[tuple[dt.datetime, dt.datetime | None]] = []
        for at, i, status in events:
            now_stabilized = status == "stabilized"
            if now_stabilized != stabilized[i]:
                stabilized[i] = now_stabilized
                count += 1 if now_stabilized else -1
            if count == len(areas) and since is None:
                since = at
                changes.append((at, at))
            elif count < len(areas) and since is not None:
                since = None
                changes.append((at, None))
        return changes, [at for at, _ in changes]

    @implements("CGP 2022 Part 4.4 (frozen conditions)")
    def _frozen_periods(self) -> tuple[list[tuple[dt.datetime, dt.datetime | None]], list[tuple[dt.datetime, dt.datetime | None]]]:
        """The recorded frozen periods begun by now (CGP 2022 Part 4.4), as (start, end or None while it
        lasts): those with construction suspended, then those with work going on. A suspension ends early
        when any area is disturbed again during it (the land disturbance it rests on has resumed)."""
        now, suspensions, reductions = self.now, [], []
        disturbed = sorted(e.at for area in self.facts.areas for e in area.events
                           if e.status == "disturbed" and e.at <= now)
        for period in sorted(self.facts.frozen_periods, key=attrgetter("start")):
            if period.start > now:
                continue
            end = period.end if period.end is not None and period.end <= now else None
            if period.suspended:
                index = bisect_right(disturbed, period.start)
                if index < len(disturbed) and (end is None or disturbed[index] < end):
                    end = disturbed[index]
                suspensions.append((period.start, end))
            else:
                reductions.append((period.start, end))
        return suspensions, reductions

    @staticmethod
    def _within(periods: list[tuple[dt.datetime, dt.datetime | None]], at: dt.datetime) -> tuple | None:
        for start, end in periods:
            if start <= at and (end is None or at < end):
                return start, end
        return None

    def _suspension_at(self, at: dt.datetime) -> tuple | None:
        """The frozen-conditions suspension of inspections in force at `at`, if any."""
        return self._within(self.suspensions, at)

    def _mode_at(self, at: dt.datetime) -> tuple[str, dt.datetime] | None:
        """The reduced frequency in force at `at` (CGP 2022 Part 4.4): ("stabilized", since) for a stabilized
        site, ("frozen", since) for work going on in frozen conditions; None for the permit's own schedule."""
        since = self._stabilized_since(at)
        if since is not None:
            return "stabilized", since
        frozen = self._within(self.reductions, at)
        return ("frozen", frozen[0]) if frozen is not None else None

    def _stabilized_since(self, at: dt.datetime) -> dt.datetime | None:
        """When the whole site became stabilized, if it was at `at`."""
        index = bisect_right(self.change_times, at) - 1
        return self.changes[index][1] if index >= 0 else None

    def _interval_due(self, anchor: dt.datetime, mode: tuple[str, dt.datetime] | None) -> tuple[dt.datetime, str, str]:
        """Deadline after `anchor` at the frequency in force (`_mode_at`), its wording and citation."""
        tz = self.tz
        if mode is None:
            return days_after(anchor, self.normal_days, tz), f"{self.normal_days} calendar days", self.normal_citation
        kind, stabilized_since = mode
        if kind == "frozen":
            # CGP 2022 Part 4.4: construction going on in frozen conditions: once a month.
            return (months_after(anchor, 1, tz), "month while work goes on in frozen conditions",
                    short_citation(self.profile.frozen.citation))
        # CGP 2022 Part 4.4: stabilized sites drop to monthly (sensitive waters: twice in the first month).
        if self.facts.sensitive_waters and local_date(anchor, tz) < add_months(local_date(stabilized_since, tz), 1):
            days = SENSITIVE_STABILIZED_FIRST_MONTH_DAYS
            return days_after(anchor, days, tz), f"{days} calendar days in the first month after stabilization", CGP_STABILIZED
        return months_after(anchor, 1, tz), "month once the whole site is stabilized", CGP_STABILIZED

    def _routine_due(self, anchor: dt.datetime) -> tuple[dt.datetime, str, str]:
        """Next routine deadline after `anchor`, following any change of frequency (stabilization, frozen
        conditions) before it."""
        due = self._interval_due(anchor, self._mode_at(anchor))
        times = self.mode_times
        index = bisect_right(times, anchor)
        while index < len(times) and times[index] <= due[0]:
            at = times[index]
            mode = self._mode_at(at)
            if mode is not None:
                due = self._interval_due(anchor, mode)
            else:
                # An area disturbed again: the full frequency applies again from then.
                again = days_after(at, self.normal_days, self.tz)
                if again < due[0]:
                    due = (again, f"{self.normal_days} calendar days", self.normal_citation)
            index += 1
        return due

    # §380-16 C(4)(b)[1]: after the first, "additional erosion and sedimentation control inspections shall occur
    # based on the frequencies articulated in Section 4" of the CGP; §380-11 C(3)(f): "at regular intervals".
    @implements("CGP 2022 Part 4.2", "CGP 2022 Part 4.3", "CGP 2022 Part 4.4", "§380-16 C(4)(b)[1]", "§380-11 C(3)(f)")
    def _routine_inspections(self) -> None:
        """CGP 2022 Part 4: erosion-control inspections at a fixed frequency from construction start."""
        tz, start, end, times = self.tz, self.started, self.completed, self.erosion
        assert start is not None
        limit = end if end is not None else self.now
        first, stop = bisect_right(times, start), bisect_right(times, limit)
        anchor, index, anchor_is = start, first, "start"
        if not self.history and stop > first:
            # Every inspection restarts the chain, so the open ones all follow the last inspection.
            anchor, index, anchor_is = times[stop - 1], stop, "inspection"
        while anchor <= limit:
            due, every, citation = self._routine_due(anchor)
            met = times[index] if index < stop else None
            pause = self._suspension_before(anchor, due)
            if pause is not None and (met is None or met > pause[0]):
                # CGP 2022 Part 4.4: inspections suspended while the site is frozen and construction suspended:
                # nothing falls due in it, and the chain starts again when it ends.
                resumed = pause[1]
                if resumed is None or resumed > limit:
                    break
                # A suspension's end is not in it (`_within`): an inspection at that very moment counts.
                anchor, anchor_is = resumed, "thaw"
                index = max(index, bisect_left(times, resumed, first, stop))
                continue
            if met is None and end is not None and due >= end:
                break  # the work was complete before this one fell due
            since = {
                "start": f"construction started on {_date(anchor, tz)}",
                "inspection": f"the last one was on {_date(anchor, tz)}",
                "deadline": f"the previous one was due by {_date(anchor, tz)}",
                "thaw": f"the suspension of inspections for frozen conditions ended on {_date(anchor, tz)}",
            }[anchor_is]
            self._emit(
                "inspection", self.permit, anchor, due, met, citation,
                lambda: f"Erosion-control inspections are required at least every {every}, and {since}.",
                moot=met is None and end is not None,
            )
            if met is not None and met <= due:
                anchor, index, anchor_is = met, index + 1, "inspection"
            else:
                anchor, anchor_is = due, "deadline"

    @implements("CGP 2022 Part 4.4 (frozen conditions)")
    def _suspension_before(self, anchor: dt.datetime, due: dt.datetime) -> tuple | None:
        """The first suspension of inspections (frozen conditions) that is in force between `anchor` and `due`."""
        for start, end in self.suspensions:
            if start <= due and (end is None or end > anchor):
                return start, end
        return None

    @implements("§380-11 C(3)(f)")  # "and especially following any storm"
    def _storm_inspections(self) -> None:
        """CGP 2022 Parts 4.2 and 4.3: an inspection within 24 hours of a storm of 0.25 in or more; on every
        schedule where the town asks for one after any storm (§380-11 C(3)(f), profile `storm.every_schedule`)."""
        facts = self.facts
        if not self.storms_owed:
            return
        threshold, now = self.profile.storm.threshold_mm - _DEPTH_TOLERANCE_MM, self.now
        # A storm not reached yet as of now has not happened.
        found = sorted((s for s in facts.storms if s.depth_mm >= threshold and _reached(s) <= now), key=_START)
        storms: list[Storm] = []
        for storm in found:
            if storms and storm.start < storms[-1].end and storms[-1].start < storm.end:
                storms[-1] = _one_storm(storms[-1], storm)  # two readings of the same rain
            else:
                storms.append(storm)
        # A storm that ended before the second-to-last inspection has both its inspections (they are
        # matched in time order), so the open-only view need not look at it.
        times = self.erosion
        settled = times[-2] if not self.history and len(times) >= 2 else None
        for storm in storms:
            if settled is None or storm.end >= settled:
                self._storm(storm)

    def _storm_applies(self, at: dt.datetime) -> bool:
        """A storm inspection is needed if construction was under way at `at`, the site not all stabilized and
        not in recorded frozen conditions (CGP 2022 Part 4.4: suspended, or reduced to once a month)."""
        assert self.started is not None
        if at <= self.started or (self.completed is not None and at >= self.completed):
            return False
        return self._mode_at(at) is None and self._suspension_at(at) is None

    @implements("CGP 2022 Parts 4.2-4.3 (snowmelt)")
    def _snowmelt_inspections(self) -> None:
        """CGP 2022 Parts 4.2, 4.3: "within 24 hours of the occurrence of ... a snowmelt discharge from a storm
        event that produces 3.25 inches or more of snow within a 24-hour period": the clock runs from the
        discharge. Discharges within 24 hours of each other are one occurrence: the earliest moment stands."""
        if not self.storms_owed or not self.facts.snowmelts:
            return
        rule, now, tz = self.profile.snowmelt, self.now, self.tz
        threshold = rule.threshold_mm - _DEPTH_TOLERANCE_MM
        melts = sorted((m for m in self.facts.snowmelts if m.snow_mm >= threshold and m.at <= now), key=attrgetter("at"))
        first: list = []
        for melt in melts:
            if first and melt.at - first[-1].at < STORM_INSPECTION_WITHIN:
                continue  # the same discharge, seen again (by the station and on site)
            first.append(melt)
        sensitive_or_14 = self.storm_citation == self.normal_citation
        citation = short_citation(rule.citation) if sensitive_or_14 else self.storm_citation
        for melt in first:
            if not self._storm_applies(melt.at):
                continue
            how = "seen on site" if melt.seen_on_site else "shown by the weather station's snow depth"
            self._storm_obligation(
                f"snowmelt:{melt.at.isoformat()}", melt.at, melt.at + STORM_INSPECTION_WITHIN,
                bisect_left(self.erosion, melt.at),
                lambda melt=melt, how=how: f"Snowmelt from a storm of {inches(melt.snow_mm)} of snow began to "
                f"discharge {_when(melt.at, tz)} ({how}), so an erosion-control inspection is required within "
                "24 hours of the discharge.",
                citation,
            )

    def _during_stop_work(self, storm: Storm) -> bool:
        for order in self.facts.stop_work_orders:
            lifted = self._seen(order.lifted_at)
            if order.issued_at <= min(storm.end, self.now) and (lifted is None or lifted > storm.start):
                return True
        return False

    def _storm(self, storm: Storm) -> None:
        subject = f"storm:{storm.start.isoformat()}"
        reached = _reached(storm)
        used = -1
        if self._storm_applies(reached):
            # Only an inspection at or after the moment the threshold was reached answers the storm.
            used = bisect_left(self.erosion, reached)
            self._storm_obligation(subject, reached, reached + STORM_INSPECTION_WITHIN, used,
                                   lambda: self._storm_reason(storm, closing=False))
        if storm.multi_day and storm.end <= self.now and self._storm_applies(storm.end):
            # The closing inspection is made after the storm's end, and is another one than the first.
            index = max(bisect_left(self.erosion, storm.end), used + 1)
            self._storm_obligation(f"{subject}:end", storm.end, storm.end + STORM_INSPECTION_WITHIN, index,
                                   lambda: self._storm_reason(storm, closing=True))

    def _storm_reason(self, storm: Storm, *, closing: bool) -> str:
        rain = f"{inches(storm.depth_mm)} of rain"
        if closing:
            return (f"The storm of several days ({rain}) ended {_when(storm.end, self.tz)}, so another "
                    f"erosion-control inspection is required within 24 hours of its end{self._stop_work_clause(storm)}.")
        if storm.reached_at is None:
            return (f"{rain} fell {self._storm_day(storm)}, so an erosion-control inspection is required within "
                    f"24 hours{self._stop_work_clause(storm)}.")
        return (f"The rain reached the storm threshold within 24 hours at {_when(storm.reached_at, self.tz)} "
                f"({rain} in all), so an erosion-control inspection is required within 24 hours of that "
                f"moment{self._stop_work_clause(storm)}.")

    def _storm_day(self, storm: Storm) -> str:
        """'on Tue 10 Jun 2025' for a local calendar day, else the period's end time."""
        tz = self.tz
        start, finish = storm.start.astimezone(tz), storm.end.astimezone(tz)
        if start.time() == finish.time() == dt.time() and finish.date() == start.date() + dt.timedelta(days=1):
            return f"on {_date(start, tz)}"
        return f"in the 24 hours to {_when(storm.end, tz)}"

    def _storm_obligation(
        self, subject: str, opens: dt.datetime, due: dt.datetime, index: int, reason: Callable[[], str],
        citation: str | None = None,
    ) -> None:
        met = self.erosion[index] if index < len(self.erosion) else None
        if met is None and self.completed is not None and due >= self.completed:
            return  # the work was complete before this one fell due
        self._emit(
            "storm_inspection", subject, opens, due, met, citation or self.storm_citation, reason,
            moot=met is None and self.completed is not None,
        )

    def _stop_work_clause(self, day: Storm) -> str:
        if not self._during_stop_work(day):
            return ""
        return ", stop-work order or not, because the erosion controls must keep working"

    @implements("§380-16 C(4)(c)")
    def _pre_bury(self) -> None:
        citation = self._inspection_citation(meeting("pre_bury"))
        if citation is None or (self.started is None and self.facts.status == "lapsed"):
            return
        tz = self.tz
        for structure in self.facts.structures:
            inspected = self._seen(structure.pre_bury_inspected_at)
            if self._settled(inspected):
                continue
            name, backfilled = structure.name, self._seen(structure.backfilled_at)
            # Open from the start of construction, or from the backfill if that came first: a structure
            # buried before the recorded start still needed its inspection.
            opens = min((t for t in (self.started, backfilled) if t is not None), default=None)
            # §380-16 C(4)(c): prior to backfilling any underground drainage or infiltration structure; one
            # backfilled without it was a violation, recorded as such (it can no longer be met).
            missed = backfilled is not None and (inspected is None or inspected > backfilled)
            self._emit(
                "pre_bury", f"structure:{structure.id}", opens, backfilled, inspected,
                citation,
                lambda: (f"{name} was backfilled on {_when(backfilled, tz)} without its pre-bury inspection: a "
                         "violation." if missed else f"{name} must have a pre-bury inspection before it is backfilled."),
            )

    @implements("§380-16 C(4)(d)")
    def _walk_through(self) -> None:
        citation = self._inspection_citation(meeting("walk_through"))
        if citation is None:
            return
        final, walk = self.first_final, self.first_walk_through
        # §380-16 C(4)(d): a walk-through settles the punch list before the final inspection.
        self._emit(
            "walk_through", self.permit, final, final, walk, citation,
            lambda: "A walk-through inspection must settle the punch list of remaining items before the final inspection.",
            moot=walk is None and self.completed is not None,
        )

    # -- stabilization and corrective actions --------------------------------------------------------

    @implements("CGP 2022 Part 2.2.14.a.i", "CGP 2022 Part 2.2.14.a.ii", "§380-11 C(1)", "§380-11 C(3)(a)")
    def _stabilization(self) -> None:
        """CGP 2022 Part 2.2.14.a.i-ii, §380-11 C(1), C(3)(a): initiate, then complete, per ceased area."""
        rule, tz = self.profile.stabilization, self.tz
        sensitive = self.facts.sensitive_waters
        for area in self.facts.areas:
            name, subject = area.name, f"area:{area.id}"
            for episode in stabilization_episodes(area.events, rule, tz, self.holidays, sensitive, self.now):
                self._stabilization_duty(
                    "stabilization", subject, episode, episode.initiate_due, episode.initiated,
                    short_citation(rule.initiate_citation),
                    lambda e=episode: f"Work on {name} stopped on {_date(e.ceased, tz)}, so stabilization must be "
                    f"started by the end of the next work day, {_date(e.initiate_due, tz)}.",
                )
                citation = short_citation(rule.citation if episode.complete_by_town else rule.complete_citation)
                self._stabilization_duty(
                    "stabilization_complete", subject, episode, episode.complete_due, episode.stabilized, citation,
                    lambda e=episode: f"Work on {name} stopped on {_date(e.ceased, tz)}, so it must be stabilized by "
                    f"{_date(e.complete_due, tz)} ("
                    + (f"{rule.days} days after work stopped" if e.complete_by_town else
                       f"{rule.completion_days(sensitive)} days after stabilization began") + ").",
                )

    def _stabilization_duty(
        self, kind: Kind, subject: str, episode: StabilizationEpisode, due: dt.datetime, met: dt.datetime | None,
        citation: str, reason: Callable[[], str],
    ) -> None:
        again = episode.disturbed_again
        if met is not None and again is not None and met > again:
            met = None  # (cannot happen: an episode closes at the disturbance)
        if met is None and again is not None:
            if again <= due:
                return  # work resumed in time: the clock stops and nothing was owed
            federal = kind == "stabilization" or not episode.complete_by_town
            inactive_days = self.profile.stabilization.inactive_days
            if federal and again < same_time_days_after(episode.ceased, inactive_days, self.tz):
                # CGP 2022 Part 2.2.14.a.i: only an area inactive 14 or more calendar days had to be stabilized,
                # counted on the town's clock (14 days across a daylight-saving change are 335 or 337 hours).
                return
            # Work resumed after the deadline: the lapse stays on the record, but can no longer be cured.
            self._emit(kind, subject, episode.ceased, due, None, citation, reason, moot=True)
            return
        if self._settled(met):
            return
        self._emit(kind, subject, episode.ceased, due, met, citation, reason)

    # §380-16 C(4)(f)[2]: the applicant "shall promptly correct any portion of the work that does not comply";
    # CGP 2022 Part 5.2 gives "promptly" its deadlines.
    @implements("CGP 2022 Part 5.2", "§380-16 C(4)(f)[2]")
    def _corrective_actions(self) -> None:
        """CGP 2022 Part 5.2: the clock runs from discovery (the inspection, or when the condition was
        recorded), whether or not anyone has opened a corrective action for it yet."""
        tz, profile = self.tz, self.profile
        for action in self.facts.corrective_actions:
            found = action.discovered_at
            done = self._seen(action.completed_at)
            if done is not None and done < found:
                done = None  # work dated before the condition was found cannot correct it
            if found > self.now or self._settled(done):
                continue
            due = corrective_action_due(action.kind, found, profile)
            if action.kind == "routine_maintenance":
                close = profile.close_of_business

                def reason(found: dt.datetime = found, due: dt.datetime = due) -> str:
                    return (f"Routine maintenance found on {_date(found, tz)} must be finished by the close of the "
                            f"next business day: {_clock(close)} on {_date(due, tz)}.")
            else:
                what = "A new or replacement control" if action.kind == "new_or_replacement_control" else "A significant repair"

                def reason(found: dt.datetime = found, what: str = what) -> str:
                    return f"{what} found on {_date(found, tz)} must be finished within {SIGNIFICANT_WORK_DAYS} calendar days."
            self._emit("corrective_action", f"corrective_action:{action.id}", found, due, done, CGP_CORRECTIVE, reason)
        for finding in self.facts.violation_findings:
            found = finding.discovered_at
            done = self._seen(finding.corrected_at)
            if found > self.now or self._settled(done) or self._seen(finding.documented_at) is not None:
                continue  # (a documented corrective action carries the deadline itself)
            # No action chosen yet, so the kind of work is unknown: the longest time CGP Part 5.2 allows.
            due = days_after(found, SIGNIFICANT_WORK_DAYS, tz)
            self._emit(
                "corrective_action", f"finding:{finding.id}", found, due, done, CGP_CORRECTIVE,
                lambda found=found, what=finding.description: f"The violation found on {_date(found, tz)} "
                f"({what}) must be corrected within {SIGNIFICANT_WORK_DAYS} calendar days of its discovery.",
            )

    @implements("CGP 2022 Part 4.7.1", "CGP 2022 Part 5.4")
    def _reports(self) -> None:
        """CGP 2022 Part 4.7.1: a report completed within 24 hours of its inspection (drafts show due)."""
        rule, tz = self.profile.reporting, self.tz
        window = dt.timedelta(hours=rule.report_hours)
        kinds = rule.report_inspection_types
        for report in self.facts.reports:
            if report.at > self.now or report.kind not in kinds:
                continue  # Part 4.7.1 is about the inspections Part 4 requires (and those the town adds)
            submitted = self._seen(report.submitted_at)
            if self._settled(submitted):
                continue
            name = report.kind.replace("_", "-")
            self._emit(
                "report", f"inspection:{report.id}", report.at, report.at + window, submitted,
                short_citation(rule.report_citation),
                lambda at=report.at, name=name: f"The {name} inspection of {_when(at, tz)} must be reported, "
                f"signed and submitted, within {rule.report_hours} hours.",
            )
        # CGP 2022 Part 5.4: a violation found must have its corrective action documented within 24 hours; one
        # documented late is met late, and stays on the record.
        record = dt.timedelta(hours=rule.action_record_hours)
        for finding in self.facts.violation_findings:
            found = finding.discovered_at
            documented = self._seen(finding.documented_at)
            if found > self.now or self._settled(documented):
                continue
            if documented is None and self._seen(finding.corrected_at) is not None:
                continue
            self._emit(
                "corrective_action_record", f"finding:{finding.id}", found, found + record,
                None if documented is None else max(documented, found),
                short_citation(rule.action_record_citation),
                lambda found=found: f"The violation found on {_when(found, tz)} needs its corrective action "
                f"documented within {rule.action_record_hours} hours.",
            )

    # -- after completion ------------------------------------------------------------------------------

    @implements("§380-14 C(2)(l)")
    def _om_certification(self) -> None:
        """§380-14 C(2)(l): each period's certification covers the last N months, so it is made after the
        period ends (from the anniversary on) and is due `certify_within_days` after it."""
        done = self.completed
        if done is None or not self.profile.om_certification.enabled:
            return  # (a town policy switched off: profile `om_certification.enabled`)
        rule, tz, now = self.profile.om_certification, self.tz, self.now
        citation, months, grace = rule.cited(short_citation(rule.citation)), rule.months, rule.certify_within_days
        filed = sorted(at for at in self.facts.om_certifications if at <= now)
        index, period = 0, 1
        while True:
            # Count from the completion date each time so the anniversaries do not drift (Jan 31, Feb 28...).
            anniversary = add_months(local_date(done, tz), period * months)
            opens = end_of_day(anniversary - dt.timedelta(days=1), tz)  # the period's last instant
            due = end_of_day(anniversary + dt.timedelta(days=grace), tz)
            while index < len(filed) and filed[index] <= opens:
                index += 1  # made before the period ended: it cannot certify it
            met = filed[index] if index < len(filed) else None
            if met is not None:
                index += 1
            self._emit(
                "om_certification", f"om_certification:{period}", opens, due, met, citation,
                lambda anniversary=anniversary, due=due: f"The owner must certify the operation and maintenance of "
                f"the stormwater controls for the {months} months to {_date(anniversary - dt.timedelta(days=1), tz)}, "
                f"once they are over, by {_date(due, tz)}.",
            )
            if opens > now:
                break  # the period still running is shown as upcoming; later ones are not
            period += 1

    @implements("§380-14 A(3)")
    def _om_inspections(self) -> None:
        """§380-14 A(3): the O&M agreement gives the authority access to a completed project's facilities "at
        reasonable times for regular inspections". The text gives no number: the town's profile says every how
        many months (`interval` of the inspection type, its policy), counted from the certificate of completion.
        Each period owes one inspection, due by its last day; the first inspection made from the period's start
        meets it, so one made after a missed period meets that one late (and its own period too)."""
        done = self.completed
        if done is None:
            return
        tz, now = self.tz, self.now
        for kind in self.profile.inspection_types:
            rule = kind.interval
            if rule is None or not rule.enabled or "om_inspection" not in spec(kind.key).meets:
                continue
            citation, months, name = rule.cited(short_citation(rule.citation)), rule.months, kind.name
            made = self.after_completion.get(kind.key, [])
            start, opens, period = local_date(done, tz), done, 1
            while True:
                due = end_of_day(add_months(start, period * months) - dt.timedelta(days=1), tz)
                met = made[bisect_left(made, opens)] if bisect_left(made, opens) < len(made) else None
                self._emit(
                    "om_inspection", f"om_inspection:{period}", opens, due, met, citation,
                    lambda due=due: f"The {name} is owed every {months} months once the project is "
                    f"completed: the next one by {_date(due, tz)}.",
                )
                if opens > now:
                    break  # the period still to come is shown as upcoming; later ones are not
                opens, period = due, period + 1

    @implements("§380-14 E")
    def _cure(self) -> None:
        rule, tz = self.profile.cure_period, self.tz
        if not rule.enabled:
            return  # (a town policy switched off: profile `cure_period.enabled`)
        citation, days = rule.cited(short_citation(rule.citation)), rule.days
        for notice in self.facts.notices_to_correct:
            issued, corrected = notice.issued_at, self._seen(notice.corrected_at)
            if corrected is not None and corrected < issued:
                corrected = None  # a correction dated before the notice cannot answer it
            if issued > self.now or self._settled(corrected):
                continue
            # §380-14 E: satisfactory corrections within 30 days after the notice to correct.
            self._emit(
                "cure", f"notice_to_correct:{notice.id}", issued, days_after(issued, days, tz), corrected, citation,
                lambda: f"After the notice to correct maintenance of {_date(issued, tz)}, the owner has {days} days "
                "to make the corrections.",
            )
