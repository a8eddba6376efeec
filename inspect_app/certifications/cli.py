"""`flask om remind`: the O&M certification reminders (registered with every command in inspect_app/cli.py)."""
from __future__ import annotations

import datetime as dt

import click
from flask.cli import AppGroup

from inspect_app.certifications import services
from inspect_app.extensions import db
from inspect_app.towns_loaded import require_every_town_profile
from inspect_app.permits.models import Permit

om_group = AppGroup("om", help="O&M plans and certifications.")


@om_group.command("remind")
@click.option("--on", "on", type=click.DateTime(formats=["%Y-%m-%d"]), default=None,
              help="Act as if today were this date (YYYY-MM-DD); default: today in each town.")
def remind(on: dt.datetime | None) -> None:
    """Email O&M certification reminders: 30 days before due and when late. Safe to run daily."""
    require_every_town_profile()
    sent = services.send_reminders(on.date() if on else None)
    for reminder in sent:
        permit = db.session.get(Permit, reminder.permit_id)
        click.echo(f"{permit.number}: {reminder.kind} reminder for the period from {reminder.period_start}")
    click.echo(f"{len(sent)} reminder(s) sent")
