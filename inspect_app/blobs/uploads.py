"""What a device may upload (told by the file's first bytes) and when a stored file no record names is
removed: the blob rules the sync protocol's upload routes and `flask blobs gc` apply (docs/sync.md)."""
from __future__ import annotations

import datetime as dt
import json
import re

from sqlalchemy import JSON, select

from inspect_app.blobs.files import blob_store
from inspect_app.blobs.models import Blob, BlobUpload
from inspect_app.extensions import db
from inspect_app.types import utcnow

# What a device may upload, told by the first bytes: photos (a drawn signature is a PNG) and PDFs;
# inspectors and agents also the pipe-run videos a final report names (§380-16 C(4)(e)).
_SIGNATURES = {
    "image/jpeg": lambda h: h.startswith(b"\xff\xd8\xff"),
    "image/png": lambda h: h.startswith(b"\x89PNG\r\n\x1a\n"),
    "image/webp": lambda h: h.startswith(b"RIFF") and h[8:12] == b"WEBP",
    "application/pdf": lambda h: h.startswith(b"%PDF-"),
    "video/mp4": lambda h: h[4:8] == b"ftyp" and h[8:10] != b"qt",
    "video/quicktime": lambda h: h[4:10] == b"ftypqt",
    "video/webm": lambda h: h.startswith(b"\x1a\x45\xdf\xa3"),
}
_DOCUMENTS = ("image/jpeg", "image/png", "image/webp", "application/pdf")
UPLOAD_TYPES = {"permittee": _DOCUMENTS, "inspector": tuple(_SIGNATURES), "agent": tuple(_SIGNATURES)}
GC_GRACE = dt.timedelta(hours=24)
_SHA_IN_TEXT = re.compile(r"\b[0-9a-f]{64}\b")


class UploadRefused(ValueError):
    """An upload this user may not make; `status` is the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def upload_type(user, sha: str, declared: str) -> str:
    """The content type of the upload `sha`, from its first bytes; UploadRefused (415) unless it is one
    the user's role may upload and what was declared (an empty or generic declaration takes the bytes')."""
    head = blob_store().head(sha)
    found = next((kind for kind, matches in _SIGNATURES.items() if matches(head)), None)
    allowed_types = UPLOAD_TYPES.get(user.role, ())
    if found not in allowed_types:
        videos = " and videos (MP4, MOV, WebM)" if "video/mp4" in allowed_types else ""
        raise UploadRefused(415, f"You may upload only photos (JPEG, PNG, WebP), PDF files{videos}.")
    declared = declared.split(";")[0].strip().lower()
    if declared not in ("", "application/octet-stream", found):
        raise UploadRefused(415, f"The file was declared {declared[:60]} but its bytes are {found}.")
    return found


def referenced_blobs() -> set[str]:
    """Every blob a record points to or ever pointed to: any *sha256 column, and any SHA-256 inside a
    JSON column (a report's pipe videos, a waiting operation's photos, the audit log's snapshots)."""
    found: set[str] = set()
    for table in db.metadata.sorted_tables:
        if table.name in (Blob.__tablename__, BlobUpload.__tablename__):  # the files themselves, and uploads
            continue
        for column in table.columns:
            if column.name.endswith("sha256"):
                found |= set(db.session.scalars(select(column).where(column.is_not(None)).distinct()))
            elif isinstance(column.type, JSON):
                for value in db.session.scalars(select(column).where(column.is_not(None))
                                                .execution_options(yield_per=1000)):
                    found |= set(_SHA_IN_TEXT.findall(json.dumps(value)))
    return found


def collect_garbage(grace: dt.timedelta = GC_GRACE, now: dt.datetime | None = None) -> dict[str, int]:
    """Remove blobs no record points to and abandoned uploads, all older than `grace`.

    Safe to run at any time (from cron): a blob is removed only if no record points to it, both when
    the list is made and again, under the row's lock, just before; and only once it is older than the
    grace period, so an upload whose operation has not come yet, or a file stored a moment before its
    record, is kept.
    """
    now = now or utcnow()
    cutoff = now - grace
    store, counts = blob_store(), {"blobs": 0, "files": 0, "uploads": 0}
    referenced = referenced_blobs()
    for sha in db.session.scalars(select(Blob.sha256).where(Blob.created_at < cutoff)):
        if sha in referenced:
            continue
        blob = db.session.scalar(select(Blob).where(Blob.sha256 == sha).with_for_update())
        if blob is None or sha in referenced_blobs():
            db.session.rollback()
            continue
        db.session.delete(blob)
        db.session.commit()
        counts["blobs"] += store.remove(sha)
    rows = set(db.session.scalars(select(Blob.sha256)))
    for sha, stored_at in list(store.stored()):
        if sha not in rows and sha not in referenced and stored_at < cutoff.timestamp():
            # Asked again just before: the same bytes stored again since the list was made (a photo sent again)
            # have their row now, or are new again (`put_file` makes them so), and are kept.
            if db.session.get(Blob, sha) is not None or (store.stored_at(sha) or 0.0) >= cutoff.timestamp():
                continue
            counts["files"] += store.remove(sha)
    counts["uploads"] = store.remove_abandoned(cutoff.timestamp())
    # Who was sending them: an upload whose bytes are gone counts against no one's quota any more. One still held
    # (touched since, though not by a chunk that was taken) still counts.
    for row in db.session.scalars(select(BlobUpload).where(BlobUpload.updated_at < cutoff)):
        if store.received(row.sha256) == 0:
            db.session.delete(row)
    db.session.commit()
    return counts
