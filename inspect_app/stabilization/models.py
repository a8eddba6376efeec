"""Disturbed areas and their status timeline, which drives the 7-day stabilization clock."""
from __future__ import annotations

import datetime as dt
import decimal

from sqlalchemy import Boolean, ForeignKey, Integer, Numeric, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inspect_app.extensions import db
from inspect_app.geo import SitePoint, point_checks
from inspect_app.types import UTCDateTime, choice, new_id, utcnow

AREA_STATUSES = ("disturbed", "activity_ceased", "stabilization_initiated", "stabilized")


class DisturbedArea(SitePoint, db.Model):
    """A portion of the site; its current status is the newest event of its timeline."""

    __tablename__ = "disturbed_areas"
    __table_args__ = (UniqueConstraint("permit_id", "name", name="uq_area_name"), *point_checks())
    point_kind = "area"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    acres: Mapped[decimal.Decimal] = mapped_column(Numeric(9, 3))
    status: Mapped[str] = mapped_column(choice("area_status", *AREA_STATUSES), default="disturbed")
    status_since: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    revision: Mapped[int] = mapped_column(Integer, default=1)
    # Two devices changed it from the same revision: a person must look (sync never picks silently).
    has_conflict: Mapped[bool] = mapped_column(Boolean, default=False)

    permit = relationship("Permit", back_populates="areas")
    events: Mapped[list[AreaStatusEvent]] = relationship(
        back_populates="area", order_by="AreaStatusEvent.at", cascade="all, delete-orphan"
    )


class AreaStatusEvent(db.Model):
    __tablename__ = "area_status_events"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    area_id: Mapped[str] = mapped_column(ForeignKey("disturbed_areas.id"), index=True)
    status: Mapped[str] = mapped_column(choice("area_event_status", *AREA_STATUSES))
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    recorded_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    recorded_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    inspection_id: Mapped[str | None] = mapped_column(ForeignKey("inspections.id"))
    note: Mapped[str | None] = mapped_column(Text)

    area: Mapped[DisturbedArea] = relationship(back_populates="events")
