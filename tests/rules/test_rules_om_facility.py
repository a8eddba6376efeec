"""§380-14 A(3): the O&M facility inspection of a completed project, owed every 12 months from the certificate
of completion (the text says "regular inspections" with no number: the town's policy, said so)."""
from __future__ import annotations

from tests.rules.rules_builders import end_of, et, find, permit

from inspect_app.profiles import PROFILE_FOLDER, load_profile
from inspect_app.rules import Inspection, obligations

LONGMEADOW = load_profile(PROFILE_FOLDER / "longmeadow.toml")
COMPLETED = dict(status="completed", construction_started_at=et(2025, 6, 2, 8), completed_at=et(2026, 3, 10, 12))


def _owed(facts, now, history=True):
    return [(o.subject, o.status, o.due_at, o.met_at) for o in
            find(obligations(facts, LONGMEADOW, now, history=history), "om_inspection")]


def test_the_om_facility_inspection_is_owed_yearly_from_the_certificate_of_completion():
    found = find(obligations(permit(**COMPLETED), LONGMEADOW, et(2026, 4, 1)), "om_inspection")
    assert [(o.subject, o.status, o.due_at) for o in found] == [
        ("om_inspection:1", "due", end_of(2027, 3, 9)), ("om_inspection:2", "upcoming", end_of(2028, 3, 9))]
    assert found[0].citation == "§380-14 A(3), town policy"
    assert "every 12 months" in found[0].reason and found[0].reason.endswith(".")


def test_none_is_owed_before_the_permit_is_completed():
    active = permit(status="active", construction_started_at=et(2025, 6, 2, 8))
    assert _owed(active, et(2027, 4, 1)) == []


def test_an_inspection_meets_its_year_and_one_made_after_a_missed_year_meets_that_one_late():
    on_time = Inspection(1, "om_facility", et(2027, 2, 1, 10))
    assert _owed(permit(**COMPLETED, inspections=(on_time,)), et(2027, 5, 1)) == [
        ("om_inspection:1", "met", end_of(2027, 3, 9), on_time.at),
        ("om_inspection:2", "due", end_of(2028, 3, 9), None),
        ("om_inspection:3", "upcoming", end_of(2029, 3, 9), None)]
    # None in the first year: overdue, until the next one meets it late (and its own year).
    assert _owed(permit(**COMPLETED), et(2027, 4, 1))[0][:2] == ("om_inspection:1", "overdue")
    late = Inspection(2, "om_facility", et(2027, 4, 15, 10))
    found = find(obligations(permit(**COMPLETED, inspections=(late,)), LONGMEADOW, et(2027, 5, 1)), "om_inspection")
    assert [(o.status, o.met_at, o.late) for o in found[:2]] == [("met", late.at, True), ("met", late.at, False)]
    # The open view gives exactly what is still owed.
    assert _owed(permit(**COMPLETED, inspections=(late,)), et(2027, 5, 1), history=False) == [
        ("om_inspection:3", "upcoming", end_of(2029, 3, 9), None)]


def test_southborough_owes_it_yearly_as_the_commission_s_policy():
    southborough = load_profile(PROFILE_FOLDER / "southborough.toml")
    found = find(obligations(permit(**COMPLETED), southborough, et(2026, 4, 1)), "om_inspection")
    assert (found[0].due_at, found[0].citation) == (end_of(2027, 3, 9), "§7.6 e)(1), town policy")
