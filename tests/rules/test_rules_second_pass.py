"""Clauses of the second pass over the law (issue 32): snowmelt, frozen conditions, waivers, storms on the 7-day
schedule, which reports have the 24-hour deadline, and corrective actions documented late."""
from __future__ import annotations

import datetime as dt

from tests.rules.rules_builders import THRESHOLD_MM, end_of, et, find, longmeadow, one, permit

from inspect_app.rules import (
    Area,
    AreaEvent,
    FrozenPeriod,
    Inspection,
    NoticeToCorrect,
    Report,
    SnowmeltDischarge,
    Storm,
    Structure,
    ViolationFinding,
    Waiver,
    obligations,
    schedule_in_force,
)

STARTED = et(2025, 12, 1, 8)  # a Monday
LONGMEADOW = longmeadow(waivers={"citation": "§380-8: the DPW Director may waive strict compliance"})
SNOW_MM = 3.25 * 25.4  # CGP 2022 Parts 4.2, 4.3: 3.25 in of snow within 24 hours


def active(**changes: object):
    return permit(**{"status": "active", "construction_started_at": STARTED, "issued_at": et(2025, 11, 3, 9),
                     **changes})


# -- snowmelt (CGP 2022 Parts 4.2, 4.3) --------------------------------------------------------------

def test_a_snowmelt_discharge_from_a_storm_of_3_25_in_of_snow_needs_an_inspection_within_24_hours() -> None:
    """CGP 2022 Parts 4.2-4.3 (snowmelt): "within 24 hours of the occurrence of ... a snowmelt discharge from a
    storm event that produces 3.25 inches or more of snow within a 24-hour period": the clock runs from the
    discharge, not from the snowfall."""
    melt = SnowmeltDischarge(at=et(2025, 12, 9, 13), snow_mm=SNOW_MM)
    facts = active(cgp_schedule="every_14_days_and_storm", snowmelts=(melt,))
    found = one(obligations(facts, LONGMEADOW, et(2025, 12, 9, 20)), "storm_inspection", f"snowmelt:{melt.at.isoformat()}")
    assert (found.status, found.opens_at, found.due_at) == ("due", melt.at, et(2025, 12, 10, 13))
    assert found.citation == "CGP 2022 Parts 4.2, 4.3"
    assert "3.25 in of snow" in found.reason and "within 24 hours of the discharge" in found.reason
    # An inspection before the discharge does not answer it; one after it does.
    before = Inspection(1, "erosion_control", et(2025, 12, 9, 9))
    after = Inspection(2, "erosion_control", et(2025, 12, 10, 10))
    done = one(obligations(active(cgp_schedule="every_14_days_and_storm", snowmelts=(melt,), inspections=(before, after)),
                           LONGMEADOW, et(2025, 12, 11)), "storm_inspection")
    assert (done.status, done.met_at) == ("met", after.at)


def test_snow_under_3_25_in_and_the_7_day_schedule_owe_no_snowmelt_inspection() -> None:
    less = SnowmeltDischarge(at=et(2025, 12, 9, 13), snow_mm=SNOW_MM - 1)
    assert find(obligations(active(cgp_schedule="every_14_days_and_storm", snowmelts=(less,)), LONGMEADOW,
                            et(2025, 12, 10)), "storm_inspection") == []
    enough = SnowmeltDischarge(at=et(2025, 12, 9, 13), snow_mm=SNOW_MM)
    assert find(obligations(active(snowmelts=(enough,)), LONGMEADOW, et(2025, 12, 10)), "storm_inspection") == []


def test_the_same_discharge_seen_on_site_and_by_the_station_is_one_and_the_earliest_moment_stands() -> None:
    station = SnowmeltDischarge(at=et(2025, 12, 9, 13), snow_mm=SNOW_MM)
    site = SnowmeltDischarge(at=et(2025, 12, 9, 16), snow_mm=SNOW_MM, seen_on_site=True)
    facts = active(cgp_schedule="every_14_days_and_storm", snowmelts=(site, station))
    found = find(obligations(facts, LONGMEADOW, et(2025, 12, 9, 20)), "storm_inspection")
    assert [(o.opens_at, o.due_at) for o in found] == [(station.at, et(2025, 12, 10, 13))]
    # Seen on site alone, a discharge the station missed still starts the clock.
    alone = one(obligations(active(sensitive_waters=True, snowmelts=(site,)), LONGMEADOW, et(2025, 12, 9, 20)),
                "storm_inspection")
    assert alone.due_at == et(2025, 12, 10, 16) and "seen on site" in alone.reason


# -- frozen conditions (CGP 2022 Part 4.4) ----------------------------------------------------------------

def test_frozen_with_construction_suspended_suspends_inspections_and_none_is_missed() -> None:
    """CGP 2022 Part 4.4 (frozen conditions): inspections may be suspended while construction is suspended in
    frozen conditions; no routine, storm or snowmelt inspection falls due in the period, and the schedule starts
    again when it ends."""
    last = Inspection(1, "erosion_control", et(2025, 12, 12, 10))  # a Friday
    frozen = FrozenPeriod(start=et(2025, 12, 15, 7), end=et(2026, 3, 16, 7), suspended=True)
    storm = Storm(start=et(2026, 1, 10, 1), reached_at=et(2026, 1, 10, 6), end=et(2026, 1, 10, 9), depth_mm=10.0)
    melt = SnowmeltDischarge(at=et(2026, 2, 2, 13), snow_mm=SNOW_MM)
    facts = active(cgp_schedule="every_14_days_and_storm", inspections=(last,), frozen_periods=(frozen,),
                   storms=(storm,), snowmelts=(melt,))
    found = obligations(facts, LONGMEADOW, et(2026, 3, 20))
    assert find(found, "storm_inspection") == []
    routine = find(found, "inspection")
    assert [(o.status, o.due_at) for o in routine] == [("met", end_of(2025, 12, 15)), ("due", end_of(2026, 3, 30))]
    assert "frozen conditions ended on Mon 16 Mar 2026" in routine[-1].reason
    assert [o.kind for o in found if o.status == "overdue"] == ["pre_construction"]  # before the frost
    # While it lasts (no end yet), nothing is due at all.
    ongoing = active(inspections=(last,), frozen_periods=(FrozenPeriod(start=frozen.start),))
    assert {o.status for o in find(obligations(ongoing, LONGMEADOW, et(2026, 2, 1)), "inspection")} == {"met"}
    in_force = schedule_in_force(ongoing, LONGMEADOW, et(2026, 2, 1))
    assert in_force.suspended and in_force.citation == "CGP 2022 Part 4.4"


def test_work_resumed_on_an_area_ends_a_suspension_for_frozen_conditions() -> None:
    last = Inspection(1, "erosion_control", et(2025, 12, 12, 10))
    frozen = FrozenPeriod(start=et(2025, 12, 15, 7), suspended=True)
    area = Area(3, "North slope", (AreaEvent("stabilized", et(2025, 12, 12, 15)), AreaEvent("disturbed", et(2026, 1, 5, 8))))
    found = find(obligations(active(inspections=(last,), frozen_periods=(frozen,), areas=(area,)), LONGMEADOW,
                             et(2026, 1, 20)), "inspection")
    resumed = [o for o in found if o.opens_at == et(2026, 1, 5, 8)]
    assert [(o.status, o.due_at) for o in resumed] == [("overdue", end_of(2026, 1, 12))]
    assert "frozen conditions ended on Mon 5 Jan 2026" in resumed[0].reason


def test_an_inspection_at_the_moment_a_suspension_ends_is_the_one_the_schedule_follows() -> None:
    """A suspension ends when its end is recorded (the end is not in it): an inspection made at that moment
    meets the obligation the thaw opens, and the next one runs from it, in the full view and the open-only one."""
    frozen = FrozenPeriod(start=et(2026, 1, 5, 7), end=et(2026, 1, 20, 9), suspended=True)
    facts = active(inspections=(Inspection(1, "erosion_control", frozen.end),), frozen_periods=(frozen,))
    routine = find(obligations(facts, LONGMEADOW, frozen.end), "inspection")
    thaw = [o for o in routine if o.opens_at == frozen.end]
    assert [(o.status, o.met_at) for o in thaw] == [("met", frozen.end), ("due", None)]
    assert "the last one was on Tue 20 Jan 2026" in thaw[-1].reason
    assert find(obligations(facts, LONGMEADOW, frozen.end, history=False), "inspection") == [thaw[-1]]


def test_frozen_with_work_going_on_drops_to_one_inspection_a_month_and_no_storm_inspections() -> None:
    last = Inspection(1, "erosion_control", et(2025, 12, 12, 10))
    frozen = FrozenPeriod(start=et(2025, 12, 12, 12), end=et(2026, 3, 1, 8), suspended=False)
    storm = Storm(start=et(2026, 1, 10, 1), reached_at=et(2026, 1, 10, 6), end=et(2026, 1, 10, 9), depth_mm=10.0)
    facts = active(cgp_schedule="every_14_days_and_storm", inspections=(last,), frozen_periods=(frozen,), storms=(storm,))
    found = obligations(facts, LONGMEADOW, et(2026, 1, 5))
    due = one([o for o in found if o.status != "met"], "inspection")
    assert (due.due_at, due.citation) == (end_of(2026, 1, 12), "CGP 2022 Part 4.4")
    assert "once a month" not in due.reason and "month while work goes on in frozen conditions" in due.reason
    assert find(obligations(facts, LONGMEADOW, et(2026, 1, 12)), "storm_inspection") == []


# -- waivers (§380-8) --------------------------------------------------------------------------------

def test_a_waived_requirement_stops_and_says_who_waived_it_when_and_why() -> None:
    """§380-8: "The DPW Director may waive strict compliance with any requirement of these rules and
    regulations"; the waiver stops the obligation from its grant, and is cited where the obligation is shown."""
    pipe = Structure(5, "Pipe run P-1")
    waiver = Waiver(1, "pre_bury", et(2025, 12, 3, 10), reason="Pipe laid in an open trench seen by the DPW",
                    granted_by="Dana Director", subject="structure:5")
    facts = active(structures=(pipe, Structure(6, "Basin B-1")), waivers=(waiver,))
    found = obligations(facts, LONGMEADOW, et(2025, 12, 10))
    waived = one(found, "pre_bury", "structure:5")
    assert waived.status == "waived"
    assert waived.citation == "§380-16 C(4)(c); waived under §380-8"
    assert waived.reason.endswith("Waived (§380-8) on Wed 3 Dec 2025 by Dana Director: Pipe laid in an open "
                                  "trench seen by the DPW.")
    assert one(found, "pre_bury", "structure:6").status == "due"  # the waiver names one structure
    assert find(obligations(facts, LONGMEADOW, et(2025, 12, 10), history=False), "pre_bury", "structure:5") == []


def test_a_waiver_does_not_reach_back_to_a_deadline_already_missed_nor_waive_a_federal_duty() -> None:
    backfilled = Structure(5, "Pipe run P-1", backfilled_at=et(2025, 12, 2, 15))
    late = Waiver(1, "pre_bury", et(2025, 12, 4, 10), reason="After the fact", granted_by="Dana Director")
    found = one(obligations(active(structures=(backfilled,), waivers=(late,)), LONGMEADOW, et(2025, 12, 10)), "pre_bury")
    assert found.status == "overdue" and "The deadline had passed before the waiver." in found.reason
    assert find(obligations(active(structures=(backfilled,), waivers=(late,)), LONGMEADOW, et(2025, 12, 10),
                            history=False), "pre_bury") == []
    # CGP inspections are federal: a waiver naming them is not honoured, and a town with no waiver clause has none.
    federal = Waiver(2, "inspection", et(2025, 12, 2, 10), reason="No")
    assert "waived" not in {o.status for o in obligations(active(waivers=(federal,)), LONGMEADOW, et(2025, 12, 20))}
    no_clause = longmeadow()
    assert one(obligations(active(structures=(Structure(5, "P-1"),), waivers=(Waiver(3, "pre_bury", et(2025, 12, 3)),)),
                           no_clause, et(2025, 12, 10)), "pre_bury").status == "due"


# -- §380-11 C(3)(f): storms on the 7-day schedule -----------------------------------------------------

def test_a_town_that_asks_for_an_inspection_after_any_storm_owes_it_on_the_7_day_schedule_too() -> None:
    """§380-11 C(3)(f): "Inspect stormwater controls at regular intervals and especially following any storm";
    with the stricter rule prevailing (§380-11 C(1)), a 7-day site owes the storm inspection as well."""
    storm = Storm(start=et(2025, 12, 10, 1), reached_at=et(2025, 12, 10, 6), end=et(2025, 12, 10, 9), depth_mm=THRESHOLD_MM)
    every = longmeadow(storm={"threshold_mm": THRESHOLD_MM, "citation": "CGP 2022 Part 4", "every_schedule": True,
                              "every_schedule_citation": "§380-11 C(3)(f): especially following any storm"})
    found = one(obligations(active(storms=(storm,)), every, et(2025, 12, 10, 12)), "storm_inspection")
    assert (found.status, found.due_at, found.citation) == ("due", et(2025, 12, 11, 6), "§380-11 C(3)(f)")
    assert find(obligations(active(storms=(storm,)), longmeadow(), et(2025, 12, 10, 12)), "storm_inspection") == []
    in_force = schedule_in_force(active(), every, et(2025, 12, 10))
    assert in_force.storms and in_force.citation == "CGP 2022 Part 4.2; §380-11 C(3)(f)"
    assert in_force.text == "At least every 7 calendar days, and within 24 hours of a storm of 0.25 in or more"


# -- CGP 2022 Part 4.7.1 and Part 5.4 -------------------------------------------------------------

def test_only_the_inspections_the_cgp_requires_have_the_24_hour_report_deadline() -> None:
    """CGP 2022 Part 4.7.1: the report of each inspection Part 4 requires; a final or pre-bury report is the
    town's, with no such deadline unless the profile gives it one."""
    drafts = tuple(Report(i, kind, et(2025, 12, 10, 9)) for i, kind in
                   enumerate(("erosion_control", "final", "pre_bury", "walk_through"), start=1))
    found = find(obligations(active(reports=drafts), LONGMEADOW, et(2025, 12, 12)), "report")
    assert [(o.subject, o.status) for o in found] == [("inspection:1", "overdue")]
    town = longmeadow(reporting={"report_inspection_types": ["erosion_control", "final"]})
    assert len(find(obligations(active(reports=drafts), town, et(2025, 12, 12)), "report")) == 2


def test_a_corrective_action_documented_late_shows_met_late_not_nothing() -> None:
    """CGP 2022 Part 5.4: the corrective action is documented within 24 hours of discovery; documented late,
    the obligation is met late and stays on the record (it used to vanish once an action was opened)."""
    found_at = et(2025, 12, 10, 9)
    late = ViolationFinding(8, found_at, "Silt fence down", documented_at=et(2025, 12, 12, 9))
    record = one(obligations(active(violation_findings=(late,)), LONGMEADOW, et(2025, 12, 20)), "corrective_action_record")
    assert (record.status, record.met_at, record.due_at, record.late) == ("met", late.documented_at, et(2025, 12, 11, 9), True)
    # The documented action carries the Part 5.2 deadline: the finding's own 7-day placeholder is gone.
    assert find(obligations(active(violation_findings=(late,)), LONGMEADOW, et(2025, 12, 20)), "corrective_action") == []
    on_time = ViolationFinding(9, found_at, "Inlet open", documented_at=et(2025, 12, 10, 15))
    assert not one(obligations(active(violation_findings=(on_time,)), LONGMEADOW, et(2025, 12, 20)),
                   "corrective_action_record").late
    # Before it was documented, as of then, it was overdue.
    assert one(obligations(active(violation_findings=(late,)), LONGMEADOW, et(2025, 12, 11, 20)),
               "corrective_action_record").status == "overdue"
    assert dt.timedelta(hours=24) == record.due_at - found_at


# -- town policy switches (values a town's text does not give) -------------------------------------------

def test_what_a_town_policy_requires_is_cited_as_the_towns_policy_not_its_regulation() -> None:
    completed = permit(status="completed", construction_started_at=et(2024, 5, 1, 8), completed_at=et(2024, 6, 3, 12),
                       notices_to_correct=(NoticeToCorrect(1, et(2025, 7, 1, 9)),))
    policy = longmeadow(om_certification={"months": 12, "citation": "§7.6 d)(6): log sheets", "basis": "policy"},
                        cure_period={"days": 30, "citation": "§6.3: no cure period", "basis": "policy"})
    cited = {o.kind: o.citation for o in obligations(completed, policy, et(2025, 8, 1))}
    assert cited["om_certification"] == "§7.6 d)(6), town policy" and cited["cure"] == "§6.3, town policy"
    regulation = {o.kind: o.citation for o in obligations(completed, longmeadow(), et(2025, 8, 1))}
    assert "policy" not in regulation["cure"]
    # §380-14 C(2)(l) sets no deadline to file the certification: the 30 days after the year are the town's policy.
    assert regulation["om_certification"] == "§380-14 C(2)(l); 30 days to file, town policy"


def test_a_town_policy_switched_off_owes_nothing_under_it() -> None:
    completed = permit(status="completed", construction_started_at=et(2024, 5, 1, 8), completed_at=et(2024, 6, 3, 12),
                       notices_to_correct=(NoticeToCorrect(1, et(2025, 7, 1, 9)),))
    policy = longmeadow(om_certification={"months": 12, "citation": "Town's policy", "basis": "policy"},
                        cure_period={"days": 30, "citation": "Town's policy", "basis": "policy"})
    kinds = {o.kind for o in obligations(completed, policy, et(2025, 8, 1))}
    assert {"om_certification", "cure"} <= kinds
    off = longmeadow(om_certification={"months": 12, "citation": "Town's policy", "basis": "policy", "enabled": False},
                     cure_period={"days": 30, "citation": "Town's policy", "basis": "policy", "enabled": False})
    assert not {"om_certification", "cure"} & {o.kind for o in obligations(completed, off, et(2025, 8, 1))}
