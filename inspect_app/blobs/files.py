"""Files that belong to the record: the bytes and their `blobs` row, stored before any record points at them.

Every place that keeps an uploaded or generated file and a record naming it (a photo and its renditions, a
final submission's PDF, a drawn signature, a frozen document) stores it here first. The `blobs` row is
written at once with its own statement, not left to the ORM's flush: the flush orders inserts by the
relationships it knows, and a record that names a blob only by a foreign-key column (no relationship) could
be inserted before the blob row, which the foreign key refuses (a 500 on the second PDF filed).

Whether a user may name a stored file in a form or a sync operation is the policy's question
(`accounts.policy.usable_blob`).
"""
from __future__ import annotations

import io
import re
from importlib import import_module
from typing import Any, BinaryIO

from flask import Response, current_app, request, send_file
from sqlalchemy.dialects import postgresql, sqlite

from inspect_app.blobs.models import Blob
from inspect_app.blobs.store import BlobStore, DiskStore
from inspect_app.extensions import db

SHA256 = re.compile(r"[0-9a-f]{64}")
_S3_SETTINGS = ("S3_ENDPOINT_URL", "S3_REGION", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY",
                "S3_ADDRESSING_STYLE")


def blob_store(max_bytes: int | None = None) -> BlobStore:
    """The app's blob store, as BLOB_BACKEND says (config.py): the one place that asks which it is."""
    settings = current_app.config
    if settings.get("BLOB_BACKEND", "disk") != "s3":
        return DiskStore(settings["BLOB_ROOT"], max_bytes=max_bytes)
    # The S3 backend, and the AWS SDK with it (some 20 MB), is loaded only by an app that uses it: an app
    # server keeping its files on disk never loads it (tests/test_worker_imports.py).
    s3 = import_module("inspect_app.blobs.s3")
    key = tuple(settings.get(name) for name in _S3_SETTINGS)
    clients = current_app.extensions.setdefault("blob_s3_clients", {})
    if key not in clients:  # one client per process and settings: making one takes a tenth of a second
        clients[key] = s3.connect(**{name.lower(): value for name, value in zip(_S3_SETTINGS, key)})
    return s3.S3Store(clients[key], settings["S3_BUCKET"], max_bytes=max_bytes)


def send_blob(sha: str, *, mimetype: str, etag: str | None = None, **options: Any) -> Response:
    """A response streaming the stored file `sha` (from disk or the bucket alike), after the caller's
    permission check; FileNotFoundError if it is not stored. Conditional (If-None-Match) and range requests
    are answered as for any file."""
    store = blob_store()
    size = store.size(sha)
    response = send_file(store.open(sha), mimetype=mimetype, etag=etag or False, conditional=False, **options)
    response.content_length = size
    return response.make_conditional(request, accept_ranges=True, complete_length=size)


def store_file(data: bytes | BinaryIO, content_type: str, *, expected_sha: str | None = None,
               store: BlobStore | None = None) -> str:
    """Store the bytes and their `blobs` row now; returns the SHA-256 that names them."""
    store = store or blob_store()
    stream = io.BytesIO(data) if isinstance(data, (bytes, bytearray, memoryview)) else data
    sha = store.put_file(stream, expected_sha)
    record_blob(sha, store.size(sha), content_type)
    return sha


def record_blob(sha: str, size: int, content_type: str, *, uploaded_by_id: str | None = None) -> None:
    """Write the `blobs` row of bytes already in the store, at once; nothing if it is there (even racing)."""
    values = {"sha256": sha, "size": size, "content_type": content_type, "uploaded_by_id": uploaded_by_id}
    insert = postgresql.insert if db.session.get_bind().dialect.name == "postgresql" else sqlite.insert
    db.session.execute(insert(Blob).values(**values).on_conflict_do_nothing(index_elements=["sha256"]))
