"""A person whose link to set a password expired (or was lost) gets a new one from their admin; the mail goes
through a real SMTP server on 127.0.0.1, and the link in it is followed as the person would."""
from __future__ import annotations

import re
import time
import types

import itsdangerous.timed
from sqlalchemy import select

from inspect_app.accounts import invitations
from inspect_app.accounts.models import User
from inspect_app.accounts.services import authenticate
from inspect_app.extensions import db

from tests.transfer.sheets import write_csv

import factories

PUBLIC = "https://inspections.longmeadow.example"
EIGHT_DAYS_S = 8 * 24 * 3600


def _link(message) -> str:
    """The set-password link of a message received by the SMTP server, as the path to follow."""
    body = message.get_payload(decode=True).decode() if not message.is_multipart() else \
        next(p for p in message.walk() if p.get_content_type() == "text/plain").get_payload(decode=True).decode()
    return re.search(rf"{re.escape(PUBLIC)}(/set-password/\S+)", body).group(1)


def _import_person(app, runner, tmp_path, monkeypatch, email: str, *, days_ago_s: int = 0) -> None:
    """`flask import users --apply` of one inspector; their link signed `days_ago_s` seconds ago (the clock of
    the signing library set back: the outside world's time, not ours)."""
    row = {"email": email, "name": "Pat Engineer", "role": "inspector", "town": "", "pe_number": "",
           "certification": "", "title": "", "organization": "", "phone": ""}
    path = write_csv(tmp_path / "users.csv", [row])
    with monkeypatch.context() as clock:
        then = time.time() - days_ago_s
        clock.setattr(itsdangerous.timed, "time", types.SimpleNamespace(time=lambda: then))
        result = runner.invoke(args=["import", "users", str(path), "--apply"])
    assert result.exit_code == 0, result.output


def test_an_expired_link_says_so_and_the_admin_sends_a_new_one_that_works(app, runner, tmp_path, make, smtp_server,
                                                                        monkeypatch):
    app.config["PUBLIC_URL"] = PUBLIC
    admin = make.user("admin", town=None)
    _import_person(app, runner, tmp_path, monkeypatch, "pat@example.org", days_ago_s=EIGHT_DAYS_S)
    (first,) = smtp_server
    old = _link(first)
    person = app.test_client()
    expired = person.get(old)
    assert expired.status_code == 404
    assert "This link has expired" in expired.text and "Ask your town's administrator" in expired.text

    # The admin area lists the person, who has not set a password, with the button.
    admin_browser = factories.SignedIn(app.test_client(), admin)
    page = admin_browser.get("/transfer/")
    assert "People who have not set their password" in page.text and "pat@example.org" in page.text
    pat = db.session.scalar(select(User).where(User.email == "pat@example.org"))
    sent = admin_browser.post(f"/transfer/people/{pat.id}/link")
    assert sent.status_code == 303
    assert ("A new link to set a password for pat@example.org: 1 link(s) to set a password mailed. The "
            "link before it no longer works.") in admin_browser.get(sent.location).text
    assert len(smtp_server) == 2
    second = smtp_server[1]
    assert second["To"] == "pat@example.org" and second["Subject"] == "Set your password for stormwater inspections"
    new = _link(second)
    assert new != old

    # The new link works; the old one stays refused.
    form = person.get(new)
    assert form.status_code == 200 and "pat@example.org" in form.text
    done = factories.SignedIn(person).post(new, {"password": "a long new secret", "confirm": "a long new secret"})
    assert done.status_code == 303 and done.location.endswith("/login")
    db.session.expire_all()
    assert authenticate("pat@example.org", "a long new secret") is not None
    assert person.get(old).status_code == 404
    used = person.get(new)
    assert used.status_code == 404 and "a password was set with it already" in used.text

    # Now that the password is set, nobody waits: no button, and a stale page's button is refused.
    assert "pat@example.org" not in admin_browser.get("/transfer/").text
    refused = admin_browser.post(f"/transfer/people/{pat.id}/link")
    assert refused.status_code == 409 and "pat@example.org has set a password already" in refused.text
    assert len(smtp_server) == 2


def test_a_new_link_replaces_one_not_yet_expired(app, runner, tmp_path, make, smtp_server, monkeypatch):
    app.config["PUBLIC_URL"] = PUBLIC
    admin = make.user("admin", town=None)
    _import_person(app, runner, tmp_path, monkeypatch, "pat@example.org")
    old = _link(smtp_server[0])
    person = app.test_client()
    assert person.get(old).status_code == 200  # still good: 0 days old
    pat = db.session.scalar(select(User).where(User.email == "pat@example.org"))
    assert factories.SignedIn(app.test_client(), admin).post(f"/transfer/people/{pat.id}/link").status_code == 303
    replaced = person.get(old)
    assert replaced.status_code == 404 and "a newer" in replaced.text and "link was sent since" in replaced.text
    assert person.get(_link(smtp_server[1])).status_code == 200


def test_only_an_admin_who_manages_the_person_sends_a_link(app, runner, tmp_path, make, smtp_server, monkeypatch):
    app.config["PUBLIC_URL"] = PUBLIC
    _import_person(app, runner, tmp_path, monkeypatch, "pat@example.org")
    pat = db.session.scalar(select(User).where(User.email == "pat@example.org"))
    # A town's admin manages the inspectors who work on its permits: Pat works on none of Southborough's.
    other_town = factories.SignedIn(app.test_client(), make.user("admin", town="southborough"))
    assert "pat@example.org" not in other_town.get("/transfer/").text
    assert other_town.post(f"/transfer/people/{pat.id}/link").status_code == 404
    agent = factories.SignedIn(app.test_client(), make.user("agent"))
    assert agent.post(f"/transfer/people/{pat.id}/link").status_code == 403
    assert len(smtp_server) == 1


def test_a_towns_admin_sends_a_new_link_to_someone_its_staff_invited_who_works_nowhere_yet(app, make, smtp_server):
    """A town imports its people before their permits: the person works on no permit yet, and is that town's (whose
    staff invited them), so its admin can send them a new link; another town's admin cannot."""
    app.config["PUBLIC_URL"] = PUBLIC
    longmeadow, southborough = make.user("admin"), make.user("admin", town="southborough")
    pat = make.user("inspector", email="pat@example.org")
    invitations.invite(pat, longmeadow)  # as the admin page's import does
    db.session.commit()

    ours = factories.SignedIn(app.test_client(), longmeadow)
    assert "pat@example.org" in ours.get("/transfer/").text
    assert ours.post(f"/transfer/people/{pat.id}/link").status_code == 303
    assert [m["To"] for m in smtp_server] == ["pat@example.org", "pat@example.org"]

    theirs = factories.SignedIn(app.test_client(), southborough)
    assert "pat@example.org" not in theirs.get("/transfer/").text
    assert theirs.post(f"/transfer/people/{pat.id}/link").status_code == 404
    # Once Pat works on a Southborough permit alone, Pat is Southborough's.
    make.permit("southborough", inspectors=[pat])
    db.session.commit()
    assert ours.post(f"/transfer/people/{pat.id}/link").status_code == 404
    assert theirs.post(f"/transfer/people/{pat.id}/link").status_code == 303


def test_an_admin_reading_the_sent_mail_cannot_follow_a_link_the_mail_server_delivered(app, make, smtp_server):
    """The sent-mail page showed each set-password link in full: an admin could follow it, choose the person's
    password and sign in as them, with the audit log saying they set it themselves. Where a mail server is set,
    the stored copy keeps no link; with none, the page is how the link reaches the person, and it shows it."""
    app.config["PUBLIC_URL"] = PUBLIC
    admin = make.user("admin", town=None)
    pat = make.user("inspector", email="pat@example.org")
    invitations.invite(pat, admin)
    db.session.commit()
    link = _link(smtp_server[0])
    page = factories.SignedIn(app.test_client(), admin).get("/mail/").text
    assert "Set your password for stormwater inspections" in page and "sent by mail only: not kept here" in page
    assert "/set-password/" not in page and link.rsplit("/", 1)[1] not in page
    assert app.test_client().get(link).status_code == 200  # the person's own copy works

    app.config["SMTP_HOST"] = None
    invitations.send_new_link(admin, pat)
    db.session.commit()
    stored = factories.SignedIn(app.test_client(), admin).get("/mail/").text
    assert re.search(rf"{re.escape(PUBLIC)}/set-password/\S+", stored)


def test_a_link_stopped_by_disabling_its_account_stays_stopped_when_the_account_is_enabled_again(app, client, make,
                                                                                                  runner):
    """A link mailed to the wrong hands, or to a person who left: disabling the account refuses it, and enabling
    the account again must not make it work again (the admin sends a new one). A link mailed before works."""
    app.config["PUBLIC_URL"] = PUBLIC
    person, other = make.user("inspector"), make.user("inspector")
    invitations.invite(person)
    invitations.invite(other)
    db.session.commit()
    path, other_path = (f"/set-password/{invitations.link_token(p)}" for p in (person, other))
    assert client.get(path).status_code == 200

    assert runner.invoke(args=["users", "disable", "--email", person.email]).exit_code == 0
    assert runner.invoke(args=["users", "enable", "--email", person.email]).exit_code == 0

    assert client.get(path).status_code == 404
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', client.get("/login").get_data(as_text=True)).group(1)
    answer = client.post(path, data={"password": "taken over!", "confirm": "taken over!", "csrf_token": token})
    assert answer.status_code == 404
    db.session.expire_all()
    assert authenticate(person.email, "taken over!") is None
    assert client.get(other_path).status_code == 200  # another account's link is untouched
