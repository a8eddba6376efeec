"""The S3 blob store (BLOB_BACKEND=s3) against a real S3 server on 127.0.0.1: whole files, resumable uploads
that resume after a chunk was lost and refuse bytes with the wrong hash, and the removal of abandoned uploads.
The answers are the disk store's (tests/test_blobstore.py), so no caller asks which store it has."""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
import time

import pytest

from inspect_app.blobs.s3 import S3Store
from inspect_app.blobs.store import CHUNK_SIZE, BlobError, HashMismatch, OffsetMismatch
from tests.s3_server import bucket_client, bucket_keys

DATA = b"\xff\xd8\xff\xe0" + os.urandom(3 * 256 * 1024 + 4321)
SHA = hashlib.sha256(DATA).hexdigest()
PART = 256 * 1024


@pytest.fixture
def store(s3_settings) -> S3Store:
    return S3Store(bucket_client(s3_settings), s3_settings["S3_BUCKET"])


@pytest.fixture
def other_server(s3_settings) -> S3Store:
    """The same bucket through another client, as a second app server reaches it."""
    return S3Store(bucket_client(s3_settings), s3_settings["S3_BUCKET"])


def test_a_file_is_kept_under_its_content_address_and_read_back(store, s3_settings):
    assert not store.exists(SHA)
    with pytest.raises(FileNotFoundError):
        store.open(SHA)
    with pytest.raises(FileNotFoundError):
        store.size(SHA)
    assert store.stored_sha256(SHA) is None
    assert store.put_file(io.BytesIO(DATA)) == SHA
    assert bucket_keys(s3_settings) == [f"{SHA[:2]}/{SHA[2:4]}/{SHA}"]  # the disk store's layout, as keys
    assert store.exists(SHA) and store.size(SHA) == len(DATA)
    with store.open(SHA) as stream:
        assert stream.read() == DATA
    assert store.read(SHA) == DATA and store.stored_sha256(SHA) == SHA
    assert store.head(SHA, 4) == DATA[:4]
    with store.local_copy(SHA) as path:
        assert path.read_bytes() == DATA
    assert not path.exists()  # the copy was this caller's only
    assert [sha for sha, _ in store.stored()] == [SHA]
    assert store.put_bytes(DATA, expected_sha=SHA) == SHA  # again: the same name, nothing changes


def test_bytes_that_are_not_what_was_expected_are_not_kept(store, s3_settings):
    wrong = hashlib.sha256(b"something else").hexdigest()
    with pytest.raises(HashMismatch):
        store.put_bytes(DATA, expected_sha=wrong)
    with pytest.raises(BlobError):
        store.put_bytes(DATA, expected_sha="../../etc/passwd")
    limited = S3Store(store.client, store.bucket, max_bytes=1024)
    with pytest.raises(BlobError, match="limit"):
        limited.put_bytes(DATA)
    assert bucket_keys(s3_settings) == []


def test_a_chunked_upload_resumes_after_a_lost_chunk_on_any_server(store, other_server, s3_settings):
    assert store.begin(SHA) == 0
    assert store.append(SHA, 0, DATA[:PART]) == PART
    # The next chunk was broken off on its way (never stored); the device sends the one after it.
    with pytest.raises(OffsetMismatch) as mismatch:
        other_server.append(SHA, 2 * PART, DATA[2 * PART:3 * PART])
    assert mismatch.value.offset == PART  # where to resume, as on disk
    assert other_server.received(SHA) == PART and other_server.head(SHA, 4) == DATA[:4]
    offset = PART
    for server in (other_server, store, other_server):  # the chunks go to either server
        offset = server.append(SHA, offset, DATA[offset:offset + PART])
    assert offset == len(DATA)
    assert not store.exists(SHA)  # not a blob until it is completed
    store.complete(SHA)
    assert store.read(SHA) == DATA
    assert bucket_keys(s3_settings, "partial/") == []
    other_server.complete(SHA)  # a replayed complete changes nothing
    assert other_server.received(SHA) == len(DATA)
    with pytest.raises(OffsetMismatch) as done:  # a chunk after completion: the upload is whole
        store.append(SHA, 0, DATA[:PART])
    assert done.value.offset == len(DATA)


def test_a_chunk_written_over_by_a_shorter_one_is_not_counted(store, other_server):
    # Two servers take a chunk at offset 0 at once, of different sizes: the upload holds the one kept.
    store.append(SHA, 0, DATA[:PART])
    other_server.append(SHA, PART, DATA[PART:2 * PART])
    other_server.client.put_object(Bucket=store.bucket, Key=f"partial/{SHA}/{0:020d}", Body=DATA[:1000])
    assert store.received(SHA) == 1000  # the chunk at PART no longer follows on
    offset = store.append(SHA, 1000, DATA[1000:2 * PART + 500])
    offset = store.append(SHA, offset, DATA[offset:])
    store.complete(SHA)
    assert store.read(SHA) == DATA


def test_completing_bytes_with_the_wrong_hash_discards_them(store, s3_settings):
    store.begin(SHA)
    store.append(SHA, 0, DATA[:PART])
    # One byte changed on the way (flipped: DATA is random, and a byte written as 0 was unchanged when it was 0,
    # one run in 256).
    store.append(SHA, PART, bytes([DATA[PART] ^ 0xFF]) + DATA[PART + 1:])
    with pytest.raises(HashMismatch) as refused:
        store.complete(SHA)
    assert refused.value.actual != SHA
    assert not store.exists(SHA) and store.received(SHA) == 0
    assert bucket_keys(s3_settings) == []
    with pytest.raises(BlobError, match="begin it first"):
        store.complete(SHA)
    store.begin(SHA)  # sent again from the start, it is kept
    store.append(SHA, 0, DATA)
    store.complete(SHA)
    assert store.stored_sha256(SHA) == SHA


def test_an_empty_file_and_the_size_limit(store):
    empty = hashlib.sha256(b"").hexdigest()
    assert store.begin(empty) == 0 and store.head(empty) == b""
    store.complete(empty)
    assert store.read(empty) == b""
    limited = S3Store(store.client, store.bucket, max_bytes=PART)
    limited.append(SHA, 0, DATA[:PART])
    with pytest.raises(BlobError, match="limit"):
        limited.append(SHA, PART, DATA[PART:PART + 1])


def test_abandoned_uploads_are_removed_and_going_ones_kept(store, s3_settings):
    store.put_bytes(DATA)
    other = hashlib.sha256(b"other").hexdigest()
    store.begin(other)
    store.append(other, 0, b"oth")
    assert store.remove_abandoned(time.time() - 3600) == 0  # all of it touched within the hour
    # A large blob whose storing was interrupted (after the check above: this S3 server dates every
    # multipart upload in 2010).
    client = store.client
    client.create_multipart_upload(Bucket=store.bucket, Key="ab/cd/interrupted")
    assert store.remove_abandoned(time.time() + 60) == 2  # the chunked upload and the multipart one
    assert bucket_keys(s3_settings) == [f"{SHA[:2]}/{SHA[2:4]}/{SHA}"]  # blobs are never abandoned uploads
    assert client.list_multipart_uploads(Bucket=store.bucket).get("Uploads", []) == []
    assert store.remove(SHA) and not store.remove(SHA)
    assert list(store.stored()) == []


def test_large_files_are_stored_whole(store):
    big = os.urandom(3 * CHUNK_SIZE + 17)
    sha = store.put_bytes(big)
    assert store.stored_sha256(sha) == hashlib.sha256(big).hexdigest() == sha


def _stored_days_ago(store: S3Store, sha: str, days: int) -> None:
    """The S3 server's clock for one object: stored `days` ago (the server dates every object it keeps)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends
    then = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(days=days)
    s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets[store.bucket].keys[store.key(sha)].last_modified = then


def test_bytes_stored_again_are_new_again_so_the_clean_up_keeps_them_for_their_record(s3_app, make):
    """A photo's bytes were stored, then its request failed: no row names them. Days later the photo is sent
    again. On disk its file is written again and is new; in the bucket the object was kept as it was, three days
    old, so `flask blobs gc` running meanwhile removed it, and the record written a moment later named a photo
    that was gone. Now the object is made new again, and gc asks again just before it removes anything."""
    from inspect_app.blobs import files
    from inspect_app.blobs.models import Blob
    from inspect_app.blobs.uploads import collect_garbage
    from inspect_app.extensions import db

    store = files.blob_store()
    sha = store.put_bytes(DATA)
    _stored_days_ago(store, sha, 3)
    assert store.stored_at(sha) < time.time() - 2 * 86400
    assert store.put_bytes(DATA) == sha  # sent again: its bytes stored now, its row written in a moment
    assert store.stored_at(sha) > time.time() - 60
    assert collect_garbage()["files"] == 0  # gc ran in between
    assert files.store_file(DATA, "image/jpeg") == sha
    db.session.commit()
    assert db.session.get(Blob, sha) is not None and store.open(sha).read() == DATA
    # An orphan no one sent again is still removed once old.
    other = store.put_bytes(b"\xff\xd8\xff\xe0 an orphan" + os.urandom(64))
    _stored_days_ago(store, other, 3)
    assert collect_garbage()["files"] == 1 and store.stored_at(other) is None
