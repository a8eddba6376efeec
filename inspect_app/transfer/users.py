"""Importing a town's people from a spreadsheet: their accounts, roles, towns and credentials (issue 34).

Read and reported as permits are (transfer/permits.py). Each new account is made by `create_user`, with the
account rules it checks (`check_new_account`) and its audit entry, and a random password nobody is told; once
the import is committed, each new person is mailed a link to set their own (accounts/invitations.py). No
file holds a password and no message carries one.

An account already recorded with the row's email is updated (name, credentials, title, company, phone: the
columns the row fills in; an empty cell leaves what is recorded). An import never changes a person's role or
town (a promotion is a decision made one person at a time), nor touches an account the importing admin does
not manage (`policy.manages`).
"""
from __future__ import annotations

from collections.abc import Iterator
from sqlalchemy import func, select

from inspect_app.accounts.invitations import unknown_password
from inspect_app.accounts.models import ROLES, User
from inspect_app.accounts.policy import manages
from inspect_app.accounts.services import AccountError, check_new_account, create_user
from inspect_app.audit import services as audit
from inspect_app.extensions import db
from inspect_app.transfer.columns import USER_COLUMNS
from inspect_app.transfer.permits import header_problems
from inspect_app.transfer.rows import (
    CREATE, UNCHANGED, UPDATE, Invited, Outcome, Problem, Progress, Towns, cell_problems,
)
from inspect_app.transfer.sheets import Row, Sheet

DETAILS = ("name", "pe_number", "certification", "title", "organization", "phone")
PROGRESS_EVERY = 100


class UserImport:
    """One import of a users file: `run` yields its events; with `apply`, it writes."""

    def __init__(self, actor, towns: Towns, *, apply: bool = False) -> None:
        self.actor, self.towns, self.apply = actor, towns, apply
        self.seen: dict[str, int] = {}

    def run(self, sheet: Sheet) -> Iterator:
        problems = header_problems(sheet, USER_COLUMNS)
        yield from problems
        if any(isinstance(p, Problem) for p in problems):
            return
        count = 0
        for row in sheet.rows:
            count += 1
            yield from self._row(row)
            if count % PROGRESS_EVERY == 0:
                yield Progress(count)
        yield Progress(count)

    def _row(self, row: Row) -> Iterator:
        problems = cell_problems(row)
        if problems:
            yield from problems
            return
        role = row.text("role").lower()
        town = None
        try:
            # An admin named with no town, imported by the command with no --town, is the admin of all towns
            # (as `flask users create` makes one); a town's admin imports into their own town alone.
            if role == "agent" or row.text("town") or (role == "admin" and self.towns.default is not None):
                town = self.towns.find(row.text("town"))
        except ValueError as error:
            problems.append(Problem(row.number, "town", str(error)))
        if role not in ("agent", "admin"):
            town = None  # inspectors and permittees belong to no town (their permits say whose they are)
        try:
            email = check_new_account(row.text("email"), row.text("name"), role, town)
        except AccountError as error:
            column, _, message = str(error).partition(": ")
            column = {"jurisdiction": "town"}.get(column, column)
            problems.append(Problem(row.number, column, _sentence(message, role)))
            email = None
        details = {name: row.text(name) for name in DETAILS if row.text(name)}
        for name, value in details.items():
            longest = User.__table__.c[name].type.length
            if len(value) > longest:
                problems.append(Problem(row.number, name, f"At most {longest} characters ({len(value)} given)."))
        if email:
            if email in self.seen:
                problems.append(Problem(row.number, "email", f"{email} is also on row {self.seen[email]}: give "
                                                             "each person once in a file."))
            else:
                self.seen[email] = row.number
        if problems:
            yield from problems
            return
        user = db.session.scalar(select(User).where(func.lower(User.email) == email))
        if user is None:
            yield Outcome(row.number, CREATE, email)
            if self.apply:
                made = create_user(email, details.pop("name"), role, unknown_password(), jurisdiction=town,
                                   actor=self.actor, **details)
                yield Invited(made.id)
            return
        yield from self._update(row, user, role, town, details)

    def _update(self, row: Row, user: User, role: str, town, details: dict[str, str]) -> Iterator:
        if self.actor is not None and not manages(self.actor, user):
            yield Problem(row.number, "email", f"{user.email} has an account you do not manage: its town's "
                                               "administrator (or the administrator of all towns) updates it.")
            return
        if user.role != role:
            yield Problem(row.number, "role", f"{user.email} is already a {user.role}: an import does not change "
                                              "roles; the administrator of all towns does, with `flask users "
                                              "set-role`.")
            return
        if role in ("agent", "admin") and user.jurisdiction_id != getattr(town, "id", None):
            yield Problem(row.number, "town", f"{user.email} works for another town: an import does not move "
                                              "people between towns; the administrator of all towns does, with "
                                              "`flask users set-role`.")
            return
        changed = [name for name, value in details.items() if getattr(user, name) != value]
        if not changed:
            yield Outcome(row.number, UNCHANGED, user.email)
            return
        yield Outcome(row.number, UPDATE, user.email, tuple(changed))
        if self.apply:
            before = audit.snapshot(user)
            for name in changed:
                setattr(user, name, details[name])
            audit.record(self.actor, "user.update", user, before)


def _sentence(message: str, role: str) -> str:
    if message.startswith("must be one of"):
        return f"{role!r} is not a role: write one of {', '.join(ROLES)}."
    if message == "required":
        return "Give the person's name."
    return message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")
