"""Every message the app sends, kept whether or not an SMTP server is configured."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, new_id, utcnow


class OutboundEmail(db.Model):
    __tablename__ = "outbound_emails"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    to: Mapped[list[str]] = mapped_column(JSON)
    subject: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text)
    attachment_names: Mapped[list[str]] = mapped_column(JSON, default=list)
    permit_id: Mapped[str | None] = mapped_column(String(36), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    error: Mapped[str | None] = mapped_column(Text)
