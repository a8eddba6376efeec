"""§9.7: "Any SMP granted by the Commission shall lapse within three years from the date of filing of the Commission's
Decision with the Office of the Town Clerk unless significant land-disturbing activity associated with an approved
plan has begun." Work begun after the lapse does not make the permit active."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.types import LOCAL_TZ
from tests.transfer.sheets import PERMIT_HEADER, permit_row, write_csv


def test_sb_work_begun_after_the_lapse_does_not_make_the_permit_active(make):
    """§9.7: the SMP lapses three years after the Decision's filing "unless significant land-disturbing activity
    ... has begun". Decision filed 2022-01-10: the SMP lapsed at the end of 2025-01-10. A start recorded for
    2025-06-02, with no extension, is work after the lapse (the schedule itself calls it "done without a permit, a
    violation"): the permit is lapsed, not active (it was active, and the lapse job, which lapses only permits with
    no start, never touched it again)."""
    permit = make.permit("southborough", issued_on=dt.date(2022, 1, 10), decision_filed_on=dt.date(2022, 1, 10),
                         construction_started_on=dt.date(2025, 6, 2))
    db.session.expire_all()
    stored = db.session.get(Permit, permit.id)
    assert permits.lapses_at(stored).astimezone(LOCAL_TZ).date() == dt.date(2025, 1, 10)
    assert stored.status != "active", "a permit whose SMP lapsed before work began is active"


def test_sb_work_begun_before_the_lapse_makes_the_permit_active(make):
    permit = make.permit("southborough", issued_on=dt.date(2022, 1, 10), decision_filed_on=dt.date(2022, 1, 10),
                         construction_started_on=dt.date(2025, 1, 10))
    db.session.expire_all()
    assert db.session.get(Permit, permit.id).status == "active"


def test_sb_import_of_a_permit_whose_work_began_after_the_lapse_leaves_it_lapsed(app, runner, tmp_path, make):
    """The same facts as tests/permits/test_lapse_after_start.py: decision filed 2022-01-10, SMP lapsed at the end
    of 2025-01-10, work begun 2025-06-02 with no extension: imported (`flask import permits`), the permit is lapsed
    too (the importer handed settle_status the row's facts without their town, and it came in active)."""
    formed = make.permit("southborough", number="SB-FORM", issued_on=dt.date(2022, 1, 10),
                         decision_filed_on=dt.date(2022, 1, 10), construction_started_on=dt.date(2025, 6, 2))
    assert formed.status == "lapsed"  # the form's path, as the commit's own test wants

    header = PERMIT_HEADER + ["decision_filed_on", "construction_started_on"]
    path = write_csv(tmp_path / "permits.csv", [permit_row(
        "SB-IMPORT", town="southborough", site_address="5 Main Street, Southborough, MA", latitude="42.3056",
        longitude="-71.5245", issued_on="2022-01-10", decision_filed_on="2022-01-10",
        construction_started_on="2025-06-02")], header=header)
    result = runner.invoke(args=["import", "permits", str(path), "--apply"])
    assert result.exit_code == 0, result.output
    db.session.expire_all()
    imported = db.session.scalar(select(Permit).where(Permit.number == "SB-IMPORT"))
    assert imported is not None and imported.construction_started_on == dt.date(2025, 6, 2)
    assert imported.status == "lapsed"
