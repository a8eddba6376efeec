"""The permit page's rainfall chart: rain at the site over the last 60 days (weather), its storm events, and
the reports that answered them (inspections)."""
from __future__ import annotations

from flask import Blueprint, render_template
from flask_login import login_required
from markupsafe import Markup

from inspect_app.accounts.policy import permit_or_404
from inspect_app.extensions import db, htmx
from inspect_app.inspections.weather import StormAnswer, storm_answers
from inspect_app.permits.models import Permit
from inspect_app.templating import local_time
from inspect_app.units import inches
from inspect_app.weather import charts, services, source

bp = Blueprint("rainfall", __name__)


@bp.get("/permits/<permit_id>/rainfall")
@login_required
def chart(permit_id: str):
    """Rain at the permit over the last 60 days, storm events and the inspections that answered them."""
    permit = permit_or_404(permit_id)
    rain = services.permit_rainfall(permit)
    answers = storm_answers(permit, rain.storms)
    # The permit page's #rainfall section loads the fragment (HX-Target); any other visit gets a whole page.
    template = "weather/_rainfall.html" if htmx.target == "rainfall" else "weather/rainfall.html"
    page = render_template(template, permit=permit, rain=rain, answers=answers, svg=_svg(permit, rain, answers))
    # Kept after rendering: a commit expires the permit and the user, which the page would read again.
    db.session.commit()  # keep the station-hours just fetched
    return page, 200, {"Vary": "HX-Target"}


def _svg(permit: Permit, rain: services.Rainfall, answers: tuple[StormAnswer, ...]) -> Markup:
    marks = [charts.AnswerMark(a.performed_at.astimezone(source.LOCAL_TZ).date(),
                               f"Inspection {local_time(a.performed_at)}, after the storm of "
                               + ", ".join(d.strftime("%b %-d") for d in a.storm_days))
             for a in answers]
    return charts.rainfall_svg(
        rain.days, threshold_mm=rain.threshold_mm, storms={s.day: s.depth_mm for s in rain.storms},
        answers=marks, chart_id=f"rainfall-{permit.id}",
        title=f"Daily rainfall at permit {permit.number}, last {len(rain.days)} days",
        description=_description(rain, answers))


def _description(rain: services.Rainfall, answers: tuple[StormAnswer, ...]) -> str:
    wettest = max(rain.days, key=lambda d: d.precip_mm or 0.0)
    threshold = inches(rain.threshold_mm)
    parts = [f"Bars show daily rain from {rain.start_day:%b %-d} to {rain.end_day:%b %-d, %Y}"
             + (f" at {rain.station.name}." if rain.station else "."),
             f"A dashed line marks the {threshold} storm threshold."]
    if wettest.precip_mm:
        parts.append(f"The wettest day was {wettest.day:%b %-d} with {inches(wettest.precip_mm)}.")
    parts.append(f"{len(rain.storms)} storm event(s) and {len(answers)} inspection(s) after a storm.")
    return " ".join(parts)
