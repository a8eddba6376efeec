"""A fourth town made only of a TOML file in PROFILE_DIR works end to end, with no code change:
permit, inspections, obligations, the PDF report (SPEC *Rules are data*)."""
from __future__ import annotations

import datetime as dt
import io

import pytest
from pypdf import PdfReader
from sqlalchemy import select

from inspect_app.schedule.models import PermitObligation
from inspect_app.documents.services import inspection_report_pdf
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.profiles import PROFILE_FOLDER
from tests.towns import app_with_towns
from tests.inspections.report_helpers import start, submit

BASELINE = (PROFILE_FOLDER / "cgp_baseline.toml").read_text()
# Its own key, name, hour and day off, and a stricter 10-day completion of its own.
FOURTH = (BASELINE.replace('key = "cgp_baseline"', 'key = "millbrook"')
          .replace('town = "CGP Baseline"', 'town = "Millbrook"')
          .replace('authority_title = "Stormwater Agent"', 'authority_title = "Millbrook Conservation Agent"')
          .replace("holidays = []", "holidays = [2026-08-14]")
          .replace("close_of_business = 17:00:00", "close_of_business = 16:00:00")
          .replace("[stabilization]\n", "[stabilization]\ndays = 10\n", 1))


@pytest.fixture
def app(database_url, tmp_path):
    yield from app_with_towns(database_url, tmp_path, {"millbrook": FOURTH})


def test_a_town_added_as_a_toml_file_works_end_to_end(app, make, signed_in):
    # Added to the built-in towns, not instead of them.
    assert {"longmeadow", "southborough", "cgp_baseline", "millbrook"} <= set(app.extensions["profiles"])
    inspector, agent = make.user("inspector"), make.user("agent", town="millbrook")
    permit = make.permit("millbrook", inspectors=[inspector], number="MB-2026-1",
                         site_address="1 Mill Road, Millbrook, MA", construction_started_on=dt.date(2026, 6, 1))
    assert permit.jurisdiction.name == "Millbrook"

    client = signed_in(inspector)
    inspection = start(client, permit, "erosion_control")
    assert submit(client, inspection).status_code == 303
    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    assert report.status == "submitted"

    page = signed_in(agent).get("/dashboard/").text
    assert "MB-2026-1" in page
    kinds = set(db.session.scalars(select(PermitObligation.kind).where(PermitObligation.permit_id == permit.id)))
    assert "inspection" in kinds  # the CGP's next routine inspection
    assert "start_of_work" not in kinds and "lapse" not in kinds  # no permit clock in this town

    text = " ".join("".join(p.extract_text() for p in PdfReader(io.BytesIO(inspection_report_pdf(report))).pages).split())
    assert "Millbrook" in text and "MB-2026-1" in text and "CGP 2022 Part 4.2" in text
    # Its profile names no clause of Longmeadow's chapter, so neither does its report.
    assert "§380" not in text
