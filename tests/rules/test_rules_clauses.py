"""Clause by clause: each rule with its own numbers (stabilization, business days, corrective actions,
permit clocks, O&M periods)."""
from __future__ import annotations

import datetime as dt

import pytest
from tests.rules.rules_builders import end_of, et, find, longmeadow, one, permit, southborough

from inspect_app.rules import Area, AreaEvent, CorrectiveAction, Inspection, Report, Storm, ViolationFinding, obligations

STARTED = et(2025, 6, 2, 8)  # a Monday
LONGMEADOW = longmeadow()
# A town with no stabilization rule of its own: the CGP governs.
CGP_ONLY = longmeadow(key="cgp_only", stabilization={"citation": "CGP 2022 Part 2.2.14 (town rule silent)"})


def active(**changes: object):
    return permit(**{"status": "active", "construction_started_at": STARTED, **changes})


def area(*events: tuple[str, dt.datetime]) -> Area:
    return Area(3, "North slope", tuple(AreaEvent(status, at) for status, at in events))


# (case, profile, sensitive, events, now, kind, status, due, met, citation)
STABILIZATION = [
    # CGP 2.2.14.a.i: ceased on a Friday, initiate by the end of Monday (the next work day).
    ("initiate after a weekend", CGP_ONLY, False, [("activity_ceased", et(2025, 6, 6, 15))], et(2025, 6, 9, 12),
     "stabilization", "due", end_of(2025, 6, 9), None, "CGP 2022 Part 2.2.14.a.i"),
    # Ceased Thursday 3 Jul 2025; Friday 4 July is a legal holiday: the next work day is Monday 7 July.
    ("initiate after a holiday", CGP_ONLY, False, [("activity_ceased", et(2025, 7, 3, 15))], et(2025, 7, 5),
     "stabilization", "due", end_of(2025, 7, 7), None, "CGP 2022 Part 2.2.14.a.i"),
    # Initiated in time on Tue 3 Jun: complete within 14 days of that (CGP 2.2.14.a.ii).
    ("complete 14 days after initiation", CGP_ONLY, False,
     [("activity_ceased", et(2025, 6, 2, 15)), ("stabilization_initiated", et(2025, 6, 3, 9))], et(2025, 6, 10),
     "stabilization_complete", "due", end_of(2025, 6, 17), None, "CGP 2022 Part 2.2.14.a.ii"),
    ("complete 7 days after initiation on sensitive waters", CGP_ONLY, True,
     [("activity_ceased", et(2025, 6, 2, 15)), ("stabilization_initiated", et(2025, 6, 3, 9))], et(2025, 6, 11),
     "stabilization_complete", "overdue", end_of(2025, 6, 10), None, "CGP 2022 Part 2.2.14.a.ii"),
    # Longmeadow: 7 days after ceasing (§380-11 C(3)(a)) is stricter than 14 after initiation: it prevails
    # (§380-11 C(1)).
    ("town stricter prevails", LONGMEADOW, False,
     [("activity_ceased", et(2025, 6, 2, 15)), ("stabilization_initiated", et(2025, 6, 3, 9))], et(2025, 6, 10),
     "stabilization_complete", "overdue", end_of(2025, 6, 9), None, "§380-11 C(3)(a)"),
    # Initiated only: the completion obligation is not met by initiation.
    ("initiated is not stabilized", LONGMEADOW, False,
     [("activity_ceased", et(2025, 6, 2, 15)), ("stabilization_initiated", et(2025, 6, 3, 9))], et(2025, 6, 3, 10),
     "stabilization", "met", end_of(2025, 6, 3), et(2025, 6, 3, 9), "CGP 2022 Part 2.2.14.a.i"),
    ("stabilized meets completion", LONGMEADOW, False,
     [("activity_ceased", et(2025, 6, 2, 15)), ("stabilization_initiated", et(2025, 6, 3, 9)),
      ("stabilized", et(2025, 6, 8, 9))], et(2025, 6, 20),
     "stabilization_complete", "met", end_of(2025, 6, 9), et(2025, 6, 8, 9), "§380-11 C(3)(a)"),
    # Stabilized late: met, and late stays late on the record.
    ("late stays late", LONGMEADOW, False,
     [("activity_ceased", et(2025, 6, 2, 15)), ("stabilization_initiated", et(2025, 6, 5, 9)),
      ("stabilized", et(2025, 6, 12, 9))], et(2025, 6, 20),
     "stabilization_complete", "met", end_of(2025, 6, 9), et(2025, 6, 12, 9), "§380-11 C(3)(a)"),
    # Idle 14 days or more, then disturbed again with the initiation deadline passed unmet: that stays overdue.
    ("redisturbed late stays overdue", LONGMEADOW, False,
     [("activity_ceased", et(2025, 6, 2, 15)), ("disturbed", et(2025, 6, 17, 9))], et(2025, 6, 20),
     "stabilization", "overdue", end_of(2025, 6, 3), None, "CGP 2022 Part 2.2.14.a.i"),
]


@pytest.mark.parametrize("case", STABILIZATION, ids=[c[0] for c in STABILIZATION])
def test_stabilization_is_initiated_then_completed(case) -> None:
    _, profile, sensitive, events, now, kind, status, due, met, citation = case
    facts = active(areas=(area(*events),), sensitive_waters=sensitive)
    found = one(obligations(facts, profile, now), kind, "area:3")
    assert (found.status, found.due_at, found.met_at, found.citation) == (status, due, met, citation)
    if met is not None and met > due:
        assert found.late


def test_disturbing_an_area_again_in_time_stops_both_clocks() -> None:
    facts = active(areas=(area(("activity_ceased", et(2025, 6, 2, 15)), ("disturbed", et(2025, 6, 3, 9))),))
    found = obligations(facts, LONGMEADOW, et(2025, 7, 1))
    assert find(found, "stabilization") == [] and find(found, "stabilization_complete") == []


def test_work_resumed_within_14_days_owed_no_initiation_under_the_cgp() -> None:
    """CGP 2022 Part 2.2.14.a.i: stabilization is owed where earth-disturbing activities "have permanently ceased
    or will be temporarily inactive for 14 or more calendar days". Work back on the area after 3 days, past the
    next-work-day deadline, owed no initiation; the town's own 7 days still count (§380-11 C(3)(a), stricter)."""
    ceased, back = et(2025, 6, 2, 15), et(2025, 6, 5, 9)
    facts = active(areas=(area(("activity_ceased", ceased), ("disturbed", back)),))
    for profile in (CGP_ONLY, LONGMEADOW):
        found = obligations(facts, profile, et(2025, 6, 20))
        assert find(found, "stabilization") == [] and find(found, "stabilization_complete") == []
    # The town's seven days ran out before the work resumed on day 10: that stays on Longmeadow's record.
    late = active(areas=(area(("activity_ceased", ceased), ("disturbed", et(2025, 6, 12, 9))),))
    assert find(obligations(late, CGP_ONLY, et(2025, 6, 20)), "stabilization") == []
    town = one(obligations(late, LONGMEADOW, et(2025, 6, 20)), "stabilization_complete")
    assert (town.status, town.due_at, town.citation) == ("overdue", end_of(2025, 6, 9), "§380-11 C(3)(a)")
    # 14 days idle or more: the initiation was owed.
    idle = active(areas=(area(("activity_ceased", ceased), ("disturbed", et(2025, 6, 16, 16))),))
    assert one(obligations(idle, CGP_ONLY, et(2025, 6, 20)), "stabilization").status == "overdue"


def test_the_completion_deadline_of_a_late_start_runs_from_when_it_should_have_started() -> None:
    facts = active(areas=(area(("activity_ceased", et(2025, 6, 2, 15)), ("stabilization_initiated", et(2025, 6, 6, 9))),))
    found = one(obligations(facts, CGP_ONLY, et(2025, 6, 7)), "stabilization_complete")
    assert found.due_at == end_of(2025, 6, 17)  # 14 days after Tue 3 Jun, not after Fri 6 Jun
    assert one(obligations(facts, CGP_ONLY, et(2025, 6, 7)), "stabilization").late


@pytest.mark.parametrize(("found", "due"), [
    (et(2028, 4, 14, 10), et(2028, 4, 18, 16, 30)),  # Friday before Patriots' Day 2028 (Mon 17 Apr)
    (et(2031, 12, 24, 10), et(2031, 12, 26, 16, 30)),  # Christmas 2031, a Thursday
])
def test_routine_maintenance_skips_massachusetts_holidays_every_year_and_closes_at_the_town_hour(found, due) -> None:
    profile = longmeadow(close_of_business="16:30:00")
    action = CorrectiveAction(1, "routine_maintenance", found)
    got = one(obligations(active(corrective_actions=(action,)), profile, found), "corrective_action")
    assert got.due_at == due and "4:30 p.m." in got.reason


def test_a_town_day_off_in_the_profile_is_not_a_business_day() -> None:
    profile = longmeadow(holidays=[dt.date(2025, 8, 15)])  # a Friday the town closes
    action = CorrectiveAction(1, "routine_maintenance", et(2025, 8, 14, 10))
    got = one(obligations(active(corrective_actions=(action,)), profile, et(2025, 8, 14, 11)), "corrective_action")
    assert got.due_at == et(2025, 8, 18, 17)


def test_a_violation_without_an_action_is_owed_from_its_discovery() -> None:
    """§380-16 C(4)(f)[2]: the applicant "shall promptly correct any portion of the work that does not comply";
    the CGP's 7 calendar days from discovery are how prompt."""
    finding = ViolationFinding(8, et(2025, 6, 10, 9), "Silt fence down")
    facts = active(violation_findings=(finding,))
    due = one(obligations(facts, LONGMEADOW, et(2025, 6, 12)), "corrective_action", "finding:8")
    assert (due.status, due.due_at, due.citation) == ("due", end_of(2025, 6, 17), "CGP 2022 Part 5.2")
    late = one(obligations(facts, LONGMEADOW, et(2025, 6, 18)), "corrective_action", "finding:8")
    assert late.status == "overdue" and "Silt fence down" in late.reason


# -- permit clocks -------------------------------------------------------------------------------------

def test_work_begun_after_the_lapse_is_a_violation_not_a_late_start() -> None:
    # §9.7: lapses three years after the decision; work on 2 May 2027 began a day after it lapsed.
    facts = permit(issued_at=et(2024, 5, 1, 10), status="active", construction_started_at=et(2027, 5, 2, 8))
    found = one(obligations(facts, southborough(), et(2027, 6, 1)), "lapse")
    assert (found.status, found.met_at, found.due_at) == ("overdue", None, end_of(2027, 5, 1))
    assert "without a permit, a violation" in found.reason
    in_time = one(obligations(permit(issued_at=et(2024, 5, 1, 10), status="active",
                                     construction_started_at=et(2027, 5, 1, 8)), southborough(), et(2027, 6, 1)), "lapse")
    assert (in_time.status, in_time.late) == ("met", False)


def test_the_lapse_counts_from_the_decision_filed_with_the_town_clerk() -> None:
    facts = permit(issued_at=et(2024, 5, 1, 10), decision_filed_at=et(2024, 5, 20, 9))
    found = one(obligations(facts, southborough(), et(2027, 5, 10)), "lapse")
    assert (found.status, found.due_at) == ("due", end_of(2027, 5, 20))
    request = one(obligations(facts, southborough(), et(2027, 4, 1)), "extension_request")
    assert request.due_at == end_of(2027, 4, 20)  # 30 days before the lapse


def test_a_granted_extension_moves_longmeadows_start_deadline() -> None:
    # §380-10 K: begin within two years, unless the DPW Director grants an extension.
    facts = permit(issued_at=et(2025, 3, 10, 10), extension_granted_at=et(2027, 2, 1, 9),
                   start_extended_to=et(2027, 9, 30))
    found = one(obligations(facts, LONGMEADOW, et(2027, 4, 1)), "start_of_work")
    assert (found.status, found.due_at) == ("due", end_of(2027, 9, 30)) and "extended to" in found.reason
    # Not granted yet (only a date typed in): the two years stand.
    plain = one(obligations(permit(issued_at=et(2025, 3, 10, 10), start_extended_to=et(2027, 9, 30)), LONGMEADOW,
                            et(2027, 4, 1)), "start_of_work")
    assert (plain.status, plain.due_at) == ("overdue", end_of(2027, 3, 10))


# -- reports and corrective-action records (CGP 2022 Parts 4.7.1, 5.4) -----------------------------

def test_a_draft_report_is_due_within_24_hours_of_its_inspection() -> None:
    draft = Report(4, "erosion_control", et(2025, 6, 10, 9))
    found = one(obligations(active(reports=(draft,)), LONGMEADOW, et(2025, 6, 10, 20)), "report")
    assert (found.status, found.due_at, found.citation) == ("due", et(2025, 6, 11, 9), "CGP 2022 Part 4.7.1")
    assert one(obligations(active(reports=(draft,)), LONGMEADOW, et(2025, 6, 11, 10)), "report").status == "overdue"
    late = Report(4, "erosion_control", et(2025, 6, 10, 9), submitted_at=et(2025, 6, 12, 9))
    signed = one(obligations(active(reports=(late,)), LONGMEADOW, et(2025, 6, 20)), "report")
    assert (signed.status, signed.late) == ("met", True)


def test_a_violation_needs_its_corrective_action_documented_within_24_hours() -> None:
    facts = active(violation_findings=(ViolationFinding(8, et(2025, 6, 10, 9), "Silt fence down"),))
    found = one(obligations(facts, LONGMEADOW, et(2025, 6, 11, 10)), "corrective_action_record")
    assert (found.status, found.due_at, found.citation) == ("overdue", et(2025, 6, 11, 9), "CGP 2022 Part 5.4")


# -- erosion-control inspections (§380-11 C(3)(f), §380-16 C(4)(b)[1]) -----------------------------

def test_longmeadow_controls_are_inspected_before_the_start_then_at_regular_intervals_and_after_a_storm() -> None:
    """§380-16 C(4)(b)[1]: controls "inspected before the start of construction", then "based on the frequencies
    articulated in Section 4" of the CGP; §380-11 C(3)(f): "at regular intervals and especially following any
    storm"."""
    not_started = permit(issued_at=et(2025, 5, 20, 10))
    before = one(obligations(not_started, LONGMEADOW, et(2025, 5, 28)), "pre_construction")
    assert (before.status, before.due_at) == ("due", None)
    early = Inspection(1, "erosion_control", et(2025, 5, 30, 10))
    met = one(obligations(active(issued_at=et(2025, 5, 20, 10), inspections=(early,)), LONGMEADOW, et(2025, 6, 3)),
              "pre_construction")
    assert (met.status, met.met_at) == ("met", early.at)
    last = Inspection(2, "erosion_control", et(2025, 6, 6, 10))  # a Friday
    weekly = find(obligations(active(inspections=(last,)), LONGMEADOW, et(2025, 6, 10)), "inspection")
    assert [(o.status, o.due_at) for o in weekly] == [("met", end_of(2025, 6, 9)), ("due", end_of(2025, 6, 13))]
    storm = Storm(start=et(2025, 6, 10, 22), reached_at=et(2025, 6, 11, 3), end=et(2025, 6, 11, 3), depth_mm=7.0)
    facts = active(cgp_schedule="every_14_days_and_storm", inspections=(last,), storms=(storm,))
    after_storm = one(obligations(facts, LONGMEADOW, et(2025, 6, 11, 9)), "storm_inspection")
    assert (after_storm.status, after_storm.due_at) == ("due", et(2025, 6, 12, 3))
    assert find(obligations(facts, LONGMEADOW, et(2025, 6, 11, 9)), "inspection")[-1].due_at == end_of(2025, 6, 20)
