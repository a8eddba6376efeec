"""The schedule in force on a given day, as a report states it (issue 20; CGP 2022 Parts 4.2-4.4): the
permit's frequency, sensitive waters, and the reduced frequency once the whole site is stabilized."""
from __future__ import annotations

from dataclasses import replace

import pytest
from tests.rules.rules_builders import et, longmeadow, permit

from inspect_app.rules import Area, AreaEvent, schedule_in_force

STARTED = et(2025, 6, 2, 7)
SLOPE = Area(1, "North slope", (AreaEvent("disturbed", et(2025, 6, 2, 9)), AreaEvent("stabilized", et(2025, 6, 20, 12))))


@pytest.mark.parametrize(("changes", "at", "text", "citation"), [
    ({}, et(2025, 6, 10), "At least every 7 calendar days", "CGP 2022 Part 4.2"),
    ({"cgp_schedule": "every_14_days_and_storm"}, et(2025, 6, 10),
     "At least every 14 calendar days, and within 24 hours of a storm of 0.25 in or more", "CGP 2022 Part 4.2"),
    ({"sensitive_waters": True}, et(2025, 6, 10), "At least every 7 calendar days, and within 24 hours of a storm "
     "of 0.25 in or more (the site discharges to sensitive waters)", "CGP 2022 Part 4.3"),
    ({"cgp_schedule": "every_14_days_and_storm", "areas": (SLOPE,)}, et(2025, 6, 25),
     "At least every month once the whole site is stabilized", "CGP 2022 Part 4.4"),
    ({"cgp_schedule": "every_14_days_and_storm", "areas": (SLOPE,)}, et(2025, 6, 19),
     "At least every 14 calendar days, and within 24 hours of a storm of 0.25 in or more", "CGP 2022 Part 4.2"),
])
def test_the_schedule_in_force_on_the_day(changes, at, text, citation):
    facts = replace(permit(construction_started_at=STARTED), **changes)
    schedule = schedule_in_force(facts, longmeadow(), at)
    assert (schedule.text, schedule.citation) == (text, citation)
