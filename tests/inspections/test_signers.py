"""Who may sign which inspection report, by the town's profile: §380-16 C(3) (the project design engineer's
inspections, a Massachusetts registered PE), §380-16 C(4)(c) and (e) (pre-bury and final by the PE) and
§380-16 C(4)(f) (periodic inspections by the engineer's designated PE representative, or the DPW Director's
own). A signer who does not qualify is refused with a 422 that says why, and the report stays a draft."""
from __future__ import annotations

import datetime as dt

import pytest

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.permits import services as permits
from inspect_app.profiles import PROFILE_FOLDER
from tests.towns import app_with_towns
from tests.inspections.report_helpers import error_beside, start, submit

PE_REFUSED = "must be signed by a registered professional engineer"

# (clause, town, who signs, their PE number, inspection type, refusal shown beside the signer or None)
CASES = [
    ("§380-16 C(3)", "longmeadow", "inspector", None, "initial",
     "the project design engineer, a Massachusetts registered professional engineer"),
    ("§380-16 C(3)", "longmeadow", "inspector", None, "walk_through", "(§380-16 C(3))"),
    ("§380-16 C(4)(c)", "longmeadow", "inspector", None, "pre_bury", PE_REFUSED),
    ("§380-16 C(4)(e)", "longmeadow", "inspector", None, "final", PE_REFUSED),
    ("§380-16 C(4)(f)", "longmeadow", "inspector", None, "periodic",
     "the project design engineer's designated representative, a professional engineer licensed in Massachusetts"),
    ("§380-16 C(4)(f)", "longmeadow", "inspector", "48213", "periodic", None),
    ("§380-16 C(4)(f)", "longmeadow", "agent", None, "periodic", None),  # the DPW Director's own inspection
    ("§380-16 C(3)", "longmeadow", "inspector", "48213", "final", None),
    # Erosion-control inspections are not the engineer's (§380-16 C(2)): no PE number needed.
    ("§380-16 C(3)", "longmeadow", "inspector", None, "erosion_control", None),
    # Southborough's text is silent on who inspects: only its pre-bury and final are the PE's.
    ("§380-16 C(3)", "southborough", "inspector", None, "walk_through", None),
    ("§380-16 C(4)(e)", "southborough", "inspector", None, "final", PE_REFUSED),
    # Its Environmental Site Monitor is "a Professional Engineer, or other trained professional".
    ("§5.0 (Environmental Site Monitor)", "southborough", "inspector", None, "periodic", None),
    ("§7.5 (Entry)", "southborough", "agent", None, "periodic", None),  # the Commission's agent
]


@pytest.mark.parametrize("clause, town, role, pe_number, kind, refusal", CASES)
def test_who_may_sign_each_inspection_type(clause, town, role, pe_number, kind, refusal, make, signed_in):
    signer = make.user(role, town=town, pe_number=pe_number)
    permit = make.permit(town, construction_started_on=dt.date(2026, 6, 15))
    if role == "inspector":
        permits.assign(None, permit, signer, "design_engineer")
        db.session.commit()
    client = signed_in(signer)
    draft = start(client, permit, kind)
    response = submit(client, draft)
    db.session.expire_all()
    if refusal is None:
        assert response.status_code == 303, response.text
        assert db.session.get(Inspection, draft.id).status == "submitted"
        return
    assert response.status_code == 422
    assert refusal in error_beside(response.text, "signer")
    assert db.session.get(Inspection, draft.id).status == "draft"


# A town whose periodic inspections (the profile's last type) are its agent's alone (town practice).
AGENTS_ONLY = (PROFILE_FOLDER / "cgp_baseline.toml").read_text().replace(
    'key = "cgp_baseline"', 'key = "millbrook"').replace('town = "CGP Baseline"', 'town = "Millbrook"') + (
    '\n[[inspection_types.signers]]\nrole = "agent"\nwho = "the town\'s stormwater agent"\n'
    'citation = "Town practice"\n')


@pytest.fixture
def app(database_url, tmp_path):
    yield from app_with_towns(database_url, tmp_path, {"millbrook": AGENTS_ONLY})


def test_a_role_the_profile_does_not_list_cannot_sign_and_is_told_who_can(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit("millbrook", inspectors=[inspector], construction_started_on=dt.date(2026, 6, 15))
    client = signed_in(inspector)
    draft = start(client, permit, "periodic")
    response = submit(client, draft)
    assert response.status_code == 422
    assert error_beside(response.text, "signer") == (
        "A periodic inspection is signed by the town's stormwater agent (Town practice); "
        "your account does not qualify.")
    db.session.expire_all()
    assert db.session.get(Inspection, draft.id).status == "draft"


NOT_THE_DESIGN_ENGINEER = "you are not assigned to this permit as its project design engineer"


@pytest.mark.parametrize("town, kind, refusal", [
    ("longmeadow", "initial", NOT_THE_DESIGN_ENGINEER),
    ("longmeadow", "pre_bury", NOT_THE_DESIGN_ENGINEER),
    ("longmeadow", "walk_through", NOT_THE_DESIGN_ENGINEER),
    ("longmeadow", "final", NOT_THE_DESIGN_ENGINEER),
    ("longmeadow", "erosion_control", None),  # theirs (§380-16 C(2))
    ("longmeadow", "periodic", None),  # a PE assigned to the permit: its designated representative (C(4)(f))
    ("southborough", "final", None),  # Southborough's text names no design engineer
])
def test_the_design_engineers_inspections_are_not_the_erosion_control_inspectors(town, kind, refusal, make,
                                                                                   signed_in):
    """§380-16 C(3): "All other inspections shall be conducted by the project design engineer". An erosion-control
    inspector of the permit (C(2)) who happens to hold a PE licence signed the final as if they were its design
    engineer: a PE number was all the app asked for."""
    esc = make.user("inspector", town=town, pe_number="48213")
    permit = make.permit(town, construction_started_on=dt.date(2026, 6, 15))
    permits.assign(None, permit, esc, "erosion_control_inspector")
    db.session.commit()
    client = signed_in(esc)
    draft = start(client, permit, kind)
    response = submit(client, draft)
    db.session.expire_all()
    if refusal is None:
        assert response.status_code == 303, response.text
        return
    assert response.status_code == 422
    assert refusal in error_beside(response.text, "signer")
    assert db.session.get(Inspection, draft.id).status == "draft"
