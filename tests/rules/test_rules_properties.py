"""Invariants of the schedule engine over generated permit histories (hypothesis)."""
from __future__ import annotations

import datetime as dt
from dataclasses import replace

from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.rules.rules_builders import ET, THRESHOLD_MM, UTC, et, find, longmeadow, permit

from inspect_app.rules import (
    Area,
    AreaEvent,
    CorrectiveAction,
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
    obligations,
)
from inspect_app.rules.calendar import holidays_of, is_business_day
from inspect_app.rules.storms import HOUR, find_storms

PROFILE = longmeadow(waivers={"citation": "§380-8: waivers"})
# Construction starts shortly before a clock change, so generated histories cross it.
STARTS = [et(2025, 2, 20, 8), et(2025, 10, 20, 8)]
FAST = settings(max_examples=100, deadline=None)


def end_of_local_day(at: dt.datetime, days: int) -> dt.datetime:
    day = at.astimezone(ET).date() + dt.timedelta(days=days)
    return dt.datetime.combine(day, dt.time.max, tzinfo=ET).astimezone(UTC)


def storm_day(start: dt.datetime, index: int, mm: float) -> Storm:
    """Rain over the Massachusetts calendar day `index` days after the local date of `start`."""
    day = start.astimezone(ET).date() + dt.timedelta(days=index)
    begin = dt.datetime.combine(day, dt.time(), tzinfo=ET).astimezone(UTC)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=ET).astimezone(UTC)
    return Storm(begin, end, mm)


# Rain per hour as meteostat reports it (tenths of a mm), some hours with no data (None).
HOURLY_RAIN = st.one_of(st.none(), st.sampled_from([0.0, 0.1, 0.4, 1.0, 3.1, 3.2, 6.3, 6.4]),
                        st.integers(0, 200).map(lambda tenths: tenths / 10))


@st.composite
def hourly_series(draw: st.DrawFn, first: dt.datetime, hours: int) -> dict[dt.datetime, float | None]:
    """Mostly dry hours from `first`, with showers and gaps at drawn hours."""
    series: dict[dt.datetime, float | None] = {first + i * HOUR: 0.0 for i in range(hours)}
    for offset, mm in draw(st.dictionaries(st.integers(0, hours - 1), HOURLY_RAIN, max_size=40)).items():
        series[first + offset * HOUR] = mm
    return series


def station_storms(draw: st.DrawFn, start: dt.datetime) -> tuple[Storm, ...]:
    """The storms an hourly series around construction holds, as the sweep would find them."""
    first = start - dt.timedelta(hours=72)
    hours = 103 * 24
    return tuple(found.fact() for found in find_storms(draw(hourly_series(first, hours)), first,
                                                       first + (hours - 1) * HOUR, THRESHOLD_MM).storms)


@st.composite
def histories(draw: st.DrawFn, *, schedule: str | None = None, sensitive: bool | None = None,
              with_areas: bool = True, winter: bool = True) -> tuple[PermitFacts, dt.datetime]:
    """A permit under construction for up to 100 days, with inspections, storms and more; and a `now`.
    `winter`: also snowmelt discharges, frozen periods and waivers."""
    start = draw(st.sampled_from(STARTS))
    hours = st.integers(min_value=-72, max_value=100 * 24).map(lambda h: start + dt.timedelta(hours=h))
    depths = st.one_of(st.floats(0, 40, allow_nan=False), st.sampled_from([0.24 * 25.4, THRESHOLD_MM, 0.25 * 25.4]))
    storms = draw(st.dictionaries(st.integers(-3, 100), depths, max_size=20)) if draw(st.booleans()) else {}
    areas: tuple[Area, ...] = ()
    if with_areas:
        statuses = st.sampled_from(["disturbed", "activity_ceased", "stabilization_initiated", "stabilized"])
        areas = tuple(Area(i, f"Area {i}", tuple(AreaEvent(s, at) for s, at in draw(st.lists(st.tuples(statuses, hours),
                      max_size=5)))) for i in range(draw(st.integers(0, 3))))
    completed = draw(st.one_of(st.none(), hours.filter(lambda at: at > start)))
    facts = permit(
        status="completed" if completed else "active",
        cgp_schedule=schedule or draw(st.sampled_from(["every_7_days", "every_14_days_and_storm"])),
        sensitive_waters=draw(st.booleans()) if sensitive is None else sensitive,
        issued_at=start - dt.timedelta(days=30),
        construction_started_at=start,
        completed_at=completed,
        inspections=tuple(Inspection(i, "erosion_control", at) for i, at in enumerate(draw(st.lists(hours, max_size=25)))),
        # Calendar-day storms of the old record, or storm events found from hourly data.
        storms=tuple(storm_day(start, index, mm) for index, mm in storms.items()) or station_storms(draw, start),
        areas=areas,
        structures=tuple(Structure(i, f"Structure {i}", *draw(st.tuples(st.none() | hours, st.none() | hours)))
                         for i in range(draw(st.integers(0, 2)))),
        corrective_actions=tuple(
            CorrectiveAction(i, kind, found, done) for i, (kind, found, done) in enumerate(draw(st.lists(st.tuples(
                st.sampled_from(["routine_maintenance", "new_or_replacement_control", "significant_repair"]),
                hours, st.none() | hours), max_size=4)))),
        stop_work_orders=tuple(StopWorkOrder(i, a, b) for i, (a, b) in enumerate(draw(st.lists(st.tuples(
            hours, st.none() | hours), max_size=2)))),
        notices_to_correct=tuple(NoticeToCorrect(i, a, b) for i, (a, b) in enumerate(draw(st.lists(st.tuples(
            hours, st.none() | hours), max_size=2)))),
        om_certifications=tuple(draw(st.lists(hours, max_size=2))),
        violation_findings=tuple(ViolationFinding(i, found, "Violation", None, documented) for i, (found, documented)
                                 in enumerate(draw(st.lists(st.tuples(hours, st.none() | hours), max_size=2)))),
        # A report is submitted after its inspection, if at all.
        reports=tuple(Report(i, kind, at, None if after is None else at + dt.timedelta(hours=after))
                      for i, (kind, at, after) in enumerate(draw(st.lists(st.tuples(
                          st.sampled_from(["erosion_control", "final", "pre_bury"]), hours,
                          st.none() | st.integers(0, 72)), max_size=3)))),
    )
    if winter:
        periods = draw(st.lists(st.tuples(hours, st.none() | st.integers(1, 60 * 24), st.booleans()), max_size=2))
        facts = replace(
            facts,
            snowmelts=tuple(SnowmeltDischarge(at, mm, site) for at, mm, site in draw(st.lists(st.tuples(
                hours, st.sampled_from([50.0, 82.55, 100.0]), st.booleans()), max_size=3))),
            frozen_periods=tuple(FrozenPeriod(at, None if length is None else at + dt.timedelta(hours=length), suspended)
                                 for at, length, suspended in periods),
            waivers=tuple(Waiver(i, requirement, at, "Reason", "Director") for i, (requirement, at) in enumerate(draw(
                st.lists(st.tuples(st.sampled_from(["pre_construction", "pre_bury", "walk_through", "inspection"]),
                                   hours), max_size=2)))),
        )
    return facts, draw(hours)


def as_of(facts: PermitFacts, now: dt.datetime) -> PermitFacts:
    """The record as it stood at `now`: everything later removed."""
    def seen(at: dt.datetime | None) -> dt.datetime | None:
        return at if at is not None and at <= now else None

    return replace(
        facts,
        construction_started_at=seen(facts.construction_started_at),
        completed_at=seen(facts.completed_at) if seen(facts.construction_started_at) else None,
        inspections=tuple(i for i in facts.inspections if i.at <= now),
        storms=tuple(s for s in facts.storms if s.start <= now),
        areas=tuple(replace(a, events=tuple(e for e in a.events if e.at <= now)) for a in facts.areas),
        structures=tuple(replace(s, backfilled_at=seen(s.backfilled_at), pre_bury_inspected_at=seen(s.pre_bury_inspected_at))
                         for s in facts.structures),
        corrective_actions=tuple(replace(c, completed_at=seen(c.completed_at))
                                 for c in facts.corrective_actions if c.discovered_at <= now),
        stop_work_orders=tuple(replace(o, lifted_at=seen(o.lifted_at)) for o in facts.stop_work_orders if o.issued_at <= now),
        notices_to_correct=tuple(replace(n, corrected_at=seen(n.corrected_at))
                                 for n in facts.notices_to_correct if n.issued_at <= now),
        om_certifications=tuple(at for at in facts.om_certifications if at <= now),
        violation_findings=tuple(replace(f, documented_at=seen(f.documented_at))
                                 for f in facts.violation_findings if f.discovered_at <= now),
        reports=tuple(replace(r, submitted_at=seen(r.submitted_at)) for r in facts.reports if r.at <= now),
        snowmelts=tuple(m for m in facts.snowmelts if m.at <= now),
        frozen_periods=tuple(replace(p, end=seen(p.end)) for p in facts.frozen_periods if p.start <= now),
        waivers=tuple(w for w in facts.waivers if w.granted_at <= now),
    )


@FAST
@given(histories(schedule="every_7_days", with_areas=False, winter=False))
def test_on_a_seven_day_schedule_no_gap_between_required_inspections_exceeds_seven_days(case) -> None:
    facts, now = case
    required = sorted(o.due_at for o in find(obligations(facts, PROFILE, now), "inspection"))
    start = facts.construction_started_at
    end = min(facts.completed_at or now, now)
    if start > now:
        assert required == []
        return
    inspected = [i.at for i in facts.inspections if start < i.at <= end]
    for point in [start, *inspected]:
        following = [due for due in required if due > point]
        bound = end_of_local_day(point, 7)
        if facts.completed_at is None or bound < facts.completed_at:
            assert following, f"nothing required after {point}"
        if following:
            assert following[0] <= bound
    for earlier, later in zip(required, required[1:]):
        assert later <= end_of_local_day(earlier, 7)


@FAST
@given(st.one_of(histories(schedule="every_14_days_and_storm", with_areas=False, winter=False),
                 histories(schedule="every_7_days", sensitive=True, with_areas=False, winter=False)))
def test_every_storm_on_a_storm_schedule_makes_an_inspection_due_within_24_hours(case) -> None:
    facts, now = case
    items = find(obligations(facts, PROFILE, now), "storm_inspection")
    start, completed = facts.construction_started_at, facts.completed_at
    if start is None or start > now:
        assert items == []
        return  # CGP Part 4 inspections begin with construction: nothing is due before it starts
    inspected = sorted(i.at for i in facts.inspections if i.at <= now)
    for storm in facts.storms:
        reached = storm.reached_at or storm.end
        if storm.depth_mm < THRESHOLD_MM - 1e-6 or reached > now:
            assert not [o for o in items if o.subject == f"storm:{storm.start.isoformat()}"]
            continue
        if reached <= start or (completed is not None and reached >= completed):
            continue
        first = [o for o in items if o.subject == f"storm:{storm.start.isoformat()}"]
        answered = [at for at in inspected if at >= reached]
        if completed is not None and reached + dt.timedelta(hours=24) >= completed and not answered:
            assert first == []  # the work was complete before the inspection fell due
            continue
        assert len(first) == 1, f"no inspection for the storm reached at {reached}"
        # CGP 2022 Part 4.2: due 24 hours after the moment, and answered only at or after it.
        assert (first[0].opens_at, first[0].due_at) == (reached, reached + dt.timedelta(hours=24))
        assert first[0].met_at == (answered[0] if answered else None)
        closing = [o for o in items if o.subject == f"storm:{storm.start.isoformat()}:end"]
        if not storm.multi_day or storm.end > now:
            assert closing == []
        elif closing:
            assert (closing[0].opens_at, closing[0].due_at) == (storm.end, storm.end + dt.timedelta(hours=24))
            assert closing[0].met_at is None or (closing[0].met_at >= storm.end
                                                 and closing[0].met_at != first[0].met_at)


@settings(max_examples=200, deadline=None)
@given(hourly_series(et(2025, 3, 8), 24 * 4), st.sampled_from([THRESHOLD_MM, 0.5 * 25.4]))
def test_a_storm_is_found_iff_a_24_hour_window_reaches_the_threshold_and_is_due_24_hours_after(
        series, threshold_mm) -> None:
    first = et(2025, 3, 8)  # the series crosses the spring clock change
    labels = sorted(series)
    scan = find_storms(series, labels[0], labels[-1], threshold_mm)
    # Brute force: every window of up to 24 consecutive hours, the hours with no data left out (never 0).
    tenths = [round((series[label] or 0) * 10) for label in labels]
    reaching = [label for i, label in enumerate(labels) if sum(tenths[max(0, i - 23):i + 1]) >= threshold_mm * 10 - 1e-6]
    assert bool(scan.storms) == bool(reaching)
    if reaching:
        storm = scan.storms[0]
        assert storm.reached_at == reaching[0]
        assert storm.start < storm.reached_at <= storm.ended_at
        facts = permit(status="active", cgp_schedule="every_14_days_and_storm", issued_at=first - dt.timedelta(days=30),
                       construction_started_at=first - dt.timedelta(days=1), storms=(storm.fact(),))
        (item,) = [o for o in find(obligations(facts, PROFILE, labels[-1]), "storm_inspection")
                   if not o.subject.endswith(":end")][:1]
        assert item.due_at == reaching[0] + dt.timedelta(hours=24)
    assert set(scan.missing) <= {label for label in labels if series[label] is None}
    for storm in scan.storms:
        assert not any(storm.start < label <= storm.ended_at for label in scan.missing)


@FAST
@given(histories())
def test_nothing_is_reported_before_its_trigger(case) -> None:
    facts, now = case
    items = obligations(facts, PROFILE, now)
    assert items == obligations(as_of(facts, now), PROFILE, now)
    for item in items:
        if item.status in ("due", "overdue"):
            assert item.opens_at is not None and item.opens_at <= now, item
        if item.status == "met":
            assert item.met_at is not None and item.met_at <= now, item


@FAST
@given(histories(), st.integers(-3, 100))
def test_a_024_inch_day_makes_nothing(case, index: int) -> None:
    facts, now = case
    wetter = replace(facts, storms=(*facts.storms, storm_day(facts.construction_started_at, index, 0.24 * 25.4)))
    assert obligations(wetter, PROFILE, now) == obligations(facts, PROFILE, now)


# An inspection at the very moment a suspension for frozen conditions ends (found by this test).
@example(case=(permit(status="active", issued_at=STARTS[0] - dt.timedelta(days=30), construction_started_at=STARTS[0],
                      inspections=(Inspection(0, "erosion_control", STARTS[0] + HOUR),),
                      frozen_periods=(FrozenPeriod(STARTS[0], STARTS[0] + HOUR, suspended=True),)),
               STARTS[0] + HOUR))
@FAST
@given(histories())
def test_the_dashboard_view_is_exactly_what_is_still_open(case) -> None:
    facts, now = case
    everything = obligations(facts, PROFILE, now)
    open_only = obligations(facts, PROFILE, now, history=False)
    assert all(item in everything and item.status not in ("met", "waived") for item in open_only)
    left_out = [item for item in everything if item.status not in ("met", "waived") and item not in open_only]
    # Only what was missed and can no longer be met is left out (and what was waived, §380-8).
    assert all(item.status == "overdue" for item in left_out), left_out


# Rules whose obligation can only be met by an event of its own, at or after its trigger.
EVENT_MET = ("stabilization", "stabilization_complete", "om_certification", "report", "cure", "corrective_action")


@settings(max_examples=60, deadline=None)
@given(histories())
def test_an_obligation_is_met_only_by_an_event_at_or_after_it_opens(case) -> None:
    facts, now = case
    for ob in obligations(facts, PROFILE, now):
        if ob.kind in EVENT_MET and ob.met_at is not None:
            assert ob.opens_at is not None and ob.met_at >= ob.opens_at, ob
            assert ob.met_at <= now, ob


@settings(max_examples=80, deadline=None)
@given(st.datetimes(min_value=dt.datetime(2025, 1, 1), max_value=dt.datetime(2034, 12, 31),
                    timezones=st.just(ET)),
       st.sampled_from(["stabilization", "corrective_action"]))
def test_a_business_day_deadline_never_falls_on_a_weekend_or_a_holiday(found, kind) -> None:
    # CGP 2022 Part 5.2 (close of the next business day) and Part 2.2.14.a.i (end of the next work day).
    days_off = holidays_of(PROFILE)
    if kind == "corrective_action":
        facts = replace(permit(status="active", issued_at=found - dt.timedelta(days=30),
                               construction_started_at=found - dt.timedelta(days=1)),
                        corrective_actions=(CorrectiveAction(1, "routine_maintenance", found),))
    else:
        facts = replace(permit(status="active", issued_at=found - dt.timedelta(days=30),
                               construction_started_at=found - dt.timedelta(days=1)),
                        areas=(Area(1, "A", (AreaEvent("activity_ceased", found),)),))
    [ob] = [o for o in obligations(facts, PROFILE, found) if o.kind == kind]
    day = ob.due_at.astimezone(ET).date()
    assert is_business_day(day, days_off), (found, day)
    assert day > found.astimezone(ET).date()
    # ...and it is the first such day: every day between is a weekend or a holiday.
    between = found.astimezone(ET).date() + dt.timedelta(days=1)
    while between < day:
        assert not is_business_day(between, days_off), between
        between += dt.timedelta(days=1)
