"""Command-line tasks: `flask users create`, `flask towns sync`, `flask permits lapse`, `flask demo load`,
`flask audit verify|anchor`, `flask idempotency expire`, and the domains' own groups registered here:
`flask import permits|users`, `flask export`, `flask om remind`, `flask dashboard refresh`,
`flask weather backfill`, `flask compliance sweep`, `flask blobs gc|migrate`."""
from __future__ import annotations

import datetime as dt

import click
from flask import Blueprint, current_app
from sqlalchemy import func, select

from inspect_app import idempotency
from inspect_app.accounts.models import User
from inspect_app.accounts.services import AccountError, change_password, create_user, set_enabled, set_role
from inspect_app.audit import services as audit
from inspect_app.blobs.cli import blobs_group
from inspect_app.certifications.cli import om_group
from inspect_app.demo import DEMO_PASSWORD, DEMO_USERS, load_demo
from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.towns_loaded import require_every_town_profile
from inspect_app.inspections.cli import weather_group
from inspect_app.inspections import canonical
from inspect_app.mail import services as mail
from inspect_app.permits.models import Jurisdiction
from inspect_app.permits.services import ensure_jurisdictions, lapse_due_permits
from inspect_app.schedule.cli import dashboard_group
from inspect_app.schedule.holidays import store_holiday_years
from inspect_app.traceability import ROOT, render
from inspect_app.transfer.cli import export_command, import_group
from inspect_app.types import utcnow
from inspect_app.weather.cli import compliance_group

bp = Blueprint("cli", __name__, cli_group=None)
# The one place every command is registered: the groups below, and each domain's own from its cli.py.
# (sync/ registers its `flask sync` commands itself: inspect_app does not import it.)
bp.cli.add_command(import_group)  # a town moving in and out (issue 34)
bp.cli.add_command(export_command)
bp.cli.add_command(om_group)
bp.cli.add_command(dashboard_group)
bp.cli.add_command(weather_group)
bp.cli.add_command(compliance_group)
bp.cli.add_command(blobs_group)  # the blob store: gc, and migrate from disk to S3 (issue 33)


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
@click.option("--title", help="Job title printed on reports, e.g. Senior Project Engineer.")
@click.option("--organization", help="Company printed on reports.")
@click.option("--phone", help="Phone number printed on reports.")
@click.password_option()
def users_create(email, name, role, town, pe_number, certification, title, organization, phone,
                 password) -> None:
    """Create an account."""

    jurisdiction = _town(town)
    try:
        user = create_user(email, name, role, password, jurisdiction=jurisdiction,
                           pe_number=pe_number, certification=certification, title=title,
                           organization=organization, phone=phone)
    except AccountError as error:
        raise click.ClickException(str(error)) from None
    db.session.commit()
    click.echo(f"Created {user.role} {user.email}")


def _town(key: str | None) -> Jurisdiction | None:
    """The town of a `--town` profile key (None for none given); a usage error for one no profile names."""
    if not key:
        return None
    ensure_jurisdictions()
    jurisdiction = db.session.scalar(select(Jurisdiction).where(Jurisdiction.profile_key == key))
    if jurisdiction is None:
        raise click.BadParameter(f"no town profile named {key!r}", param_hint="--town")
    return jurisdiction


def _user(email: str) -> User:
    user = db.session.scalar(select(User).where(func.lower(User.email) == email.strip().lower()))
    if user is None:
        raise click.BadParameter(f"no account with the email {email!r}", param_hint="--email")
    return user


@users.command("set-role")
@click.option("--email", required=True)
@click.option("--role", required=True, type=click.Choice(["inspector", "agent", "permittee", "admin"]))
@click.option("--town", help="Profile key of the town an agent or admin works for, e.g. longmeadow (an admin "
                             "keeps their town unless another is given).")
@click.option("--all-towns", is_flag=True, help="Make an admin the admin of all towns.")
def users_set_role(email, role, town, all_towns) -> None:
    """Give an account another role (and an agent or admin its town); its sessions end."""
    jurisdiction = _town(town)
    user = _user(email)
    try:
        set_role(None, user, role, jurisdiction, all_towns=all_towns and not town)
    except AccountError as error:
        raise click.ClickException(str(error)) from None
    db.session.commit()
    where = (f" for {user.jurisdiction.name}" if user.jurisdiction else
             " of all towns" if role == "admin" else "")
    click.echo(f"{user.email} is now {'an' if role[0] in 'aeiou' else 'a'} {role}{where}; its sessions have ended.")


@users.command("password")
@click.option("--email", required=True)
@click.password_option()
def users_password(email, password) -> None:
    """Set a new password; every session of the account ends."""
    try:
        change_password(None, _user(email), password)
    except AccountError as error:
        raise click.ClickException(str(error)) from None
    db.session.commit()
    click.echo(f"New password set for {email}; its sessions have ended.")


@users.command("disable")
@click.option("--email", required=True)
def users_disable(email) -> None:
    """Disable an account: it cannot sign in, and every session and device of it stops working."""
    set_enabled(None, _user(email), False)
    db.session.commit()
    click.echo(f"Disabled {email}; its sessions have ended.")


@users.command("enable")
@click.option("--email", required=True)
def users_enable(email) -> None:
    """Enable a disabled account again."""
    set_enabled(None, _user(email), True)
    db.session.commit()
    click.echo(f"Enabled {email}.")


@bp.cli.group("towns")
def towns() -> None:
    """Town profiles."""


@towns.command("sync")
def towns_sync() -> None:
    """Make a jurisdiction for every town profile that has none, and store the years around today of their
    holiday calendars, as the `holidays` package gives them, for the app servers (schedule/holidays.py)."""

    loaded = current_app.extensions["profiles"]
    for town in ensure_jurisdictions():
        click.echo(f"{town.profile_key}: {town.name}")
        named = loaded[town.profile_key].town if town.profile_key in loaded else town.name
        if named != town.name:
            click.echo(f"  note: the profile names it {named!r}; the record keeps {town.name!r}, the name its signed "
                       "reports carry (and their hashes with it). Pages and documents go on saying "
                       f"{town.name!r}.")
    years = store_holiday_years(current_app.extensions["profiles"].values(), utcnow().date())
    db.session.commit()
    click.echo(f"Stored {years} years of legal holidays.")


@bp.cli.group("permits")
def permits_cli() -> None:
    """Permit clocks."""


@permits_cli.command("lapse")
def permits_lapse() -> None:
    """Mark lapsed every issued permit past its lapse date with no work begun (Southborough §9.7)."""
    require_every_town_profile()
    lapsed = lapse_due_permits(None)
    db.session.commit()
    for permit in lapsed:
        click.echo(f"{permit.number}: lapsed")
    click.echo(f"{len(lapsed)} permit(s) lapsed.")


@bp.cli.group("rules")
def rules_cli() -> None:
    """The rules and the clauses they implement."""


@rules_cli.command("trace")
@click.option("--check", is_flag=True, help="Fail if docs/traceability.md is not what would be written.")
def rules_trace(check: bool) -> None:
    """Write docs/traceability.md: clause | requirement | rule | tests."""

    text, path = render(), ROOT / "docs" / "traceability.md"
    if check:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            raise click.ClickException(f"{path.name} is stale: run `flask rules trace`")
        click.echo(f"{path.name} is up to date.")
        return
    path.write_text(text, encoding="utf-8")
    click.echo(f"Wrote {path.name}.")


@bp.cli.group("demo")
def demo() -> None:
    """Demonstration data."""


@demo.command("load")
def demo_load() -> None:
    """Load the demo towns, permits and one user per role, once."""
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
    return [(u["email"], u["role"]) for u in DEMO_USERS]


@bp.cli.group("audit")
def audit_log() -> None:
    """The audit log's hash chain."""


@audit_log.command("verify")
@click.option("--anchor", "anchor", metavar="ENTRY:HASH",
              help="Also check the chain against an anchor kept outside the database (from `flask audit anchor`).")
def audit_verify(anchor: str | None) -> None:
    """Walk the whole chain in commit order, then check each final record against its latest chained state and
    re-hash each frozen document's file; exit 1 at the first entry whose content or link does not match, or
    after naming each record that differs, is gone or has no entry, and each file that was altered."""
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
    records = audit.verify_records()
    click.echo(f"{records.checked} signed or issued records match their audit entries")
    parts_checked, parts_problems = canonical.altered_reports()
    click.echo(f"{parts_checked - len(parts_problems)} submitted reports hold the answers, findings and photos "
               "they were signed with")
    signatures_checked, signature_problems = canonical.altered_signatures()
    click.echo(f"{signatures_checked - len(signature_problems)} drawn signatures match their SHA-256")
    frozen = documents.check_frozen_files()
    click.echo(f"{frozen.intact} frozen document files match their SHA-256")
    problems = records.problems + parts_problems + signature_problems + frozen.problems
    for problem in problems:
        click.echo(problem)
    if problems:
        raise click.ClickException(f"{len(problems)} record(s) or file(s) do not match the audit chain (each named "
                                   "above)")


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


@bp.cli.group("documents")
def documents_group() -> None:
    """Frozen documents."""


@documents_group.command("freeze-existing")
def documents_freeze_existing() -> None:
    """Freeze, once, each record signed or issued before documents were frozen (from the record as it stands,
    saying so on the document and its verify page). Safe to run again: it freezes only what has no document."""
    frozen = documents.freeze_existing()
    click.echo(f"{frozen} documents frozen from records signed before documents were frozen.")


@bp.cli.group("idempotency")
def idempotency_cli() -> None:
    """The answers kept for form posts sent again with an Idempotency-Key."""


@idempotency_cli.command("expire")
def idempotency_expire() -> None:
    """Drop the pages of answers older than IDEMPOTENCY_RETENTION_DAYS; the keys stay (safe to run from cron)."""
    retention = dt.timedelta(days=current_app.config["IDEMPOTENCY_RETENTION_DAYS"])
    forgotten = idempotency.forget_old_pages(utcnow(), retention)
    db.session.commit()
    click.echo(f"answer_pages_dropped={forgotten}")
