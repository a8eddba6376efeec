"""The towns' legal holidays kept in the database, so an app server need not import the `holidays` package.

The package is the source of every holiday (rule 13, legal_holidays.py); importing it costs about
13 MB of a worker (issue 18). `flask towns sync` (after each upgrade: docs/deploy.md) works out, with the
package, the years around today of every profile's holiday calendar and stores them (`holiday_years`); an
app server's worker is given the stored years at start-up, before it checks the profiles, and imports the
package only for a year not stored (a permit's history long ago, a deadline years ahead): the same days,
and that worker alone grows by the package.

Only rows worked out by the installed version of the package are given: after an upgrade of the package,
the stored years are not used until `flask towns sync` has worked them out again.
"""
from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from importlib import metadata

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from inspect_app import legal_holidays
from inspect_app.extensions import db
from inspect_app.profiles.schema import Profile
from inspect_app.schedule.models import HolidayYear

# The years stored around today's: a permit's record reaches back a few years, its deadlines a few ahead.
YEARS_BEFORE, YEARS_AFTER = 10, 10

log = logging.getLogger(__name__)


def package_version() -> str:
    """The installed `holidays` package's version (read from its metadata, without importing it)."""
    return metadata.version("holidays")


def store_holiday_years(profiles: Iterable[Profile], today: dt.date) -> int:
    """Work out with the package, and store, the years of each profile's holiday calendar from YEARS_BEFORE
    before `today`'s to YEARS_AFTER after, replacing what was stored; returns how many years. Only flushes."""
    version = package_version()
    calendars = sorted({(profile.holiday_country, profile.holiday_subdivision) for profile in profiles},
                       key=lambda calendar: (calendar[0], calendar[1] or ""))
    years = range(today.year - YEARS_BEFORE, today.year + YEARS_AFTER + 1)
    for country, subdivision in calendars:
        for year in years:
            days = legal_holidays.worked_out(country, subdivision, year)
            db.session.merge(HolidayYear(
                country=country, subdivision=subdivision or "", year=year, package_version=version,
                days=[[day.isoformat(), name] for day, name in sorted(days.items())]))
    db.session.flush()
    return len(calendars) * len(years)


def give_stored_holidays() -> None:
    """Give this process (legal_holidays.give) the stored years worked out by the installed package.

    A database that cannot answer (not reachable, or not migrated yet) gives none: the process then works
    the years out with the package as it needs them, as it did before they were stored.
    """
    query = select(HolidayYear).where(HolidayYear.package_version == package_version())
    try:
        rows = db.session.scalars(query).all()
    except DBAPIError as error:
        log.warning("stored holidays not read (the holidays package will work them out): %s", error.orig)
        rows = []
    finally:
        db.session.rollback()
    for row in rows:
        days = {dt.date.fromisoformat(day): name for day, name in row.days}
        legal_holidays.give(row.country, row.subdivision or None, {row.year: days})
