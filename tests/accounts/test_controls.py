"""The controls a page shows are the ones the policy allows: per identity, and per permit (SPEC *Who uses it*)."""
from __future__ import annotations

import pytest
from flask import render_template
from flask_login import login_user

from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.permits.forms import AssignmentForm, StructureForm

# A control on the permit page → the identities that see it (their own town's / their assigned permit).
PERMIT_PAGE = {
    "Edit permit": {"agent", "admin"},
    "Change status</button>": {"agent", "admin"},
    "Assign</button>": {"agent", "admin"},
    "Add area</button>": {"inspector", "agent", "admin"},
    "Add a structure": {"agent", "admin"},
    "Issue a stop-work order": {"agent"},
}
COMPLETION_PAGE = {"Issue the certificate of completion": {"agent"}}


@pytest.fixture
def site(make):
    """An active Longmeadow permit with its owner and inspector; a Longmeadow and a Southborough agent."""
    owner, inspector = make.user("permittee"), make.user("inspector")
    permit = make.permit(owner=owner, inspectors=[inspector], areas=["North pad"])
    permits.change_status(None, permit, "active")
    db.session.commit()
    return {"permit": permit, "permittee": owner, "inspector": inspector, "agent": make.user("agent"),
            "admin": make.user("admin"), "other_town_agent": make.user("agent", town="southborough")}


@pytest.mark.parametrize("role", ["permittee", "inspector", "agent", "admin"])
def test_each_identity_sees_the_controls_the_policy_gives_it(site, signed_in, role):
    browser = signed_in(site[role])
    page = browser.get(f"/permits/{site['permit'].id}").text
    completion = browser.get(f"/permits/{site['permit'].id}/completion/").text
    for pages, controls in ((page, PERMIT_PAGE), (completion, COMPLETION_PAGE)):
        for control, roles in controls.items():
            assert (control in pages) == (role in roles), f"{role}: {control}"


def test_a_town_agent_gets_no_page_of_another_towns_permit(site, signed_in):
    browser = signed_in(site["other_town_agent"])
    for url in (f"/permits/{site['permit'].id}", f"/permits/{site['permit'].id}/completion/",
                f"/permits/{site['permit'].id}/om"):
        response = browser.get(url)
        assert response.status_code == 404
        assert not any(control in response.text for control in PERMIT_PAGE | COMPLETION_PAGE)


def test_a_permit_section_shown_to_another_towns_agent_offers_no_control(app, site):
    """The permit page's parts ask the policy about this permit, not about the viewer's role: an agent of
    Southborough, for whom agents may edit structures and assign inspectors, gets none of Longmeadow's."""
    permit = site["permit"]
    for who, shown in (("agent", True), ("other_town_agent", False)):
        with app.test_request_context():
            login_user(db.session.merge(site[who]))
            permit = db.session.merge(permit)
            forms = {"assign_form": AssignmentForm(prefix="assign"),
                     "structure_form": StructureForm(prefix="structure")}
            parts = "".join(render_template(f"permits/{name}.html", permit=permit, **forms)
                            for name in ("_assignments", "_structures"))
        assert ("Assign</button>" in parts) == shown, who
        assert ("Add a structure" in parts) == shown, who
