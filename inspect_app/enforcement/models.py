"""Stop-work orders and notices of violation (§380-16 C(4)(e)[5], §380-19)."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Column, ForeignKey, String, Table, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inspect_app import inspection_types
from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, new_id, utcnow

stop_work_findings = Table(
    "stop_work_findings",
    db.metadata,
    Column("order_id", ForeignKey("stop_work_orders.id"), primary_key=True),
    Column("finding_id", ForeignKey("findings.id"), primary_key=True),
)


def citation_purpose(inspection_type: str | None) -> str:
    """The profile purpose whose clause an order rests on: after the final inspection, `stop_work_final`
    (§380-16 C(4)(e)[5]); after any other inspection, or none, `stop_work` (§380-16 C(4)(f)[2])."""
    return "stop_work_final" if inspection_types.accepts_system(inspection_type) else "stop_work"


class StopWorkOrder(db.Model):
    __tablename__ = "stop_work_orders"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    reason: Mapped[str] = mapped_column(Text)
    inspection_id: Mapped[str | None] = mapped_column(ForeignKey("inspections.id"))
    issued_by_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    issued_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    acknowledged_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    acknowledged_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    lifted_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    lifted_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    lift_reason: Mapped[str | None] = mapped_column(Text)
    # What approved the corrected work (e.g. the re-inspection that found it compliant).
    approval_inspection_id: Mapped[str | None] = mapped_column(ForeignKey("inspections.id"))

    findings = relationship("Finding", secondary=stop_work_findings, order_by="Finding.created_at")
    permit = relationship("Permit")
    inspection = relationship("Inspection", foreign_keys=[inspection_id])
    approval_inspection = relationship("Inspection", foreign_keys=[approval_inspection_id])
    issued_by = relationship("User", foreign_keys=[issued_by_id])
    acknowledged_by = relationship("User", foreign_keys=[acknowledged_by_id])
    lifted_by = relationship("User", foreign_keys=[lifted_by_id])
    notices = relationship("NoticeOfViolation", back_populates="stop_work_order",
                           order_by="NoticeOfViolation.issued_at")

    @property
    def is_standing(self) -> bool:
        return self.lifted_at is None

    @property
    def citation_purpose(self) -> str:
        """What the order rests on, as a profile citation purpose (`citation_purpose`)."""
        return citation_purpose(self.inspection.type if self.inspection is not None else None)

    @property
    def uncorrected_findings(self) -> list:
        """The linked findings not yet corrected; §380-16 C(4)(e)[5] keeps the order until they are."""
        return [f for f in self.findings if f.status != "corrected"]


class NoticeOfViolation(db.Model):
    __tablename__ = "notices_of_violation"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    inspection_id: Mapped[str | None] = mapped_column(ForeignKey("inspections.id"))
    stop_work_order_id: Mapped[str | None] = mapped_column(ForeignKey("stop_work_orders.id"))
    text: Mapped[str] = mapped_column(Text)
    issued_by_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    issued_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

    stop_work_order = relationship("StopWorkOrder", back_populates="notices")
    issued_by = relationship("User", foreign_keys=[issued_by_id])
