"""Waivers of a town requirement on one permit (Longmeadow §380-8, Southborough §6.2)."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Date, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, new_id, utcnow


class Waiver(db.Model):
    """The authority waives strict compliance with one requirement (`requirement`: an obligation kind the
    profile's `[waivers]` lists), for the whole permit or one structure, from `granted_on`, for `reason`.
    `granted_by` is the authority's person who granted it (the DPW Director, or the agent it delegated to)."""

    __tablename__ = "waivers"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    requirement: Mapped[str] = mapped_column(String(40))
    structure_id: Mapped[str | None] = mapped_column(ForeignKey("stormwater_structures.id"))
    reason: Mapped[str] = mapped_column(Text)
    granted_on: Mapped[dt.date] = mapped_column(Date)
    granted_by_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    recorded_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

    granted_by = relationship("User", foreign_keys=[granted_by_id])
    structure = relationship("StormwaterStructure")

    @property
    def subject(self) -> str | None:
        """The engine's subject it waives (`structure:<id>`), or None for every subject of the requirement."""
        return f"structure:{self.structure_id}" if self.structure_id else None
