"""The permission matrix: every view, every role, allowed or refused (SPEC *Who uses it*)."""
from __future__ import annotations

import pytest

from inspect_app.accounts.models import ROLES

# (method, url template, form data) → roles that may use it on a permit of their own town/assignment.
VIEWS = [
    ("GET", "/permits/", None, {"inspector", "agent", "permittee", "admin"}),
    ("GET", "/permits/new", None, {"agent", "admin"}),
    ("GET", "/permits/{permit}", None, {"inspector", "agent", "permittee", "admin"}),
    ("GET", "/permits/{permit}/edit", None, {"agent", "admin"}),
    ("POST", "/permits/{permit}/status", {"status-status": "final_submissions"}, {"agent", "admin"}),
    ("POST", "/permits/{permit}/assignments", {"assign-user_id": "{inspector}",
                                               "assign-capacity": "erosion_control_inspector"},
     {"agent", "admin"}),
    ("POST", "/permits/{permit}/areas", {"area-name": "New pad", "area-acres": "0.2"},
     {"inspector", "agent", "admin"}),
    ("POST", "/permits/{permit}/structures", {"structure-name": "P-9", "structure-kind": "pipe"},
     {"agent", "admin"}),
]


@pytest.fixture
def world(make):
    """One permit in Longmeadow with an assigned inspector and an owner, plus outsiders."""
    owner = make.user("permittee")
    inspector = make.user("inspector")
    permit = make.permit(owner=owner, inspectors=[inspector], construction_started_on=None)
    from inspect_app.extensions import db
    from inspect_app.permits import services
    services.change_status(None, permit, "active")
    db.session.commit()
    return {
        "permit": permit,
        "inside": {"inspector": inspector, "agent": make.user("agent"), "permittee": owner,
                   "admin": make.user("admin")},
        "outside": {"inspector": make.user("inspector"), "agent": make.user("agent", town="southborough"),
                    "permittee": make.user("permittee"), "admin": make.user("admin", town="southborough")},
        "extra_inspector": make.user("inspector"),
    }


def _call(browser, method, url, data, world):
    names = {"permit": world["permit"].id, "inspector": world["extra_inspector"].id}
    url = url.format(**names)
    if method == "GET":
        return browser.get(url)
    return browser.post(url, {k: v.format(**names) for k, v in data.items()})


@pytest.mark.parametrize("method,url,data,allowed", VIEWS, ids=[f"{v[0]} {v[1]}" for v in VIEWS])
@pytest.mark.parametrize("role", ROLES)
def test_matrix(world, signed_in, method, url, data, allowed, role):
    browser = signed_in(world["inside"][role])
    response = _call(browser, method, url, data, world)
    if role in allowed:
        assert response.status_code in (200, 303), response.text[:500]
    else:
        assert response.status_code in (403, 404)


@pytest.mark.parametrize("method,url,data,allowed", [v for v in VIEWS if "{permit}" in v[1]],
                         ids=[f"{v[0]} {v[1]}" for v in VIEWS if "{permit}" in v[1]])
@pytest.mark.parametrize("role", ROLES)
def test_outsiders_cannot_see_or_change_the_permit(world, signed_in, method, url, data, allowed, role):
    browser = signed_in(world["outside"][role])
    assert _call(browser, method, url, data, world).status_code == 404


@pytest.mark.parametrize("role", ROLES)
def test_permit_list_shows_only_visible_permits(world, make, signed_in, role):
    other = make.permit(town="southborough", owner=make.user("permittee"))
    page = signed_in(world["inside"][role]).get("/permits/").text
    assert world["permit"].number in page
    assert (other.number in page) == (role == "admin" and world["inside"]["admin"].jurisdiction_id is None)


def test_signed_out_visitor_is_sent_to_login(world, client):
    for method, url, data, _ in VIEWS:
        url = url.format(permit=world["permit"].id)
        response = client.get(url) if method == "GET" else client.post(url, data=data)
        assert response.status_code in (302, 400)  # 400: a POST without a CSRF token is refused first
