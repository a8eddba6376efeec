"""Files that belong to the record: the bytes and their `blobs` row, stored before any record points at them.

Every place that keeps an uploaded or generated file and a record naming it (a photo and its renditions, a
final submission's PDF, a drawn signature, a frozen document) stores it here first. The `blobs` row is
written at once with its own statement, not left to the ORM's flush: the flush orders inserts by the
relationships it knows, and a record that names a blob only by a foreign-key column (no relationship) could
be inserted before the blob row, which the foreign key refuses (a 500 on the second PDF filed).

A form or a sync operation that names a stored file by its SHA-256 (a photo a device uploaded first, a drawn
signature, a pipe-run video) asks `usable` whether the user may: one rule for every such field.
"""
from __future__ import annotations

import io
import re
from typing import BinaryIO

from flask import current_app
from sqlalchemy.dialects import postgresql, sqlite

from inspect_app.accounts.policy import sees_blob
from inspect_app.blobs.store import BlobStore
from inspect_app.extensions import db
from inspect_app.photos.models import Blob

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


def usable(user, sha: str | None, store: BlobStore | None = None) -> bool:
    """Whether `user` may name the stored file `sha` in a form or a sync operation: it is stored whole, and it
    is theirs (`sees_blob`: they uploaded it, or they see a record that names it).

    A file not stored and a file stored but not theirs (another user's draft photo, another town's) give the
    same False, so a caller answers both alike: naming a hash tells nobody whether someone else's file is
    stored, and never makes it theirs.
    """
    if not sha or not SHA256.fullmatch(sha) or db.session.get(Blob, sha) is None:
        return False
    return (store or blob_store()).exists(sha) and sees_blob(user, sha)
