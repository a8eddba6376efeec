"""The CGP's parts of an erosion-control report made offline and pushed (issue 20, items 3-5): the same form
fields as online, so the same checks; and back out in the snapshot a device pulls."""
from __future__ import annotations

import datetime as dt

import pytest

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.inspections import canonical
from inspect_app.permits import services as permits
from inspect_app.types import LOCAL_TZ, new_id, utcnow
from sync.client import SyncClient, new_op
from tests.builders import signature_png
from tests.sync.test_field_work import erosion_form, sha


@pytest.fixture
def site(make, central, device_token):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    outfall = permits.add_structure(None, permit, name="Outfall OF-1", kind="outfall")
    fence = permits.add_structure(None, permit, name="Silt fence, east line", kind="bmp")
    db.session.commit()
    return inspector, permit, outfall, fence, SyncClient(central.url, device_token(inspector))


def _op(permit, inspector, form) -> dict:
    payload = {"permit_id": permit.id, "type": "erosion_control",
               "performed_at": (utcnow() - dt.timedelta(hours=1)).astimezone(LOCAL_TZ).isoformat(),
               "form": erosion_form(permit, inspector, **form), "signature_sha256": sha(signature_png())}
    return new_op("inspection.submit", new_id(), payload)


def test_discharges_fixes_and_unsafe_areas_go_up_and_come_back_down(site):
    inspector, permit, outfall, fence, tablet = site
    tablet.upload_blob(signature_png(), "image/png")
    today = utcnow().astimezone(LOCAL_TZ).date().isoformat()
    point, fix = f"discharge-{outfall.id}", f"fix-control_maintained-{fence.id}"
    form = {f"{point}-now": "yes", f"{point}-since_last": "yes", f"{point}-signs": ["turbidity", "sheen"],
            f"{point}-description": "Grey water, a sheen at the edges",
            f"answer-control_maintained-{fence.id}": "no",
            "answer-fueling_maintenance_areas-site": "unsafe",
            "note-fueling_maintenance_areas-site": "Crane lift over the fuel area"}

    # A "no" without its fix is refused, with the field named, and nothing is kept.
    refused = tablet.push([_op(permit, inspector, form)])[0]
    assert refused["status"] == "rejected"
    assert "needs a corrective action" in refused["reasons"][f"payload.form.{fix}-action"]
    assert db.session.query(Inspection).count() == 0

    form |= {f"{fix}-repair": "Clean out the sediment behind the fence", f"{fix}-first_observed": today,
             f"{fix}-kind": "routine_maintenance", f"{fix}-owner_name": "Site contractor"}
    op = _op(permit, inspector, form)
    answer = tablet.push([op])[0]
    assert answer["status"] == "applied", answer

    inspection = db.session.get(Inspection, op["record_id"])
    [action] = db.session.query(CorrectiveAction).all()
    record = canonical.report_record(inspection)
    assert canonical.record_hash(inspection) == answer["record_sha256"]
    assert record["details"]["discharges"][outfall.id]["signs"] == ["turbidity", "sheen"]
    assert record["details"]["fixes"][f"control_maintained-{fence.id}"]["action_id"] == action.id
    assert {"item": "fueling_maintenance_areas", "subject": "", "answer": "unsafe",
            "note": "Crane lift over the fuel area"} in record["answers"]

    pulled = tablet.snapshot(permit.id)
    assert pulled["last_inspection"]["details"]["discharges"][outfall.id]["description"] == \
        "Grey water, a sheen at the edges"
    assert [a["id"] for a in pulled["corrective_actions"]] == [action.id]
    assert action.description == "Clean out the sediment behind the fence" and action.kind == "routine_maintenance"
