"""The permit page words the storm schedule with the town's own threshold (profile `storm.threshold_mm`): a town
whose storm is 0.5 in is not told "0.25 in"."""
from __future__ import annotations

import datetime as dt

import pytest

from inspect_app.profiles import PROFILE_FOLDER
from tests.towns import app_with_towns

HALF_INCH = (PROFILE_FOLDER / "cgp_baseline.toml").read_text().replace(
    'key = "cgp_baseline"', 'key = "halfinch"').replace('town = "CGP Baseline"', 'town = "Half Inch"').replace(
    "threshold_mm = 6.35", "threshold_mm = 12.7")


@pytest.fixture
def app(database_url, tmp_path):
    yield from app_with_towns(database_url, tmp_path, {"halfinch": HALF_INCH})


def test_the_permit_page_gives_the_towns_storm_threshold(app, make, signed_in):
    agent = make.user("agent", town="halfinch")
    permit = make.permit("halfinch", cgp_schedule="every_14_days_and_storm", construction_started_on=dt.date(2026, 6, 1))
    page = signed_in(agent).get(f"/permits/{permit.id}").text
    assert "Every 14 days and within 24 h of a 0.50 in storm" in page and "0.25 in storm" not in page
