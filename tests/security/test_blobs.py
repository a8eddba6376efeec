"""/sync/blobs: who may upload, what (the bytes must be the declared type), how much, and `flask blobs gc`."""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import time

from sqlalchemy import func, select, update

from inspect_app.extensions import db
from inspect_app.blobs.models import Blob, BlobUpload
from inspect_app.types import utcnow
from sync.services import blob_store, create_device
from tests.builders import jpeg


def _auth(user) -> dict[str, str]:
    _, token = create_device(None, user, "tablet")
    db.session.commit()
    return {"Authorization": f"Bearer {token}"}


def _upload(client, auth, data: bytes, content_type: str):
    sha = hashlib.sha256(data).hexdigest()
    put = client.put(f"/sync/blobs/{sha}", data=data,
                     headers={**auth, "Upload-Offset": "0", "Content-Type": "application/octet-stream"})
    if put.status_code != 200:
        return sha, put
    return sha, client.post(f"/sync/blobs/{sha}/complete", json={"content_type": content_type}, headers=auth)


def _blobs() -> int:
    return db.session.scalar(select(func.count()).select_from(Blob))


def test_a_permittee_uploads_photos_and_pdfs_an_admin_nothing(client, make):
    permittee = _auth(make.user("permittee"))
    sha, answer = _upload(client, permittee, jpeg(), "image/jpeg")
    assert answer.status_code == 200 and answer.json["complete"]
    pdf = b"%PDF-1.4\n" + b"0" * 200
    assert _upload(client, permittee, pdf, "application/pdf")[1].status_code == 200
    assert db.session.get(Blob, sha).content_type == "image/jpeg"
    admin = _auth(make.user("admin", town=None))
    refused = _upload(client, admin, jpeg(shade=9), "image/jpeg")[1]
    assert refused.status_code == 403 and refused.is_json and "upload" in refused.json["error"]
    assert _blobs() == 2


def test_the_declared_type_must_be_what_the_bytes_are(client, make):
    auth = _auth(make.user("inspector"))
    cases = [(b"<script>alert(1)</script>" * 10, "image/jpeg"), (b"MZ\x90\x00" + b"\x00" * 300, ""),
             (jpeg(shade=3), "application/pdf")]
    for data, declared in cases:
        sha, answer = _upload(client, auth, data, declared)
        assert answer.status_code == 415, (declared, answer.status_code)
        assert answer.json["error"]
        assert not blob_store().exists(sha)
    assert _blobs() == 0
    # A generic declaration takes what the bytes say.
    sha, answer = _upload(client, auth, jpeg(shade=4), "application/octet-stream")
    assert answer.status_code == 200 and db.session.get(Blob, sha).content_type == "image/jpeg"


def test_each_user_has_an_upload_quota(app, client, make):
    first, second = jpeg(shade=1), jpeg(2, size=(200, 150))
    app.config["SYNC_BLOB_QUOTA_BYTES"] = len(first) + len(second) // 2
    auth = _auth(make.user("inspector"))
    assert _upload(client, auth, first, "image/jpeg")[1].status_code == 200
    refused = _upload(client, auth, second, "image/jpeg")[1]
    assert refused.status_code == 413 and "quota" in refused.json["error"]
    # Someone else's quota is their own.
    assert _upload(client, _auth(make.user("inspector")), second, "image/jpeg")[1].status_code == 200


def _age(path, days: float) -> None:
    then = (utcnow() - dt.timedelta(days=days)).timestamp()
    os.utime(path, (then, then))


def test_gc_removes_unreferenced_old_blobs_and_abandoned_uploads_only(app, client, make, runner):
    permit = make.permit()
    photo = make.photo(permit)  # its three blobs are pointed to by the photo
    auth = _auth(make.user("inspector"))
    orphan, _ = _upload(client, auth, jpeg(shade=5), "image/jpeg")
    fresh, _ = _upload(client, auth, jpeg(shade=6), "image/jpeg")
    video, _ = _upload(client, auth, b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 400, "video/mp4")
    # A final report names its pipe video inside its details (JSON), not in a column of its own.
    make.inspection(permit, "final", details={"videos": {"run-1": {"blob_sha256": video, "reference": None}}})
    store = blob_store()
    old = utcnow() - dt.timedelta(days=3)
    for sha in (orphan, video, photo.original_sha256, photo.thumb_sha256):
        db.session.get(Blob, sha).created_at = old
        _age(store.path(sha), 3)
    db.session.commit()
    abandoned = hashlib.sha256(b"never finished").hexdigest()
    store.begin(abandoned)
    store.append(abandoned, 0, b"never")
    _age(store.root / ".partial" / abandoned, 2)
    ongoing = hashlib.sha256(b"still coming").hexdigest()
    store.begin(ongoing)
    stray = store.root / "ab" / "cd" / ("abcd" + "0" * 60)  # a file with no row, stored long ago
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"x")
    _age(stray, 5)

    result = runner.invoke(args=["blobs", "gc"])
    assert result.exit_code == 0, result.output
    assert "blobs_removed=1 files_removed=1 uploads_removed=1" in result.output
    db.session.expire_all()
    assert db.session.get(Blob, orphan) is None and not store.exists(orphan)
    for sha in (photo.original_sha256, photo.display_sha256, photo.thumb_sha256, fresh, video):
        assert db.session.get(Blob, sha) is not None and store.exists(sha)
    assert store.received(abandoned) == 0 and (store.root / ".partial" / ongoing).exists()
    assert client.get(f"/photos/{photo.id}/thumb").status_code in (200, 302, 401)  # still served or gated
    again = runner.invoke(args=["blobs", "gc"])
    assert "blobs_removed=0 files_removed=0 uploads_removed=0" in again.output


def test_an_inspector_uploads_a_pipe_video_a_permittee_does_not(client, make):
    video = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 400
    assert _upload(client, _auth(make.user("inspector")), video, "video/mp4")[1].status_code == 200
    refused = _upload(client, _auth(make.user("permittee")), video + b"\x01", "video/mp4")[1]
    assert refused.status_code == 415 and "PDF" in refused.json["error"]


def test_unfinished_uploads_count_against_the_quota_until_completed_or_collected(app, client, make, runner):
    """Only completed uploads counted: a device could begin any number of uploads, never complete them, and keep
    its quota again under each new SHA-256 until `flask blobs gc` (a day later): 45 KB held on a 10 KB quota."""
    app.config["SYNC_BLOB_QUOTA_BYTES"] = 10_000
    user = make.user("inspector")
    auth = _auth(user)
    held, shas = [], []
    for shade in range(5):
        chunk = b"\xff\xd8\xff\xe0" + os.urandom(3_996)  # the first 4 KB of a photo never completed
        shas.append(hashlib.sha256(chunk + b"the rest never sent").hexdigest())
        answer = client.put(f"/sync/blobs/{shas[-1]}", data=chunk, headers={**auth, "Upload-Offset": "0"})
        held.append(answer.status_code)
    assert held == [200, 200, 413, 413, 413]
    # Going on with an upload already begun counts its bytes once, not twice (4 + 4 + 1 KB, not 4 + 4 + 4 + 1).
    more = client.put(f"/sync/blobs/{shas[0]}", data=b"\0" * 1_000, headers={**auth, "Upload-Offset": "4000"})
    assert more.status_code == 200
    # Once abandoned (no chunk for longer than the grace period: two days pass) and collected, they count no more.
    old = time.time() - 2 * 86400
    for sha in shas[:2]:
        os.utime(blob_store()._partial_path(sha), (old, old))
    db.session.execute(update(BlobUpload).values(updated_at=utcnow() - dt.timedelta(days=2)))
    db.session.commit()
    assert runner.invoke(args=["blobs", "gc"]).exit_code == 0
    assert db.session.scalar(select(func.count()).select_from(BlobUpload)) == 0
    assert _upload(client, auth, jpeg(shade=8), "image/jpeg")[1].status_code == 200


def test_an_unfinished_upload_still_held_after_gc_still_counts(app, client, make, runner):
    """A chunk refused at a wrong offset still touches the unfinished upload's file (and so gc keeps it), but its
    quota row was dated by the last chunk taken: gc dropped the row, kept the bytes, and they counted no more."""
    app.config["SYNC_BLOB_QUOTA_BYTES"] = 10_000
    auth = _auth(make.user("inspector"))
    chunk = b"\xff\xd8\xff\xe0" + os.urandom(3_996)  # the first 4 KB of a photo never completed
    sha = hashlib.sha256(chunk + b"the rest never sent").hexdigest()
    assert client.put(f"/sync/blobs/{sha}", data=chunk, headers={**auth, "Upload-Offset": "0"}).status_code == 200
    db.session.execute(update(BlobUpload).values(updated_at=utcnow() - dt.timedelta(days=2)))  # two days pass
    db.session.commit()
    assert client.put(f"/sync/blobs/{sha}", data=b"x", headers={**auth, "Upload-Offset": "1"}).status_code == 409
    assert runner.invoke(args=["blobs", "gc"]).exit_code == 0
    assert blob_store().received(sha) == 4_000
    assert db.session.scalar(select(func.count()).select_from(BlobUpload)) == 1
    other = b"\xff\xd8\xff\xe0" + os.urandom(6_996)
    refused = client.put(f"/sync/blobs/{hashlib.sha256(other + b'x').hexdigest()}", data=other,
                         headers={**auth, "Upload-Offset": "0"})
    assert refused.status_code == 413
