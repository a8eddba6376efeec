"""Final submissions, the certificate of completion (§380-18) and surety releases (§380-17)."""
from __future__ import annotations

import datetime as dt
import decimal
from typing import Any, ClassVar

from sqlalchemy import JSON, Boolean, ForeignKey, Numeric, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from inspect_app.extensions import db
from inspect_app.labels import SUBMISSION_KIND_LABELS
from inspect_app.types import UTCDateTime, choice, new_id, utcnow

SUBMISSION_KINDS = tuple(SUBMISSION_KIND_LABELS)
SUBMISSION_STATUSES = ("pending", "accepted", "rejected")


class FinalSubmission(db.Model):
    __tablename__ = "final_submissions"
    blob_columns: ClassVar = ("blob_sha256",)  # who sees the submission sees its file (accounts/policy.py)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    kind: Mapped[str] = mapped_column(choice("submission_kind", *SUBMISSION_KINDS))
    blob_sha256: Mapped[str | None] = mapped_column(ForeignKey("blobs.sha256"))
    inspection_id: Mapped[str | None] = mapped_column(ForeignKey("inspections.id"))
    # The O&M plan's recording at the registry of deeds (book/page or document number).
    registry_reference: Mapped[str | None] = mapped_column(String(120))
    pe_certified: Mapped[bool] = mapped_column(Boolean, default=False)
    submitted_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    submitted_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    status: Mapped[str] = mapped_column(choice("submission_status", *SUBMISSION_STATUSES),
                                        default="pending")
    reviewed_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    reviewed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    review_note: Mapped[str | None] = mapped_column(Text)


class CertificateOfCompletion(db.Model):
    __tablename__ = "certificates_of_completion"
    __table_args__ = (UniqueConstraint("permit_id", name="uq_certificate_permit"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"))
    issued_by_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    issued_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    note: Mapped[str | None] = mapped_column(Text)
    # What the record owed and did not get, as issued (schedule/missed.py): the required inspections never made
    # that the issuer waived, each with its reason ("waived"), and the inspections missed ("missed"). None: issued
    # before certificates kept them.
    contents: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class SuretyRelease(db.Model):
    """Part of the bond released as a phase completes; in full only after the certificate."""

    __tablename__ = "surety_releases"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    phase: Mapped[str] = mapped_column(String(120))
    amount: Mapped[decimal.Decimal] = mapped_column(Numeric(12, 2))
    is_final: Mapped[bool] = mapped_column(Boolean, default=False)
    released_by_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    released_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
