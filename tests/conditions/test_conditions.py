"""Frozen conditions (CGP 2022 Part 4.4) and snowmelt discharges seen on site (CGP 2022 Parts 4.2, 4.3),
recorded through the app, and the inspections they change."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import select

from inspect_app.audit.models import AuditEntry
from inspect_app.conditions.models import FrozenPeriod, SnowmeltDischarge
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.schedule.models import PermitObligation
from inspect_app.types import LOCAL_TZ, utcnow


def _local(at: dt.datetime) -> str:
    return at.astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")


def _open(permit, kind: str) -> list[PermitObligation]:
    db.session.expire_all()
    return list(db.session.scalars(select(PermitObligation).where(PermitObligation.permit_id == permit.id,
                                                                  PermitObligation.kind == kind)
                                   .order_by(PermitObligation.due_at)))


def _site(make, **fields):
    engineer = make.user("inspector")
    started = (utcnow() - dt.timedelta(days=40)).astimezone(LOCAL_TZ).date()
    permit = make.permit(inspectors=[engineer], issued_on=started - dt.timedelta(days=10),
                         construction_started_on=started, **fields)
    area = permits.add_area(None, permit, "North lot", Decimal("0.5"), since=utcnow() - dt.timedelta(days=40))
    db.session.commit()
    return engineer, permit, area


def test_frozen_with_work_suspended_needs_every_area_stabilized_then_suspends_inspections(make, signed_in):
    """CGP 2022 Part 4.4 (frozen conditions): inspections may be suspended while construction is suspended in
    frozen conditions and every disturbed area is stabilized; the site records the dates; no inspection is
    missed while it lasts, and the schedule resumes when it ends."""
    engineer, permit, area = _site(make)
    make.inspection(permit, performed_at=utcnow() - dt.timedelta(days=30))
    browser = signed_in(engineer)
    form = {"frozen-kind": "suspended", "frozen-starts_at": _local(utcnow() - dt.timedelta(days=25)),
            "frozen-note": "Ground frozen to 18 in; historic averages keep it frozen into March."}
    refused = browser.post(f"/permits/{permit.id}/conditions/frozen", form)
    assert refused.status_code == 422 and "every disturbed area is stabilized" in refused.text
    assert "North lot" in refused.text
    assert db.session.scalars(select(FrozenPeriod)).all() == []
    assert _open(permit, "inspection")[0].due_at < utcnow()  # the missed 7-day inspections stand

    permits.change_area_status(None, area, "stabilized", utcnow() - dt.timedelta(days=29))
    db.session.commit()
    assert browser.post(f"/permits/{permit.id}/conditions/frozen", form).status_code == 303
    (period,) = db.session.scalars(select(FrozenPeriod)).all()
    assert period.suspended and period.recorded_by_id == engineer.id and period.ends_at is None
    assert _open(permit, "inspection") == []  # suspended: nothing due, nothing missed
    page = browser.get(f"/permits/{permit.id}").text
    assert "Construction suspended, inspections suspended" in page and "still frozen" in page

    ended = (utcnow() - dt.timedelta(days=2)).replace(second=0, microsecond=0)
    assert browser.post(f"/permits/{permit.id}/conditions/frozen/{period.id}/end",
                        {"end-ends_at": _local(ended)}).status_code == 303
    (resumed,) = _open(permit, "inspection")
    assert resumed.opens_at == ended and "frozen conditions ended" in resumed.reason
    assert [a for (a,) in db.session.execute(select(AuditEntry.action).where(AuditEntry.entity_id == period.id)
                                             .order_by(AuditEntry.seq))] == ["frozen.begin", "frozen.end"]


def test_inspections_are_not_suspended_back_to_a_time_an_area_was_still_disturbed(make, signed_in):
    """CGP 2022 Part 4.4: inspections may be suspended while "all disturbed areas of the site have been stabilized".
    The check read the areas as they are now: an engineer who missed three weeks of inspections stabilized the
    area today and recorded the suspension from 25 days ago, and the missed inspections were gone."""
    engineer, permit, area = _site(make)
    make.inspection(permit, performed_at=utcnow() - dt.timedelta(days=30))
    permits.change_area_status(None, area, "stabilized", utcnow() - dt.timedelta(hours=2))
    db.session.commit()
    browser = signed_in(engineer)
    form = {"frozen-kind": "suspended", "frozen-starts_at": _local(utcnow() - dt.timedelta(days=25)),
            "frozen-note": "Ground frozen to 18 in; historic averages keep it frozen into March."}
    refused = browser.post(f"/permits/{permit.id}/conditions/frozen", form)
    assert refused.status_code == 422
    assert "from a time every disturbed area was stabilized" in refused.text and "North lot" in refused.text
    assert db.session.scalars(select(FrozenPeriod)).all() == []
    assert _open(permit, "inspection")[0].due_at < utcnow()  # the missed inspections stand

    since_stabilized = {**form, "frozen-starts_at": _local(utcnow() - dt.timedelta(hours=1))}
    assert browser.post(f"/permits/{permit.id}/conditions/frozen", since_stabilized).status_code == 303


def test_frozen_periods_do_not_overlap(make, signed_in):
    """A period beginning before the end of one recorded earlier, running through it, was accepted: the schedule
    then read two periods for one time."""
    engineer, permit, _ = _site(make)
    browser = signed_in(engineer)
    note = "Ground frozen to 18 in; historic averages keep it frozen into March."
    began, ended = utcnow() - dt.timedelta(days=20), (utcnow() - dt.timedelta(days=10)).replace(second=0, microsecond=0)
    assert browser.post(f"/permits/{permit.id}/conditions/frozen", {
        "frozen-kind": "reduced", "frozen-starts_at": _local(began), "frozen-note": note}).status_code == 303
    (period,) = db.session.scalars(select(FrozenPeriod)).all()
    assert browser.post(f"/permits/{permit.id}/conditions/frozen/{period.id}/end",
                        {"end-ends_at": _local(ended)}).status_code == 303
    overlapping = browser.post(f"/permits/{permit.id}/conditions/frozen", {
        "frozen-kind": "reduced", "frozen-starts_at": _local(utcnow() - dt.timedelta(days=15)), "frozen-note": note})
    assert overlapping.status_code == 422 and "new ones begin after them" in overlapping.text
    assert browser.post(f"/permits/{permit.id}/conditions/frozen", {
        "frozen-kind": "reduced", "frozen-starts_at": _local(utcnow() - dt.timedelta(days=5)),
        "frozen-note": note}).status_code == 303


def test_bad_frozen_records_are_refused_beside_the_field(make, signed_in):
    engineer, permit, _ = _site(make)
    browser = signed_in(engineer)
    cases = [({"frozen-kind": "reduced", "frozen-starts_at": _local(utcnow() + dt.timedelta(days=2)),
               "frozen-note": "Frozen"}, "cannot be in the future"),
             ({"frozen-kind": "reduced", "frozen-starts_at": _local(utcnow()), "frozen-note": ""},
              "Say why runoff is unlikely")]
    for data, message in cases:
        response = browser.post(f"/permits/{permit.id}/conditions/frozen", data)
        assert response.status_code == 422 and message in response.text and 'class="field-error"' in response.text
    assert db.session.scalars(select(FrozenPeriod)).all() == []
    owner = signed_in(make.user("permittee"))
    assert owner.post(f"/permits/{permit.id}/conditions/frozen", cases[0][0]).status_code in (403, 404)


def test_a_snowmelt_discharge_seen_on_site_needs_an_inspection_within_24_hours(make, signed_in):
    """CGP 2022 Parts 4.2-4.3 (snowmelt), seen on site: "within 24 hours of the occurrence of ... a snowmelt
    discharge from a storm event that produces 3.25 inches or more of snow within a 24-hour period"."""
    engineer, permit, _ = _site(make, cgp_schedule="every_14_days_and_storm")
    browser = signed_in(engineer)
    seen = (utcnow() - dt.timedelta(hours=5)).replace(second=0, microsecond=0)
    small = browser.post(f"/permits/{permit.id}/conditions/snowmelt",
                         {"snowmelt-discharge_at": _local(seen - dt.timedelta(days=3)), "snowmelt-snow_in": "2.5",
                          "snowmelt-note": "Melt at the east swale"})
    assert small.status_code == 303
    assert _open(permit, "storm_inspection") == []  # 2.5 in of snow: under 3.25 in
    response = browser.post(f"/permits/{permit.id}/conditions/snowmelt",
                            {"snowmelt-discharge_at": _local(seen), "snowmelt-snow_in": "4",
                             "snowmelt-note": "Meltwater running out of the basin outlet"})
    assert response.status_code == 303
    (owed,) = _open(permit, "storm_inspection")
    assert (owed.opens_at, owed.due_at) == (seen, seen + dt.timedelta(hours=24))
    assert "seen on site" in owed.reason and owed.citation == "CGP 2022 Parts 4.2, 4.3"
    assert db.session.scalar(select(SnowmeltDischarge.snow_mm).where(SnowmeltDischarge.discharge_at == seen)) == 101.6
    bad = browser.post(f"/permits/{permit.id}/conditions/snowmelt",
                       {"snowmelt-discharge_at": _local(seen), "snowmelt-snow_in": "-1"})
    assert bad.status_code == 422 and "more than 0" in bad.text
    # An inspection after the discharge answers it.
    make.inspection(permit, performed_at=seen + dt.timedelta(hours=3))
    assert _open(permit, "storm_inspection") == []
    # The page is held on the inspector's device, for a discharge seen where the network does not reach.
    held = browser.get("/offline/pages.json").get_json()["permits"]
    assert f"/permits/{permit.id}/conditions/" in next(p["urls"] for p in held if p["id"] == permit.id)
