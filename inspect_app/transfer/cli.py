"""`flask import permits|users FILE [--apply]` and `flask export`: registered by inspect_app/cli.py."""
from __future__ import annotations

from pathlib import Path

import click
from flask.cli import AppGroup, with_appcontext
from sqlalchemy import select

from inspect_app.config import DEVELOPMENT_PUBLIC_URL
from inspect_app.extensions import db
from inspect_app.links import public_base
from inspect_app.permits.models import Jurisdiction
from inspect_app.permits.services import ensure_jurisdictions
from inspect_app.transfer.export import Scope, write_archive
from inspect_app.transfer.rows import Notice, Outcome, Problem, Progress, Tally
from inspect_app.transfer.services import conclude, invite, run_import
from inspect_app.types import utcnow

import_group = AppGroup("import", help="Import a town's permits or people from a spreadsheet (.csv or .xlsx): a dry "
                                       "run that changes nothing, unless --apply.")
file_argument = click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
town_option = click.option("--town", help="Profile key of the town for rows that name none, e.g. longmeadow.")
apply_option = click.option("--apply", is_flag=True,
                            help="Write it all, in one transaction, if no row has a problem (else nothing).")


@import_group.command("permits")
@file_argument
@click.option("--structures", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A second file of structures (town, permit_number, name, kind, ...).")
@town_option
@apply_option
def import_permits(file: Path, structures: Path | None, town: str | None, apply: bool) -> None:
    """Permits, their parties and structures; a permit already recorded with the number is updated."""
    _run("permits", file, apply, town, (structures, structures.name) if structures else None)


@import_group.command("users")
@file_argument
@town_option
@apply_option
def import_users(file: Path, town: str | None, apply: bool) -> None:
    """People: each new account is mailed a link to set its password (needs PUBLIC_URL)."""
    if apply and public_base() == DEVELOPMENT_PUBLIC_URL:
        # A `flask` command is no app server: with PUBLIC_URL unset it falls back to the development address, and
        # every new person would be mailed a link to a loopback address they cannot open.
        raise click.ClickException(
            f"PUBLIC_URL is not set (the links would start with {DEVELOPMENT_PUBLIC_URL}): set it to the town's "
            "address of the app, as the app servers have it (docs/deploy.md), and run again. Nothing was changed.")
    _run("users", file, apply, town)


def _run(kind: str, file: Path, apply: bool, town: str | None, structures=None) -> None:
    tally = Tally()
    heading = False
    for event in run_import(kind, file, file.name, None, apply=apply, town_key=town, structures=structures):
        tally.add(event)
        if isinstance(event, Problem):
            if not heading:
                click.echo(f"{'row':>6}  {'column':<24} message")
                heading = True
            click.echo(f"{event.row if event.row is not None else 'file':>6}  {event.column:<24} {event.message}")
        elif isinstance(event, Outcome) and event.action != "unchanged":
            changes = f" ({', '.join(event.changes)})" if event.changes else ""
            click.echo(f"{event.row:>6}  {event.action:<24} {event.record}{changes}")
        elif isinstance(event, Notice):
            click.echo(f"note: {event.message}")
        elif isinstance(event, Progress):
            click.echo(f"... {event.rows:,} rows read", err=True)
    committed = conclude(tally, apply)
    mailed = invite(tally, None) if committed else ""
    counts = tally.counts
    what = (f"{counts['create']} to create, {counts['update']} to update, {counts['unchanged']} unchanged"
            if not committed else
            f"{counts['create']} created, {counts['update']} updated, {counts['unchanged']} unchanged")
    if committed:
        click.echo(f"Applied: {what}{f'; {mailed}' if mailed else ''}.")
        return
    if tally.problem_count:
        raise click.ClickException(f"{tally.problem_count} problem(s): nothing was changed ({what} once they are "
                                   "fixed).")
    click.echo(f"Dry run: {what}. Nothing was changed; run again with --apply to write it.")


@click.command("export")
@click.option("--town", help="Profile key of one town (default: every town).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="The archive to write (default: export-<town>-<date>.zip here).")
@with_appcontext
def export_command(town: str | None, output: Path | None) -> None:
    """Write the whole record (CSV, GeoJSON, frozen PDFs, the audit chain, a README) to one zip archive."""
    jurisdiction = None
    if town:
        ensure_jurisdictions()
        jurisdiction = db.session.scalar(select(Jurisdiction).where(Jurisdiction.profile_key == town))
        if jurisdiction is None:
            raise click.BadParameter(f"no town profile named {town!r}", param_hint="--town")
    output = output or Path(archive_name(jurisdiction))
    with open(output, "wb") as target:
        counts = write_archive(target, Scope.of(None, jurisdiction))
    click.echo(f"Wrote {output}: {counts['permits.csv']} permits, {counts['structures.csv']} structures, "
               f"{counts['users.csv']} people, {counts['documents']} documents, "
               f"{counts['audit/audit_chain.jsonl']} audit entries.")


def archive_name(town: Jurisdiction | None) -> str:
    return f"export-{town.profile_key if town else 'all-towns'}-{utcnow().date().isoformat()}.zip"
