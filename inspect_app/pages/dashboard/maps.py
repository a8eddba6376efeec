"""What the maps show: the tiles they are drawn on, and a permit's site with its disturbed areas and
structures (the permits' map is the dashboard's, `views.permit_map`).

The pages list every point in HTML (name, status, clock, coordinates); static/map.js draws the map from that
list, so no word or rule is written twice, and the list is what a reader without the map gets.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from flask import current_app

from inspect_app.labels import OBLIGATION_KIND_LABELS
from inspect_app.pages.dashboard import services
from inspect_app.permits.models import Permit


# Where a map with nothing on it opens: the middle of Massachusetts.
MASSACHUSETTS = (42.25, -71.8)


@dataclass(frozen=True)
class Tiles:
    """The configured tile server (MAP_TILE_URL; "" for none: markers on a plain grid) and its attribution."""

    url: str
    attribution: str


def tiles() -> Tiles:
    return Tiles(current_app.config.get("MAP_TILE_URL") or "", current_app.config.get("MAP_TILE_ATTRIBUTION") or "")


def site_section(permit: Permit, now: dt.datetime, open_rows: list[services.Row]) -> dict:
    """What the permit page's site map shows (permits/_site_map.html): each area's stabilization clock as
    the schedule engine stored it (§380-11 C(3)(a)), and the tiles. `open_rows`: the permit's `permit_open`
    rows as of `now`, which the page read for What to do now."""
    clocks = services.clocks_of(open_rows)
    return {"tiles": tiles(), "clocks": clocks, "now": now, "kinds": OBLIGATION_KIND_LABELS,
            "describe_late": services.describe_late}


def center(places) -> tuple[float, float]:
    """The middle of `places` (anything with a latitude and a longitude); the map then fits them all."""
    places = list(places)
    if not places:
        return MASSACHUSETTS
    return (sum(p.latitude for p in places) / len(places), sum(p.longitude for p in places) / len(places))
