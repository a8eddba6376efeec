"""The towns' legal holidays stored for the app servers (schedule/holidays.py, issue 18): `flask towns sync`
stores what the `holidays` package gives (rule 13), an app server counts business days with them without
importing the package, and a year not stored, or stored by another version of the package, is the package's
answer all the same."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from inspect_app import legal_holidays
from inspect_app.extensions import db
from inspect_app.schedule.holidays import YEARS_AFTER, YEARS_BEFORE, package_version
from inspect_app.schedule.models import HolidayYear
from inspect_app.types import utcnow

ROOT = Path(__file__).resolve().parent.parent.parent
PATRIOTS_DAY_2028 = dt.date(2028, 4, 17)
EVACUATION_DAY_2028 = dt.date(2028, 3, 17)  # Suffolk County only: a business day in Longmeadow


def _app_server(database_url: str, tmp_path: Path, days: list[dt.date]) -> dict:
    """Start the app as gunicorn's worker does (wsgi.py) in a process of its own; say whether each day is a
    holiday on Longmeadow's calendar, and whether that process imported the holidays package, before and
    after."""
    probe = (
        "import datetime as dt, json, sys, wsgi\n"
        "from inspect_app.rules.calendar import holidays_of\n"
        "before = 'holidays' in sys.modules\n"
        "calendar = holidays_of(wsgi.app.extensions['profiles']['longmeadow'])\n"
        f"answers = [dt.date.fromisoformat(day) in calendar for day in {[d.isoformat() for d in days]!r}]\n"
        "print(json.dumps({'package_at_start': before, 'holidays': answers,\n"
        "                  'package_after': 'holidays' in sys.modules}))\n")
    env = {"DATABASE_URL": database_url, "BLOB_ROOT": str(tmp_path / "blobs"), "SECRET_KEY": "probe",
           "PUBLIC_URL": "https://inspections.example-town.gov", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_towns_sync_stores_the_packages_holidays_of_each_town_calendar(runner):
    result = runner.invoke(args=["towns", "sync"])
    assert result.exit_code == 0, result.output
    this_year = utcnow().year
    rows = db.session.scalars(select(HolidayYear).order_by(HolidayYear.year)).all()
    # The three shipped towns share one calendar: Massachusetts's.
    assert {(row.country, row.subdivision) for row in rows} == {("US", "MA")}
    assert [row.year for row in rows] == list(range(this_year - YEARS_BEFORE, this_year + YEARS_AFTER + 1))
    assert f"Stored {len(rows)} years of legal holidays." in result.output
    for row in rows:
        assert row.package_version == package_version()
        package = legal_holidays.worked_out("US", "MA", row.year)
        assert row.days == [[day.isoformat(), name] for day, name in sorted(package.items())]
    # Run again (after an upgrade, or daily), it replaces the years: none is stored twice.
    assert runner.invoke(args=["towns", "sync"]).exit_code == 0
    db.session.expire_all()
    assert len(db.session.scalars(select(HolidayYear)).all()) == len(rows)


def test_an_app_server_counts_the_stored_holidays_without_importing_the_package(runner, database_url,
                                                                               tmp_path):
    assert runner.invoke(args=["towns", "sync"]).exit_code == 0
    far = utcnow().year + YEARS_AFTER + 30
    far_holiday = min(legal_holidays.worked_out("US", "MA", far))  # New Year's Day, or its observance
    answer = _app_server(database_url, tmp_path, [PATRIOTS_DAY_2028, EVACUATION_DAY_2028])
    assert answer == {"package_at_start": False, "holidays": [True, False], "package_after": False}
    # A year not stored: the package works it out, in that process alone.
    answer = _app_server(database_url, tmp_path, [PATRIOTS_DAY_2028, far_holiday])
    assert answer == {"package_at_start": False, "holidays": [True, True], "package_after": True}


def test_years_stored_by_another_version_of_the_package_are_not_used(app, database_url, tmp_path):
    # As if the package was upgraded since `flask towns sync` last ran, and the new version changed a day.
    db.session.add(HolidayYear(country="US", subdivision="MA", year=2028, package_version="0.1",
                               days=[[EVACUATION_DAY_2028.isoformat(), "Evacuation Day"]]))
    db.session.commit()
    answer = _app_server(database_url, tmp_path, [PATRIOTS_DAY_2028, EVACUATION_DAY_2028])
    assert answer["holidays"] == [True, False]  # the installed package's days, not the stored ones
    assert answer["package_at_start"] is True  # the calendar was checked by the package itself


def test_an_app_server_starts_on_a_database_not_migrated_yet(tmp_path):
    answer = _app_server(f"sqlite:///{tmp_path / 'empty.sqlite3'}", tmp_path, [PATRIOTS_DAY_2028])
    assert answer["holidays"] == [True]
