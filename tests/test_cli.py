"""Command-line tasks: accounts, towns and the demo data."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from inspect_app import create_app
from inspect_app.accounts.models import User
from inspect_app.extensions import db
from inspect_app.permits.models import Permit
from inspect_app.profiles import ProfileError


def test_users_create(runner):
    result = runner.invoke(args=["users", "create", "--email", "Pat@Example.org", "--name", "Pat Lee",
                                 "--role", "agent", "--town", "southborough", "--password", "long enough pw"])
    assert result.exit_code == 0, result.output
    user = db.session.scalar(select(User))
    assert user.email == "pat@example.org" and user.jurisdiction.name == "Southborough"
    assert user.check_password("long enough pw")


def test_a_wrong_role_is_put_right_with_set_role_and_the_import_points_to_it(runner, make):
    # An import refused a role change with "change it in the app", and nothing in the app changes a role.
    from inspect_app.audit.models import AuditEntry

    person = make.user("inspector", email="dana@example.org")
    version = person.session_version
    agent = runner.invoke(args=["users", "set-role", "--email", "Dana@example.org", "--role", "agent"])
    assert agent.exit_code != 0 and "an agent works for one town" in agent.output
    done = runner.invoke(args=["users", "set-role", "--email", "dana@example.org", "--role", "agent",
                               "--town", "longmeadow"])
    assert done.exit_code == 0, done.output
    assert "dana@example.org is now an agent for Longmeadow; its sessions have ended." in done.output
    db.session.expire_all()
    changed = db.session.get(User, person.id)
    assert (changed.role, changed.jurisdiction.profile_key) == ("agent", "longmeadow")
    assert changed.session_version != version
    assert db.session.scalar(select(AuditEntry.action).where(AuditEntry.entity_id == person.id)
                             .order_by(AuditEntry.seq.desc()).limit(1)) == "user.role"


def test_set_role_makes_no_admin_of_all_towns_by_default_nor_leaves_an_agent_assigned_to_permits(runner, make):
    # A town's agent made its admin without --town became the admin of all towns; an inspector assigned to a
    # permit became an agent still assigned to it.
    clerk = make.user("agent", email="clerk@example.org")
    town = clerk.jurisdiction.name
    done = runner.invoke(args=["users", "set-role", "--email", "clerk@example.org", "--role", "admin"])
    assert done.exit_code == 0 and f"clerk@example.org is now an admin for {town}" in done.output, done.output
    db.session.expire_all()
    assert db.session.get(User, clerk.id).jurisdiction_id == clerk.jurisdiction_id
    everywhere = runner.invoke(args=["users", "set-role", "--email", "clerk@example.org", "--role", "admin",
                                     "--all-towns"])
    assert "clerk@example.org is now an admin of all towns" in everywhere.output, everywhere.output
    engineer = make.user("inspector", email="eng@example.org")
    permit = make.permit(inspectors=[engineer], number="LM-ROLE-1")
    refused = runner.invoke(args=["users", "set-role", "--email", "eng@example.org", "--role", "agent",
                                  "--town", "longmeadow"])
    assert refused.exit_code != 0 and "is the inspector of permit(s) LM-ROLE-1" in refused.output
    db.session.expire_all()
    assert db.session.get(User, engineer.id).role == "inspector" and permit.number == "LM-ROLE-1"


@pytest.mark.parametrize("args,message", [
    (["--role", "agent"], "an agent works for one town"),
    (["--role", "inspector", "--password", "short"], "at least 8 characters"),
    (["--role", "inspector", "--email", "not an email"], "email:"),
    (["--role", "agent", "--town", "boston"], "no town profile named 'boston'"),
])
def test_users_create_refuses_bad_input(runner, args, message):
    base = {"--email": "pat@example.org", "--name": "Pat", "--password": "long enough pw"}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    result = runner.invoke(args=["users", "create", *[x for kv in base.items() for x in kv]])
    assert result.exit_code != 0
    assert message in result.output
    assert db.session.scalar(select(func.count()).select_from(User)) == 0


def test_demo_loads_once_and_prints_logins(runner):
    first = runner.invoke(args=["demo", "load"])
    assert first.exit_code == 0, first.output
    assert "Demo data loaded." in first.output and "agent@longmeadow.example.org" in first.output
    permits = db.session.scalar(select(func.count()).select_from(Permit))
    assert permits >= 4
    towns = {p.jurisdiction.name for p in db.session.scalars(select(Permit))}
    assert towns == {"Longmeadow", "Southborough"}
    second = runner.invoke(args=["demo", "load"])
    assert "already loaded; nothing changed" in second.output
    assert db.session.scalar(select(func.count()).select_from(Permit)) == permits
    roles = set(db.session.scalars(select(User.role)))
    assert roles == {"inspector", "agent", "permittee", "admin"}


def test_demo_logins_work(runner, client):
    runner.invoke(args=["demo", "load"])
    from factories import SignedIn

    from inspect_app.demo import DEMO_PASSWORD
    browser = SignedIn(client, db.session.scalar(select(User).where(User.role == "permittee")), DEMO_PASSWORD)
    assert "SWP-2026-014" in browser.get("/permits/").text


def test_the_demo_is_dated_from_today_and_its_completed_permit_can_be_certified(runner, client):
    """A newcomer loading the demo any day finds work under way (started weeks ago, not years) and a permit
    completed a year ago whose first annual O&M certification (§380-14 C(2)(l)) they can sign as its owner."""
    import datetime as dt

    from factories import SignedIn

    from inspect_app.certifications.models import OMCertification
    from inspect_app.demo import DEMO_PASSWORD
    from inspect_app.rules.calendar import add_months
    from inspect_app.types import LOCAL_TZ, utcnow

    assert runner.invoke(args=["demo", "load"]).exit_code == 0
    today = utcnow().astimezone(LOCAL_TZ).date()
    bliss = db.session.scalar(select(Permit).where(Permit.number == "SWP-2026-014"))
    assert bliss.construction_started_on == today - dt.timedelta(days=45) and bliss.status == "active"
    done = db.session.scalar(select(Permit).where(Permit.status == "completed"))
    assert done.completed_on == add_months(today, -12) - dt.timedelta(days=21)

    owner = SignedIn(client, db.session.scalar(select(User).where(User.role == "permittee")), DEMO_PASSWORD)
    page = owner.get(f"/permits/{done.id}/om/certify").text
    assert "Maple Ridge Homes LLC" in page and "Catch basin CB-1" in page
    signed = owner.post(f"/permits/{done.id}/om/certify", {"cert-signer_name": "Maple Ridge Homes LLC",
                                                           "cert-agree": "y"})
    assert signed.status_code == 303, signed.text
    assert db.session.scalar(select(OMCertification.permit_id)) == done.id
    certificate = owner.get(f"/documents/permits/{done.id}/certificate.pdf")
    assert certificate.status_code == 200 and certificate.data.startswith(b"%PDF")


def test_the_demos_reports_are_whole_reports(runner, make, signed_in):
    """The demo's submitted reports answer their whole checklist and name the inspection before each ((d)), as a
    report the app signs does: a second engineer correcting one starts from the report, not from an empty checklist
    to answer again, and its (d) does not say "None before this one" after a year of reports."""
    from inspect_app.inspections import queries
    from inspect_app.inspections.models import Inspection

    assert runner.invoke(args=["demo", "load"]).exit_code == 0
    reports = db.session.scalars(select(Inspection).where(Inspection.status == "submitted")
                                 .order_by(Inspection.performed_at)).all()
    assert len(reports) > 5
    for report in reports:
        answered = {(a.item_key, a.subject_id) for a in report.answers}
        owed = {(item.key, subject.id) for item, found in queries.checklist(report, report.details or {})
                for subject in found}
        assert owed <= answered, (report.type, owed - answered)
    for report in reports:  # (d): the latest made before it (two made at one time do not name each other)
        before = [r.performed_at for r in reports if r.performed_at < report.performed_at]
        assert report.last_inspection_at == max(before, default=None)
    assert runner.invoke(args=["audit", "verify"]).exit_code == 0

def test_a_broken_profile_stops_the_app_with_a_message(tmp_path):
    folder = tmp_path / "profiles"
    folder.mkdir()
    source = Path(__file__).parent.parent / "inspect_app" / "profiles" / "longmeadow.toml"
    shutil.copy(source, folder / "longmeadow.toml")
    text = (folder / "longmeadow.toml").read_text()
    (folder / "longmeadow.toml").write_text(text.replace('state = "MA"', 'state = "CT"', 1))
    with pytest.raises(ProfileError) as raised:
        create_app({"TESTING": True, "PROFILE_DIR": folder,
                    "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'x.sqlite3'}"})
    message = str(raised.value)
    assert "longmeadow.toml" in message and "state" in message
