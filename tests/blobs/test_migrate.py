"""`flask blobs migrate`: a town's disk store copied into the S3 bucket, every file checked by its hash."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from inspect_app.blobs.s3 import S3Store
from inspect_app.blobs.store import DiskStore
from tests.s3_server import bucket_client, bucket_keys


def _corrupt(path: Path) -> None:
    path.chmod(0o644)  # a stored blob is read-only; damage (or an edit) outside the app changes it anyway
    path.write_bytes(b"changed on disk " + path.read_bytes()[16:])


def test_migrate_copies_checks_is_idempotent_and_reports_a_damaged_file(app, runner, s3_settings):
    disk = DiskStore(app.config["BLOB_ROOT"])
    files = [os.urandom(n) for n in (10, 70_000, 2 * 1024 * 1024 + 3)]
    shas = [disk.put_bytes(data) for data in files]
    refused = runner.invoke(args=["blobs", "migrate"])
    assert refused.exit_code != 0 and "BLOB_BACKEND=s3" in refused.output  # on disk: nothing to copy into
    app.config.update(s3_settings)
    bucket = S3Store(bucket_client(s3_settings), s3_settings["S3_BUCKET"])

    first = runner.invoke(args=["blobs", "migrate"])
    assert first.exit_code == 0, first.output
    assert "copied=3 already_there=0 problems=0" in first.output
    assert bucket_keys(s3_settings) == sorted(f"{s[:2]}/{s[2:4]}/{s}" for s in shas)
    for sha, data in zip(shas, files, strict=True):
        assert bucket.read(sha) == data

    again = runner.invoke(args=["blobs", "migrate"])
    assert again.exit_code == 0 and "copied=0 already_there=3 problems=0" in again.output

    # A file damaged in the bucket is copied again; a new file damaged on disk before it was copied is
    # reported, not copied, and the run fails.
    bucket.client.put_object(Bucket=bucket.bucket, Key=bucket.key(shas[1]), Body=b"not the photo")
    late = disk.put_bytes(b"a document stored after the first copy" * 100)
    _corrupt(disk.path(late))
    damaged = runner.invoke(args=["blobs", "migrate"])
    assert damaged.exit_code != 0
    assert "copied=1 already_there=2 problems=1" in damaged.output
    assert f"MISMATCH {late}: the source's file hashes to {hashlib.sha256(disk.path(late).read_bytes()).hexdigest()}" \
        in damaged.output
    assert bucket.read(shas[1]) == files[1]
    assert not bucket.exists(late)
    assert "could not be copied whole" in damaged.output


def test_migrate_to_root_copies_the_bucket_back_to_disk(app, runner, s3_settings, tmp_path):
    app.config.update(s3_settings)
    bucket = S3Store(bucket_client(s3_settings), s3_settings["S3_BUCKET"])
    shas = [bucket.put_bytes(os.urandom(n)) for n in (5, 40_000)]
    backup = tmp_path / "backup"
    both = runner.invoke(args=["blobs", "migrate", "--from-root", str(tmp_path), "--to-root", str(backup)])
    assert both.exit_code != 0 and "not both" in both.output
    first = runner.invoke(args=["blobs", "migrate", "--to-root", str(backup)])
    assert first.exit_code == 0 and "copied=2 already_there=0 problems=0" in first.output, first.output
    disk = DiskStore(backup)
    assert {sha: disk.read(sha) for sha in shas} == {sha: bucket.read(sha) for sha in shas}
    assert "copied=0 already_there=2" in runner.invoke(args=["blobs", "migrate", "--to-root", str(backup)]).output
