"""The link that lets a person set their own password: mailed to each account an import makes (issue 34).

No password is ever in a file or a message. An account made this way gets a random password nobody is told,
and its owner a link to /set-password/<token>. The token is signed with the app's SECRET_KEY, names the
account and a fingerprint of its password hash, and lasts `LINK_DAYS`: once a password is set (by the link, or
by an admin) the hash changes and the link stops working, so it works once.

Each link mailed is recorded (`user.invite`); an account invited that has set no password since
(`user.password_change`) waits for one, and its admin may send it a new link (`send_new_link`). A new link
replaces the one before: the account gets a new random password, so the old link's fingerprint no longer
matches and it is refused, expired or not.
"""
from __future__ import annotations

import hashlib
import secrets

from flask import current_app
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy import and_, select

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import managed_users
from inspect_app.accounts.services import AccountError, change_password
from inspect_app.audit import services as audit
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.links import public_link
from inspect_app.mail import services as mail
from inspect_app.mail.models import OutboundEmail

LINK_DAYS = 7
_SALT = "set-password"


def unknown_password() -> str:
    """A password for a new account that nobody is told: its owner sets their own through the link."""
    return secrets.token_urlsafe(32)


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key, salt=_SALT)


def _fingerprint(user: User) -> str:
    """The password hash's, and the account's sessions' count once they were ended (disabling it ends them): a
    link stops working when either changes. An account never signed out everywhere keeps the plain hash's, so
    the links mailed before the count was in it still work."""
    version = user.session_version or 1
    material = user.password_hash if version == 1 else f"{user.password_hash}:{version}"
    return hashlib.sha256(material.encode()).hexdigest()[:20]


def link_token(user: User) -> str:
    """The token of `user`'s set-password link, good until their password changes or LINK_DAYS pass."""
    return _serializer().dumps({"user": user.id, "hash": _fingerprint(user)})


# Why a link's token names no account: what the set-password page tells its owner.
EXPIRED, USED, BROKEN = "expired", "used", "broken"


def user_for_token(token: str) -> tuple[User | None, str | None]:
    """The enabled account a link's token is for, if the token is genuine, not expired and not used; else None
    and why: EXPIRED (older than LINK_DAYS), USED (a password was set since, or a newer link replaced it) or
    BROKEN (not a token of ours, or not copied whole)."""
    try:
        found = _serializer().loads(token, max_age=LINK_DAYS * 24 * 3600)
    except SignatureExpired:  # genuine, but too old: checked before BadSignature, of which it is a kind
        return None, EXPIRED
    except BadSignature:
        return None, BROKEN
    if not isinstance(found, dict):
        return None, BROKEN
    user = db.session.get(User, str(found.get("user", "")))
    if user is None or not user.is_enabled:
        return None, BROKEN
    if found.get("hash") != _fingerprint(user):
        return None, USED
    return user, None


def set_password_url(user: User) -> str:
    return public_link("accounts.set_password", token=link_token(user))


def invite(user: User, actor=None) -> OutboundEmail:
    """Mail `user` the link to set their password (stored, and sent where SMTP is set up), and record it; the
    message, whose `sent_at` or `error` says, once committed, whether it left."""
    town = f" for {user.jurisdiction.name}" if user.jurisdiction else ""
    link = set_password_url(user)
    message = mail.send([user.email], "Set your password for stormwater inspections",
              f"Hello {user.name},\n\nAn account ({user.role}) has been made for you in the stormwater inspection "
              f"record{town}. Set your password here within {LINK_DAYS} days:\n\n{link}\n\n"
              "The link works once. If it has expired, ask your town's administrator for a new one. If you did not "
              "expect this message, you can ignore it.\n", secrets=(link,))
    audit.record(actor, "user.invite", user)
    return message


def mailed_words(messages: list[OutboundEmail]) -> str:
    """What became of set-password messages, once committed (and so delivered where a mail server is set): how
    many were mailed, which were not and why, or, with no mail server, where their links are."""
    if not current_app.config.get("SMTP_HOST"):
        return (f"{len(messages)} set-password link(s) kept on the Sent mail page (no mail server is set): pass "
                "each to its person")
    failed = [m for m in messages if m.sent_at is None]
    said = f"{len(messages) - len(failed)} link(s) to set a password mailed"
    if failed:
        said += (f"; not mailed, the mail server refused or did not answer ({failed[0].error or 'no answer'}): "
                 f"{', '.join(address for m in failed for address in m.to)}; send each a new link once it answers")
    return said


def _invited_and_waiting():
    """The accounts mailed a link that have set no password since."""
    entries = AuditEntry.__table__
    invited = select(entries.c.entity_id).where(entries.c.entity == "users", entries.c.action == "user.invite")
    password_set = select(entries.c.entity_id).where(entries.c.entity == "users",
                                                     entries.c.action == "user.password_change")
    return and_(User.id.in_(invited), User.id.not_in(password_set), User.is_enabled)


def awaiting_password(admin) -> list[User]:
    """The accounts `admin` manages that were mailed a link and have set no password since, by name."""
    return list(db.session.scalars(managed_users(admin).where(_invited_and_waiting()).order_by(User.name)))


def send_new_link(actor, user: User) -> OutboundEmail:
    """Mail `user` a new link to set their password, in place of the one before (expired, lost or not): the
    account gets a new random password, so the old link is refused. AccountError if they have set one."""
    if db.session.scalar(select(User.id).where(User.id == user.id, _invited_and_waiting())) is None:
        raise AccountError(f"{user.email} has set a password already (or was never sent a link): they log in "
                           "with it, and change it on their account page.")
    user.set_password(unknown_password())
    return invite(user, actor)


def set_password(user: User, password: str) -> None:
    """The link's owner sets their password; the link then stops working (see the module's docstring)."""
    change_password(user, user, password)
