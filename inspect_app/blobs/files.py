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
from typing import BinaryIO

from flask import current_app
from sqlalchemy.dialects import postgresql, sqlite

from inspect_app.blobs.models import Blob
from inspect_app.blobs.store import BlobStore
from inspect_app.extensions import db

SHA256 = re.compile(r"[0-9a-f]{64}")


def blob_store() -> BlobStore:
    """The app's blob store."""
    return BlobStore(current_app.config["BLOB_ROOT"])


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
