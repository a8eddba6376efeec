"""Operations of one push are applied together while they go through, and one by one around an operation
that is refused, waits or conflicts (issue 18: sync push speed). Whatever the grouping, each operation's
answer and its effect on the record are what they would be alone: applied once, or nothing left behind."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import new_id
from sync.client import new_op
from sync.models import SyncConflict, SyncOperation


def count(model, *where) -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(model).where(*where))


def verify(runner):
    """`flask audit verify`: the whole hash chain, in commit order."""
    db.session.rollback()
    return runner.invoke(args=["audit", "verify"])


def push(client, token: str, ops: list[dict]) -> list[dict]:
    answer = client.post("/sync/push", json={"ops": ops}, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.json
    return answer.json["results"]


def test_a_refused_waiting_or_conflicting_op_amid_applied_ones_changes_only_what_it_should(
        client, runner, make, device_token):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad A", "Pad B"])
    first, second = permit.areas
    db.session.commit()
    first_id, second_id = first.id, second.id
    since = max(first.status_since, second.status_since)  # both made just now
    token = device_token(inspector)
    ops = [
        new_op("area.status", first_id, {"status": "activity_ceased", "at": (since + dt.timedelta(minutes=1)).isoformat()}, 1),
        # Before the status it would follow: refused, and its area keeps the change just made.
        new_op("area.status", first_id, {"status": "stabilization_initiated",
                                         "at": (since - dt.timedelta(days=1)).isoformat()}, 2),
        new_op("area.status", second_id, {"status": "activity_ceased", "at": (since + dt.timedelta(minutes=1)).isoformat()}, 1),
        new_op("area.status", new_id(), {"status": "activity_ceased", "at": since.isoformat()}, 1),  # not here yet
        # Based on a revision the server never had: a conflict, kept for a person.
        new_op("area.status", second_id, {"status": "stabilization_initiated", "at": since.isoformat()}, 99),
        new_op("area.status", first_id, {"status": "stabilization_initiated",
                                         "at": (since + dt.timedelta(minutes=2)).isoformat()}, 2),
    ]
    entries_before = count(AuditEntry)

    results = push(client, token, ops)

    assert [r["status"] for r in results] == ["applied", "rejected", "applied", "waiting", "conflict", "applied"]
    db.session.expire_all()
    assert [r.get("revision") for r in results if r["status"] == "applied"] == [2, 2, 3]
    assert "payload.at" in results[1]["reasons"]
    first, second = db.session.get(DisturbedArea, first_id), db.session.get(DisturbedArea, second_id)
    assert (first.status, first.revision, first.has_conflict) == ("stabilization_initiated", 3, False)
    assert (second.status, second.revision, second.has_conflict) == ("activity_ceased", 2, True)
    assert count(AreaStatusEvent, AreaStatusEvent.area_id == first_id) == 1 + 2
    assert count(AreaStatusEvent, AreaStatusEvent.area_id == second_id) == 1 + 1
    assert count(SyncConflict) == 1
    conflict = db.session.get(SyncConflict, results[4]["conflict_id"])
    assert (conflict.entity_id, conflict.op_id) == (second_id, ops[4]["op_id"])
    # Each entry holds the area as that change left it, in the order the changes were made.
    written = db.session.scalars(select(AuditEntry).where(AuditEntry.seq > entries_before)
                                 .order_by(AuditEntry.seq)).all()
    assert [(e.action, e.entity_id, e.after["revision"], e.after["status"]) for e in written] == [
        ("area.status", first_id, 2, "activity_ceased"), ("area.status", second_id, 2, "activity_ceased"),
        ("area.conflict", second_id, 2, "activity_ceased"), ("area.status", first_id, 3, "stabilization_initiated")]
    # One entry per change made: three status changes and the conflict; the refused op wrote none.
    assert count(AuditEntry) - entries_before == 4
    assert count(SyncOperation) == 6  # each stored with its answer, the refused one too
    assert verify(runner).exit_code == 0, verify(runner).output

    replay = push(client, token, ops)

    # A replay changes nothing: each stored answer is given again, and the waiting one still waits.
    assert [r["status"] for r in replay] == ["duplicate"] * 3 + ["waiting"] + ["duplicate"] * 2
    assert [r["original"] for r in replay if r["status"] == "duplicate"] == [
        {k: v for k, v in r.items() if k != "op_id"} for r in results if r["status"] != "waiting"]
    assert count(AuditEntry) - entries_before == 4
    assert count(AreaStatusEvent) == 2 + 3


def test_a_long_push_of_one_area_applies_each_change_once_in_order(client, runner, make, device_token):
    inspector = make.user("inspector")
    area = make.permit(inspectors=[inspector], areas=["Pad"]).areas[0]
    db.session.commit()
    area_id, token, since = area.id, device_token(inspector), area.status_since
    statuses = ("activity_ceased", "stabilization_initiated")
    ops = [new_op("area.status", area_id, {"status": statuses[n % 2],
                                           "at": (since + dt.timedelta(milliseconds=100 * (n + 1))).isoformat()}, n + 1)
           for n in range(450)]

    results = push(client, token, ops)

    assert [r["revision"] for r in results] == list(range(2, 452))
    db.session.expire_all()
    area = db.session.get(DisturbedArea, area_id)
    assert (area.revision, area.status) == (451, statuses[449 % 2])
    assert count(AreaStatusEvent, AreaStatusEvent.area_id == area_id) == 451
    assert verify(runner).exit_code == 0, verify(runner).output
