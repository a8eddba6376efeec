"""A town's profile may offer a subset of the inspection types (issue 30): a type it does not define is simply
not offered there. The permit page, the schedule and Start ask the profile; a type the town does not offer is
refused with a clear message, never a 500."""
from __future__ import annotations

import datetime as dt
import re
import tomllib

import pytest
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.profiles import PROFILE_FOLDER
from inspect_app.profiles.schema import Profile
from inspect_app.schedule.models import PermitObligation
from tests.inspections.report_helpers import start, submit
from tests.towns import app_with_towns

LONGMEADOW = (PROFILE_FOLDER / "longmeadow.toml").read_text()
OFFERED = ("erosion_control", "final", "periodic")


def _offering(text: str, keys: tuple[str, ...]) -> str:
    """The profile `text` with only the [[inspection_types]] of `keys` (they close the file)."""
    head, *kinds = text.split("\n[[inspection_types]]\n")
    kept = [kind for kind in kinds if re.match(r'key = "([a-z_]+)"', kind)[1] in keys]
    return "\n[[inspection_types]]\n".join([head, *kept])


# Greenfield: Longmeadow's rules, with no initial, pre-bury or walk-through inspection of its own.
GREENFIELD = (_offering(LONGMEADOW, OFFERED)
              .replace('key = "longmeadow"', 'key = "greenfield"', 1)
              .replace('town = "Longmeadow"', 'town = "Greenfield"', 1)
              .replace('required_inspections = ["initial", "pre_construction", "pre_bury", "walk_through", "final"]',
                       'required_inspections = ["pre_construction", "final"]'))


def test_the_schema_accepts_a_subset_of_the_types_each_once():
    profile = Profile.model_validate(tomllib.loads(GREENFIELD))
    assert [kind.key for kind in profile.inspection_types] == list(OFFERED)
    assert profile.offers("final") and not profile.offers("pre_bury")
    # Nothing to waive of an inspection the town never owes.
    assert "pre_bury" not in profile.waivable() and "walk_through" not in profile.waivable()
    assert "pre_construction" in profile.waivable()


def test_the_schema_refuses_a_type_defined_twice():
    twice = GREENFIELD + '\n[[inspection_types]]\nkey = "final"\nname = "Again"\nwhen = "x"\ncitation = "x"\n' \
        '[[inspection_types.checklist]]\nkey = "a"\ntext = "a"\ncitation = "a"\n'
    with pytest.raises(ValueError, match="defined more than once: final"):
        Profile.model_validate(tomllib.loads(twice))


def test_the_schema_refuses_a_required_inspection_the_town_does_not_offer():
    required = GREENFIELD.replace('required_inspections = ["pre_construction", "final"]',
                                  'required_inspections = ["initial", "pre_construction", "final"]')
    with pytest.raises(ValueError, match="names initial, which the town does not offer"):
        Profile.model_validate(tomllib.loads(required))


@pytest.fixture
def app(database_url, tmp_path):
    yield from app_with_towns(database_url, tmp_path, {"greenfield": GREENFIELD})


def test_a_town_offering_some_types_starts_those_and_refuses_the_others(app, make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit("greenfield", inspectors=[inspector], number="GF-2026-1", structures=["Drain line D-1"],
                         site_address="1 Main Street, Greenfield, MA", construction_started_on=dt.date(2026, 6, 1))
    client = signed_in(inspector)

    page = client.get(f"/permits/{permit.id}")
    assert page.status_code == 200
    assert "Start: Erosion control inspection" in page.text and "Start: Final inspection" in page.text
    assert "Start: Pre-bury inspection" not in page.text and "Start: Walk-through" not in page.text
    assert "Start: Initial site inspection" not in page.text

    # The schedule owes the CGP's inspections, and none of an inspection the town does not offer.
    kinds = set(db.session.scalars(select(PermitObligation.kind).where(PermitObligation.permit_id == permit.id)))
    assert "inspection" in kinds
    assert "pre_bury" not in kinds and "walk_through" not in kinds

    inspection = start(client, permit, "erosion_control")
    assert submit(client, inspection).status_code == 303

    refused = client.post(f"/permits/{permit.id}/inspections", {"type": "pre_bury"})
    assert refused.status_code == 400
    assert "Greenfield does not offer this type of inspection (Pre-bury)" in refused.text
    assert client.get(f"/permits/{permit.id}/inspections/new/walk_through").status_code == 404
    assert db.session.scalar(select(func.count()).select_from(Inspection)
                             .where(Inspection.permit_id == permit.id, Inspection.type != "erosion_control")) == 0
    # The permit page still answers, with its report and what to do now.
    assert client.get(f"/permits/{permit.id}").status_code == 200
