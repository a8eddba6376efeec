"""The schedule engine and its labels across daylight-saving changes and local days: calendar days are counted on
the town's clock, and a storm is named by the town's day."""
from __future__ import annotations

import datetime as dt

from tests.rules.rules_builders import end_of, et, find, longmeadow, one, permit

from inspect_app.rules import Area, AreaEvent, Storm, obligations
from inspect_app.schedule.facts import PermitSummary, Record, subject_label

STARTED = et(2026, 2, 2, 8)  # a Monday
LONGMEADOW = longmeadow()
CGP_ONLY = longmeadow(key="cgp_only", stabilization={"citation": "CGP 2022 Part 2.2.14 (town rule silent)"})


def active(**changes: object):
    return permit(**{"status": "active", "construction_started_at": STARTED, "issued_at": et(2026, 1, 5, 9),
                     **changes})


def test_an_area_idle_14_calendar_days_across_the_march_change_owed_its_initiation() -> None:
    """CGP 2022 Part 2.2.14.a.i (as the engine quotes it, rules/engine.py and the profile's `inactive_days`):
    stabilization is owed where earth-disturbing activities "will be temporarily inactive for 14 or more
    calendar days". rules/calendar.py: "A week that spans a daylight-saving change is then 167 or 169 hours
    long, which is what '7 calendar days' means on the ground."

    Work stopped Mon 2 Mar 2026 at 3 p.m. and came back Mon 16 Mar 2026 at 3 p.m.: 14 calendar days idle
    (the clocks went forward on Sun 8 Mar, so only 13 days 23 hours of elapsed time). The initiation due by the
    end of Tue 3 Mar was never made: that violation stays on the record, as it does for the same 14 days idle
    in June (tests/rules/test_rules_clauses.py). The engine measured the 14 days in 24-hour blocks and dropped it.
    """
    ceased, back = et(2026, 3, 2, 15), et(2026, 3, 16, 15)
    facts = active(areas=(Area(3, "North slope", (AreaEvent("activity_ceased", ceased),
                                                   AreaEvent("disturbed", back))),))
    found = obligations(facts, CGP_ONLY, et(2026, 3, 20))
    initiation = find(found, "stabilization", "area:3")
    assert initiation, "the initiation owed after 14 calendar days idle is missing from the record"
    assert (initiation[0].status, initiation[0].due_at) == ("overdue", end_of(2026, 3, 3))



def test_an_area_idle_less_than_14_calendar_days_across_the_november_change_owed_none() -> None:
    """The other way: stopped Mon 26 Oct 2026 at 3 p.m., back Mon 9 Nov at 2:30 p.m., half an hour short of 14
    calendar days on the town's clock (14 days and half an hour elapsed, the clocks having gone back on 1 Nov):
    not inactive for 14 days, so nothing was owed."""
    ceased, back = et(2026, 10, 26, 15), et(2026, 11, 9, 14, 30)
    facts = active(areas=(Area(3, "North slope", (AreaEvent("activity_ceased", ceased),
                                                   AreaEvent("disturbed", back))),))
    assert not find(obligations(facts, CGP_ONLY, et(2026, 11, 12)), "stabilization", "area:3")

def _record(facts, profile) -> Record:
    summary = PermitSummary(id=str(facts.id), number=facts.number, site_address="1 Main St", status=facts.status,
                            cgp_schedule=facts.cgp_schedule, latitude=42.05, longitude=-72.58,
                            issued_on=dt.date(2026, 1, 5), construction_started_on=STARTED.date(),
                            jurisdiction_id="j", town="Longmeadow", profile_key=profile.key)
    return Record(summary, facts, profile)


def test_an_evening_storm_is_labelled_with_its_local_day_not_the_utc_one() -> None:
    """SPEC *Weather*: "a storm ... makes a storm-event inspection due within 24 hours of the moment the total
    reached 0.25 in"; rules/calendar.py: dates are "worked out on local dates in the profile's time zone".

    Rain began Wed 10 Jun 2026 at 9 p.m. EDT (01:00 UTC on the 11th) and reached 0.25 in at 11 p.m. The
    obligation's reason says so ("... at Wed 10 Jun 2026 at 11 p.m."), but what it is about, as the dashboard,
    My day, the ICS feed's rows, and the certificate of completion's / permit history's list of missed inspections
    (schedule/missed.py `_words`) show it, is "Storm of 2026-06-11": the UTC day, a day that had no such storm.
    """
    start, reached, end = et(2026, 6, 10, 21), et(2026, 6, 10, 23), et(2026, 6, 11, 2)
    facts = active(cgp_schedule="every_14_days_and_storm",
                   storms=(Storm(start=start, end=end, depth_mm=9.0, reached_at=reached),))
    storm = one(obligations(facts, LONGMEADOW, et(2026, 6, 13)), "storm_inspection")
    assert "Wed 10 Jun 2026" in storm.reason
    assert subject_label(storm.subject, _record(facts, LONGMEADOW)) == "Storm of 2026-06-10"
