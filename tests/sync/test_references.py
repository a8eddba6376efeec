"""An operation whose payload names a record of another permit or town it sees is refused with its own reason,
one naming someone else's draft waits as for a record not here; the other operations of the batch apply."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.inspections import services as inspections
from inspect_app.photos.models import Photo
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import new_id, utcnow
from sync.client import new_op

NOT_YOURS = "of this permit has this id, or you may not see it."


def test_references_to_other_permits_towns_and_drafts_are_refused_one_by_one(client, make, device_token):
    me, colleague = make.user("inspector"), make.user("inspector")
    mine = make.permit(inspectors=[me, colleague], areas=["Pad"], structures=["Basin"])
    elsewhere = make.permit("southborough", inspectors=[me], areas=["Far pad"], structures=["Far basin"])
    other_report = make.inspection(elsewhere, inspector=me)
    other_finding = make.finding(elsewhere)
    # A colleague's draft on my own permit, with a finding and its corrective action.
    draft = inspections.start_inspection(colleague, mine, "erosion_control", fetch_weather=False)
    finding = findings.add_finding(colleague, draft, "Silt fence down", severity="major")
    draft_action = findings.open_action(colleague, finding, "routine_maintenance", "Re-stake", owner_name="GC")
    db.session.commit()
    area = mine.areas[0]
    now = utcnow().isoformat()

    def area_status(inspection_id=None):
        payload = {"status": "activity_ceased", "at": now, **({"inspection_id": inspection_id} if inspection_id else {})}
        return new_op("area.status", area.id, payload, 1)

    def attach(**target):
        return new_op("photo.attach", new_id(), {"permit_id": mine.id, "original_sha256": "a" * 64, **target})

    ops = [
        area_status(other_report.id),                                        # another town's report
        area_status(draft.id),                                               # a colleague's draft
        new_op("action.close", draft_action.id, {"completed_at": now}, 1),   # a draft's action
        attach(finding_id=other_finding.id),                                 # another town's finding
        attach(structure_id=elsewhere.structures[0].id),                     # another town's structure
        attach(inspection_id=draft.id),                                      # a colleague's draft
        new_op("inspection.submit", draft.id, {"permit_id": mine.id, "type": "erosion_control",
                                               "performed_at": now}),        # someone else's draft, taken over
        new_op("notice.give", new_id(), {"permit_id": mine.id, "inspection_type": "erosion_control",
                                         "planned_for": (utcnow() + dt.timedelta(hours=30)).isoformat()}),
        area_status(),                                                       # fine: applies
    ]
    answers = client.post("/sync/push", json={"ops": ops},
                          headers={"Authorization": f"Bearer {device_token(me)}"}).json["results"]

    # A colleague's draft (or a part of it) is not mine to see: it answers as a record not here yet
    # (tests/sync/test_foreign_records.py); a record of another permit I see is refused with its reason.
    assert [a["status"] for a in answers] == (["rejected", "waiting", "waiting", "rejected", "rejected", "waiting",
                                               "rejected", "applied", "applied"])
    assert answers[0]["reasons"] == {"payload.inspection_id": f"No report {NOT_YOURS}"}
    assert answers[1]["waiting_for"] == {"record": draft.id}
    assert answers[2]["waiting_for"] == {"record": draft_action.id}
    assert answers[3]["reasons"] == {"payload.finding_id": f"No finding {NOT_YOURS}"}
    assert answers[4]["reasons"] == {"payload.structure_id": f"No structure {NOT_YOURS}"}
    assert answers[5]["waiting_for"] == {"record": draft.id}
    assert answers[6]["reasons"] == {"record_id": "Another report already has this id."}
    # Nothing of the refused operations was kept; the area changed once, by the last operation.
    db.session.expire_all()
    events = db.session.scalars(select(AreaStatusEvent).where(AreaStatusEvent.area_id == area.id)).all()
    assert [e.inspection_id for e in events if e.status == "activity_ceased"] == [None]
    assert db.session.get(DisturbedArea, area.id).revision == 2
    assert db.session.get(CorrectiveAction, draft_action.id).completed_at is None
    assert db.session.get(Inspection, draft.id).status == "draft"
    assert db.session.scalar(select(func.count()).select_from(Photo)) == 0
