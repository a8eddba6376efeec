"""Deadline arithmetic on the town's local calendar.

Regulations count calendar days, months, years and business days as a person in the town reads a wall
calendar, so every deadline is worked out on local dates in the profile's time zone and only then turned
back into a UTC instant. A week that spans a daylight-saving change is then 167 or 169 hours long, which is
what "7 calendar days" means on the ground.

A day-based deadline falls at the very end of its local day (23:59:59.999999): an obligation met any time
on its last day is on time, and it becomes late the instant that day is over.
"""
from __future__ import annotations

import calendar as _month_lengths
import datetime as dt
from collections.abc import Collection, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from inspect_app.legal_holidays import Days, of_year
from inspect_app.rules.trace import implements
if TYPE_CHECKING:
    from inspect_app.profiles.schema import Profile

UTC = dt.timezone.utc
# CGP 2022 Part 5.2 says "close of the next business day" without an hour; the profile sets the hour
# (`close_of_business`); this is only the default for callers that give none.
CLOSE_OF_BUSINESS = dt.time(17, 0)
_END_OF_DAY = dt.time.max
_DAY = dt.timedelta(days=1)


@lru_cache(maxsize=16)
def zone(key: str) -> ZoneInfo:
    """The time zone named in a profile (cached: looked up once per process)."""
    return ZoneInfo(key)


def local_date(at: dt.datetime, tz: ZoneInfo) -> dt.date:
    """The date on the town's wall calendar at instant `at`."""
    return at.astimezone(tz).date()


def end_of_day(day: dt.date, tz: ZoneInfo) -> dt.datetime:
    """The last instant (UTC) of local `day`."""
    return dt.datetime.combine(day, _END_OF_DAY, tzinfo=tz).astimezone(UTC)


def days_after(at: dt.datetime, days: int, tz: ZoneInfo) -> dt.datetime:
    """End of the local day `days` calendar days after the local date of `at`."""
    return end_of_day(local_date(at, tz) + dt.timedelta(days=days), tz)


def same_time_days_after(at: dt.datetime, days: int, tz: ZoneInfo) -> dt.datetime:
    """The same time of day on the town's clock, `days` calendar days after `at` (across a daylight-saving change,
    an hour more or less than `days` x 24 hours), in UTC."""
    wall = at.astimezone(tz).replace(tzinfo=None) + dt.timedelta(days=days)
    return wall.replace(tzinfo=tz).astimezone(dt.UTC)


def add_months(day: dt.date, months: int) -> dt.date:
    """The same day `months` later; the 31st becomes the month's last day when the month is shorter."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, _month_lengths.monthrange(year, month)[1]))


def months_after(at: dt.datetime, months: int, tz: ZoneInfo) -> dt.datetime:
    """End of the local day `months` calendar months after the local date of `at`."""
    return end_of_day(add_months(local_date(at, tz), months), tz)


class TownHolidays(Collection[dt.date]):
    """The legal holidays of a country's subdivision (the `holidays` package, every year: legal_holidays.py)
    plus a town's own days off listed in its profile."""

    def __init__(self, country: str, subdivision: str | None, extra: Iterable[dt.date] = ()) -> None:
        self._country, self._subdivision = country, subdivision
        self._extra = frozenset(extra)
        self._years: dict[int, Days] = {}

    def _year(self, year: int) -> Days:
        # As the package's own table: a day is looked up among the holidays of its year, each year
        # worked out (or read from what this process was given) the first time it is asked about.
        if year not in self._years:
            self._years[year] = of_year(self._country, self._subdivision, year)
        return self._years[year]

    def __contains__(self, day: object) -> bool:
        return isinstance(day, dt.date) and (day in self._extra or day in self._year(day.year))

    def __iter__(self):  # the listed years only: the table grows as years are asked about
        return iter(sorted(self._extra.union(*self._years.values())))

    def __len__(self) -> int:
        return len(self._extra.union(*self._years.values()))

    def name(self, day: dt.date) -> str | None:
        """What the day is ("Patriots' Day"), or None for a working day."""
        if day in self._extra:
            return "Town holiday"
        return self._year(day.year).get(day)


@lru_cache(maxsize=32)
def town_holidays(country: str, subdivision: str | None, extra: tuple[dt.date, ...] = ()) -> TownHolidays:
    """The holiday calendar a profile names (cached: built once per process and profile)."""
    return TownHolidays(country, subdivision, extra)


def holidays_of(profile: "Profile") -> TownHolidays:
    """A profile's holiday calendar: its country's and subdivision's legal holidays and its own days."""
    return town_holidays(profile.holiday_country, profile.holiday_subdivision, tuple(profile.holidays))


def is_business_day(day: dt.date, holidays: Collection[dt.date]) -> bool:
    """Monday to Friday and not one of the town's legal holidays."""
    return day.weekday() < 5 and day not in holidays


@implements("CGP 2022 Part 5.2", "CGP 2022 Part 2.2.14.a.i")
def next_business_day(day: dt.date, holidays: Collection[dt.date]) -> dt.date:
    """The first business day after `day` (skips weekends and holidays)."""
    day += _DAY
    while not is_business_day(day, holidays):
        day += _DAY
    return day


def close_of_next_business_day(at: dt.datetime, tz: ZoneInfo, holidays: Collection[dt.date],
                               close: dt.time = CLOSE_OF_BUSINESS) -> dt.datetime:
    """Close of business (`close`, local) on the first business day after the local date of `at`, as UTC."""
    day = next_business_day(local_date(at, tz), holidays)
    return dt.datetime.combine(day, close, tzinfo=tz).astimezone(UTC)


def end_of_business_days_after(at: dt.datetime, days: int, tz: ZoneInfo, holidays: Collection[dt.date]) -> dt.datetime:
    """The last instant of the `days`-th business day after the local date of `at` (1: "the end of the
    next work day", CGP 2022 Part 2.2.14.a.i), as UTC."""
    day = local_date(at, tz)
    for _ in range(days):
        day = next_business_day(day, holidays)
    return end_of_day(day, tz)
