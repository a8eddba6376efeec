"""What the site records of its construction: a structure's backfill (§380-16 C(4)(c)) and the moment
construction started (§380-2), through the app, and what the schedule makes of them."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from inspect_app.audit.models import AuditEntry
from inspect_app.pages.dashboard.services import timeline
from inspect_app.extensions import db
from inspect_app.permits.models import Permit, StormwaterStructure
from inspect_app.schedule.models import PermitObligation
from inspect_app.types import LOCAL_TZ, utcnow
from inspect_app.weather.models import StormEvent
from inspect_app.enforcement.services import open_violations
from inspect_app.waivers.services import grant_waiver
from tests.inspections.report_helpers import start, submit


def _local(at: dt.datetime) -> str:
    return at.astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")


def _open(permit, kind: str) -> list[PermitObligation]:
    db.session.expire_all()
    return list(db.session.scalars(select(PermitObligation).where(PermitObligation.permit_id == permit.id,
                                                                  PermitObligation.kind == kind)))


def test_a_backfill_recorded_through_the_app_makes_a_missed_pre_bury_inspection_overdue(make, signed_in):
    """§380-16 C(4)(c): "Pre-bury Inspection: prior to backfilling of any underground drainage or stormwater
    conveyance or infiltration structures". Recorded backfilled with no inspection, it is overdue: a violation."""
    engineer = make.user("inspector")
    permit = make.permit(inspectors=[engineer], structures=["Infiltration system IS-1"],
                         construction_started_on=dt.date(2026, 6, 2))
    pipe = permit.structures[0]
    (before,) = _open(permit, "pre_bury")
    assert before.due_at is None  # due "before backfill", whenever that is
    backfilled = (utcnow() - dt.timedelta(hours=3)).replace(second=0, microsecond=0)
    browser = signed_in(engineer)
    url = f"/permits/{permit.id}/structures/{pipe.id}/backfill"
    response = browser.post(url, {f"backfill-{pipe.id}-at": _local(backfilled)}, htmx="structures")
    assert response.status_code == 200
    assert f"{engineer.name}" in response.text and "recorded by" in response.text
    db.session.expire_all()
    structure = db.session.get(StormwaterStructure, pipe.id)
    assert (structure.backfilled_at, structure.backfilled_by_id) == (backfilled, engineer.id)
    (after,) = _open(permit, "pre_bury")
    assert after.due_at == backfilled and after.due_at < utcnow()  # overdue from the backfill on
    assert "without its pre-bury inspection" in after.reason
    page = signed_in(make.user("agent")).get(f"/permits/{permit.id}/timeline")
    assert page.status_code == 200
    assert "Overdue" in page.text and "Infiltration system IS-1 was backfilled on" in page.text
    assert db.session.scalar(select(AuditEntry.action).where(AuditEntry.entity_id == pipe.id)
                             .order_by(AuditEntry.seq.desc()).limit(1)) == "structure.backfill"
    # Once only; the permittee cannot record it; a time in the future is refused.
    browser = signed_in(engineer)  # (the agent signed in on this test's one browser since)
    again = browser.post(url, {f"backfill-{pipe.id}-at": _local(backfilled)}, htmx="structures")
    assert again.status_code == 422 and "already recorded as backfilled" in again.text
    owner = signed_in(make.user("permittee"))
    assert owner.post(url, {f"backfill-{pipe.id}-at": _local(backfilled)}).status_code in (403, 404)


def test_a_future_backfill_is_refused_and_changes_nothing(make, signed_in):
    engineer = make.user("inspector")
    permit = make.permit(inspectors=[engineer], structures=["Pipe P-1"], construction_started_on=dt.date(2026, 6, 2))
    pipe = permit.structures[0]
    response = signed_in(engineer).post(f"/permits/{permit.id}/structures/{pipe.id}/backfill",
                                        {f"backfill-{pipe.id}-at": _local(utcnow() + dt.timedelta(days=1))},
                                        htmx="structures")
    assert response.status_code == 422 and "cannot be in the future" in response.text
    db.session.expire_all()
    assert db.session.get(StormwaterStructure, pipe.id).backfilled_at is None


def test_construction_start_is_kept_with_its_time(make, signed_in):
    """§380-2 START OF CONSTRUCTION: "The first land-disturbing activity". Kept to the minute, an inspection
    earlier that day is before construction, one after it is not (the day alone used to count whole)."""
    agent = make.user("agent")
    start = utcnow().astimezone(LOCAL_TZ).replace(hour=10, minute=30, second=0, microsecond=0) - dt.timedelta(days=3)
    permit = make.permit(issued_on=start.date() - dt.timedelta(days=30))
    form = {"jurisdiction_id": permit.jurisdiction_id, "number": permit.number, "site_address": permit.site_address,
            "latitude": permit.latitude, "longitude": permit.longitude, "owner_name": permit.owner_name,
            "applicant_name": permit.applicant_name, "disturbed_acres": "1.5", "is_redevelopment": "0",
            "cgp_schedule": "every_7_days", "issued_on": permit.issued_on.isoformat(),
            "construction_started_on": start.date().isoformat(), "construction_started_time": "10:30"}
    browser = signed_in(agent)
    assert browser.post(f"/permits/{permit.id}/edit", form).status_code == 303
    db.session.expire_all()
    assert permit.construction_started_at == start.astimezone(dt.UTC)
    assert start.strftime("%-I:%M") in browser.get(f"/permits/{permit.id}").text
    # An erosion-control inspection after the start that day is not the inspection before construction.
    make.inspection(permit, performed_at=start + dt.timedelta(hours=2))

    def before_construction():
        _, items = timeline(select(Permit).where(Permit.id == permit.id), utcnow())
        (found,) = [o for o in items if o.kind == "pre_construction"]
        return found

    missed = before_construction()
    assert (missed.status, missed.due_at) == ("overdue", start.astimezone(dt.UTC))
    # One made that morning, before the first land disturbance, is.
    morning = make.inspection(permit, performed_at=start - dt.timedelta(hours=2))
    met = before_construction()
    assert (met.status, met.met_at) == ("met", morning.performed_at)
    # Without a time, the day is kept and read as before.
    form["construction_started_time"] = ""
    assert browser.post(f"/permits/{permit.id}/edit", form).status_code == 303
    db.session.expire_all()
    assert permit.construction_started_at is None and permit.construction_started_on == start.date()
    # A time the clocks skipped (2:30 AM, the night they go forward) names no moment: refused beside the field.
    skipped = browser.post(f"/permits/{permit.id}/edit", form | {"issued_on": "2026-01-05",
                                                                "construction_started_on": "2026-03-08",
                                                                "construction_started_time": "02:30"})
    assert skipped.status_code == 422
    assert "There was no 2:30 AM on Mar 8, 2026: the clocks went forward at 2:00 AM." in skipped.text
    db.session.expire_all()
    assert permit.construction_started_on == start.date()


def test_a_storm_after_the_start_on_the_start_day_creates_a_duty_and_one_before_it_none(make):
    """§380-2: a storm reached before the first land disturbance that day creates no duty; one after it does."""
    start = utcnow().astimezone(LOCAL_TZ).replace(hour=12, minute=0, second=0, microsecond=0) - dt.timedelta(days=1)
    permit = make.permit(cgp_schedule="every_14_days_and_storm", issued_on=start.date() - dt.timedelta(days=30),
                         construction_started_on=start.date())
    permit.construction_started_at = start.astimezone(dt.UTC)
    for hours in (-4, 3):  # reached at 8 a.m., before work began; at 3 p.m., after
        reached = start + dt.timedelta(hours=hours)
        db.session.add(StormEvent(permit_id=permit.id, day=reached.date(), depth_mm=8.0, station_id="72509",
                                  started_at=reached - dt.timedelta(hours=3), reached_at=reached, ended_at=reached))
    db.session.commit()
    storms = _open(permit, "storm_inspection")
    assert [o.opens_at for o in storms] == [(start + dt.timedelta(hours=3)).astimezone(dt.UTC)]


def test_a_structure_backfilled_without_its_inspection_is_found_a_violation_once_on_the_next_site_report(
        make, signed_in, weather_offline):
    """§380-16 C(4)(c) (issue 32: "A structure backfilled without its inspection is a violation"): the next report of
    the whole site records it as a violation finding, which keeps a stop-work order standing until corrected; once,
    and not for a structure whose inspection the authority waived (§380-8)."""
    engineer, agent = make.user("inspector"), make.user("agent")
    permit = make.permit(inspectors=[engineer], structures=["Infiltration system IS-1", "Pipe P-2"],
                         construction_started_on=dt.date(2026, 6, 2))
    buried, waived = permit.structures
    browser = signed_in(engineer)
    for structure in (buried, waived):
        at = _local(utcnow() - dt.timedelta(hours=3))
        response = browser.post(f"/permits/{permit.id}/structures/{structure.id}/backfill",
                                {f"backfill-{structure.id}-at": at}, htmx="structures")
        assert response.status_code == 200, response.text
    grant_waiver(agent, db.session.get(Permit, permit.id), "pre_bury", "Inspected by the town's video on June 3.",
                 dt.date(2026, 6, 3), structure=db.session.get(StormwaterStructure, waived.id))
    db.session.commit()

    report = start(browser, permit, "erosion_control")
    assert submit(browser, report).status_code == 303

    page = browser.get(f"/inspections/{report.id}").text
    assert "Infiltration system IS-1 was backfilled on" in page and "without its pre-bury inspection" in page
    assert "Pipe P-2 was backfilled" not in page  # its inspection was waived
    violations = open_violations(db.session.get(Permit, permit.id))
    assert [(f.location, f.is_violation, f.citation) for f in violations] == [
        ("Infiltration system IS-1", True, "§380-16 C(4)(c)")]

    again = start(browser, permit, "erosion_control")
    assert submit(browser, again).status_code == 303
    assert "without its pre-bury inspection" not in browser.get(f"/inspections/{again.id}").text
    assert len(open_violations(db.session.get(Permit, permit.id))) == 1  # found once
