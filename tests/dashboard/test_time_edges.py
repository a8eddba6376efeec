"""The same deadlines as the dashboard, the permit page and the calendar feed show them: each missed deadline of a
chain is its own calendar event, and a storm is named by the town's day."""
from __future__ import annotations

import pytest

from tests.dashboard.conftest import Record
from tests.dashboard.test_exports import events, unfold


@pytest.fixture
def record(app) -> Record:
    return Record()


def test_each_missed_routine_deadline_is_its_own_calendar_event(make, record, signed_in):
    """SPEC *The schedule engine*: "at least every 7 calendar days"; the engine (rules/engine.py) reports each
    missed deadline of the chain ("If a deadline passes unmet, the next one falls due N days after that
    deadline"), and the dashboard and *What to do now* show them ("N more of the same are open too").

    The calendar feed wrote every one of them with the same UID (`<permit>.inspection.permit-<id>`): RFC 5545
    §3.8.4.7 "The UID itself MUST be a globally unique identifier", and a calendar app keeps one event per UID,
    so the inspector's calendar showed one deadline where the dashboard shows three (two of them overdue).
    """
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], issued_on=record.local_day(60),
                         construction_started_on=record.local_day(30), cgp_schedule="every_7_days")
    record.inspection(permit, at=record.ago(days=17))  # due +7 (missed), +14 (missed), +21 (still to come)

    response = signed_in(inspector).get(f"/dashboard/inspectors/{inspector.id}/calendar.ics")
    assert response.status_code == 200
    routine = [e for e in events(unfold(response.text)) if e["SUMMARY"].split(": ")[-1].startswith("Erosion")]
    assert len(routine) == 3, [e["SUMMARY"] for e in routine]
    assert len({e["UID"] for e in routine}) == len(routine), [e["UID"] for e in routine]


def test_an_evening_storm_missed_is_named_by_its_local_day_on_the_dashboard_and_the_certificate_list(make, signed_in):
    """SPEC *Weather*: the storm inspection is "due within 24 hours of the moment the total reached 0.25 in";
    weather/models.py: a storm event's `day` "is the local date of `reached_at`".

    Rain from 8 p.m. to 11 p.m. EDT on Wed 10 Jun 2026 (00:00-03:00 UTC on the 11th), no inspection after it.
    The dashboard row (`about`, shown as "Storm inspection: <about>" on *What to do now*, the town board and My
    day) and the missed-inspections list (schedule/missed.py, which the certificate of completion stores in its
    contents and the permit history prints) called it the storm "of 2026-06-11": the UTC day, not the town's.
    """
    import datetime as dt

    from sqlalchemy import select

    from inspect_app.extensions import db
    from inspect_app.schedule import missed
    from inspect_app.schedule.models import PermitObligation
    from inspect_app.types import LOCAL_TZ
    from inspect_app.weather.models import StormEvent

    local = lambda *a: dt.datetime(*a, tzinfo=LOCAL_TZ).astimezone(dt.UTC)  # noqa: E731
    permit = make.permit(issued_on=dt.date(2026, 5, 1), construction_started_on=dt.date(2026, 6, 1),
                         cgp_schedule="every_14_days_and_storm")
    db.session.add(StormEvent(permit_id=permit.id, day=dt.date(2026, 6, 10), depth_mm=12.0,
                              started_at=local(2026, 6, 10, 20), reached_at=local(2026, 6, 10, 22),
                              ended_at=local(2026, 6, 10, 23)))
    db.session.commit()

    about = db.session.scalar(select(PermitObligation.about).where(PermitObligation.permit_id == permit.id,
                                                                   PermitObligation.kind == "storm_inspection"))
    listed = [m.inspection for m in missed.missed_inspections(permit, local(2026, 6, 20, 12))
              if m.key == "storm_inspection"]
    assert listed and all("storm of 2026-06-10" in words for words in listed), listed
    assert about == "Storm of 2026-06-10"
