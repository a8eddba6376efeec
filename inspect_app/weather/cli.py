"""`flask compliance sweep`: the storm events of every permit (registered in inspect_app/cli.py)."""
from __future__ import annotations

import click
from flask.cli import AppGroup

from inspect_app.extensions import db
from inspect_app.towns_loaded import require_every_town_profile
from inspect_app.templating import local_time
from inspect_app.units import inches_and_mm
from inspect_app.weather import services, source

compliance_group = AppGroup("compliance", help="Compliance checks, safe to run from cron.")


@compliance_group.command("sweep")
@click.option("--days", default=3, show_default=True, type=click.IntRange(1, services.MAX_SWEEP_DAYS),
              help="Local days back to look for storms (today included).")
def sweep(days: int) -> None:
    """Record the storm events (0.25 in within 24 hours, CGP 2022 Part 4.2) of every permit still under
    CGP inspections, and their inspections due, in one transaction."""
    require_every_town_profile()
    source.start_fetcher()
    outcome = services.sweep_storms(days)
    db.session.commit()
    for number, event in outcome.created:
        click.echo(f"storm event: {number} reached {inches_and_mm(event.depth_mm)}"
                   f" at {local_time(event.reached_at)}{_storm_details(event)}")
    for number, event in outcome.deepened:
        click.echo(f"storm event revised: {number} reached at {local_time(event.reached_at)},"
                   f" {inches_and_mm(event.depth_mm)}{_storm_details(event)}")
    for number, melt in outcome.snowmelts:
        click.echo(f"snowmelt discharge: {number} at {local_time(melt.discharge_at)}, from "
                   f"{inches_and_mm(melt.snow_mm)} of snow at station {melt.station_id}; inspection due by "
                   f"{local_time(melt.discharge_at + services.ANSWER_WINDOW)} where storm inspections are owed")
    for number, reason in outcome.pending:
        click.echo(f"pending: {number}: {reason}")
    click.echo(f"{outcome.checked} permit(s) checked; {len(outcome.created)} storm event(s) created.")


def _storm_details(event) -> str:  # type: ignore[no-untyped-def]
    parts = [f"at station {event.station_id}", f"inspection due by {local_time(event.reached_at + services.ANSWER_WINDOW)}"]
    if event.multi_day:
        parts.append(f"multi-day, ended {local_time(event.ended_at)}: another inspection due by "
                     f"{local_time(event.ended_at + services.ANSWER_WINDOW)}")
    if event.ongoing:
        parts.append("may still be going on")
    if event.hours_missing:
        parts.append(f"{event.hours_missing} hour(s) of the 24 before have no data: it may have been reached earlier")
    return "; " + "; ".join(parts)
