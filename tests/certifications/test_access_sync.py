"""Through sync too, a permittee never sees or changes another permittee's permit (§380-14 records).

The browser's outbox syncs with the signed-in session, so these tests push and pull as a permittee's
session does: JSON with the CSRF header.
"""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from sqlalchemy import func, select

from inspect_app.certifications.models import MaintenanceLogEntry, OMCertification
from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction
from inspect_app.photos.models import Photo
from inspect_app.types import new_id, utcnow
from sync.client import new_op
from tests.builders import jpeg
from tests.offline.offline_helpers import sha256

HIDDEN = "No such permit, or you may not see it."


@pytest.fixture
def two_owners(make, completed_permit):
    """Two permittees, each with a completed permit; the victim's has a log entry and an open action."""
    victim, intruder = make.user("permittee", name="Vic Owner"), make.user("permittee", name="Ira Owner")
    theirs = completed_permit(victim, dt.date(2025, 6, 2))
    mine = completed_permit(intruder, dt.date(2025, 6, 2))
    entry = MaintenanceLogEntry(permit_id=theirs.id, kind="inspection", performed_on=dt.date(2025, 7, 1),
                                description="Forebay checked", performed_by="Vic Owner")
    db.session.add(entry)
    finding = make.finding(theirs)
    action = findings.open_action(make.user("inspector"), finding, "routine_maintenance", "Reset the silt fence",
                                  owner_name="Vic Owner")
    db.session.commit()
    return {"victim": victim, "intruder": intruder, "theirs": theirs, "mine": mine, "entry": entry.id,
            "action": action.id}


def _push(browser, ops):
    return browser.client.post("/sync/push", json={"sent_at": utcnow().isoformat(), "ops": ops},
                               headers={"X-CSRFToken": browser.token, "Accept": "application/json"})


def _upload(browser, data: bytes) -> str:
    digest = sha256(data)
    headers = {"X-CSRFToken": browser.token, "Upload-Offset": "0", "Content-Type": "application/octet-stream"}
    assert browser.client.put(f"/sync/blobs/{digest}", data=data, headers=headers).status_code in (200, 201, 204)
    done = browser.client.post(f"/sync/blobs/{digest}/complete", json={"content_type": "image/jpeg"},
                               headers={"X-CSRFToken": browser.token})
    assert done.status_code in (200, 201), done.text
    return digest


def _counts():
    db.session.expire_all()
    count = lambda model: db.session.scalar(select(func.count()).select_from(model))  # noqa: E731
    return (count(MaintenanceLogEntry), count(OMCertification), count(Photo),
            db.session.scalar(select(CorrectiveAction.status)))


def test_pushes_on_another_permittees_permit_are_refused_and_change_nothing(two_owners, signed_in):
    w = two_owners
    browser = signed_in(w["intruder"])
    photo = _upload(browser, jpeg(7))
    theirs = w["theirs"].id
    ops = [
        new_op("om.log", new_id(), {"permit_id": theirs, "kind": "repair", "performed_on": "2025-08-01",
                                    "description": "Fake repair", "performed_by": "Ira Owner"}),
        new_op("om.certify", new_id(), {"permit_id": theirs, "period_start": "2025-06-02",
                                        "signer_name": "Ira Owner"}),
        new_op("action.close", w["action"], {"completed_at": utcnow().isoformat(), "note": "Done, honest"}, 1),
        # A photo "of" the victim's log entry, claimed under the intruder's own permit.
        new_op("photo.attach", new_id(), {"permit_id": w["mine"].id, "original_sha256": photo,
                                          "log_entry_id": w["entry"]}),
    ]
    before = _counts()
    answers = _push(browser, ops).json["results"]
    # Their permit is "no such permit"; their action and log entry answer as records not there (waiting for
    # them, docs/sync.md): nothing tells the intruder they exist.
    assert [a["status"] for a in answers] == ["rejected", "rejected", "waiting", "waiting"]
    assert answers[0]["reasons"] == {"payload.permit_id": HIDDEN}
    assert answers[1]["reasons"] == {"payload.permit_id": HIDDEN}
    assert answers[2]["waiting_for"] == {"record": w["action"]}
    assert answers[3]["waiting_for"] == {"record": w["entry"]}
    assert _counts() == before
    # The same operations from the victim's own session go through: the refusals were about the owner.
    fresh = [{**op, "op_id": str(uuid.uuid4())} for op in ops[:3]]
    owner_answers = _push(signed_in(w["victim"]), fresh).json["results"]
    assert [a["status"] for a in owner_answers] == ["applied"] * 3


def test_pull_and_snapshots_hold_nothing_of_another_permittees_permit(two_owners, signed_in):
    w = two_owners
    browser = signed_in(w["intruder"])
    seen, cursor, more = [], 0, True
    while more:
        page = browser.get(f"/sync/changes?cursor={cursor}&limit=50").json
        seen += page["changes"]
        cursor, more = page["cursor"], page["more"]
    assert {c["permit_id"] for c in seen} == {w["mine"].id}
    assert not any("Forebay checked" in str(c["after"]) or "Reset the silt fence" in str(c["after"]) for c in seen)
    listed = browser.get("/sync/permits").json
    assert w["theirs"].number not in str(listed) and w["mine"].number in str(listed)
    refused = browser.get(f"/sync/permits/{w['theirs'].id}/snapshot")
    assert refused.status_code == 404 and w["theirs"].number not in refused.text
    assert browser.get(f"/sync/permits/{w['mine'].id}/snapshot").status_code == 200


def test_the_answer_to_another_users_operation_is_not_given_out(two_owners, signed_in):
    w = two_owners
    op = new_op("om.log", new_id(), {"permit_id": w["theirs"].id, "kind": "inspection", "performed_on": "2025-08-01",
                                     "description": "Outlet clear", "performed_by": "Vic Owner"})
    assert _push(signed_in(w["victim"]), [op]).json["results"][0]["status"] == "applied"
    looked_up = signed_in(w["intruder"]).get(f"/sync/ops/{op['op_id']}")
    assert looked_up.status_code == 404 and "Outlet clear" not in looked_up.text


def test_a_permittee_adds_photos_to_their_own_log_but_not_to_a_report(two_owners, make, signed_in):
    w = two_owners
    browser = signed_in(w["victim"])
    photo = _upload(browser, jpeg(8))
    report = make.inspection(w["theirs"])
    ops = [new_op("photo.attach", new_id(), {"permit_id": w["theirs"].id, "original_sha256": photo,
                                             "log_entry_id": w["entry"], "caption": "Forebay after cleaning"}),
           new_op("photo.attach", new_id(), {"permit_id": w["theirs"].id, "original_sha256": photo,
                                             "inspection_id": report.id})]
    answers = _push(browser, ops).json["results"]
    assert [a["status"] for a in answers] == ["applied", "rejected"]
    assert answers[1]["reasons"] == {"payload.permit_id": "Your role may not do inspection.perform on this permit."}
    db.session.expire_all()
    stored = db.session.scalars(select(Photo).where(Photo.original_sha256 == photo)).all()
    assert [(p.log_entry_id, p.inspection_id, p.caption) for p in stored] == [
        (w["entry"], None, "Forebay after cleaning")]
