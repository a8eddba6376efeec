"""The legal holidays of a country and subdivision, a year at a time, as the `holidays` package gives them.

Rule 13: business days skip the legal holidays the `holidays` package gives for the profile's
`holiday_country` and `holiday_subdivision`. The package is large for what a process needs of it: importing
it loads every one of its ~250 countries (about 13 MB of a worker, issue 18), for a dozen days a year. So a
process may be *given* years the package worked out earlier (an app server is given them from the database
at start-up, where `flask towns sync` stores them: schedule/holidays.py), and imports the package only for
a year it was not given. The answer is the package's either way, and only years worked out by the version
of the package installed here are given (schedule/holidays.py sees to it), so an upgrade of the package is
never hidden by stored days.

No Flask or database import: the schedule engine (rules/calendar.py) and the profile schema use it.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

Days = Mapping[dt.date, str]  # each legal holiday of a year, with its name ("Patriots' Day")

# (country, subdivision) -> {year: days}: the years this process was given.
_given: dict[tuple[str, str | None], dict[int, Days]] = {}


def worked_out(country: str, subdivision: str | None, year: int) -> dict[dt.date, str]:
    """The package's legal holidays of `year` (imports the package: the one place that does)."""
    import holidays  # noqa: PLC0415  (third-party, ~13 MB: only where a year must be worked out, issue 18)

    return dict(holidays.country_holidays(country, subdiv=subdivision, years=year).items())


def check_calendar(country: str, subdivision: str | None) -> None:
    """Raise NotImplementedError (the package's, with its reason) unless the package has a calendar for this
    country and subdivision. A calendar this process was given years of was worked out by the package."""
    if (country, subdivision) in _given:
        return
    import holidays  # noqa: PLC0415  (third-party, as in `worked_out`)

    holidays.country_holidays(country, subdiv=subdivision)


def give(country: str, subdivision: str | None, years: Mapping[int, Days]) -> None:
    """Give this process the package's holidays of some years (worked out by the installed version)."""
    _given.setdefault((country, subdivision), {}).update(years)


def of_year(country: str, subdivision: str | None, year: int) -> Days:
    """The legal holidays of `year`: as given to this process, else worked out by the package now."""
    given = _given.get((country, subdivision), {})
    return given[year] if year in given else worked_out(country, subdivision, year)
