"""Findings, the corrective actions they open (CGP 2022 Part 5), and walk-through punch lists."""
from __future__ import annotations

import datetime as dt
from typing import ClassVar

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, select
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inspect_app.accounts.records import DraftPart
from inspect_app.extensions import db
from inspect_app.labels import ACTION_KIND_LABELS, SEVERITY_LABELS
from inspect_app.types import UTCDateTime, choice, new_id, utcnow

SEVERITIES = tuple(SEVERITY_LABELS)
FINDING_STATUSES = ("open", "corrected", "returned")
ACTION_KINDS = tuple(ACTION_KIND_LABELS)
ACTION_STATUSES = ("open", "completed", "verified")


# A finding's citation holds this many characters; a longer one (a profile's may hold 200) is cut to fit.
CITATION_LENGTH = 120


class Finding(db.Model):
    __tablename__ = "findings"
    # A draft's findings are its author's alone, as the draft is (accounts/policy.py).
    draft_parts: ClassVar = (DraftPart("findings", lambda _, hidden: select(Finding.id).where(
        Finding.inspection_id.in_(hidden["inspections"])), after=("inspections",)),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    inspection_id: Mapped[str] = mapped_column(ForeignKey("inspections.id"), index=True)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    description: Mapped[str] = mapped_column(Text)
    location: Mapped[str | None] = mapped_column(String(300))
    severity: Mapped[str] = mapped_column(choice("finding_severity", *SEVERITIES), default="minor")
    is_violation: Mapped[bool] = mapped_column(Boolean, default=False)
    citation: Mapped[str | None] = mapped_column(String(CITATION_LENGTH))
    area_id: Mapped[str | None] = mapped_column(ForeignKey("disturbed_areas.id"))
    structure_id: Mapped[str | None] = mapped_column(ForeignKey("stormwater_structures.id"))
    # Made by the app itself (e.g. an area past its stabilization deadline), not typed by a person.
    is_automatic: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(choice("finding_status", *FINDING_STATUSES), default="open")
    agent_comment: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

    inspection = relationship("Inspection", back_populates="findings")
    actions: Mapped[list[CorrectiveAction]] = relationship(back_populates="finding")


class CorrectiveAction(db.Model):
    __tablename__ = "corrective_actions"
    # The actions opened on a draft's findings, and the photos that are their evidence.
    draft_parts: ClassVar = (
        DraftPart("corrective_actions", lambda _, hidden: select(CorrectiveAction.id).where(
            CorrectiveAction.finding_id.in_(hidden["findings"])), after=("findings",)),
        DraftPart("photos", lambda _, hidden: select(CorrectiveAction.evidence_photo_id).where(
            CorrectiveAction.finding_id.in_(hidden["findings"]), CorrectiveAction.evidence_photo_id.is_not(None)),
            after=("findings",)),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    finding_id: Mapped[str] = mapped_column(ForeignKey("findings.id"), index=True)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    kind: Mapped[str] = mapped_column(choice("action_kind", *ACTION_KINDS))
    description: Mapped[str] = mapped_column(Text)
    owner_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    owner_name: Mapped[str] = mapped_column(String(200))
    discovered_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    # CGP Part 5.2: next business day for routine maintenance, 7 calendar days otherwise.
    due_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, index=True)
    status: Mapped[str] = mapped_column(choice("action_status", *ACTION_STATUSES), default="open")
    completed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    closeout_note: Mapped[str | None] = mapped_column(Text)
    evidence_photo_id: Mapped[str | None] = mapped_column(ForeignKey("photos.id"))
    verified_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    verified_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    revision: Mapped[int] = mapped_column(Integer, default=1)
    # When the action was recorded (CGP 2022 Part 5.4: documented within 24 hours of discovery).
    created_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, default=utcnow)

    finding: Mapped[Finding] = relationship(back_populates="actions")
    owner = relationship("User", foreign_keys=[owner_id])
    verified_by = relationship("User", foreign_keys=[verified_by_id])

    def is_overdue(self, now: dt.datetime) -> bool:
        return self.completed_at is None and now > self.due_at


class PunchListItem(db.Model):
    """An item left at the walk-through, which the final inspection must resolve (§380-16 C(4)(d))."""

    __tablename__ = "punch_list_items"
    draft_parts: ClassVar = (DraftPart("punch_list_items", lambda _, hidden: select(PunchListItem.id).where(
        PunchListItem.walk_through_id.in_(hidden["inspections"])), after=("inspections",)),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    walk_through_id: Mapped[str] = mapped_column(ForeignKey("inspections.id"), index=True)
    description: Mapped[str] = mapped_column(Text)
    resolved_in_id: Mapped[str | None] = mapped_column(ForeignKey("inspections.id"))
    resolved_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    resolution: Mapped[str | None] = mapped_column(Text)
