"""Two people acting on one corrective action at once: two agents verifying it, an agent verifying while another
sends the finding back, two people closing it out from pages opened before either's post.

Both posts are real requests on their own threads; a gate inside the service call lets both requests read the
action before either writes, the interleaving two gunicorn workers produce when two agents tap at the same moment.
The gate gives up after a few seconds, so the second request, waiting for the first's lock, never reaches it."""
from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from factories import SignedIn
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction, Finding
from inspect_app.types import LOCAL_TZ, utcnow
from tests.findings.test_findings import _finding, _open_action
from tests.inspections.report_helpers import start, submit
from tests.races import at_once, gated


@pytest.fixture
def site(make):
    owner, inspector = make.user("permittee"), make.user("inspector")
    permit = make.permit(owner=owner, inspectors=[inspector], areas=["Lot 1 pad"],
                         construction_started_on=dt.date(2026, 6, 15))
    return SimpleNamespace(permit=permit, owner=owner, inspector=inspector)


def _completed_action(app, site):
    client = SignedIn(app.test_client(), site.inspector)
    inspection = start(client, site.permit, "periodic")
    finding = _finding(client, inspection, **{"finding-is_violation": "y"})
    assert _open_action(client, finding, kind="significant_repair").status_code == 200
    assert submit(client, inspection, evaluation="violations", corrective_steps="Repair the fence").status_code == 303
    action = db.session.scalar(select(CorrectiveAction))
    done = utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    closed = client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": done,
                                                        f"close-{action.id}-note": "Fence re-trenched"},
                         htmx="findings")
    assert closed.status_code == 200
    return client, finding.id, action.id


def _entries(action: str, entity_id: str) -> int:
    return db.session.scalar(select(func.count()).select_from(AuditEntry)
                             .where(AuditEntry.action == action, AuditEntry.entity_id == entity_id))


def test_two_agents_verifying_one_action_at_once_verify_it_once(app, make, site, monkeypatch):
    """Agent A and agent B both have the report open and tap Verify together: verified once, one audit entry, and
    the second agent is told who verified it (both posts succeeded, with two entries, and the last named)."""
    _, finding_id, action_id = _completed_action(app, site)
    agent_a, agent_b = make.user("agent"), make.user("agent")
    a, b = SignedIn(app.test_client(), agent_a), SignedIn(app.test_client(), agent_b)
    gated(monkeypatch, findings, "verify", timeout=4)
    url = f"/actions/{action_id}/verify"
    answers = at_once(lambda: a.post(url, htmx="findings"), lambda: b.post(url, htmx="findings"))
    assert (_entries("action.verify", action_id), _entries("finding.corrected", finding_id)) == (1, 1)
    codes = sorted(r.status_code for r in answers)
    assert codes == [200, 400] and "verified meanwhile, by " in max(answers, key=lambda r: r.status_code).text


def test_verify_and_send_back_at_once_leave_a_consistent_action(app, make, site, monkeypatch):
    """Agent A verifies the close-out while agent B sends the finding back to the field: one of them wins, the
    other is told. (Both committed: on SQLite a finding 'returned' whose only action was 'verified', a state
    `return_to_field` refuses to make; on PostgreSQL the two locked the rows in opposite orders, a deadlock, a 500.)"""
    _, finding_id, action_id = _completed_action(app, site)
    agent_a, agent_b = make.user("agent"), make.user("agent")
    a, b = SignedIn(app.test_client(), agent_a), SignedIn(app.test_client(), agent_b)
    gated(monkeypatch, findings, "verify", "return_to_field", timeout=4)
    answers = at_once(
        lambda: a.post(f"/actions/{action_id}/verify", htmx="findings"),
        lambda: b.post(f"/findings/{finding_id}/return", {f"return-{finding_id}-comment": "Fence still down"},
                       htmx="findings"))
    db.session.expire_all()
    action, finding = db.session.get(CorrectiveAction, action_id), db.session.get(Finding, finding_id)
    state = (action.status, finding.status, action.verified_by_id is not None, action.completed_at is not None)
    assert state in {("verified", "corrected", True, True), ("open", "returned", False, False)}, state
    codes = sorted(r.status_code for r in answers)
    assert codes[0] == 200 and codes[1] in (400, 409, 422), codes  # one of them is told the other came first


def test_a_close_out_from_a_page_opened_before_anothers_close_out_does_not_overwrite_it(app, make, site):
    """No threads. Inspector B (a page opened earlier, or its post kept offline) and inspector A both have the open
    action's close-out form. A closes it out; B's post, sent later, is refused with what A recorded, and A's
    close-out stays the one the agent will verify (it was replaced, time, note and photo, without a word)."""
    colleague = make.user("inspector")
    from inspect_app.permits import services as permits
    permits.assign(None, db.session.get(type(site.permit), site.permit.id), colleague, "erosion_control_inspector")
    db.session.commit()
    client = SignedIn(app.test_client(), site.inspector)
    inspection = start(client, site.permit, "periodic")
    finding = _finding(client, inspection, **{"finding-is_violation": "y"})
    assert _open_action(client, finding, kind="significant_repair").status_code == 200
    assert submit(client, inspection, evaluation="violations", corrective_steps="Repair the fence").status_code == 303
    action_id = db.session.scalar(select(CorrectiveAction.id))
    b = SignedIn(app.test_client(), colleague)
    assert f"close-{action_id}-completed_at" in b.get(f"/inspections/{inspection.id}").text  # B's page: open action
    done = utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    first = client.post(f"/actions/{action_id}/close", {f"close-{action_id}-completed_at": done,
                                                        f"close-{action_id}-note": "Crew reset the fence"},
                        htmx="findings")
    assert first.status_code == 200
    late = b.post(f"/actions/{action_id}/close", {f"close-{action_id}-completed_at": done,
                                                  f"close-{action_id}-note": "Looks fine to me"}, htmx="findings")
    db.session.expire_all()
    action = db.session.get(CorrectiveAction, action_id)
    assert action.closeout_note == "Crew reset the fence", action.closeout_note
    assert late.status_code == 409 and "recorded done meanwhile" in late.text and "Crew reset the fence" in late.text
