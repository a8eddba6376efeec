"""Creating accounts, checking sign-ins and changing passwords."""
from __future__ import annotations

import secrets

from blinker import Namespace
from email_validator import EmailNotValidError, validate_email
from sqlalchemy import bindparam, func, select

from inspect_app.accounts import passwords
from inspect_app.accounts.models import ROLES, User
from inspect_app.permits.models import Permit, PermitAssignment
from inspect_app.audit import services as audit
from inspect_app.extensions import db

PASSWORD_MIN_LENGTH = 8

# Sent in the transaction of a new password, after the change (a receiver only flushes): the sync package
# revokes the account's device tokens (sync/services.py), a package inspect_app does not import.
password_changed = Namespace().signal("password-changed")
# Sent in the transaction that disables an account, for the same receiver: its device tokens end with it, and
# stay ended when the account is enabled again (as its sessions and calendar link do).
account_disabled = Namespace().signal("account-disabled")


class AccountError(ValueError):
    """Bad input for an account; the message says which field and why ("field: why")."""

    @property
    def field(self) -> str:
        return str(self).partition(": ")[0]

    @property
    def reason(self) -> str:
        """Why, as a sentence to show beside the field."""
        why = str(self).partition(": ")[2]
        return why[:1].upper() + why[1:]


def user_by_id(user_id: str) -> User | None:
    """The user with this id, read with a statement built once: a signed-in request's first read (its session's
    user, a tablet's token's). `Session.get` builds its statement again at each call, about a quarter of what the
    read costs (168 µs against 126 µs here)."""
    return db.session.execute(_USER_BY_ID, {"user_id": user_id}).scalar_one_or_none()


_USER_BY_ID = select(User).where(User.id == bindparam("user_id"))


def normalize_email(email: str) -> str:
    try:
        return validate_email(email.strip(), check_deliverability=False).normalized.lower()
    except EmailNotValidError as error:
        raise AccountError(f"email: {error}") from None


def create_user(email: str, name: str, role: str, password: str, *, jurisdiction=None,
                pe_number: str | None = None, certification: str | None = None,
                organization: str | None = None, title: str | None = None, phone: str | None = None,
                actor=None) -> User:
    """Add an account; refuses a duplicate email, an unknown role or a short password."""
    email = check_new_account(email, name, role, jurisdiction)
    check_password(password)
    if db.session.scalar(select(User).where(func.lower(User.email) == email)):
        raise AccountError(f"email: {email} already has an account")
    user = User(email=email, name=name.strip(), role=role, jurisdiction=jurisdiction,
                pe_number=pe_number or None, certification=certification or None,
                organization=organization or None, title=title or None, phone=phone or None)
    user.set_password(password)
    db.session.add(user)
    audit.record(actor, "user.create", user)
    return user


def check_password(password: str) -> None:
    """AccountError for a password shorter than PASSWORD_MIN_LENGTH (every way of setting one asks this)."""
    if len(password) < PASSWORD_MIN_LENGTH:
        raise AccountError(f"password: at least {PASSWORD_MIN_LENGTH} characters")


def check_new_account(email: str, name: str, role: str, jurisdiction) -> str:
    """The normalized email of an account about to be made; AccountError for an unknown role, no name, or an
    agent with no town."""
    email = normalize_email(email)
    if role not in ROLES:
        raise AccountError(f"role: must be one of {', '.join(ROLES)}")
    if not name.strip():
        raise AccountError("name: required")
    if role == "agent" and jurisdiction is None:
        raise AccountError("jurisdiction: an agent works for one town")
    return email


def end_sessions(user: User) -> None:
    """Sign the user out everywhere: every session and remember-me cookie stops working."""
    user.end_sessions()
    db.session.flush()


def change_password(actor, user: User, password: str) -> User:
    """A new password; every session and device token of the user ends (whoever held an old cookie or
    token must sign in again, or be given a new token), and their calendar link with them: a link is a
    password to the feed of their sites and due dates, and one that leaked with the old password must not
    outlive it."""
    check_password(password)
    user.set_password(password)
    user.end_sessions()
    user.calendar_key = None
    audit.record(actor, "user.password_change", user)
    password_changed.send(user, actor=actor)
    return user


def change_own_password(user: User, current: str, new: str) -> User:
    """The signed-in user's new password, given the current one (a session left open is not enough)."""
    if not user.check_password(current):
        raise AccountError("current_password: the current password is not right")
    if new == current:
        raise AccountError("password: the new password must differ from the current one")
    return change_password(user, user, new)


def set_enabled(actor, user: User, enabled: bool) -> User:
    """Enable or disable an account; disabling ends every session and remember-me cookie at once, the
    calendar link, every device token and any set-password link mailed to it (enabled again, none of them works
    again: the person makes a new calendar link, the admin gives a tablet a new token or sends a new link)."""
    before = audit.snapshot(user)
    user.is_enabled = enabled
    if not enabled:
        user.end_sessions()  # also what stops its set-password link (invitations._fingerprint)
        user.calendar_key = None
    audit.record(actor, "user.enable" if enabled else "user.disable", user, before)
    if not enabled:
        account_disabled.send(user, actor=actor)
    return user


def set_role(actor, user: User, role: str, jurisdiction=None, *, all_towns: bool = False) -> User:
    """Give an account another role (a person entered as an inspector who is the town's agent), and the town an
    agent or admin works for: an admin keeps their town unless another is given, and is the admin of all towns
    only when `all_towns` says so; inspectors and permittees have none (their permits say where they work).
    Refused while the account's permits say what it is: an inspector assigned to a permit, a permittee owning
    one. Every session of the account, and its calendar link, end: it signs in again as what it is now."""
    if role not in ROLES:
        raise AccountError(f"role: must be one of {', '.join(ROLES)}")
    if role == "admin" and jurisdiction is None and not all_towns:
        jurisdiction = user.jurisdiction
        if jurisdiction is None:
            raise AccountError("town: give the town this admin works for, or say they are the admin of all towns")
    if role == "agent" and jurisdiction is None:
        raise AccountError("town: an agent works for one town")
    if role in ("inspector", "permittee"):
        jurisdiction = None
    if role != user.role:
        held = _permits_held(user)
        if held:
            raise AccountError(f"role: {user.email} is the {'inspector' if user.role == 'inspector' else 'owner'} "
                               f"of permit(s) {', '.join(held)}: assign them to someone else first")
    before = audit.snapshot(user)
    user.role, user.jurisdiction = role, jurisdiction
    user.end_sessions()
    user.calendar_key = None
    audit.record(actor, "user.role", user, before)
    return user


def _permits_held(user: User) -> list[str]:
    """The numbers of the permits an inspector is assigned to, or a permittee owns: what the role is for."""
    assigned = select(Permit.number).join(PermitAssignment, PermitAssignment.permit_id == Permit.id).where(
        PermitAssignment.user_id == user.id)
    owned = select(Permit.number).where(Permit.owner_id == user.id)
    return sorted(set(db.session.scalars(assigned.union(owned))))


def authenticate(email: str, password: str) -> User | None:
    """The enabled user with this email and password, or None.

    An unknown email costs the same password hash as a known one, so the time taken does not tell
    whether an account exists. A password that matches a hash of an older method is hashed again with the
    current one (accounts/passwords.py); the caller commits it.
    """
    user = db.session.scalar(select(User).where(func.lower(User.email) == email.strip().lower()))
    if user is None:
        passwords.matches(_dummy_hash(), password)
        return None
    if not user.check_password(password) or not user.is_enabled:
        return None
    if passwords.outdated(user.password_hash):
        user.set_password(password)
    return user


def _dummy_hash() -> str:
    method = passwords.method()
    if method not in _DUMMY_HASHES:
        _DUMMY_HASHES[method] = passwords.hash_password(secrets.token_hex(16))
    return _DUMMY_HASHES[method]


_DUMMY_HASHES: dict[str, str] = {}
