"""Every page about a permit, whoever wrote it, is closed to people who may not see that permit.

This walks the app's URL map, so a view added later is covered without being listed here.
"""
from __future__ import annotations

import pytest

from inspect_app.accounts.models import ROLES


def _permit_get_routes(app) -> list[str]:
    rules = []
    for rule in app.url_map.iter_rules():
        if "GET" in rule.methods and rule.arguments == {"permit_id"}:
            rules.append(rule.rule)
    return sorted(rules)


@pytest.fixture
def outsiders(make):
    """A permit in Longmeadow, and one user of each role with no business on it."""
    permit = make.permit(owner=make.user("permittee"), inspectors=[make.user("inspector")])
    people = {"inspector": make.user("inspector"), "agent": make.user("agent", town="southborough"),
              "permittee": make.user("permittee"), "admin": make.user("admin", town="southborough")}
    return permit, people


@pytest.mark.parametrize("role", ROLES)
def test_no_permit_page_opens_for_someone_who_may_not_see_the_permit(app, outsiders, signed_in, role):
    permit, people = outsiders
    routes = _permit_get_routes(app)
    assert "/permits/<permit_id>" in routes
    browser = signed_in(people[role])
    opened = {}
    for rule in routes:
        url = rule.replace("<permit_id>", permit.id)
        response = browser.get(url)
        if response.status_code not in (302, 403, 404):
            opened[url] = response.status_code
        if response.status_code == 200:
            assert permit.number not in response.text
    assert opened == {}


def test_no_permit_page_opens_signed_out(app, outsiders, client):
    permit, _ = outsiders
    for rule in _permit_get_routes(app):
        response = client.get(rule.replace("<permit_id>", permit.id))
        assert response.status_code in (302, 401, 403, 404), rule
