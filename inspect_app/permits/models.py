"""Jurisdictions, permits, their parties, and the stormwater structures on them."""
from __future__ import annotations

import datetime as dt
import decimal

from sqlalchemy import (
    Boolean, CheckConstraint, Date, ForeignKey, Integer, Numeric, String, Text, UniqueConstraint,
)
from sqlalchemy.orm import Mapped, WriteOnlyMapped, mapped_column, relationship

from inspect_app.extensions import db
from inspect_app.geo import SitePoint, point_checks
from inspect_app.types import UTCDateTime, choice, new_id, utcnow

PERMIT_STATUSES = ("issued", "active", "stop_work", "final_submissions", "completed", "lapsed")
# The state machine of SPEC *The record*: issued → active → stop-work ↔ active → final
# submissions → completed; or lapsed.
PERMIT_TRANSITIONS = {
    "issued": {"active", "lapsed"},
    "active": {"stop_work", "final_submissions"},
    "stop_work": {"active", "final_submissions"},  # lifted: back to where the order found it
    "final_submissions": {"completed", "active", "stop_work"},
    "completed": set(),
    "lapsed": set(),
}
CGP_SCHEDULES = ("every_7_days", "every_14_days_and_storm")
ASSIGNMENT_CAPACITIES = ("design_engineer", "erosion_control_inspector")
STRUCTURE_KINDS = ("bmp", "pipe", "infiltration", "basin", "catch_basin", "outfall", "other")


class Jurisdiction(db.Model):
    """A town; its rules come from the profile file named by `profile_key`."""

    __tablename__ = "jurisdictions"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    profile_key: Mapped[str] = mapped_column(String(40), unique=True)
    name: Mapped[str] = mapped_column(String(120))
    notice_email: Mapped[str | None] = mapped_column(String(254))

    def __repr__(self) -> str:
        return f"<Jurisdiction {self.name}>"


class Permit(db.Model):
    """A land disturbance / stormwater management permit."""

    __tablename__ = "permits"
    __table_args__ = (
        UniqueConstraint("jurisdiction_id", "number", name="uq_permits_jurisdiction_number"),
        CheckConstraint("latitude BETWEEN -90 AND 90", name="latitude_range"),
        CheckConstraint("longitude BETWEEN -180 AND 180", name="longitude_range"),
        CheckConstraint("disturbed_acres >= 0", name="acres_not_negative"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    jurisdiction_id: Mapped[str] = mapped_column(ForeignKey("jurisdictions.id"), index=True)
    number: Mapped[str] = mapped_column(String(40))
    site_address: Mapped[str] = mapped_column(String(300))
    # The assessor's parcel (map and lot) of the site, as the town's permit tracker records it.
    parcel_id: Mapped[str | None] = mapped_column(String(60))
    latitude: Mapped[float]
    longitude: Mapped[float]
    # §380-10 B(1): the permittee must be the owner of the site.
    owner_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"), index=True)
    owner_name: Mapped[str] = mapped_column(String(200))
    applicant_name: Mapped[str] = mapped_column(String(200))
    applicant_email: Mapped[str | None] = mapped_column(String(254))
    disturbed_acres: Mapped[decimal.Decimal] = mapped_column(Numeric(9, 3))
    is_redevelopment: Mapped[bool] = mapped_column(Boolean, default=False)
    # Impaired for sediment or nutrients, Tier 2/2.5/3, or an ORW (CGP 2022 Part 4.3).
    sensitive_waters: Mapped[bool] = mapped_column(Boolean, default=False)
    sensitive_waters_note: Mapped[str | None] = mapped_column(String(300))
    cgp_schedule: Mapped[str] = mapped_column(choice("cgp_schedule", *CGP_SCHEDULES))
    # The permit's NPDES ID under EPA's Construction General Permit (its notice of intent), printed on
    # every erosion-control report (CGP 2022 Part 4.7.1).
    npdes_id: Mapped[str | None] = mapped_column(String(40))
    surety_amount: Mapped[decimal.Decimal | None] = mapped_column(Numeric(12, 2))
    issued_on: Mapped[dt.date] = mapped_column(Date)
    construction_started_on: Mapped[dt.date | None] = mapped_column(Date)
    # §380-2 "start of construction": the first land-disturbing activity, to the minute where it is known
    # (older records keep only the day, read as its end).
    construction_started_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    completed_on: Mapped[dt.date | None] = mapped_column(Date)
    extension_requested_on: Mapped[dt.date | None] = mapped_column(Date)
    # Where permits lapse (Southborough §9.7): the day the extension was granted; it lengthens the clock.
    extension_granted_on: Mapped[dt.date | None] = mapped_column(Date)
    # Longmeadow §380-10 K: the new start deadline an extension granted by the DPW Director sets.
    start_extended_to: Mapped[dt.date | None] = mapped_column(Date)
    # Southborough §9.7: the day the Commission's decision was filed with the Town Clerk; the lapse
    # clock runs from it where it is recorded (else from the issue date).
    decision_filed_on: Mapped[dt.date | None] = mapped_column(Date)
    status: Mapped[str] = mapped_column(choice("permit_status", *PERMIT_STATUSES), default="issued")
    revision: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)

    jurisdiction: Mapped[Jurisdiction] = relationship(lazy="joined")
    owner = relationship("User", foreign_keys=[owner_id])
    assignments: Mapped[list[PermitAssignment]] = relationship(
        back_populates="permit", cascade="all, delete-orphan"
    )
    areas: Mapped[list["DisturbedArea"]] = relationship(  # noqa: F821
        back_populates="permit", order_by="DisturbedArea.name"
    )
    structures: Mapped[list[StormwaterStructure]] = relationship(
        back_populates="permit", order_by="StormwaterStructure.name"
    )
    inspections: WriteOnlyMapped["Inspection"] = relationship(  # noqa: F821
        back_populates="permit", order_by="Inspection.performed_at"
    )
    # The stop-work orders not lifted yet (read only: enforcement/services.py issues and lifts them), oldest
    # first, for what a permit under stop-work cites.
    standing_stop_work_orders: Mapped[list["StopWorkOrder"]] = relationship(  # noqa: F821
        primaryjoin="and_(StopWorkOrder.permit_id == Permit.id, StopWorkOrder.lifted_at.is_(None))",
        order_by="StopWorkOrder.issued_at", viewonly=True,
    )

    def people(self, capacity: str) -> list:
        return [a.user for a in self.assignments if a.capacity == capacity]

    @property
    def design_engineer(self):
        found = self.people("design_engineer")
        return found[0] if found else None

    @property
    def erosion_control_inspector(self):
        found = self.people("erosion_control_inspector")
        return found[0] if found else None

    @property
    def is_under_stop_work(self) -> bool:
        return self.status == "stop_work"

    def can_become(self, status: str) -> bool:
        return status in PERMIT_TRANSITIONS[self.status]

    def __repr__(self) -> str:
        return f"<Permit {self.number}>"


class PermitAssignment(db.Model):
    """An inspector assigned to a permit, as its design engineer or erosion-control inspector."""

    __tablename__ = "permit_assignments"
    __table_args__ = (UniqueConstraint("permit_id", "user_id", "capacity", name="uq_assignment"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    capacity: Mapped[str] = mapped_column(choice("assignment_capacity", *ASSIGNMENT_CAPACITIES))
    assigned_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

    permit: Mapped[Permit] = relationship(back_populates="assignments")
    user = relationship("User", lazy="joined")


class StormwaterStructure(SitePoint, db.Model):
    """A BMP, pipe run, infiltration system or basin: pre-bury, final pipe video and O&M all use it."""

    __tablename__ = "stormwater_structures"
    __table_args__ = (UniqueConstraint("permit_id", "name", name="uq_structure_name"), *point_checks())
    point_kind = "structure"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    kind: Mapped[str] = mapped_column(choice("structure_kind", *STRUCTURE_KINDS))
    is_underground: Mapped[bool] = mapped_column(Boolean, default=True)
    design_size: Mapped[str | None] = mapped_column(String(120))
    design_invert: Mapped[str | None] = mapped_column(String(120))
    material: Mapped[str | None] = mapped_column(String(120))
    groundwater_separation_ft: Mapped[decimal.Decimal | None] = mapped_column(Numeric(6, 2))
    # §380-16 C(4)(c): when the structure was backfilled, and who recorded it.
    backfilled_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    backfilled_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    # O&M plan: what is done to it and how often (§380-14 C(2)).
    maintenance_task: Mapped[str | None] = mapped_column(Text)
    maintenance_interval_months: Mapped[int | None]
    revision: Mapped[int] = mapped_column(Integer, default=1)

    permit: Mapped[Permit] = relationship(back_populates="structures")
    backfilled_by = relationship("User", foreign_keys=[backfilled_by_id])
