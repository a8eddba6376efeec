"""Weather pages and commands: the rainfall chart, the weather display filters, `flask weather backfill`,
`flask compliance sweep`."""
from __future__ import annotations

import datetime as dt

import click
from flask import Blueprint, render_template
from markupsafe import Markup
from flask_login import login_required

from inspect_app.accounts.policy import permit_or_404
from inspect_app.extensions import db, htmx
from inspect_app.permits.models import Permit
from inspect_app.templating import local_time
from inspect_app.units import inches, inches_and_mm
from inspect_app.weather import charts, providers, services, source

# The commands are grouped by what they are for (weather, compliance), not by blueprint.
bp = Blueprint("weather", __name__, cli_group=None)


@bp.app_template_filter("observed_age")
def observed_age(latest: str | None, at: dt.datetime) -> str:
    """When the latest hour shown was observed, and how long before `at`: "Jun 3, 2024 1:00 PM, 3 h before"."""
    if not latest:
        return "—"
    observed = dt.datetime.fromisoformat(latest)
    hours = max(0, round((at - observed).total_seconds() / 3600))
    return f"{local_time(observed)}, {hours} h before the inspection"


@bp.app_template_filter("weather_sources")
def weather_sources(stored: str | None) -> str:
    """A report's stored sources in words: "temperature: NOAA ISD Lite (observation); ..."."""
    if not stored:
        return "—"
    described = []
    for part in stored.split("; "):
        value, _, ids = part.partition("=")
        model_filled = ids.endswith(" (model)")
        names = [providers.provider_name(provider_id) for provider_id in ids.removesuffix(" (model)").split()]
        described.append(f"{value}: {', '.join(names)} ({'model-filled' if model_filled else 'observation'})")
    return "; ".join(described)


# -- the permit page's rainfall chart ------------------------------------------------------------

@bp.get("/permits/<permit_id>/rainfall")
@login_required
def rainfall(permit_id: str):
    """Rain at the permit over the last 60 days, storm events and the inspections that answered them."""
    permit = permit_or_404(permit_id)
    rain = services.permit_rainfall(permit)
    # The permit page's #rainfall section loads the fragment (HX-Target); any other visit gets a whole page.
    template = "weather/_rainfall.html" if htmx.target == "rainfall" else "weather/rainfall.html"
    page = render_template(template, permit=permit, rain=rain, svg=_svg(permit, rain))
    # Kept after rendering: a commit expires the permit and the user, which the page would read again.
    db.session.commit()  # keep the station-hours just fetched
    return page, 200, {"Vary": "HX-Target"}


def _svg(permit: Permit, rain: services.Rainfall) -> Markup:
    answers = [charts.AnswerMark(a.performed_at.astimezone(source.LOCAL_TZ).date(),
                                 f"Inspection {local_time(a.performed_at)}, after the storm of "
                                 + ", ".join(d.strftime("%b %-d") for d in a.storm_days))
               for a in rain.answers]
    return charts.rainfall_svg(
        rain.days, threshold_mm=rain.threshold_mm, storms={s.day: s.depth_mm for s in rain.storms},
        answers=answers, chart_id=f"rainfall-{permit.id}",
        title=f"Daily rainfall at permit {permit.number}, last {len(rain.days)} days",
        description=_description(rain))


def _description(rain: services.Rainfall) -> str:
    wettest = max(rain.days, key=lambda d: d.precip_mm or 0.0)
    threshold = inches(rain.threshold_mm)
    parts = [f"Bars show daily rain from {rain.start_day:%b %-d} to {rain.end_day:%b %-d, %Y}"
             + (f" at {rain.station.name}." if rain.station else "."),
             f"A dashed line marks the {threshold} storm threshold."]
    if wettest.precip_mm:
        parts.append(f"The wettest day was {wettest.day:%b %-d} with {inches(wettest.precip_mm)}.")
    parts.append(f"{len(rain.storms)} storm event(s) and {len(rain.answers)} inspection(s) after a storm.")
    return " ".join(parts)


# -- commands ----------------------------------------------------------------------------------

@bp.cli.group("weather")
def weather_cli() -> None:
    """Weather at inspections (meteostat)."""


@weather_cli.command("backfill")
@click.option("--limit", type=click.IntRange(min=1), help="Fill at most this many reports.")
def backfill(limit: int | None) -> None:
    """Fill the weather of reports still pending, or not final yet; each lookup is bounded."""
    source.start_fetcher()
    outcomes = services.backfill_pending(limit)
    db.session.commit()
    for o in outcomes:
        why = f" ({o.reason})" if o.reason and o.after != "complete" else ""
        click.echo(f"{o.permit_number} {local_time(o.performed_at)} [{o.inspection_id[:8]}]:"
                   f" {o.before} -> {o.after}{why}")
    filled = sum(1 for o in outcomes if o.after != "pending")
    click.echo(f"{len(outcomes)} report(s) looked at; {filled} filled; "
               f"{len(outcomes) - filled} still pending.")


@bp.cli.group("compliance")
def compliance_cli() -> None:
    """Compliance checks, safe to run from cron."""


@compliance_cli.command("sweep")
@click.option("--days", default=3, show_default=True, type=click.IntRange(1, services.MAX_SWEEP_DAYS),
              help="Local days back to look for storms (today included).")
def sweep(days: int) -> None:
    """Record the storm events (0.25 in within 24 hours, CGP 2022 Part 4.2) of every permit still under
    CGP inspections, and their inspections due, in one transaction."""
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
