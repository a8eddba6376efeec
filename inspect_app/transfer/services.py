"""Running an import of a file, the same way for the command and the admin page: the events of each row, in
order, the caller committing only an applied import with no problem (`Tally.ok`)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

from inspect_app.accounts import invitations
from inspect_app.accounts.models import User
from inspect_app.accounts.policy import acts_for_all_towns
from inspect_app.extensions import db
from inspect_app.permits.services import ensure_jurisdictions
from inspect_app.transfer.permits import PermitImport
from inspect_app.transfer.rows import Problem, Tally, Towns
from inspect_app.transfer.sheets import FileProblem, open_sheets
from inspect_app.transfer.users import UserImport

KINDS = ("permits", "users")


def towns_for(actor, town_key: str | None = None) -> Towns:
    """The towns `actor` imports into (None: the command, every town); `town_key` names the default town."""
    towns = ensure_jurisdictions()
    only = actor.jurisdiction_id if actor is not None and not acts_for_all_towns(actor) else None
    default = None
    if town_key:
        default = next((t for t in towns if t.profile_key == town_key.strip().lower()), None)
        if default is None:
            raise FileProblem(f"{town_key!r} is not a town here; the towns are "
                              f"{', '.join(t.profile_key for t in towns)}.")
    return Towns(towns, only=only, default=default)


def run_import(kind: str, path: Path, filename: str, actor, *, apply: bool, town_key: str | None = None,
               structures: tuple[Path, str] | None = None) -> Iterator:
    """The events of importing the file at `path` (named `filename`, which says its format) as `kind`.

    `structures`: a second file of structures for a permits import. A file that cannot be read at all gives
    one problem (row None) and nothing else.
    """
    with ExitStack() as stack:
        try:
            towns = towns_for(actor, town_key)
            main, extra, close = open_sheets(path, filename)
            stack.callback(close)
            if structures is not None:
                if extra is not None:
                    raise FileProblem("The workbook has a structures sheet and a structures file was given too: "
                                      "give the structures once.")
                if kind != "permits":
                    raise FileProblem("Only a permits import takes a structures file.")
                extra, _, close_extra = open_sheets(*structures)
                stack.callback(close_extra)
            if kind == "permits":
                yield from PermitImport(actor, towns, apply=apply).run(main, extra)
            else:
                yield from UserImport(actor, towns, apply=apply).run(main)
        except FileProblem as error:
            yield Problem(None, "", str(error))


def conclude(tally: Tally, apply: bool) -> bool:
    """End an import: commit it if it was applied with no problem, else roll everything back. True if committed;
    then `invite` the new accounts."""
    if not (apply and tally.ok):
        db.session.rollback()
        return False
    db.session.commit()
    return True


def invite(tally: Tally, actor) -> str:
    """Mail each account a committed import made its link to set a password (after the commit, so no link names
    an account that was not made), recorded as sent by `actor` (None: the command); what became of them, in
    words (it said "mailed" when the mail server had refused them)."""
    messages = [invitations.invite(db.session.get(User, user_id), actor) for user_id in tally.invited]
    db.session.commit()
    return invitations.mailed_words(messages) if messages else ""
