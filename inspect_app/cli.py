"""Command-line tasks: `flask users create`, `flask towns sync`, `flask demo load`, `flask audit verify|anchor`."""
from __future__ import annotations

import click
from flask import Blueprint, current_app
from sqlalchemy import select

from inspect_app.accounts.services import AccountError, create_user
from inspect_app.audit import services as audit
from inspect_app.extensions import db
from inspect_app.mail import services as mail
from inspect_app.permits.models import Jurisdiction
from inspect_app.types import utcnow

bp = Blueprint("cli", __name__, cli_group=None)


@bp.cli.group("users")
def users() -> None:
    """Manage accounts."""


@users.command("create")
@click.option("--email", required=True)
@click.option("--name", required=True)
@click.option("--role", required=True, type=click.Choice(["inspector", "agent", "permittee", "admin"]))
@click.option("--town", help="Profile key of the town an agent or admin works for, e.g. longmeadow.")
@click.option("--pe-number", help="Massachusetts PE licence number.")
@click.option("--certification", help="Erosion-control certification, e.g. CPESC No. 1234.")
@click.password_option()
def users_create(email, name, role, town, pe_number, certification, password) -> None:
    """Create an account."""
    from inspect_app.permits.services import ensure_jurisdictions

    jurisdiction = None
    if town:
        ensure_jurisdictions()
        jurisdiction = db.session.scalar(select(Jurisdiction).where(Jurisdiction.profile_key == town))
        if jurisdiction is None:
            raise click.BadParameter(f"no town profile named {town!r}", param_hint="--town")
    try:
        user = create_user(email, name, role, password, jurisdiction=jurisdiction,
                           pe_number=pe_number, certification=certification)
    except AccountError as error:
        raise click.ClickException(str(error)) from None
    db.session.commit()
    click.echo(f"Created {user.role} {user.email}")


@bp.cli.group("towns")
def towns() -> None:
    """Town profiles."""


@towns.command("sync")
def towns_sync() -> None:
    """Make a jurisdiction for every town profile that has none."""
    from inspect_app.permits.services import ensure_jurisdictions

    for town in ensure_jurisdictions():
        click.echo(f"{town.profile_key}: {town.name}")
    db.session.commit()


@bp.cli.group("demo")
def demo() -> None:
    """Demonstration data."""


@demo.command("load")
def demo_load() -> None:
    """Load the demo towns, permits and one user per role, once."""
    from inspect_app.demo import DEMO_PASSWORD, load_demo

    created = load_demo()
    db.session.commit()
    if created:
        click.echo("Demo data loaded.")
    else:
        click.echo("Demo data already loaded; nothing changed.")
    click.echo(f"Log in at http://127.0.0.1:5000 with any of these (password: {DEMO_PASSWORD}):")
    for email, role in created or _demo_logins():
        click.echo(f"  {role:<10} {email}")


def _demo_logins() -> list[tuple[str, str]]:
    from inspect_app.demo import DEMO_USERS

    return [(u["email"], u["role"]) for u in DEMO_USERS]


@bp.cli.group("audit")
def audit_log() -> None:
    """The audit log's hash chain."""


@audit_log.command("verify")
@click.option("--anchor", "anchor", metavar="ENTRY:HASH",
              help="Also check the chain against an anchor kept outside the database (from `flask audit anchor`).")
def audit_verify(anchor: str | None) -> None:
    """Walk the whole chain in commit order; exit 1 at the first entry whose content or link does not match."""
    found = audit.verify_chain()
    if found.broken is not None:
        raise click.ClickException(f"{found.broken} ({found.verified} entries before it verified)")
    if anchor:
        number, _, expected = anchor.partition(":")
        if not number.strip().isdigit() or len(expected.strip()) != 64:
            raise click.BadParameter("give the anchor as ENTRY:HASH, e.g. 1234:9f86d0...", param_hint="--anchor")
        mismatch = audit.anchor_mismatch(int(number), expected)
        if mismatch:
            raise click.ClickException(mismatch)
    click.echo(f"{found.verified} entries verified; head: entry {found.head_commit_seq or 0} hash {found.head_hash}")


@audit_log.command("anchor")
def audit_anchor() -> None:
    """Print the chain's head (entry number and hash); mail it to AUDIT_ANCHOR_EMAIL where that is set."""
    line = audit.anchor_text(*audit.chain_head(), utcnow())
    click.echo(line)
    to = current_app.config.get("AUDIT_ANCHOR_EMAIL")
    if to:
        message = mail.send([to], "Audit chain anchor", line + "\n\nKeep this message: `flask audit verify "
                            "--anchor ENTRY:HASH` checks the log against it.\n")
        db.session.commit()
        if message.sent_at is None:
            raise click.ClickException(f"the anchor was not mailed to {to}: {message.error or 'SMTP is not set up'}")
        click.echo(f"Mailed to {to}.")
