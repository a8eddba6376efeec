"""A Longmeadow final inspection that fails (§380-16 C(4)(e)[5]: written notice and a stop-work order) submitted
while an agent issues, or lifts, the permit's stop-work order.

A gate after the submission's read of the standing order lets the agent's request run in between, when nothing
holds it back: two gunicorn workers answering the engineer and the agent at the same moment. The submission holds
the permit before that read, so the agent's request waits for it and the gate gives up (after 2 s). On SQLite the
submission holds the database's write lock anyway: the race is PostgreSQL's."""
from __future__ import annotations

import datetime as dt
import threading

from sqlalchemy import func, select

from factories import SignedIn
from inspect_app.enforcement import services as enforcement
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.permits.models import Permit
from inspect_app.reporting import submission
from tests.inspections.report_helpers import filled, save_with_finding, start


class _ServerError:
    def __init__(self, error: Exception):
        self.status_code, self.text = 500, repr(error)


def _run(call, answers, key, done=None):
    try:
        answers[key] = call()
    except Exception as error:  # noqa: BLE001  (the test app propagates; gunicorn answers 500)
        answers[key] = _ServerError(error)
    finally:
        if done is not None:
            done.set()


def _failing_final(app, make):
    engineer, agent = make.user("inspector"), make.user("agent")
    permit = make.permit(owner=make.user("permittee"), inspectors=[engineer],
                         construction_started_on=dt.date(2026, 6, 2))
    client = SignedIn(app.test_client(), engineer)
    final = start(client, permit, "final")
    assert save_with_finding(client, final, "Basin outlet not built as designed", severity="critical",
                             is_violation="y").status_code == 303
    form = filled(client.get(f"/inspections/{final.id}").text, evaluation="violations",
                  corrective_steps="Rebuild the basin outlet as designed.")
    names = [n for n in form if n.startswith("answer-complies_with_plan")]
    assert names, "the final's form has the 'complies with the plan' item"
    form |= {n: "no" for n in names}
    return permit.id, client, agent, final.id, form


def _gate_first_standing_read(monkeypatch, other_done: threading.Event):
    """The submission's read of the standing order, then a wait for the agent's request (at most 2 s)."""
    original, calls = enforcement.standing_order, []

    def gated(permit):
        found = original(permit)
        if not calls:
            calls.append(1)
            reached.set()
            other_done.wait(timeout=2)
        return found

    reached = threading.Event()
    monkeypatch.setattr(enforcement, "standing_order", gated)
    return reached


def test_an_agents_order_issued_while_a_failed_final_is_submitted_does_not_lose_the_report(app, make, monkeypatch):
    """The engineer submits the failed final while the agent issues an order: the final is recorded, and one order
    stands (the final read "no order stands", the agent's committed, and the final's own order was refused: a 500,
    the signed report rolled back)."""
    permit_id, engineer, agent_user, final_id, form = _failing_final(app, make)
    agent = SignedIn(app.test_client(), agent_user)
    agent_done = threading.Event()
    reached = _gate_first_standing_read(monkeypatch, agent_done)
    db.session.remove()
    answers = {}
    submit = threading.Thread(target=_run, args=(lambda: engineer.post(f"/inspections/{final_id}/submit", form),
                                                 answers, "submit"))
    submit.start()
    assert reached.wait(timeout=20)
    issue = threading.Thread(target=_run, args=(lambda: agent.post(f"/permits/{permit_id}/stop-work/new",
                                                                  {"reason": "Sediment in the brook"}),
                                                answers, "issue", agent_done))
    issue.start()
    issue.join(timeout=60)
    submit.join(timeout=60)
    assert answers["submit"].status_code == 303, answers["submit"].text[:300]
    assert db.session.scalar(select(func.count()).select_from(StopWorkOrder)
                             .where(StopWorkOrder.permit_id == permit_id, StopWorkOrder.lifted_at.is_(None))) == 1


def test_an_order_lifted_while_a_failed_final_is_submitted_leaves_an_order_standing(app, make, monkeypatch):
    """An order stands (issued with reasons only; nothing else open). The engineer submits a failed final while the
    agent lifts the order: an order stands after both (the lift, not seeing the final's violation, left the permit
    active with a failed final's notice on a lifted order; §380-16 C(4)(e)[5]: "a stop-work order shall be issued
    until any violations are corrected")."""
    permit_id, engineer, agent_user, final_id, form = _failing_final(app, make)
    order = enforcement.issue_stop_work(agent_user, db.session.get(Permit, permit_id), "Sediment in the brook")
    db.session.commit()
    order_id = order.id
    agent = SignedIn(app.test_client(), agent_user)
    agent_done = threading.Event()
    reached = _gate_first_standing_read(monkeypatch, agent_done)
    db.session.remove()
    answers = {}
    submit = threading.Thread(target=_run, args=(lambda: engineer.post(f"/inspections/{final_id}/submit", form),
                                                 answers, "submit"))
    submit.start()
    assert reached.wait(timeout=20)
    lift = threading.Thread(target=_run, args=(lambda: agent.post(
        f"/permits/{permit_id}/stop-work/{order_id}/lift", {"reason": "Restored", "approves_work": "y"}),
        answers, "lift", agent_done))
    lift.start()
    lift.join(timeout=60)
    submit.join(timeout=60)
    assert answers["submit"].status_code == 303, answers["submit"].text[:300]
    db.session.expire_all()
    standing = db.session.scalar(select(func.count()).select_from(StopWorkOrder)
                                 .where(StopWorkOrder.permit_id == permit_id, StopWorkOrder.lifted_at.is_(None)))
    assert (standing, db.session.get(Permit, permit_id).status) == (1, "stop_work"), answers["lift"].status_code
