"""People who use the app, and the devices they sync from."""
from __future__ import annotations

import datetime as dt

from flask_login import UserMixin
from sqlalchemy import Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inspect_app.accounts import passwords
from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, choice, new_id, utcnow

ROLES = ("inspector", "agent", "permittee", "admin")


class User(UserMixin, db.Model):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    name: Mapped[str] = mapped_column(String(120))
    role: Mapped[str] = mapped_column(choice("user_role", *ROLES))
    password_hash: Mapped[str] = mapped_column(String(256))
    # Agents and admins work for one town; an admin with none configures every town.
    jurisdiction_id: Mapped[str | None] = mapped_column(ForeignKey("jurisdictions.id"))
    # Credentials printed on every report (§380-16 C(4)(f)[1](b)).
    pe_number: Mapped[str | None] = mapped_column(String(40))
    certification: Mapped[str | None] = mapped_column(String(200))
    # The inspector's title and company, printed beside name and credentials (CGP 2022 Part 4.7.1).
    title: Mapped[str | None] = mapped_column(String(120))
    organization: Mapped[str | None] = mapped_column(String(200))
    phone: Mapped[str | None] = mapped_column(String(40))
    is_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    # The secret in an inspector's calendar subscription link (calendar apps cannot sign in); a new
    # one replaces it, and the old link stops working.
    calendar_key: Mapped[str | None] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Part of every session and remember-me cookie (`get_id`): raising it (logout, a new password, the
    # account disabled) ends them all, on every device.
    session_version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")

    jurisdiction = relationship("Jurisdiction")

    @property
    def is_active(self) -> bool:  # Flask-Login: a disabled account cannot log in
        return self.is_enabled

    def get_id(self) -> str:
        """What Flask-Login keeps in the session and the remember cookie: the id and the session version."""
        return f"{self.id}:{self.session_version}"

    def end_sessions(self) -> None:
        """Every session and remember-me cookie of this user stops working at its next request."""
        self.session_version = (self.session_version or 1) + 1

    @property
    def display_name(self) -> str:
        return self.name

    @property
    def credentials(self) -> str:
        """The credentials line for a report: PE number and certification, whichever are known."""
        parts = []
        if self.pe_number:
            parts.append(f"P.E. (MA) No. {self.pe_number}")
        if self.certification:
            parts.append(self.certification)
        return "; ".join(parts) or "none recorded"

    def set_password(self, password: str) -> None:
        self.password_hash = passwords.hash_password(password)

    def check_password(self, password: str) -> bool:
        return passwords.matches(self.password_hash, password)

    def __repr__(self) -> str:
        return f"<User {self.email} {self.role}>"
