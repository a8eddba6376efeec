"""Hostile sync input: a NUL, an overflowing number, a list for a kind, JSON too deep, ids in upper case.

Each is a 4xx with a plain message, or (a NUL inside an operation) that operation's own `rejected`
answer while the rest of the batch is applied, so a device's outbox is never blocked.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import InspectionNotice
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import utcnow
from sync.client import new_op
from sync.services import create_device


def _device(make):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["North", "South"])
    _, token = create_device(None, inspector, "tablet")
    db.session.commit()
    return permit, {"Authorization": f"Bearer {token}"}


def _area_op(area, note: str = "ok") -> dict:
    return new_op("area.status", area.id, {"status": "activity_ceased", "at": utcnow().isoformat(), "note": note}, 1)


def test_a_nul_in_one_operation_refuses_that_one_and_applies_the_rest(client, make):
    permit, auth = _device(make)
    north, south = permit.areas
    batch = {"ops": [_area_op(north, "silt\x00fence"), _area_op(south)]}
    for attempt in (1, 2):  # sent again, as a device would: never a 5xx, never stuck
        answer = client.post("/sync/push", json=batch, headers=auth)
        assert answer.status_code == 200, answer.text
        first, second = answer.json["results"]
        assert first["status"] == "rejected"
        assert "NUL" in first["reasons"]["payload.note"]
        assert second["status"] == ("applied" if attempt == 1 else "duplicate")
    db.session.expire_all()
    assert db.session.get(DisturbedArea, north.id).revision == 1
    assert db.session.get(DisturbedArea, south.id).revision == 2


def test_malformed_numbers_kinds_and_ids_are_a_422_naming_the_field(client, make):
    permit, auth = _device(make)
    area = permit.areas[0]
    bad = [
        ({"base_revision": 10**19}, "base_revision"),
        ({"kind": ["area.status"]}, "kind"),
        ({"kind": {"a": 1}}, "kind"),
        ({"record_id": "not-a-uuid"}, "record_id"),
        ({"op_id": "\x00" * 36}, "op_id"),
    ]
    for change, field in bad:
        answer = client.post("/sync/push", json={"ops": [{**_area_op(area), **change}]}, headers=auth)
        assert answer.status_code == 422, (change, answer.text)
        assert field in answer.json["problems"][0]["reasons"]
    assert db.session.get(DisturbedArea, area.id).revision == 1


def test_json_nested_too_deeply_is_a_400(client, make):
    _, auth = _device(make)
    deep = "[" * 50_000 + "]" * 50_000
    for path in ("/sync/push", "/sync/devices", "/sync/blobs/" + "0" * 64 + "/complete"):
        answer = client.post(path, data=deep, headers={**auth, "Content-Type": "application/json"})
        assert 400 <= answer.status_code < 500, (path, answer.status_code)
        assert answer.is_json and answer.json["error"]


def test_query_numbers_out_of_range_and_unknown_paths_answer_json(client, make):
    _, auth = _device(make)
    for query in ("cursor=" + "9" * 30, "cursor=²", "cursor=-1", "limit=١٢", "cursor=%00"):
        answer = client.get(f"/sync/changes?{query}", headers=auth)
        assert answer.status_code in (400, 422) and answer.is_json, (query, answer.status_code)
        assert answer.json["error"]
    for method, path in (("GET", "/sync/nothing-here"), ("GET", "/sync/push"), ("DELETE", "/sync/permits")):
        answer = client.open(path, method=method, headers=auth)
        assert answer.status_code in (404, 405) and answer.is_json, (path, answer.status_code)


def test_a_nul_in_a_form_or_query_is_a_422_naming_the_field(client, make, signed_in):
    answer = client.post("/login", data={"email": "a\x00@example.org", "password": "x"})
    assert answer.status_code in (400, 422)  # no CSRF token: refused either way, never a 500
    browser = signed_in()
    answer = browser.post("/login", {"email": "a\x00@example.org", "password": "whatever"})
    assert answer.status_code == 422 and "email" in answer.text and "NUL" in answer.text
    agent = signed_in(make.user("agent"))
    answer = agent.get("/permits/?status=open%00")
    assert answer.status_code == 422 and "status" in answer.text


def test_an_id_resent_in_upper_case_is_the_same_id(client, make):
    permit, auth = _device(make)
    area = permit.areas[0]
    op = _area_op(area)
    loud = {**op, "op_id": op["op_id"].upper(), "record_id": area.id.upper()}
    assert client.post("/sync/push", json={"ops": [loud]}, headers=auth).json["results"][0]["status"] == "applied"
    again = client.post("/sync/push", json={"ops": [op]}, headers=auth).json["results"][0]
    assert again["status"] == "duplicate"
    db.session.expire_all()
    assert db.session.get(DisturbedArea, area.id).revision == 2
    # A creation under an id made on the device: the same id in upper case makes nothing twice.
    notice_id = "6F1C0F4E-0C5B-4E0B-9A53-1D2E3F4A5B6C"
    planned = (utcnow() + dt.timedelta(days=3)).isoformat()
    payload = {"permit_id": permit.id.upper(), "inspection_type": "initial", "planned_for": planned}
    answers = client.post("/sync/push", json={"ops": [new_op("notice.give", notice_id, payload),
                                                        new_op("notice.give", notice_id.lower(), payload)]},
                          headers=auth).json["results"]
    assert [a["status"] for a in answers] == ["applied", "duplicate"], answers
    assert db.session.scalar(select(func.count()).select_from(InspectionNotice)) == 1
    assert db.session.scalar(select(InspectionNotice.id)) == notice_id.lower()


def test_a_method_the_sync_api_does_not_take_is_a_405_that_says_which_it_takes(client):
    """Issue 29: a 405 under /sync had no Allow header."""
    for method, path, allowed in (("put", "/sync/push", {"POST", "OPTIONS"}),
                                  ("delete", "/sync/changes", {"GET", "HEAD", "OPTIONS"}),
                                  ("get", "/sync/blobs/" + "a" * 64 + "/complete", {"POST", "OPTIONS"})):
        answer = getattr(client, method)(path)
        assert answer.status_code == 405, path
        assert {m.strip() for m in answer.headers["Allow"].split(",")} == allowed, path
        assert answer.is_json and answer.json["error"], path
