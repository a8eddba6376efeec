"""The weather display filters of a report's weather (weather/_weather.html)."""
from __future__ import annotations

import datetime as dt

from flask import Blueprint

from inspect_app.templating import local_time
from inspect_app.weather import providers

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
