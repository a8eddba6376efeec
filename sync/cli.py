"""`flask sync push|pull --server URL --token T`, and device tokens: `flask sync token create|revoke`."""
from __future__ import annotations


import click
from flask.cli import with_appcontext
from sqlalchemy import func, select

from inspect_app.accounts.models import User
from inspect_app.blobs.files import blob_store
from inspect_app.extensions import db

from sync import field, services
from sync.client import SyncClient, SyncError
from sync.models import SyncDevice

server_option = click.option("--server", required=True, envvar="SYNC_SERVER",
                             help="The central record's address, e.g. https://inspections.example.org")
token_option = click.option("--token", required=True, envvar="SYNC_TOKEN",
                            help="This device's token (an admin makes one with `flask sync token create`).")


@click.command("push")
@server_option
@token_option
@with_appcontext
def push_command(server: str, token: str) -> None:
    """Send this copy's local changes (and their photos) to the central record."""
    queued = field.enqueue_local_changes()
    db.session.commit()
    try:
        counts = field.push_outbox(SyncClient(server, token), blob_store())
    except (SyncError, OSError) as error:
        raise click.ClickException(f"Push stopped, nothing lost (the outbox keeps every item): {error}")
    click.echo(f"queued={queued} " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    click.echo("outbox " + " ".join(f"{k}={v}" for k, v in sorted(field.outbox_summary().items())))


@click.command("pull")
@server_option
@token_option
@with_appcontext
def pull_command(server: str, token: str) -> None:
    """Bring the permits this device's user may see up to date from the central record."""
    try:
        counts = field.pull(SyncClient(server, token))
    except (SyncError, OSError, field.FieldSyncError) as error:
        raise click.ClickException(f"Pull stopped: {error}")
    click.echo(f"changes={counts['changes']} permits={counts['permits']}")


@click.group("token")
def token_group() -> None:
    """Device tokens for the sync API."""


@token_group.command("create")
@click.option("--email", required=True, help="Whose device it is.")
@click.option("--name", required=True, help="A name for the device, e.g. 'tablet 3'.")
@with_appcontext
def token_create(email: str, name: str) -> None:
    """Make a device token; it is printed once and only its hash is kept."""
    user = db.session.scalar(select(User).where(func.lower(User.email) == email.strip().lower()))
    if user is None:
        raise click.BadParameter(f"no account with email {email!r}", param_hint="--email")
    device, token = services.create_device(None, user, name)
    db.session.commit()
    click.echo(f"device={device.id}")
    click.echo(f"token={token}")


@token_group.command("revoke")
@click.argument("device_id")
@with_appcontext
def token_revoke(device_id: str) -> None:
    """Stop a device token from working."""
    device = db.session.get(SyncDevice, device_id)
    if device is None:
        raise click.BadParameter(f"no device {device_id!r}", param_hint="DEVICE_ID")
    services.revoke_device(None, device)
    db.session.commit()
    click.echo(f"revoked {device.id}")


COMMANDS = (push_command, pull_command, token_group)

