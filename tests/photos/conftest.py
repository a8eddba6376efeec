"""Photo test fixtures: a permit with its people and a draft inspection."""
from __future__ import annotations

import pytest
from tests.photos.photo_builders import make_inspection


@pytest.fixture
def site(make):
    """A permit with an assigned inspector and an owner, a draft inspection, and outsiders."""
    owner = make.user("permittee")
    inspector = make.user("inspector")
    permit = make.permit(owner=owner, inspectors=[inspector])
    return {
        "permit": permit, "owner": owner, "inspector": inspector, "agent": make.user("agent"),
        "inspection": make_inspection(permit, inspector),
        "other_inspector": make.user("inspector"), "other_permittee": make.user("permittee"),
    }


@pytest.fixture
def login(app):
    """`login(user)` gives a test client of its own signed in as `user` (several people in one test)."""
    import factories
    from flask import g

    def signed_in_client(user):
        # The test's app context (and so `g`) outlives requests: drop the last client's cached CSRF
        # token so this client's session gets a token of its own.
        g.pop("csrf_token", None)
        return factories.SignedIn(app.test_client(), user)

    return signed_in_client
