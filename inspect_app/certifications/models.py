"""The O&M plan, its responsible parties, the maintenance log and the annual certification (§380-14)."""
from __future__ import annotations

import datetime as dt
import decimal

from typing import Any, ClassVar

from sqlalchemy import JSON, Date, ForeignKey, Index, Numeric, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inspect_app.extensions import db
from inspect_app.geo import SitePoint, point_checks
from inspect_app.labels import CERTIFICATION_STATUS_LABELS, LOG_KIND_LABELS, PARTY_ROLE_LABELS, shorten
from inspect_app.types import UTCDateTime, choice, new_id, utcnow

PARTY_ROLES = tuple(PARTY_ROLE_LABELS)
LOG_KINDS = tuple(LOG_KIND_LABELS)
CERTIFICATION_STATUSES = tuple(CERTIFICATION_STATUS_LABELS)
REMINDER_KINDS = ("upcoming", "late")


class OMPlan(db.Model):
    __tablename__ = "om_plans"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), unique=True)
    estimated_annual_budget: Mapped[decimal.Decimal | None] = mapped_column(Numeric(12, 2))
    registry_reference: Mapped[str | None] = mapped_column(String(120))
    recorded_on: Mapped[dt.date | None] = mapped_column(Date)


class ResponsibleParty(db.Model):
    """Who is bound to the O&M plan; a change of ownership ends one and starts another (§380-14 F)."""

    __tablename__ = "responsible_parties"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    user_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(choice("party_role", *PARTY_ROLES))
    email: Mapped[str | None] = mapped_column(String(254))
    address: Mapped[str | None] = mapped_column(String(300))
    starts_on: Mapped[dt.date] = mapped_column(Date)
    ends_on: Mapped[dt.date | None] = mapped_column(Date)


class Easement(SitePoint, db.Model):
    """A stormwater management easement of the O&M plan: its purpose and location (§380-14 C(2)(d), (m);
    D(2): "The purpose of each easement shall be specified"), the grantor, and its recording at the registry
    of deeds, which must come before the certificate of completion (§380-14 D(4); Southborough §7.6 h)).
    `location` is None only for an easement moved from the plan's former free text, which gave none. Its point
    puts it on the site map, the "map and list" of C(2)(m)."""

    __tablename__ = "easements"
    __table_args__ = point_checks()
    point_kind = "easement"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    purpose: Mapped[str] = mapped_column(Text)
    location: Mapped[str | None] = mapped_column(String(300))
    grantor_id: Mapped[str | None] = mapped_column(ForeignKey("responsible_parties.id"))
    registry_reference: Mapped[str | None] = mapped_column(String(120))
    recorded_on: Mapped[dt.date | None] = mapped_column(Date)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

    grantor = relationship("ResponsibleParty")

    @property
    def point_name(self) -> str:
        """What the site map calls an easement: its purpose."""
        return f"Easement: {shorten(self.purpose)}"

    @property
    def is_recorded(self) -> bool:
        return self.recorded_on is not None


class MaintenanceLogEntry(db.Model):
    """§380-14 C(2)(j): inspections, repairs, replacement and disposal (material and location)."""

    __tablename__ = "maintenance_log_entries"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    structure_id: Mapped[str | None] = mapped_column(ForeignKey("stormwater_structures.id"))
    kind: Mapped[str] = mapped_column(choice("log_kind", *LOG_KINDS))
    performed_on: Mapped[dt.date] = mapped_column(Date, index=True)
    description: Mapped[str] = mapped_column(Text)
    material_type: Mapped[str | None] = mapped_column(String(200))
    disposal_location: Mapped[str | None] = mapped_column(String(300))
    performed_by: Mapped[str] = mapped_column(String(200))
    created_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class OMCertification(db.Model):
    """The annual certification by the responsible party (§380-14 C(2)(l))."""

    __tablename__ = "om_certifications"
    blob_columns: ClassVar = ("signature_sha256",)  # who sees the certification sees its signature
    # One standing certification per permit and period: a double-click (or a replayed sync) makes one.
    # A certification found deficient leaves the period open for a new one.
    __table_args__ = (
        Index("uq_om_certification_period", "permit_id", "period_start", unique=True,
              sqlite_where=text("status != 'deficient'"), postgresql_where=text("status != 'deficient'")),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    period_start: Mapped[dt.date] = mapped_column(Date)
    period_end: Mapped[dt.date] = mapped_column(Date)
    signer_name: Mapped[str] = mapped_column(String(200))
    signature_sha256: Mapped[str | None] = mapped_column(String(64))
    statement: Mapped[str] = mapped_column(Text)
    submitted_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    submitted_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    status: Mapped[str] = mapped_column(choice("certification_status", *CERTIFICATION_STATUSES),
                                        default="submitted")
    reviewed_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    reviewed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    review_note: Mapped[str | None] = mapped_column(Text)
    # What was certified, frozen at signing (log entry ids, scheduled tasks with no entry, as-of date),
    # so a later back-dated log entry or schedule change never alters a signed certification.
    contents: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class NoticeToCorrect(db.Model):
    """After a notice to correct maintenance, 30 days to comply (§380-14 E)."""

    __tablename__ = "notices_to_correct"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    certification_id: Mapped[str | None] = mapped_column(ForeignKey("om_certifications.id"))
    text: Mapped[str] = mapped_column(Text)
    issued_by_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    issued_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    cure_due_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    cured_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    cured_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))

    certification = relationship("OMCertification")
    issued_by = relationship("User", foreign_keys=[issued_by_id])
    cured_by = relationship("User", foreign_keys=[cured_by_id])


class OMReminder(db.Model):
    """A certification reminder sent for one permit and period, so a daily run never sends it twice."""

    __tablename__ = "om_reminders"
    __table_args__ = (UniqueConstraint("permit_id", "period_start", "kind", name="uq_om_reminder"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    period_start: Mapped[dt.date] = mapped_column(Date)
    kind: Mapped[str] = mapped_column(choice("om_reminder_kind", *REMINDER_KINDS))
    email_id: Mapped[str | None] = mapped_column(ForeignKey("outbound_emails.id"))
    sent_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class ScheduleAmendment(db.Model):
    """A change to a structure's maintenance schedule once the plan binds responsible parties (§380-14 F(2):
    "Amendments must be in writing and signed by all responsible parties"). Pending until every current
    responsible party has signed; `in_force_at` is when the last one did and the schedule changed."""

    __tablename__ = "schedule_amendments"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    structure_id: Mapped[str] = mapped_column(ForeignKey("stormwater_structures.id"))
    task: Mapped[str | None] = mapped_column(Text)
    interval_months: Mapped[int | None]
    proposed_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    proposed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    in_force_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    signatures: Mapped[list[ScheduleAmendmentSignature]] = relationship(
        back_populates="amendment", order_by="ScheduleAmendmentSignature.signed_at")


class ScheduleAmendmentSignature(db.Model):
    """One responsible party's signature of a schedule amendment, by its own account or, for a party with
    none, the written signature recorded by the town's agent."""

    __tablename__ = "schedule_amendment_signatures"
    __table_args__ = (UniqueConstraint("amendment_id", "party_id", name="uq_schedule_amendment_party"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    amendment_id: Mapped[str] = mapped_column(ForeignKey("schedule_amendments.id"), index=True)
    party_id: Mapped[str] = mapped_column(ForeignKey("responsible_parties.id"))
    signed_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    signed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    amendment: Mapped[ScheduleAmendment] = relationship(back_populates="signatures")
