"""The link that lets a person set their own password: mailed to each account an import makes (issue 34).

No password is ever in a file or a message. An account made this way gets a random password nobody is told,
and its owner a link to /set-password/<token>. The token is signed with the app's SECRET_KEY, names the
account and a fingerprint of its password hash, and lasts `LINK_DAYS`: once a password is set (by the link, or
by an admin) the hash changes and the link stops working, so it works once.
"""
from __future__ import annotations

import hashlib
import secrets

from flask import current_app
from itsdangerous import BadSignature, URLSafeTimedSerializer

from inspect_app.accounts.models import User
from inspect_app.accounts.services import change_password
from inspect_app.extensions import db
from inspect_app.mail import services as mail

LINK_DAYS = 7
_SALT = "set-password"


def unknown_password() -> str:
    """A password for a new account that nobody is told: its owner sets their own through the link."""
    return secrets.token_urlsafe(32)


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key, salt=_SALT)


def _fingerprint(user: User) -> str:
    return hashlib.sha256(user.password_hash.encode()).hexdigest()[:20]


def link_token(user: User) -> str:
    """The token of `user`'s set-password link, good until their password changes or LINK_DAYS pass."""
    return _serializer().dumps({"user": user.id, "hash": _fingerprint(user)})


def user_for_token(token: str) -> User | None:
    """The enabled account a link's token is for, if the token is genuine, not expired and not used."""
    try:
        found = _serializer().loads(token, max_age=LINK_DAYS * 24 * 3600)
    except BadSignature:  # expired is a kind of bad signature
        return None
    if not isinstance(found, dict):
        return None
    user = db.session.get(User, str(found.get("user", "")))
    if user is None or not user.is_enabled or found.get("hash") != _fingerprint(user):
        return None
    return user


def public_base() -> str:
    """The address links in mail start with: the app's public address (config.public_url), never a request's."""
    return current_app.config["PUBLIC_URL"].rstrip("/")


def set_password_url(user: User) -> str:
    path = current_app.url_map.bind("localhost").build("accounts.set_password", {"token": link_token(user)})
    return public_base() + path


def invite(user: User) -> None:
    """Mail `user` the link to set their password (stored, and sent where SMTP is set up)."""
    town = f" for {user.jurisdiction.name}" if user.jurisdiction else ""
    mail.send([user.email], "Set your password for stormwater inspections",
              f"Hello {user.name},\n\nAn account ({user.role}) has been made for you in the stormwater inspection "
              f"record{town}. Set your password here within {LINK_DAYS} days:\n\n{set_password_url(user)}\n\n"
              "The link works once. If it has expired, ask your town's administrator for a new one. If you did not "
              "expect this message, you can ignore it.\n")


def set_password(user: User, password: str) -> None:
    """The link's owner sets their password; the link then stops working (see the module's docstring)."""
    change_password(user, user, password)
