"""`flask import users FILE`: accounts with roles, towns and credentials; each new person mailed a link to set
their own password (no password in the file or in the mail)."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from inspect_app.accounts.models import User
from inspect_app.accounts.services import authenticate
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail

from tests.transfer.sheets import table_rows, write_csv

import factories

PUBLIC = "https://inspections.longmeadow.example"


def person(email: str, role: str = "inspector", **cells) -> dict[str, str]:
    row = {"email": email, "name": f"Person {email.split('@')[0]}", "role": role, "town": "",
           "pe_number": "", "certification": "", "title": "", "organization": "", "phone": ""}
    row.update(cells)
    return row


@pytest.fixture
def public_url(app):
    app.config["PUBLIC_URL"] = PUBLIC


def _import(runner, path, *extra):
    return runner.invoke(args=["import", "users", str(path), *extra])


def _link(message: OutboundEmail) -> str:
    return re.search(r"https?://\S+", message.body).group(0)


def test_new_people_get_accounts_and_a_link_to_set_their_password(app, runner, tmp_path, public_url, make):
    make.town()
    db.session.commit()
    path = write_csv(tmp_path / "users.csv", [
        person("pe@example.org", pe_number="51234", certification="CPESC No. 1234", organization="Eng Co"),
        person("agent@example.org", "agent", town="Longmeadow"),
        person("owner@example.org", "permittee")])
    before = table_rows()
    dry = _import(runner, path)
    assert dry.exit_code == 0 and "Dry run: 3 to create" in dry.output
    assert table_rows() == before
    result = _import(runner, path, "--apply")
    assert result.exit_code == 0, result.output
    assert ("Applied: 3 created, 0 updated, 0 unchanged; 3 set-password link(s) kept on the Sent mail page (no mail "
            "server is set)") in result.output
    engineer = db.session.scalar(select(User).where(User.email == "pe@example.org"))
    assert (engineer.role, engineer.pe_number, engineer.certification, engineer.organization) == (
        "inspector", "51234", "CPESC No. 1234", "Eng Co")
    agent = db.session.scalar(select(User).where(User.email == "agent@example.org"))
    assert agent.jurisdiction.profile_key == "longmeadow"
    messages = list(db.session.scalars(select(OutboundEmail).order_by(OutboundEmail.created_at)))
    assert sorted(m.to[0] for m in messages) == ["agent@example.org", "owner@example.org", "pe@example.org"]
    mail = next(m for m in messages if m.to == ["pe@example.org"])
    assert _link(mail).startswith(f"{PUBLIC}/set-password/")
    # the mail carries a link, never a password; the account's own password is unknown to everyone
    assert authenticate("pe@example.org", "") is None and "password:" not in mail.body.lower()
    assert db.session.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.action == "user.create")) == 3


def test_the_link_sets_the_password_once(app, runner, tmp_path, public_url, client):
    write_csv(tmp_path / "users.csv", [person("pe@example.org")])
    assert _import(runner, tmp_path / "users.csv", "--apply").exit_code == 0
    path = _link(db.session.scalar(select(OutboundEmail))).removeprefix(PUBLIC)
    page = client.get(path)
    assert page.status_code == 200 and "pe@example.org" in page.text
    browser = factories.SignedIn(client)
    mismatch = browser.post(path, {"password": "a long new secret", "confirm": "another secret"})
    assert mismatch.status_code == 422 and "The two passwords differ." in mismatch.text
    done = browser.post(path, {"password": "a long new secret", "confirm": "a long new secret"})
    assert done.status_code == 303 and done.location.endswith("/login")
    db.session.expire_all()
    assert authenticate("pe@example.org", "a long new secret") is not None
    assert client.get(path).status_code == 404  # used: the password hash it was made for has changed
    assert "This link no longer works: a password was set with it already" in client.get(path).text
    assert client.get("/set-password/not-a-token").status_code == 404


@pytest.mark.parametrize("cells, column, message", [
    ({"email": "not-an-email"}, "email", "An email address must have an @-sign."),
    ({"role": "mayor"}, "role", "'mayor' is not a role: write one of inspector, agent, permittee, admin."),
    ({"role": "agent", "town": "Boston"}, "town", "'Boston' is not a town here"),
    ({"name": ""}, "name", "Give the person's name."),
    ({"pe_number": "9" * 41}, "pe_number", "At most 40 characters (41 given)."),
    ({"email": "pe@example.org"}, "email", "pe@example.org is also on row 2"),
])
def test_bad_rows_get_a_clear_message_and_nobody_is_made(app, runner, tmp_path, public_url, make, cells, column,
                                                         message):
    make.town()
    db.session.commit()
    path = write_csv(tmp_path / "users.csv", [person("pe@example.org"), {**person("other@example.org"), **cells}])
    before = table_rows()
    result = _import(runner, path, "--apply")
    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if line.strip().startswith("3 "))
    assert line.split()[1] == column and message in line, result.output
    assert table_rows() == before


def test_importing_again_updates_details_never_roles(app, runner, tmp_path, public_url, make):
    write_csv(tmp_path / "a.csv", [person("pe@example.org", title="Engineer")])
    assert _import(runner, tmp_path / "a.csv", "--apply").exit_code == 0
    again = _import(runner, tmp_path / "a.csv", "--apply")
    assert "0 created, 0 updated, 1 unchanged" in again.output
    assert db.session.scalar(select(func.count()).select_from(OutboundEmail)) == 1  # no second link
    write_csv(tmp_path / "b.csv", [person("PE@example.org", name="Person pe", title="Senior Engineer", phone="413-555-0100")])
    result = _import(runner, tmp_path / "b.csv", "--apply")
    assert "update                   pe@example.org (title, phone)" in result.output
    user = db.session.scalar(select(User).where(User.email == "pe@example.org"))
    assert (user.title, user.phone) == ("Senior Engineer", "413-555-0100")
    write_csv(tmp_path / "c.csv", [person("pe@example.org", "permittee")])
    refused = _import(runner, tmp_path / "c.csv", "--apply")
    assert refused.exit_code == 1 and ("is already a inspector: an import does not change roles; the administrator "
                                       "of all towns does, with `flask users set-role`") in " ".join(
        refused.output.split())


def test_without_public_url_the_command_refuses_and_mails_no_link_to_a_loopback_address(app, runner, tmp_path, make):
    # docs/transfer.md: "the command refuses to import people without it". A `flask` command falls back to the
    # development address, and it mailed every new person a link to http://127.0.0.1:5000.
    from inspect_app.config import DEVELOPMENT_PUBLIC_URL

    app.config["PUBLIC_URL"] = DEVELOPMENT_PUBLIC_URL
    make.town()
    db.session.commit()
    path = write_csv(tmp_path / "users.csv", [person("new@example.org")])
    result = _import(runner, path, "--apply")
    assert result.exit_code == 1 and "PUBLIC_URL is not set" in result.output
    assert db.session.scalar(select(User).where(User.email == "new@example.org")) is None
    assert db.session.scalar(select(func.count()).select_from(OutboundEmail)) == 0
    assert "Dry run" in _import(runner, path).output  # a dry run mails nothing: it goes on


def test_a_mail_server_that_refuses_is_said_not_mailed(app, runner, tmp_path, public_url, make):
    # The command said "mailed a link" while the mail server had refused every message.
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    app.config.update(SMTP_HOST="127.0.0.1", SMTP_PORT=port)
    make.town()
    db.session.commit()
    result = _import(runner, write_csv(tmp_path / "users.csv", [person("nia@example.org")]), "--apply")
    assert result.exit_code == 0, result.output
    assert "0 link(s) to set a password mailed" in result.output
    assert "not mailed, the mail server refused or did not answer (ConnectionRefusedError" in result.output
    assert "nia@example.org; send each a new link once it answers" in result.output
