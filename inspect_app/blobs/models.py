"""The `blobs` rows: one per complete file in the blob store (blobs/store.py); `blob_uploads`: who is sending
which unfinished one, for their quota."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, utcnow


class Blob(db.Model):
    """A complete file in the blob store, addressed by the SHA-256 of its bytes."""

    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    content_type: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Who uploaded it through /sync/blobs (their quota counts it); None when the server stored it.
    uploaded_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"), index=True)


class BlobUpload(db.Model):
    """An upload a user has begun through /sync/blobs and not completed: its bytes so far count against the user's
    quota (sync.services.check_quota), as a completed one's do. Completing it, or `flask blobs gc` removing it once
    abandoned, removes the row."""

    __tablename__ = "blob_uploads"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), primary_key=True, index=True)
    received: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
