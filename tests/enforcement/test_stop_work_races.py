"""Two people acting on one permit's stop-work order at the same moment (two agents, or one agent in two tabs):
the second waits for the first, then is told what the first did. Run on SQLite and PostgreSQL alike."""
from __future__ import annotations

import datetime as dt
import re
import threading

from sqlalchemy import func, select

from factories import SignedIn
from inspect_app.enforcement import services
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail


def _at_once(posts):
    """Send each (browser, url, form) from its own thread, released together; their answers in order."""
    db.session.remove()  # the test's own session holds no read while they run
    gate, answers = threading.Barrier(len(posts)), [None] * len(posts)

    def send(i: int) -> None:
        browser, url, form = posts[i]
        gate.wait()
        answers[i] = browser.post(url, form)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(posts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_two_agents_issuing_at_once_leave_one_order_standing(app, make):
    """Each form checks "no order stands" before it issues one: without a lock, both found none, two orders stood
    and the permittee was mailed twice. The permit is held while an order is issued: one 303, one refusal."""
    owner = make.user("permittee")
    permit = make.permit(owner=owner, construction_started_on=dt.date(2026, 6, 2))
    first, second = (SignedIn(app.test_client(), make.user("agent")) for _ in range(2))
    permit_id = permit.id
    url = f"/permits/{permit_id}/stop-work/new"
    answers = _at_once([(first, url, {"reason": "Sediment in the brook"}),
                        (second, url, {"reason": "Sediment in the brook, east side"})])
    assert sorted(a.status_code for a in answers) == [303, 422]
    refused = next(a for a in answers if a.status_code == 422)
    assert "A stop-work order already stands on this permit" in _plain(refused.text)
    standing = db.session.scalar(select(func.count()).select_from(StopWorkOrder)
                                 .where(StopWorkOrder.permit_id == permit_id, StopWorkOrder.lifted_at.is_(None)))
    assert standing == 1
    mailed = db.session.scalar(select(func.count()).select_from(OutboundEmail)
                               .where(OutboundEmail.subject.like("Stop-work order:%")))
    assert mailed == 1


def test_two_agents_lifting_at_once_one_lifts_and_the_other_is_told(app, make):
    """Both forms found the order standing; the second's write then met the first's lift (a 500). The order is
    held while it is lifted: the second waits, then is told it has been lifted, on the order's page."""
    owner = make.user("permittee")
    permit = make.permit(owner=owner, construction_started_on=dt.date(2026, 6, 2))
    order = services.issue_stop_work(make.user("agent"), permit, "Sediment in the brook")
    db.session.commit()
    first, second = (SignedIn(app.test_client(), make.user("agent")) for _ in range(2))
    url = f"/permits/{permit.id}/stop-work/{order.id}/lift"
    form = {"reason": "Silt fence restored", "approves_work": "y"}
    answers = _at_once([(first, url, form), (second, url, form)])
    assert sorted(a.status_code for a in answers) == [303, 422]
    refused = next(a for a in answers if a.status_code == 422)
    assert "This stop-work order has already been lifted." in _plain(refused.text)


def test_a_lift_form_left_open_says_the_order_was_lifted_meanwhile(app, make):
    """An agent's lift form, open while another agent lifted the order: the page that answers has no lift form
    any more, and says why nothing was done."""
    permit = make.permit(owner=make.user("permittee"), construction_started_on=dt.date(2026, 6, 2))
    order = services.issue_stop_work(make.user("agent"), permit, "Sediment in the brook")
    db.session.commit()
    first, second = (SignedIn(app.test_client(), make.user("agent")) for _ in range(2))
    url = f"/permits/{permit.id}/stop-work/{order.id}/lift"
    assert first.post(url, {"reason": "Restored", "approves_work": "y"}).status_code == 303
    late = second.post(url, {"reason": "Restored too", "approves_work": "y"})
    assert late.status_code == 422
    assert "This stop-work order has already been lifted." in _plain(late.text)


def test_an_order_issued_just_as_the_last_one_is_lifted_reads_the_permit_as_it_is_now(app, make):
    """Agent B's Issue read the permit (stop-work) before agent A's lift committed; the lock then waited for A and
    found no order standing, but the permit was not read again, so B was refused: "A permit that is stop-work cannot
    become stop-work". Held, the permit is read again as it is now. (Run in turn: B's read, A's lift, B's issue.)"""
    permit = make.permit(owner=make.user("permittee"), construction_started_on=dt.date(2026, 6, 2))
    agent_a, agent_b = make.user("agent"), make.user("agent")
    order = services.issue_stop_work(agent_a, permit, "Sediment in the brook")
    db.session.commit()
    permit_id = permit.id
    seen_by_b = db.session.get(type(permit), permit_id)
    assert seen_by_b.status == "stop_work"
    lifted = SignedIn(app.test_client(), agent_a).post(f"/permits/{permit_id}/stop-work/{order.id}/lift",
                                                       {"reason": "Silt fence restored", "approves_work": "y"})
    assert lifted.status_code == 303

    new = services.issue_stop_work(agent_b, seen_by_b, "New sediment at the east outfall")
    db.session.commit()
    db.session.expire_all()
    assert db.session.get(type(permit), permit_id).status == "stop_work"
    assert db.session.get(StopWorkOrder, new.id).is_standing
