"""The Sent mail page shows a town's admin the set-password mail of the people they manage, each address matched as
itself: "%" and "_" may be in an address and are a LIKE pattern's wildcards, so an agent "%@example.org" made by
Longmeadow's admin showed them Southborough's set-password links (and "vict_m" matched "victim")."""
from __future__ import annotations

from inspect_app.accounts import invitations
from inspect_app.extensions import db
from tests import factories


def _invite_in_southborough(make):
    southborough_admin = make.user("admin", town="southborough")
    victim = make.user("inspector", town=None, email="victim@example.org")
    invitations.invite(victim, southborough_admin)
    db.session.commit()
    return victim


def test_a_percent_sign_in_a_managed_address_shows_no_other_towns_set_password_link(app, client, make):
    # A town's admin may make people of their own town (an import); `%` is a valid local part, and a LIKE
    # wildcard in `visible_mail`'s match of the `to` column.
    app.config["SMTP_HOST"] = None
    make.town("longmeadow")
    _invite_in_southborough(make)
    longmeadow_admin = make.user("admin", town="longmeadow")
    make.user("agent", town="longmeadow", email="%@example.org")
    sent = factories.SignedIn(client, longmeadow_admin).get("/mail/").text
    assert "victim@example.org" not in sent and "/set-password/" not in sent


def test_an_underscore_in_a_managed_address_matches_only_that_address(app, client, make):
    app.config["SMTP_HOST"] = None
    make.town("longmeadow")
    _invite_in_southborough(make)  # victim@example.org
    longmeadow_admin = make.user("admin", town="longmeadow")
    make.user("agent", town="longmeadow", email="vict_m@example.org")
    sent = factories.SignedIn(client, longmeadow_admin).get("/mail/").text
    assert "victim@example.org" not in sent and "/set-password/" not in sent
