"""Each permit's open obligations as the schedule engine last worked them out, found by query.

The rows are written by `schedule.obligations` in the same transaction as every change to a permit's
record, and again by the periodic `flask dashboard refresh` for what the passage of time alone brings
(the next routine inspection after a missed one, a new O&M period). Their status is not stored: it
follows from the time of the query (`status_at`), so a stored row never shows a stale status.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    JSON,
    BigInteger,
    ColumnElement,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    and_,
    case,
    or_,
)
from sqlalchemy.orm import Mapped, mapped_column

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, utcnow


class PermitObligation(db.Model):
    """One open (upcoming, due or overdue) obligation of a permit, with its reason and citation."""

    __tablename__ = "permit_obligations"
    # By deadline, with what the dashboard's counts and filters read: the admin of all towns counts every row
    # (280,000 for 50,000 permits) from the index alone, and a page sorted by deadline walks it in order.
    __table_args__ = (Index("ix_permit_obligations_due", "due_at", "opens_at", "kind", "permit_id"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    # The engine's `<thing>:<id>` key (stable, for calendar UIDs) and what it is about in words.
    subject: Mapped[str] = mapped_column(String(200))
    about: Mapped[str] = mapped_column(Text)
    opens_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    due_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    reason: Mapped[str] = mapped_column(Text)
    citation: Mapped[str] = mapped_column(String(200))
    computed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

    @classmethod
    def overdue_at(cls, now: dt.datetime) -> ColumnElement[bool]:
        """Not done and past its deadline as of `now` (the engine's `now > due_at`)."""
        return cls.due_at < now

    @classmethod
    def due_or_overdue_at(cls, now: dt.datetime) -> ColumnElement[bool]:
        """Its window has opened (`opens_at <= now`) or its deadline has passed, as of `now`."""
        return or_(cls.due_at < now, cls.opens_at <= now)

    @classmethod
    def due_at_time(cls, now: dt.datetime) -> ColumnElement[bool]:
        """Due as of `now`: its window is open and it is not late yet."""
        return and_(or_(cls.due_at.is_(None), cls.due_at >= now), cls.opens_at <= now)

    @classmethod
    def status_at(cls, now: dt.datetime) -> ColumnElement[str]:
        """'overdue', 'due' or 'upcoming' as of `now`, worked out by the database."""
        return case((cls.overdue_at(now), "overdue"), (cls.opens_at <= now, "due"), else_="upcoming")


class PermitScheduleProblem(db.Model):
    """A permit whose record the engine could not evaluate, and why (shown on the dashboard)."""

    __tablename__ = "permit_schedule_problems"

    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id", ondelete="CASCADE"), primary_key=True)
    problem: Mapped[str] = mapped_column(Text)
    computed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class HolidayYear(db.Model):
    """The legal holidays of one year of a profile's holiday calendar, as a version of the `holidays`
    package worked them out (rule 13), so an app server need not import the package (legal_holidays.py)."""

    __tablename__ = "holiday_years"

    country: Mapped[str] = mapped_column(String(8), primary_key=True)
    subdivision: Mapped[str] = mapped_column(String(16), primary_key=True)  # "" for a whole country
    year: Mapped[int] = mapped_column(Integer, primary_key=True)
    package_version: Mapped[str] = mapped_column(String(40))
    # [["2027-04-19", "Patriots' Day"], ...], in date order.
    days: Mapped[list[list[str]]] = mapped_column(JSON)
