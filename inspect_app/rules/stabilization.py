"""Stabilization of a portion of the site where earth-disturbing activity has ceased: two clocks.

CGP 2022 Part 2.2.14.a.i: stabilization is *initiated* immediately, no later than the end of the next
work day after the activity ceased. CGP 2022 Part 2.2.14.a.ii: it is *completed* within 14 calendar days
after initiation (7 for a site discharging to sensitive waters). Where the town is stricter its rule
prevails (§380-11 C(1)): Longmeadow §380-11 C(3)(a), seven days after the activity ceased. Every number
comes from the profile's `[stabilization]`.

An *episode* runs from the moment activity ceased on an area until the area is stabilized or disturbed
again. Only "stabilized" completes it; "stabilization initiated" (or "stabilized") initiates it. A new
disturbance stops both clocks; a deadline that had already passed stays passed on the record.

The completion deadline counts from the initiation, but never from later than the initiation deadline:
a late initiation is a violation of its own and does not buy more time to complete.

Used by the schedule engine and by the inspection form's area table, so the rule is written once.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from inspect_app.profiles.schema import StabilizationRule
from inspect_app.rules.calendar import days_after, end_of_business_days_after
from inspect_app.rules.facts import AreaEvent


@dataclass(frozen=True, slots=True)
class Episode:
    """One stretch of an area from activity ceased to stabilized (or disturbed again), with its deadlines."""

    ceased: dt.datetime
    initiated: dt.datetime | None
    stabilized: dt.datetime | None
    disturbed_again: dt.datetime | None
    initiate_due: dt.datetime
    complete_due: dt.datetime
    # The rule that set the completion deadline: the town's (stricter) or the federal one.
    complete_by_town: bool

    @property
    def closed_at(self) -> dt.datetime | None:
        return self.stabilized or self.disturbed_again

    def pending_deadline(self) -> dt.datetime | None:
        """The next deadline still to meet: initiation, then completion; None once stabilized or disturbed."""
        if self.closed_at is not None:
            return None
        return self.initiate_due if self.initiated is None else self.complete_due

    def overdue(self, at: dt.datetime) -> bool:
        """True when, at `at`, a duty of this episode is not met and its deadline has passed."""
        late_start = self.initiated is None and at > self.initiate_due
        return self.closed_at is None and (late_start or at > self.complete_due)


def episodes(events: Iterable[AreaEvent], rule: StabilizationRule, tz: ZoneInfo, holidays: Collection[dt.date],
             sensitive: bool, now: dt.datetime) -> list[Episode]:
    """Every stabilization episode of one area's status timeline as of `now` (events after it are ignored)."""
    found: list[Episode] = []
    ceased: dt.datetime | None = None
    initiated: dt.datetime | None = None

    def close(stabilized: dt.datetime | None, disturbed: dt.datetime | None) -> None:
        assert ceased is not None
        initiate_due = end_of_business_days_after(ceased, rule.initiate_work_days, tz, holidays)
        start = initiate_due if initiated is None else min(initiated, initiate_due)
        federal = days_after(start, rule.completion_days(sensitive), tz)
        town = days_after(ceased, rule.days, tz) if rule.days is not None else None
        by_town = town is not None and town <= federal
        found.append(Episode(ceased, initiated, stabilized, disturbed, initiate_due,
                             town if by_town and town is not None else federal, by_town))

    for event in sorted(events, key=lambda e: e.at):
        if event.at > now:
            break
        status = event.status
        if status == "activity_ceased":
            ceased = ceased or event.at  # repeated "ceased" keeps the first: the clock runs from then
        elif ceased is None:
            continue  # an area still being worked (or already stable): no clock runs
        elif status == "stabilization_initiated":
            initiated = initiated or event.at
        elif status == "stabilized":
            initiated = initiated or event.at
            close(event.at, None)
            ceased = initiated = None
        else:  # disturbed again: both clocks stop
            close(None, event.at)
            ceased = initiated = None
    if ceased is not None:
        close(None, None)
    return found
