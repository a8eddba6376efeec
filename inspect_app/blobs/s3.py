"""The blob store in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW), for app servers that share no disk.

Keys are content-addressed as on disk: a blob is the object ``ab/cd/<sha256>`` (so a disk store copied
whole keeps its names). It only ever appears under that key complete and verified: its bytes are hashed
before they are sent, and a PUT makes an object appear whole or not at all.

Resumable uploads from devices come in chunks of any size the device picks (256 KiB here), far below S3's
5 MiB minimum part, so they are not S3 multipart parts: each chunk is its own object,
``partial/<sha256>/<offset, 20 digits>``, and ``partial/<sha256>/begun`` marks an upload begun with no byte
yet. What the upload holds is the run of chunks that follow each other from offset 0; there is no lock, so
two app servers taking chunks of the same upload at once can leave a chunk out of that run, which is then
simply not counted: the device is told the true offset (OffsetMismatch) and sends from there, and
``complete`` hashes the run before anything takes the blob's name. Nothing waits on the app server's own
disk between requests, so any server can take the next chunk. A lifecycle rule on ``partial/`` (docs/deploy.md)
and `flask blobs gc` remove what an abandoned upload left.
"""
from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from inspect_app.blobs.store import (CHUNK_SIZE, SHA256_HEX, BlobError, BlobStore, HashMismatch, OffsetMismatch,
                                     check_sha)

PARTIAL = "partial/"
BEGUN = "begun"
_OFFSET_DIGITS = 20
# Assembled uploads and streams being stored wait in memory up to this size, then in a temporary file
# of this request only.
_SPOOL_BYTES = 8 * 1024 * 1024
_NOT_FOUND = {"404", "NoSuchKey", "NotFound"}


def connect(*, s3_endpoint_url: str | None = None, s3_region: str | None = None,
            s3_access_key_id: str | None = None, s3_secret_access_key: str | None = None,
            s3_addressing_style: str = "auto") -> Any:
    """A boto3 S3 client for the settings of config.py. With no access key the SDK finds credentials itself
    (an IAM role, AWS_* variables)."""
    return boto3.session.Session().client(
        "s3", endpoint_url=s3_endpoint_url, region_name=s3_region or "us-east-1",
        aws_access_key_id=s3_access_key_id, aws_secret_access_key=s3_secret_access_key,
        config=Config(s3={"addressing_style": s3_addressing_style or "auto"}, connect_timeout=5, read_timeout=60,
                      retries={"max_attempts": 4, "mode": "standard"}))


class S3Store(BlobStore):
    """Blobs in ``bucket`` through ``client`` (a boto3 S3 client, shared: it is thread-safe)."""

    def __init__(self, client: Any, bucket: str, *, max_bytes: int | None = None) -> None:
        self.client, self.bucket, self.max_bytes = client, bucket, max_bytes

    @staticmethod
    def key(sha: str) -> str:
        """The key of the blob ``sha`` (whether or not it is stored)."""
        check_sha(sha)
        return f"{sha[:2]}/{sha[2:4]}/{sha}"

    def exists(self, sha: str) -> bool:
        try:
            self.size(sha)
        except FileNotFoundError:
            return False
        return True

    def size(self, sha: str) -> int:
        try:
            return self.client.head_object(Bucket=self.bucket, Key=self.key(sha))["ContentLength"]
        except ClientError as error:
            raise _missing(error, sha) from None

    def open(self, sha: str) -> BinaryIO:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self.key(sha))["Body"]
        except ClientError as error:
            raise _missing(error, sha) from None

    def put_file(self, source: Path | str | BinaryIO, expected_sha: str | None = None) -> str:
        if expected_sha is not None:
            check_sha(expected_sha)
        if isinstance(source, (str, Path)):
            with open(source, "rb") as stream:
                return self.put_file(stream, expected_sha)
        with tempfile.SpooledTemporaryFile(_SPOOL_BYTES) as spool:
            digest, written = hashlib.sha256(), 0
            while chunk := source.read(CHUNK_SIZE):
                written += len(chunk)
                if self.max_bytes is not None and written > self.max_bytes:
                    raise BlobError(f"The file is larger than the limit of {self.max_bytes} bytes.")
                digest.update(chunk)
                spool.write(chunk)
            sha = digest.hexdigest()
            if expected_sha is not None and sha != expected_sha:
                raise HashMismatch(expected_sha, sha)
            # Content-addressed: the same name is the same bytes, kept and made new again (`_touch`); stored
            # from the spool when not there, or removed meanwhile.
            if not (self.exists(sha) and self._touch(sha)):
                spool.seek(0)
                self.client.upload_fileobj(spool, self.bucket, self.key(sha))
        return sha

    def _touch(self, sha: str) -> bool:
        """Make a stored object new again, as storing its bytes again makes a file on disk: `flask blobs gc`
        removes an object no row names only once it is older than its grace period, and the bytes stored again
        are about to get their row (a photo sent again after its first request failed past storing it). Copied
        onto itself, it keeps its bytes and gets a new LastModified. False if it is gone (gc removed it meanwhile):
        the caller stores the bytes again."""
        key = self.key(sha)
        try:
            self.client.copy_object(Bucket=self.bucket, Key=key, CopySource={"Bucket": self.bucket, "Key": key},
                                    MetadataDirective="REPLACE")
        except ClientError as error:
            if not _is_missing(error):
                raise
            return False
        return True

    def received(self, sha: str) -> int:
        if self.exists(sha):
            return self.size(sha)
        return self._upload(sha)[0]

    def begin(self, sha: str) -> int:
        if self.exists(sha):
            return self.size(sha)
        received, _run, keys = self._upload(sha)
        if not keys:
            self.client.put_object(Bucket=self.bucket, Key=self._partial_key(sha, BEGUN), Body=b"")
        return received

    def append(self, sha: str, offset: int, chunk: bytes) -> int:
        if self.exists(sha):
            raise OffsetMismatch(sha, self.size(sha))
        current, _run, _keys = self._upload(sha)
        if offset != current:
            raise OffsetMismatch(sha, current)
        if self.max_bytes is not None and current + len(chunk) > self.max_bytes:
            raise BlobError(f"The upload of {sha} would pass the limit of {self.max_bytes} bytes.")
        self.client.put_object(Bucket=self.bucket, Key=self._partial_key(sha, f"{offset:0{_OFFSET_DIGITS}d}"),
                               Body=chunk)
        return current + len(chunk)

    def complete(self, sha: str) -> None:
        _received, run, keys = self._upload(sha)
        if self.exists(sha) and self._touch(sha):  # a replayed complete, or the same bytes stored another way
            self._delete(keys)
            return
        if not keys:
            raise BlobError(f"There is no upload of {sha} to complete; begin it first.")
        with tempfile.SpooledTemporaryFile(_SPOOL_BYTES) as spool:
            digest = hashlib.sha256()
            for key in run:
                try:
                    body = self.client.get_object(Bucket=self.bucket, Key=key)["Body"]
                except ClientError as error:
                    # Another complete of the same upload (a device's retry, on another app server) stored the
                    # blob and deleted its chunks meanwhile: done, as the disk store, whose lock makes the
                    # second wait, answers.
                    if not _is_missing(error):
                        raise
                    if self.exists(sha):
                        return
                    raise BlobError(f"The upload of {sha} changed while it was completed: ask how much of it "
                                    "is stored, and send the rest again.") from None
                with body:
                    while chunk := body.read(CHUNK_SIZE):
                        digest.update(chunk)
                        spool.write(chunk)
            actual = digest.hexdigest()
            if actual != sha:
                self._delete(keys)
                raise HashMismatch(sha, actual)
            spool.seek(0)
            self.client.upload_fileobj(spool, self.bucket, self.key(sha))
        self._delete(keys)

    def head(self, sha: str, size: int = 16) -> bytes:
        if self.exists(sha):
            key = self.key(sha)
        else:
            run = self._upload(sha)[1]
            key = next(iter(run), None)  # the first chunk; a type's signature is in its first bytes
            if key is None:
                return b""
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=key, Range=f"bytes=0-{size - 1}")
        except ClientError as error:
            if _is_missing(error) or error.response.get("Error", {}).get("Code") == "InvalidRange":
                return b""  # removed meanwhile, or an empty file
            raise
        with answer["Body"] as body:
            return body.read(size)

    def remove(self, sha: str) -> bool:
        if not self.exists(sha):
            return False
        self.client.delete_object(Bucket=self.bucket, Key=self.key(sha))
        return True

    def stored(self) -> Iterator[tuple[str, float]]:
        for item in self._list(""):
            parts = item["Key"].split("/")
            if len(parts) == 3 and SHA256_HEX.fullmatch(parts[2]) and parts[2].startswith(parts[0] + parts[1]):
                yield parts[2], item["LastModified"].timestamp()

    def stored_at(self, sha: str) -> float | None:
        try:
            return self.client.head_object(Bucket=self.bucket, Key=self.key(sha))["LastModified"].timestamp()
        except ClientError as error:
            if _is_missing(error):
                return None
            raise

    def remove_abandoned(self, before: float) -> int:
        """Delete every upload none of whose chunks was sent since ``before`` (an upload still going on is
        kept whole), and abort S3 multipart uploads (a large blob being stored) begun before then."""
        newest: dict[str, float] = {}
        keys: dict[str, list[str]] = {}
        for item in self._list(PARTIAL):
            upload = item["Key"].removeprefix(PARTIAL).split("/")[0]
            newest[upload] = max(newest.get(upload, 0.0), item["LastModified"].timestamp())
            keys.setdefault(upload, []).append(item["Key"])
        removed = 0
        for upload, last in newest.items():
            if last < before:
                self._delete(keys[upload])
                removed += 1
        pages = self.client.get_paginator("list_multipart_uploads").paginate(Bucket=self.bucket)
        for page in pages:
            for upload in page.get("Uploads", []):
                if upload["Initiated"].timestamp() < before:
                    self.client.abort_multipart_upload(Bucket=self.bucket, Key=upload["Key"],
                                                       UploadId=upload["UploadId"])
                    removed += 1
        return removed

    def _upload(self, sha: str) -> tuple[int, list[str], list[str]]:
        """The upload of ``sha`` so far: the bytes its run of chunks holds, the keys of that run in order,
        and every key it has (none if it was not begun)."""
        chunks: list[tuple[int, int, str]] = []
        keys: list[str] = []
        for item in self._list(self._partial_key(sha, "")):
            keys.append(item["Key"])
            name = item["Key"].rsplit("/", 1)[1]
            if name.isdigit():
                chunks.append((int(name), item["Size"], item["Key"]))
        end, run = 0, []
        for start, length, key in sorted(chunks):
            if start == end:
                end += length
                run.append(key)
            elif start > end:
                break  # a gap: what follows it is not part of the upload
            # start < end: a chunk written over by another of another length; not counted
        return end, run, keys

    def _list(self, prefix: str) -> Iterator[dict]:
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            yield from page.get("Contents", [])

    def _delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):  # DeleteObjects takes at most 1000 keys
            self.client.delete_objects(Bucket=self.bucket, Delete={
                "Objects": [{"Key": key} for key in keys[start:start + 1000]], "Quiet": True})

    def _partial_key(self, sha: str, name: str) -> str:
        check_sha(sha)
        return f"{PARTIAL}{sha}/{name}"


def _is_missing(error: ClientError) -> bool:
    return str(error.response.get("Error", {}).get("Code")) in _NOT_FOUND


def _missing(error: ClientError, sha: str) -> Exception:
    """FileNotFoundError for an object that is not there; any other answer of the bucket as it came."""
    return FileNotFoundError(f"blob {sha} is not stored") if _is_missing(error) else error
