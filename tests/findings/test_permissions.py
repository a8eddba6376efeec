"""Who may start, fill in, see and review inspections and findings (SPEC *Who uses it*)."""
from __future__ import annotations

import datetime as dt
import uuid
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from inspect_app.types import LOCAL_TZ, utcnow
from tests.inspections.report_helpers import save_with_finding, start, submit


@pytest.fixture
def world(make, signed_in):
    owner, inspector = make.user("permittee"), make.user("inspector")
    permit = make.permit(owner=owner, inspectors=[inspector], construction_started_on=dt.date(2026, 6, 15))
    client = signed_in(inspector)
    draft = start(client, permit, "erosion_control")
    report = start(client, permit, "periodic")
    assert save_with_finding(client, report, "Rill on slope").status_code == 303
    finding = db.session.scalar(select(Finding))
    client.post(f"/findings/{finding.id}/actions", {f"action-{finding.id}-kind": "routine_maintenance",
                                                    f"action-{finding.id}-description": "Regrade",
                                                    f"action-{finding.id}-owner_name": "Contractor"}, htmx="findings")
    assert submit(client, report).status_code == 303
    client.client.post("/logout", data={"csrf_token": client.token})
    return SimpleNamespace(
        permit=permit, draft=draft, report=report, finding=finding, action=db.session.scalar(select(CorrectiveAction)),
        owner=owner, inspector=inspector, agent=make.user("agent"), admin=make.user("admin"),
        stranger=make.user("inspector"), far_agent=make.user("agent", town="southborough"), other_owner=make.user("permittee"))


def test_people_outside_the_permit_see_no_report(world, signed_in):
    for person in (world.stranger, world.far_agent, world.other_owner):
        client = signed_in(person)
        assert client.get(f"/inspections/{world.report.id}").status_code == 404
        assert client.get(f"/inspections/{world.report.id}/signature.png").status_code == 404
        assert client.post(f"/permits/{world.permit.id}/inspections", {"type": "periodic"}).status_code == 404
        client.client.post("/logout", data={"csrf_token": client.token})


def test_a_draft_is_seen_only_by_those_who_may_fill_it_in(world, signed_in):
    for person, status in ((world.owner, 404), (world.agent, 404), (world.inspector, 200)):
        client = signed_in(person)
        assert client.get(f"/inspections/{world.draft.id}").status_code == status
        client.client.post("/logout", data={"csrf_token": client.token})


def test_the_owner_reads_the_submitted_report_but_cannot_start_or_review(world, signed_in):
    client = signed_in(world.owner)
    assert client.get(f"/inspections/{world.report.id}").status_code == 200
    assert client.post(f"/permits/{world.permit.id}/inspections", {"type": "periodic"}).status_code == 403
    assert client.post(f"/inspections/{world.report.id}/amend").status_code == 403
    assert client.post(f"/findings/{world.finding.id}/return", {f"return-{world.finding.id}-comment": "x"}).status_code == 403
    assert client.post(f"/findings/{world.finding.id}/actions", {}).status_code == 403
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 2


def test_the_owner_may_close_out_an_action(world, signed_in):
    client = signed_in(world.owner)
    done = utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    response = client.post(f"/actions/{world.action.id}/close", {f"close-{world.action.id}-completed_at": done}, htmx="findings")
    assert response.status_code == 200
    db.session.expire_all()
    assert db.session.get(CorrectiveAction, world.action.id).status == "completed"


def test_admins_and_other_towns_agents_review_nothing(world, signed_in):
    for person, status in ((world.admin, 403), (world.far_agent, 404)):
        client = signed_in(person)
        response = client.post(f"/findings/{world.finding.id}/return", {f"return-{world.finding.id}-comment": "x"})
        assert response.status_code == status
        client.client.post("/logout", data={"csrf_token": client.token})
    assert db.session.get(Finding, world.finding.id).status == "open"


def test_an_agent_cannot_fill_in_an_engineers_inspection(world, signed_in):
    client = signed_in(world.agent)
    assert client.post(f"/inspections/{world.draft.id}", {"notes": "x"}).status_code == 404
    assert client.post(f"/inspections/{world.draft.id}",
                       {f"finding-new-{uuid.uuid4()}-description": "x"}).status_code == 404
    assert client.post(f"/permits/{world.permit.id}/inspections", {"type": "final"}).status_code == 403
