"""Operations of one push are applied together while they go through, and one by one around an operation
that is refused, waits or conflicts (issue 18: sync push speed). Whatever the grouping, each operation's
answer and its effect on the record are what they would be alone: applied once, or nothing left behind."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import new_id, utcnow
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


def test_areas_a_push_stops_show_the_event_in_their_timeline_and_their_deadline_on_the_dashboard(
        client, make, device_token, signed_in):
    # §380-11 C(3)(a): the 7-day clock starts when work stops; the push writes its events as rows, not
    # objects, and the stored obligations must still be worked out again with them.
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], number="LM-PUSH-1", construction_started_on=dt.date(2026, 6, 2))
    disturbed, ceased = utcnow() - dt.timedelta(days=40), utcnow() - dt.timedelta(days=8)
    areas = {name: permits.add_area(None, permit, name, Decimal("0.5"), since=disturbed).id
             for name in ("North slope", "South swale")}
    db.session.commit()
    token, permit_id = device_token(inspector), permit.id
    ops = [new_op("area.status", area_id, {"status": "activity_ceased", "note": f"Grading stopped on {name}",
                                           "at": ceased.isoformat()}, 1)
           for name, area_id in areas.items()]

    assert [r["status"] for r in push(client, token, ops)] == ["applied", "applied"]

    snapshot = client.get(f"/sync/permits/{permit_id}/snapshot", headers={"Authorization": f"Bearer {token}"}).json
    notes = sorted(e["note"] for e in snapshot["area_events"] if e["status"] == "activity_ceased")
    assert notes == ["Grading stopped on North slope", "Grading stopped on South swale"]
    assert {a["name"]: a["status"] for a in snapshot["areas"]} == {"North slope": "activity_ceased",
                                                                  "South swale": "activity_ceased"}
    page = signed_in(make.user("agent")).get("/dashboard/").text
    for name in areas:
        assert f"Work on {name} stopped on" in page, page


def test_two_changes_of_one_area_made_offline_since_the_last_pull_are_both_applied_in_one_push(
        client, make, device_token):
    """A tablet offline all morning changes one area twice, each change based on the revision it last pulled (1).
    Pushed one by one, the second counts the first (this device's own) and is applied. In one push, the first's
    answer was not stored yet when the second was checked: a conflict, flagged for a person, the change not made."""
    inspector = make.user("inspector")
    area = make.permit(inspectors=[inspector], areas=["Pad"]).areas[0]
    db.session.commit()
    area_id, token, since = area.id, device_token(inspector), area.status_since
    ops = [new_op("area.status", area_id, {"status": status, "at": (since + dt.timedelta(minutes=n)).isoformat()}, 1)
           for n, status in ((1, "activity_ceased"), (2, "stabilization_initiated"))]

    assert [r["status"] for r in push(client, token, ops)] == ["applied", "applied"]
    db.session.expire_all()
    area = db.session.get(DisturbedArea, area_id)
    assert (area.revision, area.status, area.has_conflict) == (3, "stabilization_initiated", False)
    assert count(SyncConflict) == 0
    # Another device's change based on the same revision is still a conflict.
    other = new_op("area.status", area_id, {"status": "stabilized", "at": (since + dt.timedelta(minutes=3)).isoformat()},
                   1)
    assert [r["status"] for r in push(client, device_token(inspector, "second tablet"), [other])] == ["conflict"]
