"""Weather pages: the rainfall chart and the weather display filters."""
from __future__ import annotations

import datetime as dt

from flask import Blueprint, render_template
from markupsafe import Markup
from flask_login import login_required

from inspect_app.accounts.policy import permit_or_404
from inspect_app.extensions import db, htmx
from inspect_app.permits.models import Permit
from inspect_app.templating import local_time
from inspect_app.units import inches
from inspect_app.weather import charts, providers, services, source

bp = Blueprint("weather", __name__)


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
