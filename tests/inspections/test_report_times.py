"""Dates and times typed on a report that no calendar can hold (issue 29): `performed_at=9999-12-31T23:59` was a
500 (OverflowError: in Massachusetts that moment is past the last one UTC can hold). Now a 422 naming the years
allowed, beside the field, and nothing is changed; the sync API takes the same years."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, Inspection, InspectionNotice
from inspect_app.types import utcnow
from sync.client import new_op
from sync.services import create_device
from tests.inspections.report_helpers import error_beside, filled, report_form, start


@pytest.mark.parametrize("field", ["performed_at", "ended_at"])
@pytest.mark.parametrize("value", ["9999-12-31T23:59", "0001-01-01T00:00"])
def test_a_time_past_the_calendar_is_refused_beside_its_field(make, signed_in, field, value):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad"])
    client = signed_in(inspector)
    inspection = start(client, permit, "erosion_control")
    before = db.session.get(Inspection, inspection.id).performed_at
    page = client.get(f"/inspections/{inspection.id}").text
    for url, data in ((f"/inspections/{inspection.id}", report_form(page)[0] | {field: value}),
                      (f"/inspections/{inspection.id}/submit", filled(page, **{field: value}))):
        answer = client.post(url, data)
        assert answer.status_code == 422, (url, answer.status_code)
        assert error_beside(answer.text, field) == "Enter a date between 1900 and 2199.", url
    db.session.expire_all()
    stored = db.session.get(Inspection, inspection.id)
    assert stored.status == "draft" and stored.performed_at == before and stored.ended_at is None
    assert db.session.scalar(select(func.count()).select_from(ChecklistAnswer)) == 0


@pytest.mark.parametrize("where", ["performed_at", "at", "sent_at"])
def test_a_sync_push_with_a_time_past_the_calendar_is_refused_and_changes_nothing(app, make, where):
    """The same years for the times a device sends: 0001-01-01T00:00+05:00 was a 500 (OverflowError)."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad"])
    _device, token = create_device(None, inspector, "tablet")
    db.session.commit()
    late, fine = "0001-01-01T00:00:00+05:00", utcnow().isoformat()
    ops = [new_op("area.status", permit.areas[0].id, {"status": "activity_ceased",
                                                       "at": late if where == "at" else fine}, 1),
           new_op("inspection.submit", str(uuid.uuid4()), {"permit_id": permit.id, "type": "erosion_control",
                                                          "performed_at": late if where == "performed_at" else fine})]
    answer = app.test_client().post("/sync/push", json={"ops": ops, **({"sent_at": late} if where == "sent_at" else {})},
                                    headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code in (400, 422), answer.get_data(as_text=True)[:500]
    assert "between 1900 and 2199" in answer.get_data(as_text=True)
    db.session.expire_all()
    assert permit.areas[0].revision == 1
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 0


SPRING_FORWARD = ("There was no 2:30 AM on Mar 8, 2026: the clocks went forward at 2:00 AM. Enter a time before "
                  "then, or from 3:00 AM.")


def test_a_time_the_clocks_skipped_is_refused_not_moved(make, signed_in):
    """2:30 AM on the night Massachusetts' clocks go forward names no moment: it was stored, silently, as 3:30
    EDT. Now the report says so beside the field and keeps its time; 1:30 AM of the night they go back (twice
    that night) is taken as the first of the two."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad"], issued_on=dt.date(2026, 1, 5))
    client = signed_in(inspector)
    inspection = start(client, permit, "erosion_control")
    before = db.session.get(Inspection, inspection.id).performed_at
    page = client.get(f"/inspections/{inspection.id}").text
    answer = client.post(f"/inspections/{inspection.id}", report_form(page)[0] | {"performed_at": "2026-03-08T02:30"})
    assert answer.status_code == 422 and error_beside(answer.text, "performed_at") == SPRING_FORWARD
    assert 'value="2026-03-08T02:30"' in answer.text  # what was typed stays in the field, to be corrected
    db.session.expire_all()
    assert db.session.get(Inspection, inspection.id).performed_at == before

    kept = client.post(f"/inspections/{inspection.id}", report_form(page)[0] | {"performed_at": "2026-11-01T01:30"})
    assert kept.status_code in (200, 303), kept.status_code
    db.session.expire_all()
    assert db.session.get(Inspection, inspection.id).performed_at == dt.datetime(2026, 11, 1, 5, 30, tzinfo=dt.UTC)


def test_a_notice_planned_in_the_skipped_hour_is_refused_beside_its_field(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    answer = signed_in(inspector).post(f"/permits/{permit.id}/inspection-notices", {
        "notice-inspection_type": "final", "notice-planned_for": "2027-03-14T02:15"}, htmx="inspections")
    assert answer.status_code == 422
    assert "There was no 2:15 AM on Mar 14, 2027: the clocks went forward at 2:00 AM." in answer.text
    assert db.session.scalar(select(func.count()).select_from(InspectionNotice)) == 0


def test_a_report_dated_before_its_permit_was_issued_is_refused_but_the_initial_site_inspection(make, signed_in):
    """A tablet whose clock fell back to 1970 while offline dated its reports so, and they were signed as the
    record: an inspection under a permit dated before the permit was issued. The initial site inspection alone
    comes first: §380-16 C(4)(a) "Initial Site Inspection: prior to approval of any plan"."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad"], issued_on=dt.date(2026, 6, 1))
    client = signed_in(inspector)
    report = start(client, permit, "erosion_control")
    page = client.get(f"/inspections/{report.id}").text
    for when in ("1970-01-01T09:30", "2026-05-31T16:00"):
        refused = client.post(f"/inspections/{report.id}/submit", filled(page, performed_at=when))
        assert refused.status_code == 422
        assert error_beside(refused.text, "performed_at") == (
            "The inspection cannot be before the permit was issued (Jun 1, 2026): check the date, and the "
            "device's clock.")
    db.session.expire_all()
    assert db.session.get(Inspection, report.id).status == "draft"
    signed = client.post(f"/inspections/{report.id}/submit", filled(page, performed_at="2026-06-01T08:00"))
    assert signed.status_code == 303
    initial = start(client, permit, "initial")
    page = client.get(f"/inspections/{initial.id}").text
    assert client.post(f"/inspections/{initial.id}/submit", filled(page, performed_at="2026-05-20T10:00")
                       ).status_code == 303
