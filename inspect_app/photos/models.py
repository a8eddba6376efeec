"""Photos: the original and its renditions, each a stored file (blobs/models.py)."""
from __future__ import annotations

import datetime as dt
from typing import ClassVar

from sqlalchemy import JSON, ForeignKey, String, Text, select
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inspect_app.accounts.records import DraftPart
from inspect_app.extensions import db
from inspect_app.photos.markup import MARKED_UP
from inspect_app.types import UTCDateTime, new_id, utcnow


class Photo(db.Model):
    """A photo: the original kept byte for byte, with display, thumbnail and print renditions."""

    __tablename__ = "photos"
    # A photo of a draft report or of one of its findings is part of the draft (accounts/policy.py).
    draft_parts: ClassVar = (
        DraftPart("photos", lambda _, hidden: select(Photo.id).where(Photo.inspection_id.in_(hidden["inspections"])),
                  after=("inspections",)),
        DraftPart("photos", lambda _, hidden: select(Photo.id).where(Photo.finding_id.in_(hidden["findings"])),
                  after=("findings",)),
    )
    blob_columns: ClassVar = ("original_sha256", "display_sha256", "thumb_sha256", "print_sha256",
                              "marked_display_sha256", "marked_thumb_sha256", "marked_print_sha256")

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    original_sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    display_sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    thumb_sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    # The rendition PDFs embed (photos stored before it existed have none; a PDF makes one as it goes).
    print_sha256: Mapped[str | None] = mapped_column(ForeignKey("blobs.sha256"))
    width: Mapped[int]
    height: Mapped[int]
    taken_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    latitude: Mapped[float | None]
    longitude: Mapped[float | None]
    caption: Mapped[str | None] = mapped_column(Text)
    inspection_id: Mapped[str | None] = mapped_column(ForeignKey("inspections.id"), index=True)
    finding_id: Mapped[str | None] = mapped_column(ForeignKey("findings.id"), index=True)
    structure_id: Mapped[str | None] = mapped_column(ForeignKey("stormwater_structures.id"))
    log_entry_id: Mapped[str | None] = mapped_column(ForeignKey("maintenance_log_entries.id"))
    uploaded_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The shapes drawn on it (photos/markup.py) and the marked-up copies made from the display rendition;
    # None when it carries no markup. The original and its SHA-256 never change.
    markup: Mapped[list[dict] | None] = mapped_column(JSON)
    marked_display_sha256: Mapped[str | None] = mapped_column(ForeignKey("blobs.sha256"))
    marked_thumb_sha256: Mapped[str | None] = mapped_column(ForeignKey("blobs.sha256"))
    marked_print_sha256: Mapped[str | None] = mapped_column(ForeignKey("blobs.sha256"))

    original = relationship("Blob", foreign_keys=[original_sha256])

    @property
    def marked_up_note(self) -> str | None:
        """What pages and PDFs say of a marked-up photo; None when it carries no markup."""
        return MARKED_UP if self.markup else None

    def shown_sha256(self, kind: str) -> str | None:
        """The file shown as `kind`: "original" byte for byte; "display", "thumb" and "print" are the
        marked-up copies when there are; "plain" is the display rendition without the markup (to draw on
        again). None for the print rendition of a photo stored before there was one. KeyError if `kind`
        is none of these."""
        plain = {"original": self.original_sha256, "display": self.display_sha256, "thumb": self.thumb_sha256,
                 "print": self.print_sha256, "plain": self.display_sha256}
        marked = {"display": self.marked_display_sha256, "thumb": self.marked_thumb_sha256,
                  "print": self.marked_print_sha256}
        return (marked.get(kind) if self.markup else None) or plain[kind]
