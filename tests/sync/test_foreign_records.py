"""A record of another town (or one the user may not see) answers exactly as a record that is not there,
and the server takes no lock on it: a push tells a device nothing of other towns' work and never waits for it."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from sqlalchemy import func, select, text

from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction
from inspect_app.inspections import services as inspections
from inspect_app.photos.models import Photo
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import new_id, utcnow
from sync import services as sync
from sync.client import new_op
from sync.models import SyncOperation


def push(client, token: str, ops: list[dict]) -> list[dict]:
    answer = client.post("/sync/push", json={"ops": ops}, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.json
    return answer.json["results"]


def told(answer: dict, named_id: str) -> dict:
    """What an answer tells beyond the ids the device sent (`named_id`: the record or blob it is about)."""
    return json.loads(json.dumps({k: v for k, v in answer.items() if k not in ("op_id", "record_id")})
                      .replace(named_id, "<id>"))


def open_action(make, permit, author):
    """A corrective action on a submitted report of `permit`."""
    finding = make.finding(permit)
    action = findings.open_action(author, finding, "routine_maintenance", "Re-stake the fence", owner_name="GC")
    db.session.commit()
    return action


@pytest.fixture
def towns(make):
    """Me, an inspector on a Longmeadow permit; and a Southborough permit I am not on, with an area, an open
    corrective action and a photo."""
    me = make.user("inspector")
    mine = make.permit(inspectors=[me], areas=["Pad"])
    theirs = make.permit("southborough", areas=["Far pad"])
    action = open_action(make, theirs, make.user("agent", town="southborough"))
    photo = make.photo(theirs)
    return me, mine, theirs, action, photo


def test_another_towns_area_action_report_and_photo_answer_as_records_not_there(client, make, device_token, towns):
    me, mine, theirs, action, photo = towns
    colleague = make.user("inspector")
    draft = inspections.start_inspection(colleague, mine, "erosion_control", fetch_weather=False)
    db.session.commit()
    now = utcnow().isoformat()

    def area_status(area_id, **payload):
        return new_op("area.status", area_id, {"status": "activity_ceased", "at": now, **payload}, 1)

    def close(action_id):
        return new_op("action.close", action_id, {"completed_at": now}, 1)

    def attach(sha, **target):
        return new_op("photo.attach", new_id(), {"permit_id": mine.id, "original_sha256": sha, **target})

    missing = new_id()
    their_area, their_sha = theirs.areas[0].id, photo.original_sha256
    cases = [  # (about a record of theirs, its id), (about a record that is not there, its id)
        ((area_status(their_area), their_area), (area_status(missing), missing)),
        ((close(action.id), action.id), (close(missing), missing)),
        ((area_status(mine.areas[0].id, inspection_id=draft.id), draft.id),  # a colleague's draft report
         (area_status(mine.areas[0].id, inspection_id=missing), missing)),
        ((attach("b" * 64, finding_id=action.finding_id), action.finding_id),
         (attach("b" * 64, finding_id=missing), missing)),
        ((attach(their_sha), their_sha), (attach("c" * 64), "c" * 64)),  # their photo's bytes, named by hash
    ]
    token = device_token(me)
    for (their_op, their_id), (missing_op, missing_id) in cases:
        [about_theirs] = push(client, token, [their_op])
        [about_nothing] = push(client, token, [missing_op])
        assert about_theirs["status"] == about_nothing["status"] == "waiting", (about_theirs, about_nothing)
        assert told(about_theirs, their_id) == told(about_nothing, missing_id), their_op["kind"]

    db.session.expire_all()
    assert db.session.get(DisturbedArea, theirs.areas[0].id).revision == 1
    assert db.session.get(CorrectiveAction, action.id).completed_at is None
    assert db.session.scalar(select(func.count()).select_from(Photo)) == 1  # theirs only: nothing attached


def test_a_permittee_is_refused_area_status_for_their_role_whichever_area_it_names(client, make, device_token, towns):
    _, mine, theirs, _, _ = towns
    permittee = make.user("permittee")
    mine.owner_id = permittee.id
    db.session.commit()
    now = utcnow().isoformat()
    answers = push(client, device_token(permittee), [
        new_op("area.status", area_id, {"status": "activity_ceased", "at": now}, 1)
        for area_id in (mine.areas[0].id, theirs.areas[0].id, new_id())])
    assert [a["status"] for a in answers] == ["rejected"] * 3
    assert len({a["reasons"]["record_id"] for a in answers}) == 1
    assert "may not do area.edit" in answers[0]["reasons"]["record_id"]


def test_resolving_another_towns_conflict_answers_as_for_no_conflict(client, make, device_token, signed_in):
    inspector = make.user("inspector")
    area = make.permit(inspectors=[inspector], areas=["Pad"]).areas[0]
    [answer] = push(client, device_token(inspector), [
        new_op("area.status", area.id, {"status": "activity_ceased", "at": utcnow().isoformat()}, 99)])
    assert answer["status"] == "conflict"
    agent = signed_in(make.user("agent", town="southborough"))
    headers = {"X-CSRFToken": agent.token}
    theirs = agent.client.post(f"/sync/conflicts/{answer['conflict_id']}/resolve", headers=headers)
    nothing = agent.client.post(f"/sync/conflicts/{new_id()}/resolve", headers=headers)
    assert (theirs.status_code, theirs.json) == (nothing.status_code, nothing.json) == (404, nothing.json)
    db.session.expire_all()
    assert db.session.get(DisturbedArea, area.id).has_conflict is True


def _held_elsewhere(table: str, record_id: str):
    """A second connection that locks one row (FOR UPDATE) until released: someone of that town at work."""
    connection = db.engine.connect()
    transaction = connection.begin()
    connection.execute(text(f"SELECT id FROM {table} WHERE id = :id FOR UPDATE"), {"id": record_id})
    return connection, transaction


def test_a_push_naming_another_towns_records_takes_no_lock_on_them(app, make, towns):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("row locks (SELECT ... FOR UPDATE) are PostgreSQL's; SQLite locks the whole database")
    me, _, theirs, action, _ = towns
    now = utcnow().isoformat()
    ops = [new_op("area.status", theirs.areas[0].id, {"status": "activity_ceased", "at": now}, 1),
           new_op("action.close", action.id, {"completed_at": now}, 1)]
    parsed, offset = sync.parse_batch(json.dumps({"ops": ops}).encode(), utcnow())
    holders = [_held_elsewhere("disturbed_areas", theirs.areas[0].id), _held_elsewhere("corrective_actions", action.id)]
    try:
        # Locked by their town's own work: a push that tried to lock these rows would wait, then fail here.
        db.session.execute(text("SET LOCAL lock_timeout = '2s'"))
        answers = sync.push(me, None, parsed, dt.timedelta(0))
    finally:
        for connection, transaction in holders:
            transaction.rollback()
            connection.close()
    assert [a["status"] for a in answers] == ["waiting", "waiting"]


def test_an_operation_beyond_its_tokens_town_stays_unapplied_whoever_retries_it(app, make, signed_in):
    """Issue 29: with a town admin's token, an area status for another town's area waited (as for an area not
    there); the same engineer's next push from a browser session retried it with no town limit and applied it.
    A waiting operation is retried as its device sent it, within the town of that device's token."""
    engineer = make.user("inspector")
    lm_area = make.permit("longmeadow", inspectors=[engineer], areas=["Pad"]).areas[0]
    sb_area = make.permit("southborough", inspectors=[engineer], areas=["Basin"]).areas[0]
    _device, token = sync.create_device(make.user("admin", town="longmeadow"), engineer, "tablet")
    db.session.commit()
    beyond = new_op("area.status", sb_area.id, {"status": "activity_ceased", "at": utcnow().isoformat()}, 1)
    assert push(app.test_client(), token, [beyond])[0]["waiting_for"] == {"record": sb_area.id}

    browser = signed_in(engineer)  # the same engineer, in the browser: sees both towns' permits
    own = new_op("area.status", lm_area.id, {"status": "activity_ceased", "at": utcnow().isoformat()}, 1)
    answer = browser.client.post("/sync/push", json={"ops": [own]}, headers={"X-CSRFToken": browser.token})
    assert answer.json["results"][0]["status"] == "applied"
    sync.retry_waiting(user_id=engineer.id)  # as a blob's completion or a command retries, outside any request
    db.session.expire_all()
    assert db.session.get(DisturbedArea, sb_area.id).revision == 1
    assert db.session.get(DisturbedArea, lm_area.id).revision == 2
    assert db.session.scalar(select(SyncOperation.status).where(SyncOperation.op_id == beyond["op_id"])) == "waiting"
