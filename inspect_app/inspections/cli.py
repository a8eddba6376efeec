"""`flask weather backfill`: the weather of reports still pending (registered in inspect_app/cli.py)."""
from __future__ import annotations

import click
from flask.cli import AppGroup

from inspect_app.extensions import db
from inspect_app.towns_loaded import require_every_town_profile
from inspect_app.inspections.weather import backfill_pending
from inspect_app.templating import local_time
from inspect_app.weather import source

weather_group = AppGroup("weather", help="Weather at inspections (meteostat).")


@weather_group.command("backfill")
@click.option("--limit", type=click.IntRange(min=1), help="Fill at most this many reports.")
def backfill(limit: int | None) -> None:
    """Fill the weather of reports still pending, or not final yet; each lookup is bounded."""
    require_every_town_profile()
    source.start_fetcher()
    outcomes = backfill_pending(limit)
    db.session.commit()
    for o in outcomes:
        why = f" ({o.reason})" if o.reason and o.after != "complete" else ""
        click.echo(f"{o.permit_number} {local_time(o.performed_at)} [{o.inspection_id[:8]}]:"
                   f" {o.before} -> {o.after}{why}")
    filled = sum(1 for o in outcomes if o.after != "pending")
    click.echo(f"{len(outcomes)} report(s) looked at; {filled} filled; "
               f"{len(outcomes) - filled} still pending.")
