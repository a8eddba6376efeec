"""Documents frozen when signed or issued: the PDF bytes kept once, content-addressed, never rendered again."""
from __future__ import annotations

import datetime as dt
from typing import ClassVar

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, choice, new_id, utcnow

# The documents that are signed or issued, and so frozen; and the permit history, a report of the present frozen
# each time its record has changed, so a copy in hand can be verified too.
FROZEN_KINDS = ("inspection_report", "stop_work_order", "certificate_of_completion", "om_certification",
                "permit_history")


class FrozenDocument(db.Model):
    """One version of a signed or issued document: its PDF in the blob store and the facts of its signing.

    A later version (an amended report, a lifted order, a reviewed certification) is a new row that
    `amends` this one; this one stays, and stays downloadable. The database refuses to change either.
    """

    __tablename__ = "documents"
    blob_columns: ClassVar = ("pdf_sha256",)  # who sees the document sees its PDF (accounts/policy.py)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(choice("document_kind", *FROZEN_KINDS))
    # The inspection, order, certificate or certification it is the document of.
    subject_id: Mapped[str] = mapped_column(String(36), index=True)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    title: Mapped[str] = mapped_column(String(200))
    pdf_sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    pdf_size: Mapped[int]
    # The canonical record's hash the document prints (its first 16 hex digits on every page).
    record_sha256: Mapped[str] = mapped_column(String(64))
    signed_by: Mapped[str | None] = mapped_column(String(200))
    signed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    # What made this version: "signed", "issued", "weather filled in", "lifted", ...
    occasion: Mapped[str] = mapped_column(String(120))
    amends_id: Mapped[str | None] = mapped_column(ForeignKey("documents.id"))
    frozen_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
