"""Records for the document tests, made with the models directly (as the other domains store them)."""
from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from inspect_app.blobs.store import DiskStore
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, CorrectiveAction, Finding, Inspection, InspectionNotice
from inspect_app.inspections import canonical, queries
from inspect_app.permits.services import profile_of
from tests.builders import signature_png

UTC = dt.UTC
# Jun 10, 2026 10:15 AM in Longmeadow (EDT, UTC-4).
PERFORMED_AT = dt.datetime(2026, 6, 10, 14, 15, tzinfo=UTC)


def _submit(inspection: Inspection, at: dt.datetime) -> Inspection:
    """Seal a draft the way the inspections domain does on submit: signed, submitted, hashed."""
    statement = canonical.certification_statement(profile_of(inspection.permit), queries.type_of(inspection))
    inspection.status, inspection.submitted_at, inspection.signed_at = "submitted", at, at
    inspection.certification_statement = statement
    db.session.flush()
    inspection.record_sha256 = canonical.record_hash(inspection)
    db.session.commit()
    return inspection


@pytest.fixture
def seal():
    """`seal(inspection, at)` submits a draft as the inspections domain does."""
    return _submit


@pytest.fixture
def site(make, app):
    """A Longmeadow permit with its owner, engineer, one area and one pipe run."""
    owner = make.user("permittee", name="Maple Ridge Homes LLC")
    engineer = make.user("inspector", name="Design Engineer", pe_number="48213", certification="CPESC No. 7702")
    permit = make.permit(owner=owner, inspectors=[engineer], owner_name=owner.name, number="SWP-2026-014",
                         site_address="535 Bliss Road, Longmeadow, MA", areas=["Lot 1 building pad"],
                         structures=["12-inch HDPE run P-1"])
    return SimpleNamespace(owner=owner, engineer=engineer, permit=permit)


@pytest.fixture
def report(site, make, app):
    """A submitted erosion control report with weather, gauge, notice, checklist, a finding, action and photos."""
    permit, engineer = site.permit, site.engineer
    notice = InspectionNotice(permit_id=permit.id, inspection_type="erosion_control",
                              planned_for=PERFORMED_AT, given_at=PERFORMED_AT - dt.timedelta(hours=26),
                              given_by_id=engineer.id)
    db.session.add(notice)
    signature = DiskStore(app.config["BLOB_ROOT"]).put_bytes(signature_png())
    inspection = Inspection(
        permit_id=permit.id, type="erosion_control", status="draft", performed_at=PERFORMED_AT,
        latitude=42.04312, longitude=-72.55251, location_source="device",
        inspector_id=engineer.id, inspector_name=engineer.name, inspector_credentials=engineer.credentials,
        last_inspection_at=dt.datetime(2026, 6, 3, 13, 0, tzinfo=UTC),
        weather_status="gauge", temperature_c=16.0, conditions="Overcast", wind_kmh=13.0,
        wind_direction_deg=315.0, precip_24h_mm=10.7, precip_hours=23, station_id="72508",
        station_name="Westover Air Reserve Base", station_distance_m=15800.0,
        weather_sources="meteostat hourly (observations)", weather_attribution="Meteostat, CC BY 4.0",
        gauge_precip_mm=11.43, evaluation="violations",
        corrective_steps="Re-trench the silt fence along the east line and sweep Bliss Road.",
        notes="Perimeter walked in full.", notice=notice, notice_given=True,
        signer_name=engineer.name, signer_credentials=engineer.credentials, signature_sha256=signature,
        details={}, created_by_id=engineer.id,
    )
    inspection.answers = [
        ChecklistAnswer(item_key="controls_as_filed", subject_id="", answer="no", note="Silt fence down at the east line"),
        ChecklistAnswer(item_key="inlets_protected", subject_id="", answer="yes", note=None),
    ]
    db.session.add(inspection)
    db.session.flush()
    finding = Finding(inspection_id=inspection.id, permit_id=permit.id, is_violation=True, severity="major",
                      description="Silt fence undermined for 40 ft; sediment on Bliss Road.",
                      location="East property line", citation="§380-11 C(3)(d)", created_at=PERFORMED_AT)
    db.session.add(finding)
    db.session.flush()
    db.session.add(CorrectiveAction(
        finding_id=finding.id, permit_id=permit.id, kind="significant_repair",
        description="Re-trench and backfill the silt fence", owner_name="Site contractor",
        discovered_at=PERFORMED_AT, due_at=dt.datetime(2026, 6, 18, 3, 59, tzinfo=UTC), created_at=PERFORMED_AT))
    db.session.commit()
    make.photo(permit, inspection=inspection, finding=finding, caption="Undermined silt fence, looking north",
               taken_at="2026:06:10 10:21:00")
    make.photo(permit, inspection=inspection, caption="Construction entrance", taken_at=None, shade=90)
    return _submit(inspection, PERFORMED_AT + dt.timedelta(minutes=50))
