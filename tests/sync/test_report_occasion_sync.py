"""Why, when and who (issue 20) on a report made offline: the tablet posts the same form fields, the central
record keeps them in the report's canonical record, and the next snapshot brings them back to the tablet."""
from __future__ import annotations

import datetime as dt

from inspect_app.extensions import db
from inspect_app.inspections.canonical import CFR_122_22_D, report_record
from inspect_app.inspections.models import Inspection
from inspect_app.types import LOCAL_TZ, new_id, utcnow
from sync.client import SyncClient, new_op
from tests.builders import signature_png
from tests.sync.test_field_work import erosion_form, sha


def test_an_offline_report_says_why_when_and_who_and_comes_back_in_the_snapshot(make, central, device_token):
    inspector = make.user("inspector", title="Field Inspector", organization="Reyes Engineering LLC",
                          phone="413-555-0142")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"], npdes_id="MAR12A999",
                         construction_started_on=(utcnow() - dt.timedelta(days=3)).date())
    tablet = SyncClient(central.url, device_token(inspector))
    signature = signature_png()
    tablet.upload_blob(signature, "image/png")
    started = (utcnow() - dt.timedelta(hours=2)).replace(second=0, microsecond=0).astimezone(LOCAL_TZ)
    form = erosion_form(permit, inspector, trigger="follow_up", construction_phase="Utilities",
                        ended_at=(started + dt.timedelta(minutes=50)).strftime("%Y-%m-%dT%H:%M"))
    op = new_op("inspection.submit", new_id(), {
        "permit_id": permit.id, "type": "erosion_control", "performed_at": started.isoformat(),
        "latitude": 42.0503, "longitude": -72.5831, "form": form, "signature_sha256": sha(signature)})
    answer = tablet.push([op])[0]
    assert answer["status"] == "applied", answer

    record = report_record(db.session.get(Inspection, op["record_id"]))
    assert record["occasion"]["trigger"] == "follow_up"
    # A Longmeadow site on the 7-day schedule also owes an inspection after a storm (§380-11 C(3)(f)).
    assert record["occasion"]["schedule_in_force"] == {
        "text": "At least every 7 calendar days, and within 24 hours of a storm of 0.25 in or more",
        "citation": "CGP 2022 Part 4.2; §380-11 C(3)(f)"}
    assert record["ended_at"] == (started + dt.timedelta(minutes=50)).astimezone(dt.UTC).isoformat()
    assert record["construction_phase"] == "Utilities"
    assert record["b_inspector"] | {"id": None} == {
        "id": None, "name": inspector.name, "credentials": inspector.credentials, "title": "Field Inspector",
        "organization": "Reyes Engineering LLC", "contact": f"413-555-0142, {inspector.email}"}
    assert record["permit"]["npdes_id"] == "MAR12A999"
    assert record["storms"] == {"linked": None, "since_last": []}
    assert record["signature"]["statement"] == CFR_122_22_D

    back = tablet.snapshot(permit.id)
    last = back["last_inspection"]
    assert (last["id"], last["trigger"], last["construction_phase"]) == (op["record_id"], "follow_up", "Utilities")
    assert last["schedule_in_force"]["text"] == "At least every 7 calendar days, and within 24 hours of a storm of 0.25 in or more"
    assert back["permit"]["npdes_id"] == "MAR12A999"
    assert {"title": "Field Inspector", "organization": "Reyes Engineering LLC"}.items() <= next(
        p for p in back["people"] if p["id"] == inspector.id).items()
