"""Faults between a device and the central record; each ends with nothing lost and nothing doubled."""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import threading
import time
import urllib.request

import pytest
from PIL import Image
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.blobs.files import blob_store
from inspect_app.extensions import db
from inspect_app.inspections.models import InspectionNotice
from inspect_app.blobs.models import Blob
from inspect_app.photos.models import Photo
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import new_id, utcnow
from sync.client import SyncClient, SyncError, new_op
from sync.models import SyncConflict, SyncOperation


def notices(permit, n: int) -> list[dict]:
    planned = (utcnow() + dt.timedelta(hours=30)).isoformat()
    return [new_op("notice.give", new_id(), {"permit_id": permit.id, "inspection_type": "erosion_control",
                                             "planned_for": planned, "note": f"notice {i}"}) for i in range(n)]


def count(model) -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(model))


def assert_each_once(ops: list[dict]) -> None:
    """Every operation stored once and applied once: one notice and one audit entry per op."""
    assert count(SyncOperation) == len(ops)
    assert {r.status for r in db.session.scalars(select(SyncOperation))} == {"applied"}
    assert count(InspectionNotice) == len(ops)
    notes = sorted(db.session.scalars(select(InspectionNotice.note)))
    assert notes == sorted(op["payload"]["note"] for op in ops)
    assert db.session.scalar(select(func.count()).where(AuditEntry.action == "inspection.notice")) == len(ops)


@pytest.fixture
def inspector_permit(make):
    inspector = make.user("inspector")
    return inspector, make.permit(inspectors=[inspector], areas=["Lot 1 pad"])


def test_connection_dropped_while_the_batch_is_sent(central, proxy, inspector_permit, device_token):
    inspector, permit = inspector_permit
    ops = notices(permit, 60)
    size = len(json.dumps({"ops": ops}))
    cut = proxy(central.port, cut_after=size // 2, direction="up")
    results = SyncClient(cut.url, device_token(inspector), backoff_s=0.01).push(ops)
    assert cut.cuts == 1
    assert [r["status"] for r in results] == ["applied"] * 60
    assert_each_once(ops)


def test_connection_dropped_after_the_server_applied_the_batch(central, proxy, inspector_permit, device_token):
    inspector, permit = inspector_permit
    ops = notices(permit, 30)
    cut = proxy(central.port, cut_after=200, direction="down")  # the answer is lost on its way back
    results = SyncClient(cut.url, device_token(inspector), backoff_s=0.01).push(ops)
    assert cut.cuts == 1
    # The retry is answered from the stored results: each op was applied once, by the first attempt.
    assert {r["status"] for r in results} == {"duplicate"}
    assert {r["original"]["status"] for r in results} == {"applied"}
    assert_each_once(ops)


def test_server_killed_and_restarted_in_the_middle_of_a_batch(server_process, inspector_permit, device_token):
    inspector, permit = inspector_permit
    token = device_token(inspector)
    server = server_process()
    ops = notices(permit, 120)
    outcome: list = []
    client = SyncClient(server.url, token, backoff_s=0.05, retries=12, batch_size=120)
    pusher = threading.Thread(target=lambda: outcome.append(client.push(ops)))
    pusher.start()
    try:
        while count(SyncOperation) < 10:  # part of the batch is in: kill it now
            time.sleep(0.005)
        server.kill()
        applied_before_restart = count(SyncOperation)
        assert 0 < applied_before_restart < 120
        server.start()
        pusher.join(60)
    finally:
        server.kill()
    results = outcome[0]
    statuses = [r["status"] for r in results]
    assert statuses.count("duplicate") == applied_before_restart
    assert statuses.count("applied") == 120 - applied_before_restart
    assert_each_once(ops)


def test_the_same_batch_replayed_twice_and_out_of_order(central, inspector_permit, device_token):
    inspector, permit = inspector_permit
    client = SyncClient(central.url, device_token(inspector))
    ops = notices(permit, 20)
    first = client.push(ops)
    again = client.push(ops)
    shuffled = ops[::-1][:7] + ops[5:12] + ops[::3]
    third = client.push(list({op["op_id"]: op for op in shuffled}.values()))
    assert [r["status"] for r in first] == ["applied"] * 20
    originals = {r["op_id"]: {k: v for k, v in r.items() if k != "op_id"} for r in first}
    for replay in again + third:
        assert replay["status"] == "duplicate"
        assert replay["original"] == originals[replay["op_id"]]
    assert_each_once(ops)


def test_concurrent_posts_of_one_operation_store_one_result(central, inspector_permit, device_token):
    inspector, permit = inspector_permit
    token = device_token(inspector)
    ops = notices(permit, 1)
    answers: list = []
    threads = [threading.Thread(target=lambda: answers.append(SyncClient(central.url, token).push(ops)[0]))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(a["status"] for a in answers) == ["applied"] + ["duplicate"] * 7
    assert_each_once(ops)


def test_two_devices_change_one_area_both_versions_kept_and_flagged(central, inspector_permit, device_token,
                                                                   make):
    inspector, permit = inspector_permit
    area = permit.areas[0]
    tablet = SyncClient(central.url, device_token(inspector, "tablet"))
    laptop = SyncClient(central.url, device_token(inspector, "laptop"))
    at = utcnow().isoformat()
    mine = new_op("area.status", area.id, {"status": "activity_ceased", "at": at, "note": "tablet"}, 1)
    theirs = new_op("area.status", area.id, {"status": "stabilized", "at": at, "note": "laptop"}, 1)
    assert tablet.push([mine])[0] == {"op_id": mine["op_id"], "status": "applied", "record_id": area.id,
                                      "revision": 2}
    # The tablet's next change, based on its own revision 2, is no conflict.
    follow = new_op("area.status", area.id, {"status": "stabilization_initiated", "at": utcnow().isoformat()}, 1)
    answer = laptop.push([theirs])[0]
    assert answer["status"] == "conflict"
    assert answer["server"]["status"] == "activity_ceased" and answer["server"]["revision"] == 2
    assert tablet.push([follow])[0]["status"] == "applied"  # its own earlier change, not someone else's

    db.session.expire_all()
    area = db.session.get(DisturbedArea, area.id)
    assert area.has_conflict is True
    assert [e.note for e in area.events if e.note] == ["tablet"]  # the laptop's change was not applied...
    conflict = db.session.scalar(select(SyncConflict))
    assert conflict.device_version["payload"]["note"] == "laptop"  # ...but it is kept, beside the server's
    assert conflict.server_version["status"] == "activity_ceased"
    assert conflict.resolved_at is None
    assert laptop.push([theirs])[0]["original"]["status"] == "conflict"  # a replay makes no second conflict
    assert count(SyncConflict) == 1


def test_device_clock_hours_off(central, inspector_permit, device_token):
    inspector, permit = inspector_permit
    skew = dt.timedelta(hours=5)
    device_now = utcnow() + skew  # a tablet whose clock runs five hours ahead
    client = SyncClient(central.url, device_token(inspector), clock=lambda: utcnow() + skew)
    op = new_op("area.status", permit.areas[0].id, {"status": "activity_ceased", "at": device_now.isoformat()},
                1, device_time=device_now)
    before = utcnow()
    assert client.push([op])[0]["status"] == "applied"
    db.session.expire_all()
    row = db.session.get(SyncOperation, op["op_id"])
    assert row.device_time == op["device_time"]  # kept exactly as the device gave it
    assert before - dt.timedelta(seconds=5) <= row.received_at <= utcnow()  # the server's own clock
    assert abs(row.clock_offset_s + skew.total_seconds()) < 60
    area = db.session.get(DisturbedArea, op["record_id"])
    assert abs(area.status_since - before) < dt.timedelta(minutes=1)  # not five hours in the future


def test_blob_upload_broken_off_resumes_and_an_operation_waits_for_it(central, proxy, inspector_permit,
                                                                     device_token, blob_backend):
    inspector, permit = inspector_permit
    token = device_token(inspector)
    image = Image.frombytes("RGB", (700, 500), os.urandom(700 * 500 * 3))
    out = io.BytesIO()
    image.save(out, "PNG")  # noise does not compress: about 1 MB
    data = out.getvalue()
    sha = hashlib.sha256(data).hexdigest()
    direct = SyncClient(central.url, token)
    attach = new_op("photo.attach", "0e7c4a52-7a1d-4a5f-9d38-2c7f3f0f1a01",
                    {"permit_id": permit.id, "original_sha256": sha, "caption": "inlet protection"})
    assert direct.push([attach])[0] == {"op_id": attach["op_id"], "status": "waiting", "record_id":
                                        attach["record_id"], "waiting_for": {"blob": sha}}

    chunk = 128 * 1024
    cut = proxy(central.port, cut_after=len(data) // 2, direction="up")
    report = SyncClient(cut.url, token, chunk_size=chunk, backoff_s=0.01).upload_blob(data, "image/png")
    assert cut.cuts == 1
    assert report.resumed_from[0] == 0 and 0 < report.resumed_from[1] < len(data)
    assert report.bytes_sent - len(data) <= chunk  # at most the chunk in flight is sent again
    db.session.expire_all()
    assert db.session.get(Blob, sha).size == len(data)
    assert blob_store().stored_sha256(sha) == sha  # on disk or in the bucket, whole
    photo = db.session.get(Photo, attach["record_id"])  # the waiting operation went through on completion
    assert photo.caption == "inlet protection" and photo.original_sha256 == sha
    assert direct.push([attach])[0]["original"]["status"] == "applied"
    assert count(Photo) == 1


def test_blob_with_the_wrong_hash_is_refused_and_discarded(central, inspector_permit, device_token, blob_backend):
    inspector, _permit = inspector_permit
    client = SyncClient(central.url, device_token(inspector))
    wrong = hashlib.sha256(b"what was promised").hexdigest()
    with pytest.raises(SyncError) as refused:
        client.upload_blob(b"something else", sha=wrong)
    assert refused.value.status == 422 and "discarded" in refused.value.body["error"]
    assert client.blob_status(wrong) == {"sha256": wrong, "received": 0, "complete": False}
    assert count(Blob) == 0 and not blob_store().exists(wrong)


@pytest.mark.parametrize("body, status, words", [
    (b'{"ops": [', 400, "not valid JSON"),
    (b'["ops"]', 400, 'list "ops"'),
    (b'{"ops": {}}', 400, 'list "ops"'),
])
def test_malformed_batches_are_refused_whole(central, inspector_permit, device_token, body, status, words):
    inspector, _permit = inspector_permit
    answer = _post(central.url, device_token(inspector), body)
    assert answer[0] == status and words in answer[1]["error"]
    assert count(SyncOperation) == 0


def test_wrong_types_and_unknown_kinds_refuse_the_batch_with_reasons(central, inspector_permit, device_token):
    inspector, permit = inspector_permit
    good = notices(permit, 2)
    bad_types = {**notices(permit, 1)[0], "base_revision": "7", "payload": {"permit_id": 5}}
    unknown = new_op("area.bulldoze", "x", {})
    status, body = _post(central.url, device_token(inspector), json.dumps({"ops": good + [bad_types, unknown]}))
    assert status == 422 and "nothing was applied" in body["error"]
    problems = {p["index"]: p["reasons"] for p in body["problems"]}
    assert set(problems) == {2, 3}
    assert problems[2]["base_revision"].startswith("Must be a whole number")
    assert "payload.permit_id" in problems[2] and "payload.inspection_type" in problems[2]
    assert "Unknown kind 'area.bulldoze'" in problems[3]["kind"]
    assert count(SyncOperation) == 0 and count(InspectionNotice) == 0


def test_oversized_batches_are_refused_before_anything_is_applied(app, central, inspector_permit, device_token):
    inspector, permit = inspector_permit
    token = device_token(inspector)
    app.config.update(SYNC_MAX_OPS=10, SYNC_MAX_BODY_BYTES=20_000)
    status, body = _post(central.url, token, json.dumps({"ops": notices(permit, 11)}))
    assert status == 413 and "at most 10 operations" in body["error"]
    padded = notices(permit, 1)
    padded[0]["payload"]["note"] = "x" * 30_000
    status, body = _post(central.url, token, json.dumps({"ops": padded}))
    assert status == 413 and "limit is 20000" in body["error"]
    assert count(SyncOperation) == 0 and count(InspectionNotice) == 0


def _post(url: str, token: str, body: bytes | str) -> tuple[int, dict]:
    request = urllib.request.Request(url + "/sync/push", data=body.encode() if isinstance(body, str) else body,
                                     method="POST", headers={"Authorization": f"Bearer {token}",
                                                             "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())

