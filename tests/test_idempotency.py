"""A form post sent again with its Idempotency-Key answers what the first delivery answered, and
changes the record once: sent twice, by two users, refused first, or eight at the same moment; and
answers older than the retention are forgotten."""
from __future__ import annotations

import datetime as dt
import threading

from sqlalchemy import func, select, update

from factories import SignedIn
from inspect_app.extensions import db
from inspect_app.idempotency import IdempotentRequest
from inspect_app.inspections.models import Inspection
from inspect_app.types import utcnow


def started(permit) -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(Inspection).where(Inspection.permit_id == permit.id))


def start(browser: SignedIn, permit, key: str, type_: str = "erosion_control"):
    permit_id = permit if isinstance(permit, str) else permit.id
    return browser.client.post(f"/permits/{permit_id}/inspections",
                               data={"csrf_token": browser.token, "type": type_}, headers={"Idempotency-Key": key})


def test_a_replay_answers_the_first_answer_and_applies_once(app, make):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    browser = SignedIn(app.test_client(), inspector)

    first = start(browser, permit, "key-0001-start")
    again = start(browser, permit, "key-0001-start")

    assert first.status_code == again.status_code == 303
    assert again.headers["Location"] == first.headers["Location"]
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert started(permit) == 1
    # A new key is a new request (another type: a Start of the same one would open the blank draft again).
    assert start(browser, permit, "key-0002-start", "walk_through").headers["Location"] != first.headers["Location"]
    assert started(permit) == 2


def test_the_key_in_the_form_counts_as_the_header(app, make):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    browser = SignedIn(app.test_client(), inspector)
    form = {"type": "erosion_control", "idempotency_key": "form-key-0001"}

    first = browser.post(f"/permits/{permit.id}/inspections", form)
    again = browser.post(f"/permits/{permit.id}/inspections", form)

    assert again.headers["Location"] == first.headers["Location"]
    assert started(permit) == 1


def test_another_users_key_does_not_collide(app, make):
    one, other = make.user("inspector"), make.user("inspector")
    permit = make.permit(inspectors=[one, other])

    mine = start(SignedIn(app.test_client(), one), permit, "shared-key-0001")
    theirs = start(SignedIn(app.test_client(), other), permit, "shared-key-0001")

    assert mine.headers["Location"] != theirs.headers["Location"]
    assert "Idempotent-Replayed" not in theirs.headers
    assert started(permit) == 2


def test_a_refused_request_stores_nothing_and_can_be_sent_again(app, make):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    browser = SignedIn(app.test_client(), inspector)

    refused = start(browser, permit, "key-0003-fixed", type_="not_a_type")
    assert refused.status_code == 400
    assert started(permit) == 0

    fixed = start(browser, permit, "key-0003-fixed")
    assert fixed.status_code == 303
    assert "Idempotent-Replayed" not in fixed.headers
    assert started(permit) == 1


def test_a_key_used_for_another_request_or_malformed_is_refused(app, make):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    other = make.permit(inspectors=[inspector])
    browser = SignedIn(app.test_client(), inspector)
    start(browser, permit, "key-0004-reused")

    reused = start(browser, other, "key-0004-reused")
    malformed = start(browser, other, "no spaces; please")

    assert reused.status_code == 422
    assert "another request" in reused.text
    assert malformed.status_code == 400
    assert "idempotency key" in malformed.text
    assert started(other) == 0


def test_eight_deliveries_at_once_apply_once_and_answer_alike(app, make):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    browsers = [SignedIn(app.test_client(), inspector) for _ in range(8)]
    gate = threading.Barrier(len(browsers))
    answers = [None] * len(browsers)
    permit_id = permit.id

    def deliver(i: int) -> None:
        gate.wait()
        answers[i] = start(browsers[i], permit_id, "key-0005-together")

    threads = [threading.Thread(target=deliver, args=(i,)) for i in range(len(browsers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)

    assert [a.status_code for a in answers] == [303] * len(browsers)
    assert len({a.headers["Location"] for a in answers}) == 1
    assert started(permit) == 1


def received_days_ago(key: str, days: int) -> None:
    db.session.execute(update(IdempotentRequest).where(IdempotentRequest.key == key)
                       .values(received_at=utcnow() - dt.timedelta(days=days)))
    db.session.commit()


def test_the_daily_expiry_drops_old_pages_and_a_late_resend_is_still_applied_once(app, make, runner):
    # A tablet whose answer was lost, left off past the retention, sends its post again: the town's record
    # must not get a second report (or notice, or log entry) out of it.
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    browser = SignedIn(app.test_client(), inspector)
    retention_days = app.config["IDEMPOTENCY_RETENTION_DAYS"]
    old = start(browser, permit, "key-0006-old")
    recent = start(browser, permit, "key-0007-recent", "walk_through")  # another inspection (test_blank_drafts)
    received_days_ago("key-0006-old", retention_days + 1)
    received_days_ago("key-0007-recent", retention_days - 1)

    result = runner.invoke(args=["idempotency", "expire"])

    assert result.exit_code == 0 and result.output.strip() == "answer_pages_dropped=1"
    pages = dict(db.session.execute(select(IdempotentRequest.key, IdempotentRequest.body)).all())
    assert pages["key-0006-old"] is None and pages["key-0007-recent"]
    for key, first, kind in (("key-0007-recent", recent, "walk_through"), ("key-0006-old", old, "erosion_control")):
        replayed = start(browser, permit, key, kind)
        assert replayed.status_code == 303 and replayed.headers.get("Idempotent-Replayed") == "true"
        assert replayed.headers["Location"] == first.headers["Location"]
    assert started(permit) == 2
    assert runner.invoke(args=["idempotency", "expire"]).output.strip() == "answer_pages_dropped=0"


def test_a_post_kept_on_a_shared_tablet_is_never_applied_as_the_next_persons(app, make):
    # Inspector A fills in a report offline; the tablet's outbox sends it after inspector B has signed in.
    # It is A's act (A's name, A's signature): it is refused, said why, and nothing changes. A 401 (A is not signed
    # in), not a 403: the tablet keeps the post for A, to send when A signs in again (static/sw.js).
    a, b = make.user("inspector"), make.user("inspector")
    permit = make.permit(inspectors=[a, b])
    first = SignedIn(app.test_client(), a)
    report_url = start(first, permit, "key-0008-by-a").headers["Location"]
    form = first.client.get(report_url).text
    assert f'name="posted_by" value="{a.id}"' in form  # beside the key the outbox sends it again with

    second = SignedIn(app.test_client(), b)
    refused = second.post(f"/permits/{permit.id}/inspections",
                          {"type": "erosion_control", "idempotency_key": "key-0009-by-a", "posted_by": a.id})
    assert refused.status_code == 401
    assert "opened while someone else was signed in on this device" in refused.text
    assert started(permit) == 1  # A's own; none for B
    # B's own post is B's.
    assert second.post(f"/permits/{permit.id}/inspections", {"type": "erosion_control", "idempotency_key":
                                                              "key-0010-by-b", "posted_by": b.id}).status_code == 303
    assert started(permit) == 2
