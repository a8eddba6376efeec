"""The content-addressed blob store: whole puts, and resumable chunked uploads, on real files."""
from __future__ import annotations

import hashlib
import io
import os
import threading
from pathlib import Path

import pytest

from inspect_app.blobs.store import CHUNK_SIZE, BlobError, DiskStore, HashMismatch, OffsetMismatch

PHOTO = os.urandom(3 * CHUNK_SIZE + 12345)  # several read chunks, not a round number
PHOTO_SHA = hashlib.sha256(PHOTO).hexdigest()


def files_under(root: Path) -> list[Path]:
    """Every file in the store, temporary and partial ones included."""
    return sorted(p for p in root.rglob("*") if p.is_file())


class BrokenStream(io.RawIOBase):
    """A stream that breaks off part way, as a dropped connection or a failing disk would."""

    def __init__(self, data: bytes, fail_after: int) -> None:
        self._data = io.BytesIO(data)
        self._fail_after = fail_after

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._data.tell() >= self._fail_after:
            raise OSError("connection reset by peer")
        chunk = self._data.read(min(len(buffer), self._fail_after - self._data.tell()))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def test_put_bytes_stores_under_its_sha256(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)

    sha = store.put_bytes(PHOTO)

    assert sha == PHOTO_SHA
    assert store.path(sha) == tmp_path / sha[:2] / sha[2:4] / sha
    assert store.exists(sha) and store.size(sha) == len(PHOTO)
    with store.open(sha) as blob:
        assert blob.read() == PHOTO
    assert files_under(tmp_path) == [store.path(sha)]  # no temporary file left behind
    assert store.path(sha).stat().st_mode & 0o222 == 0  # read-only: part of the record


def test_putting_the_same_bytes_twice_keeps_one_blob(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)

    first = store.put_bytes(b"silt fence photo")
    second = store.put_file(io.BytesIO(b"silt fence photo"))

    assert first == second
    assert len(files_under(tmp_path)) == 1


def test_put_file_streams_a_path_or_a_stream(tmp_path: Path) -> None:
    source = tmp_path / "upload.jpg"
    source.write_bytes(PHOTO)
    store = DiskStore(tmp_path / "blobs")

    assert store.put_file(source) == PHOTO_SHA
    assert store.put_file(str(source)) == PHOTO_SHA
    with source.open("rb") as stream:
        assert store.put_file(stream) == PHOTO_SHA
    assert store.path(PHOTO_SHA).read_bytes() == PHOTO


def test_a_put_that_breaks_off_leaves_nothing(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)

    with pytest.raises(OSError, match="connection reset"):
        store.put_file(BrokenStream(PHOTO, fail_after=2 * CHUNK_SIZE + 7))

    assert not store.exists(PHOTO_SHA)
    assert files_under(tmp_path) == []
    assert store.put_file(io.BytesIO(PHOTO)) == PHOTO_SHA  # and a retry works


def test_put_with_the_wrong_expected_hash_is_refused(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)
    wrong = hashlib.sha256(b"something else").hexdigest()

    with pytest.raises(HashMismatch, match=f"sent for {wrong} hash to {PHOTO_SHA}"):
        store.put_bytes(PHOTO, expected_sha=wrong)

    assert files_under(tmp_path) == []
    assert store.put_bytes(PHOTO, expected_sha=PHOTO_SHA) == PHOTO_SHA


def test_missing_blob_is_reported_not_invented(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)

    assert not store.exists(PHOTO_SHA)
    with pytest.raises(FileNotFoundError):
        store.open(PHOTO_SHA)
    with pytest.raises(FileNotFoundError):
        store.size(PHOTO_SHA)


@pytest.mark.parametrize("name", ["../../etc/passwd", PHOTO_SHA.upper(), PHOTO_SHA[:-1], "", PHOTO_SHA + "0"],
                         ids=["path", "upper case", "63 digits", "empty", "65 digits"])  # the same in every worker
def test_names_that_are_not_a_sha256_are_refused(tmp_path: Path, name: str) -> None:
    store = DiskStore(tmp_path)

    for call in (store.path, store.exists, store.begin, store.received, store.complete):
        with pytest.raises(BlobError, match="is not a SHA-256"):
            call(name)
    with pytest.raises(BlobError, match="is not a SHA-256"):
        store.append(name, 0, b"x")
    with pytest.raises(BlobError, match="is not a SHA-256"):
        store.put_bytes(b"x", expected_sha=name)
    assert files_under(tmp_path) == []


def test_upload_resumes_where_it_broke_off_even_after_a_restart(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)
    assert store.begin(PHOTO_SHA) == 0
    offset = store.append(PHOTO_SHA, 0, PHOTO[:100_000])
    offset = store.append(PHOTO_SHA, offset, PHOTO[100_000:250_000])
    # The connection drops here; the server restarts and the device asks where to resume.

    restarted = DiskStore(tmp_path)
    assert restarted.received(PHOTO_SHA) == 250_000
    assert restarted.begin(PHOTO_SHA) == 250_000
    assert not restarted.exists(PHOTO_SHA)
    offset = 250_000
    while offset < len(PHOTO):
        offset = restarted.append(PHOTO_SHA, offset, PHOTO[offset : offset + 700_000])
    restarted.complete(PHOTO_SHA)

    assert restarted.path(PHOTO_SHA).read_bytes() == PHOTO
    assert restarted.received(PHOTO_SHA) == len(PHOTO)
    assert files_under(tmp_path) == [restarted.path(PHOTO_SHA)]  # the partial file became the blob


def test_append_at_the_wrong_offset_is_refused_with_the_current_one(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)
    store.append(PHOTO_SHA, 0, PHOTO[:1000])

    for wrong in (0, 500, 1001):
        with pytest.raises(OffsetMismatch, match="has 1000 bytes") as refused:
            store.append(PHOTO_SHA, wrong, PHOTO[wrong : wrong + 1000])
        assert refused.value.offset == 1000
    assert store.received(PHOTO_SHA) == 1000
    assert store.append(PHOTO_SHA, 1000, PHOTO[1000:2000]) == 2000


def test_append_past_the_start_of_an_upload_never_begun_is_refused(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)

    with pytest.raises(OffsetMismatch) as refused:
        store.append(PHOTO_SHA, 4096, PHOTO[4096:8192])

    assert refused.value.offset == 0
    assert files_under(tmp_path) == []


def test_upload_whose_bytes_do_not_match_is_discarded(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)
    corrupted = bytearray(PHOTO)
    corrupted[123_456] ^= 0x01  # one flipped bit on the way
    store.append(PHOTO_SHA, 0, bytes(corrupted))

    with pytest.raises(HashMismatch, match="discarded") as refused:
        store.complete(PHOTO_SHA)

    assert refused.value.actual == hashlib.sha256(corrupted).hexdigest()
    assert not store.exists(PHOTO_SHA)
    assert store.received(PHOTO_SHA) == 0
    assert files_under(tmp_path) == []
    store.append(PHOTO_SHA, 0, PHOTO)  # the device sends it again from the start
    store.complete(PHOTO_SHA)
    assert store.path(PHOTO_SHA).read_bytes() == PHOTO


def test_completing_twice_is_harmless_and_a_stored_blob_takes_no_more_bytes(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)
    store.append(PHOTO_SHA, 0, PHOTO)
    store.complete(PHOTO_SHA)

    store.complete(PHOTO_SHA)  # a replayed request
    with pytest.raises(OffsetMismatch) as refused:
        store.append(PHOTO_SHA, len(PHOTO), b"more")

    assert refused.value.offset == len(PHOTO)
    assert store.begin(PHOTO_SHA) == len(PHOTO)  # nothing left to send
    assert store.path(PHOTO_SHA).read_bytes() == PHOTO


def test_completing_an_upload_never_begun_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BlobError, match="no upload"):
        DiskStore(tmp_path).complete(PHOTO_SHA)


def test_size_limit_refuses_the_chunk_and_keeps_what_came_before(tmp_path: Path) -> None:
    store = DiskStore(tmp_path, max_bytes=CHUNK_SIZE)
    store.append(PHOTO_SHA, 0, PHOTO[:1000])

    with pytest.raises(BlobError, match="limit"):
        store.append(PHOTO_SHA, 1000, PHOTO[1000 : CHUNK_SIZE + 1])
    with pytest.raises(BlobError, match="limit"):
        store.put_bytes(PHOTO)

    assert store.received(PHOTO_SHA) == 1000
    assert not store.exists(PHOTO_SHA)
    assert files_under(tmp_path) == [tmp_path / ".partial" / PHOTO_SHA]


def test_two_devices_sending_the_same_chunk_at_once_write_it_once(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)
    chunk = PHOTO[:CHUNK_SIZE]
    outcomes: list[object] = []
    start = threading.Barrier(8)

    def send() -> None:
        start.wait()
        try:
            outcomes.append(store.append(PHOTO_SHA, 0, chunk))
        except OffsetMismatch as refused:
            outcomes.append(refused)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert outcomes.count(CHUNK_SIZE) == 1
    assert all(o.offset == CHUNK_SIZE for o in outcomes if isinstance(o, OffsetMismatch))
    assert store.received(PHOTO_SHA) == CHUNK_SIZE
