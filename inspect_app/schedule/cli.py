"""`flask dashboard refresh`: the stored obligations worked out again (registered in inspect_app/cli.py).

The command keeps the name it had when the dashboard owned it; what it refreshes is the schedule's.
"""
from __future__ import annotations

import click
from flask.cli import AppGroup

from inspect_app.extensions import db
from inspect_app.towns_loaded import require_every_town_profile
from inspect_app.schedule import obligations
from inspect_app.types import utcnow

dashboard_group = AppGroup("dashboard", help="The dashboard's stored obligations.")


@dashboard_group.command("refresh")
def refresh() -> None:
    """Work out every permit's open obligations again, for what time alone changes; safe to run from cron."""
    require_every_town_profile()
    now, permits, stored = utcnow(), 0, 0
    for batch in obligations.batches():
        stored += obligations.refresh_permits(batch, now, skip_busy=True)
        db.session.commit()
        permits += len(batch)
    click.echo(f"{permits} permit(s) worked out; {stored} open obligation(s) stored.")
