"""Frozen-conditions periods and snowmelt discharges recorded at a permit (CGP 2022 Parts 4.2-4.4)."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, new_id, utcnow


class FrozenPeriod(db.Model):
    """CGP 2022 Part 4.4 (frozen conditions): the site documents the beginning and ending of the period.

    `suspended`: construction is suspended and every disturbed area stabilized, so inspections are suspended;
    otherwise work goes on in frozen conditions and inspections drop to once a month. `ends_at` is None
    while the period lasts (thawing ends it, as does work resumed on an area during a suspension)."""

    __tablename__ = "frozen_periods"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    suspended: Mapped[bool] = mapped_column(Boolean)
    starts_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    ends_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    note: Mapped[str] = mapped_column(Text)
    recorded_by_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    recorded_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    ended_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))

    recorded_by = relationship("User", foreign_keys=[recorded_by_id])
    ended_by = relationship("User", foreign_keys=[ended_by_id])


class SnowmeltDischarge(db.Model):
    """A discharge caused by snowmelt (CGP 2022 Parts 4.2, 4.3), from a storm of `snow_mm` of snow in 24 hours.

    Found by the storm sweep from the station's hourly snow depth (`station_id`, the snowfall its rise, the
    discharge the first hour of melt after it), or seen on site and recorded by an inspector
    (`recorded_by_id`, `seen_on_site`)."""

    __tablename__ = "snowmelt_discharges"
    __table_args__ = (UniqueConstraint("permit_id", "discharge_at", "seen_on_site", name="uq_snowmelt_permit_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    discharge_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    snow_mm: Mapped[float]
    seen_on_site: Mapped[bool] = mapped_column(Boolean, default=False)
    station_id: Mapped[str | None] = mapped_column(String(20))
    # When the snow storm it melted from reached its depth (a station's record), if known.
    snowfall_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    note: Mapped[str | None] = mapped_column(Text)
    recorded_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    recorded_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

    recorded_by = relationship("User", foreign_keys=[recorded_by_id])
