"""One case per rule: the engine reports what the regulation requires, by the date it requires it."""
from __future__ import annotations

import ast
import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from tests.rules.rules_builders import ET, end_of, et, find, longmeadow, one, permit, southborough

from inspect_app.profiles.schema import Profile
from inspect_app.rules import (
    Area,
    AreaEvent,
    CorrectiveAction,
    FactsError,
    Inspection,
    NoticeToCorrect,
    PermitFacts,
    StopWorkOrder,
    Storm,
    Structure,
    obligations,
)

LONGMEADOW = longmeadow()
SOUTHBOROUGH = southborough()
STARTED = et(2025, 6, 2, 8)  # a Monday


def active(**changes: object) -> PermitFacts:
    """A Longmeadow permit whose construction started on Mon 2 Jun 2025, 8 a.m."""
    return permit(**{"status": "active", "construction_started_at": STARTED, **changes})


def storm_day(year: int, month: int, day: int, mm: float) -> Storm:
    """Rain over one Massachusetts calendar day."""
    start = et(year, month, day)
    return Storm(start=start, end=et(*(dt.date(year, month, day) + dt.timedelta(days=1)).timetuple()[:3]), depth_mm=mm)


@dataclass(frozen=True)
class Case:
    citation: str
    profile: Profile
    facts: PermitFacts
    now: dt.datetime
    kind: str
    subject: str
    status: str
    due_at: dt.datetime | None
    cited: str | None = None  # what the obligation cites, where more than the clause (a town policy beside it)


CASES = [
    Case("§380-10 K", LONGMEADOW, permit(issued_at=et(2025, 3, 10, 10)), et(2027, 3, 11, 9),
         "start_of_work", "permit:1", "overdue", end_of(2027, 3, 10)),
    Case("§9.7", SOUTHBOROUGH, permit(issued_at=et(2024, 5, 1, 10)), et(2027, 3, 1),
         "lapse", "permit:1", "due", end_of(2027, 5, 1)),
    Case("§9.7", SOUTHBOROUGH, permit(issued_at=et(2024, 5, 1, 10)), et(2027, 4, 2),
         "extension_request", "permit:1", "overdue", end_of(2027, 4, 1)),
    Case("§380-16 C(4)(b)", LONGMEADOW, permit(), et(2025, 4, 1),
         "pre_construction", "permit:1", "due", None),
    Case("CGP 2022 Part 4.2", LONGMEADOW,
         active(inspections=(Inspection(1, "erosion_control", et(2025, 6, 6, 10)),)), et(2025, 6, 10),
         "inspection", "permit:1", "due", end_of(2025, 6, 13)),
    Case("CGP 2022 Part 4.2", LONGMEADOW,
         active(cgp_schedule="every_14_days_and_storm", storms=(storm_day(2025, 6, 10, 10.0),)), et(2025, 6, 11, 3),
         "storm_inspection", f"storm:{et(2025, 6, 10).isoformat()}", "due", et(2025, 6, 12)),
    Case("CGP 2022 Part 4.3", LONGMEADOW,
         active(sensitive_waters=True, storms=(storm_day(2025, 6, 10, 7.0),)), et(2025, 6, 12, 1),
         "storm_inspection", f"storm:{et(2025, 6, 10).isoformat()}", "overdue", et(2025, 6, 12)),
    Case("CGP 2022 Part 4.4", LONGMEADOW,
         active(areas=(Area(1, "North slope", (AreaEvent("disturbed", et(2025, 6, 2, 9)),
                                                AreaEvent("stabilized", et(2025, 6, 20, 12)))),),
                inspections=(Inspection(1, "erosion_control", et(2025, 6, 23, 10)),)), et(2025, 7, 1),
         "inspection", "permit:1", "due", end_of(2025, 7, 23)),
    # Ceased on Thursday: initiate by the end of Friday (the next work day)...
    Case("CGP 2022 Part 2.2.14.a.i", LONGMEADOW,
         active(areas=(Area(3, "North slope", (AreaEvent("disturbed", et(2025, 6, 2, 9)),
                                                AreaEvent("activity_ceased", et(2025, 6, 5, 15)))),)), et(2025, 6, 6),
         "stabilization", "area:3", "due", end_of(2025, 6, 6)),
    # ...and complete within Longmeadow's 7 days of ceasing, stricter than the CGP's 14 after initiation.
    Case("§380-11 C(3)(a)", LONGMEADOW,
         active(areas=(Area(3, "North slope", (AreaEvent("disturbed", et(2025, 6, 2, 9)),
                                                AreaEvent("activity_ceased", et(2025, 6, 5, 15)))),)), et(2025, 6, 9),
         "stabilization_complete", "area:3", "due", end_of(2025, 6, 12)),
    # Friday 4 July 2025 is a holiday: routine maintenance found on the Thursday waits for Monday 5 p.m.
    Case("CGP 2022 Part 5.2", LONGMEADOW,
         active(corrective_actions=(CorrectiveAction(9, "routine_maintenance", et(2025, 7, 3, 14)),)), et(2025, 7, 5),
         "corrective_action", "corrective_action:9", "due", et(2025, 7, 7, 17)),
    Case("CGP 2022 Part 5.2", LONGMEADOW,
         active(corrective_actions=(CorrectiveAction(9, "significant_repair", et(2025, 7, 3, 14)),)), et(2025, 7, 11),
         "corrective_action", "corrective_action:9", "overdue", end_of(2025, 7, 10)),
    Case("§380-16 C(4)(c)", LONGMEADOW,
         active(structures=(Structure(5, "Infiltration chamber 1", backfilled_at=et(2025, 7, 1, 11)),)), et(2025, 7, 2),
         "pre_bury", "structure:5", "overdue", et(2025, 7, 1, 11)),
    Case("§380-16 C(4)(d)", LONGMEADOW,
         active(inspections=(Inspection(7, "final", et(2025, 9, 2, 10)),)), et(2025, 9, 3),
         "walk_through", "permit:1", "overdue", et(2025, 9, 2, 10)),
    Case("§380-14 C(2)(l)", LONGMEADOW,
         active(status="completed", completed_at=et(2026, 1, 31, 12)), et(2027, 3, 3, 9),
         "om_certification", "om_certification:1", "overdue", end_of(2027, 3, 2),
         # The clause sets no deadline to file: the 30 days are the town's policy.
         "§380-14 C(2)(l); 30 days to file, town policy"),
    Case("§380-14 E", LONGMEADOW,
         active(notices_to_correct=(NoticeToCorrect(2, et(2025, 9, 1, 9)),)), et(2025, 9, 15),
         "cure", "notice_to_correct:2", "due", end_of(2025, 10, 1)),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.citation} {c.kind}" for c in CASES])
def test_each_rule_falls_due_when_the_regulation_says(case: Case) -> None:
    # The latest deadline of its kind: for routine inspections, the one after the last inspection.
    found = find(obligations(case.facts, case.profile, case.now), case.kind, case.subject)[-1]
    assert (found.status, found.due_at, found.citation) == (case.status, case.due_at, case.cited or case.citation)
    assert found.reason.endswith(".") and len(found.reason.split()) >= 6


def test_a_rule_that_was_met_says_when() -> None:
    facts = permit(construction_started_at=et(2026, 2, 10, 8), status="active")
    found = one(obligations(facts, LONGMEADOW, et(2026, 3, 1)), "start_of_work")
    assert (found.status, found.met_at, found.late) == ("met", et(2026, 2, 10, 8), False)


def test_missed_weekly_inspections_each_fall_due_seven_days_after_the_last() -> None:
    found = find(obligations(active(), LONGMEADOW, et(2025, 6, 20, 12)), "inspection")
    assert [(o.due_at, o.status) for o in found] == [
        (end_of(2025, 6, 9), "overdue"), (end_of(2025, 6, 16), "overdue"), (end_of(2025, 6, 23), "due")]
    late = Inspection(1, "erosion_control", et(2025, 6, 18, 9))
    after = find(obligations(active(inspections=(late,)), LONGMEADOW, et(2025, 6, 20, 12)), "inspection")
    assert [(o.status, o.met_at, o.late) for o in after[:2]] == [("met", late.at, True), ("met", late.at, True)]
    assert (after[2].status, after[2].due_at) == ("met", end_of(2025, 6, 23))
    assert (after[3].status, after[3].due_at) == ("due", end_of(2025, 6, 25))


def test_a_week_across_the_march_clock_change_is_seven_calendar_days() -> None:
    # Sat 8 Mar 2025 10 a.m. EST; clocks spring forward on Sun 9 Mar.
    facts = permit(status="active", construction_started_at=et(2025, 3, 3, 8),
                   inspections=(Inspection(1, "erosion_control", et(2025, 3, 8, 10)),))
    due = find(obligations(facts, LONGMEADOW, et(2025, 3, 12)), "inspection")[-1].due_at
    assert due is not None
    local = due.astimezone(ET)
    assert (local.date(), local.hour, local.minute, local.utcoffset()) == (
        dt.date(2025, 3, 15), 23, 59, dt.timedelta(hours=-4))


def test_stabilization_across_the_november_clock_change_ends_at_local_midnight() -> None:
    area = Area(1, "Stockpile", (AreaEvent("activity_ceased", et(2025, 10, 30, 16)),))
    found = one(obligations(active(areas=(area,)), LONGMEADOW, et(2025, 11, 3)), "stabilization_complete")
    assert found.due_at is not None
    local = found.due_at.astimezone(ET)
    assert (local.date(), local.hour, local.utcoffset()) == (dt.date(2025, 11, 6), 23, dt.timedelta(hours=-5))


def test_routine_maintenance_found_on_a_friday_before_a_holiday_monday_waits_for_tuesday() -> None:
    profile = longmeadow()  # Mon 13 Oct 2025 is Columbus Day, a Massachusetts legal holiday
    action = CorrectiveAction(1, "routine_maintenance", et(2025, 10, 10, 15))
    found = one(obligations(active(corrective_actions=(action,)), profile, et(2025, 10, 11)), "corrective_action")
    assert found.due_at == et(2025, 10, 14, 17)


def test_a_storm_during_a_stop_work_order_still_needs_an_inspection() -> None:
    facts = active(status="stop_work", cgp_schedule="every_14_days_and_storm",
                   stop_work_orders=(StopWorkOrder(1, et(2025, 6, 9, 10)),), storms=(storm_day(2025, 6, 10, 12.7),))
    found = one(obligations(facts, LONGMEADOW, et(2025, 6, 11, 9)), "storm_inspection")
    assert (found.status, found.due_at) == ("due", et(2025, 6, 12))
    assert "stop-work order" in found.reason and "0.50 in" in found.reason


def test_a_multi_day_storm_needs_an_inspection_after_it_reached_the_threshold_and_after_its_end() -> None:
    # CGP 2022 Part 4.2: rain from 10 June 6 a.m. reached 0.25 in at 2 p.m. and went on until 12 June 8 p.m.
    storm = Storm(start=et(2025, 6, 10, 6), reached_at=et(2025, 6, 10, 14), end=et(2025, 6, 12, 20),
                  depth_mm=27.0, multi_day=True)
    during = Inspection(1, "erosion_control", et(2025, 6, 11, 13))
    facts = active(cgp_schedule="every_14_days_and_storm", storms=(storm,), inspections=(during,))
    found = find(obligations(facts, LONGMEADOW, et(2025, 6, 13, 9)), "storm_inspection")
    assert [(o.opens_at, o.due_at, o.status, o.met_at) for o in found] == [
        (et(2025, 6, 10, 14), et(2025, 6, 11, 14), "met", during.at),
        (et(2025, 6, 12, 20), et(2025, 6, 13, 20), "due", None)]
    assert "ended Thu 12 Jun 2025 at 8:00 p.m." in found[1].reason and "1.06 in" in found[1].reason


def test_only_an_inspection_at_or_after_the_moment_answers_a_storm() -> None:
    storm = Storm(start=et(2025, 6, 10, 22), reached_at=et(2025, 6, 11, 3), end=et(2025, 6, 11, 3), depth_mm=7.0)
    before = Inspection(1, "erosion_control", et(2025, 6, 11, 2, 30))
    facts = active(cgp_schedule="every_14_days_and_storm", storms=(storm,), inspections=(before,))
    found = one(obligations(facts, LONGMEADOW, et(2025, 6, 11, 9)), "storm_inspection")
    assert (found.opens_at, found.due_at, found.status) == (et(2025, 6, 11, 3), et(2025, 6, 12, 3), "due")
    assert "at Wed 11 Jun 2025 at 3:00 a.m." in found.reason
    after = Inspection(2, "erosion_control", et(2025, 6, 11, 3))
    met = one(obligations(replace(facts, inspections=(before, after)), LONGMEADOW, et(2025, 6, 11, 9)),
              "storm_inspection")
    assert (met.status, met.met_at) == ("met", after.at)


def test_a_gauge_reading_and_the_station_reading_of_the_same_rain_are_one_storm() -> None:
    station = Storm(start=et(2025, 6, 10, 6), reached_at=et(2025, 6, 10, 14), end=et(2025, 6, 10, 16), depth_mm=7.0)
    gauge = Storm(start=et(2025, 6, 9, 17), reached_at=et(2025, 6, 10, 17), end=et(2025, 6, 10, 17), depth_mm=9.0)
    facts = active(cgp_schedule="every_14_days_and_storm", storms=(gauge, station))
    found = one(obligations(facts, LONGMEADOW, et(2025, 6, 10, 18)), "storm_inspection")
    assert (found.opens_at, found.due_at) == (et(2025, 6, 10, 14), et(2025, 6, 11, 14))
    assert "0.35 in" in found.reason


def test_a_quarter_inch_makes_an_inspection_and_024_inch_makes_nothing() -> None:
    def storm_items(mm: float) -> list:
        facts = active(cgp_schedule="every_14_days_and_storm", storms=(storm_day(2025, 6, 10, mm),))
        return find(obligations(facts, LONGMEADOW, et(2025, 6, 11)), "storm_inspection")

    assert len(storm_items(0.25 * 25.4)) == 1
    assert storm_items(0.24 * 25.4) == []


def test_a_weekly_site_not_on_sensitive_waters_needs_no_storm_inspection() -> None:
    facts = active(storms=(storm_day(2025, 6, 10, 30.0),))
    assert find(obligations(facts, LONGMEADOW, et(2025, 6, 11)), "storm_inspection") == []


def test_inspections_stop_at_the_certificate_of_completion() -> None:
    facts = active(status="completed", completed_at=et(2025, 6, 6, 12),
                   inspections=(Inspection(1, "erosion_control", et(2025, 6, 5, 9)),))
    items = obligations(facts, LONGMEADOW, et(2025, 8, 1))
    assert [o.status for o in find(items, "inspection")] == ["met"]
    # §380-14 C(2)(l): certified once the 12 months are over, within the profile's 30 days.
    upcoming = one(items, "om_certification")
    assert (upcoming.status, upcoming.opens_at, upcoming.due_at) == ("upcoming", end_of(2026, 6, 5), end_of(2026, 7, 6))
    assert [o for o in obligations(facts, LONGMEADOW, et(2025, 8, 1), history=False) if o.kind == "inspection"] == []


def test_an_om_certification_meets_its_year_only_once_the_year_is_over() -> None:
    # §380-14 C(2)(l): it documents the work "over the last 12 months".
    early = active(status="completed", completed_at=et(2025, 6, 6, 12), om_certifications=(et(2026, 5, 20, 9),))
    found = find(obligations(early, LONGMEADOW, et(2026, 7, 1)), "om_certification")
    assert [(o.status, o.met_at) for o in found] == [("due", None), ("upcoming", None)]
    after = active(status="completed", completed_at=et(2025, 6, 6, 12), om_certifications=(et(2026, 6, 10, 9),))
    found = find(obligations(after, LONGMEADOW, et(2026, 7, 1)), "om_certification")
    assert [(o.status, o.met_at) for o in found] == [("met", et(2026, 6, 10, 9)), ("upcoming", None)]


def test_work_begun_in_time_needs_no_extension_and_does_not_lapse() -> None:
    facts = permit(issued_at=et(2024, 5, 1, 10), status="active", construction_started_at=et(2025, 4, 1, 8))
    items = obligations(facts, SOUTHBOROUGH, et(2027, 6, 1))
    assert find(items, "extension_request") == []
    assert one(items, "lapse").status == "met"


def test_a_granted_extension_moves_the_lapse_a_year() -> None:
    facts = permit(issued_at=et(2024, 5, 1, 10), extension_requested_at=et(2027, 3, 1, 9),
                   extension_granted_at=et(2027, 3, 20, 9))
    items = obligations(facts, SOUTHBOROUGH, et(2027, 6, 1))
    assert (one(items, "lapse").status, one(items, "lapse").due_at) == ("due", end_of(2028, 5, 1))
    assert one(items, "extension_request").status == "met"


def test_pre_bury_is_upcoming_until_construction_starts_and_met_by_its_inspection() -> None:
    buried = Structure(5, "Infiltration chamber 1", et(2025, 7, 2, 9), pre_bury_inspected_at=et(2025, 7, 1, 14))
    waiting = Structure(6, "Outlet pipe", None, None)
    assert one(obligations(permit(structures=(waiting,)), LONGMEADOW, et(2025, 4, 1)), "pre_bury").status == "upcoming"
    items = obligations(active(structures=(buried, waiting)), LONGMEADOW, et(2025, 7, 3))
    assert (one(items, "pre_bury", "structure:5").status, one(items, "pre_bury", "structure:6").status) == ("met", "due")


def test_nothing_is_due_before_the_permit_is_issued() -> None:
    assert obligations(permit(issued_at=et(2025, 5, 1)), LONGMEADOW, et(2025, 4, 30)) == []


def test_bad_facts_get_a_message_naming_the_field() -> None:
    with pytest.raises(FactsError, match=r"Inspection\.at must be timezone-aware"):
        Inspection(1, "erosion_control", dt.datetime(2025, 6, 1, 9))
    with pytest.raises(FactsError, match=r"PermitFacts\.status must be one of"):
        permit(status="paused")
    with pytest.raises(FactsError, match=r"Storm\.end must be after"):
        Storm(et(2025, 6, 2), et(2025, 6, 1), 3.0)
    with pytest.raises(FactsError, match="now must be a timezone-aware"):
        obligations(permit(), LONGMEADOW, dt.datetime(2025, 6, 1))


def test_the_engine_imports_no_framework_database_or_io() -> None:
    allowed = {"__future__", "bisect", "calendar", "collections", "dataclasses", "datetime", "functools",
               "operator", "typing", "zoneinfo", "inspect_app", "holidays"}
    package = Path(__file__).parents[2] / "inspect_app"
    # The units it writes measures with, the legal holidays it counts and the inspection types it reads are as
    # pure: read too.
    for path in [*(package / "rules").glob("*.py"), package / "units.py", package / "legal_holidays.py",
                 package / "inspection_types.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"
                if name.startswith("inspect_app"):
                    assert name.startswith(("inspect_app.rules", "inspect_app.profiles.schema", "inspect_app.units",
                                            "inspect_app.legal_holidays", "inspect_app.inspection_types")), name
