"""Exactly-once for form posts sent again by a device: `Idempotency-Key` → the first answer.

A form post that could not reach the server waits in the device's outbox and is sent again later, maybe
twice (two tabs, a lost answer). Each such post carries a key the page made as it opened (static/app.js
fills the form's `idempotency_key` field; the outbox also sends it as the `Idempotency-Key` header). The first delivery whose transaction commits stores the
key in that same transaction; its answer (status, body, the headers a browser acts on) is stored right
after. A later delivery with the key gets that answer back and changes nothing.

Two deliveries at once both run the view; the second one's commit fails on the key (the primary key
of `idempotent_requests`, per user), everything it did is rolled back, and it answers what the first
answered. A request that commits nothing stores nothing, so it can simply run again.
The sync protocol (/sync) has its own table of operations and is left alone.

Keys are kept for good, so a post is applied once however late it is sent again; the page of an answer is
kept IDEMPOTENCY_RETENTION_DAYS (config.py), then `flask idempotency expire`, run daily, drops it.

A form names who filled it in (`posted_by`). A post is only ever applied as its author's act: while someone else
is signed in, or no one (the sign-in expired while the form was open), it is answered 401 (`SignInNeeded`) with a
page that says so, and the device keeps the post for its author (static/sw.js).
"""
from __future__ import annotations

import datetime as dt
import re
import time
from typing import Any

from flask import Flask, abort, g, has_request_context, request
from flask_login import current_user
from sqlalchemy import JSON, ForeignKey, Integer, LargeBinary, String, event, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Mapped, Session, mapped_column
from werkzeug.exceptions import Unauthorized

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, utcnow

HEADER = "Idempotency-Key"
FIELD = "idempotency_key"
KEY = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})
# The headers of an answer a browser acts on; the others (cookies above all) are not replayed.
KEPT_HEADERS = ("Content-Type", "Location", "Vary", "HX-Redirect", "HX-Location", "HX-Refresh",
                "HX-Trigger", "HX-Retarget", "HX-Reswap")
# The form field naming who filled the form in (the templates write it beside the key).
POSTED_BY = "posted_by"
# Why a post was not taken as its author's act (the 401 page shows it; templates/errors/_401.html).
SIGNED_OUT = "Your sign-in has expired, so the server did not take this: nothing was changed."
SOMEONE_ELSE = ("This form was opened while someone else was signed in on this device, so it is never taken as "
                "yours: nothing was changed.")
STALE_PAGE = ("This page was opened before your latest sign-in on this device, so the server did not take this: "
              "nothing was changed.")
# How long a second delivery waits for the first one's answer before it says "try again".
WAIT_S = 5.0
POLL_S = 0.05


class IdempotentRequest(db.Model):
    """One unsafe request a user sent with a key, and the answer it got."""

    __tablename__ = "idempotent_requests"

    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), primary_key=True)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    method: Mapped[str] = mapped_column(String(10))
    path: Mapped[str] = mapped_column(String(2000))
    received_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    status: Mapped[int | None] = mapped_column(Integer)
    headers: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    body: Mapped[bytes | None] = mapped_column(LargeBinary)
    answered_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)


def register(app: Flask) -> None:
    """Install the check before each request, the answer's record after it, and the commit hook."""
    app.before_request(_replay_or_claim)
    app.after_request(_record_answer)
    app.register_error_handler(IntegrityError, _second_delivery)
    if not event.contains(Session, "before_commit", _store_claim):
        event.listen(Session, "before_commit", _store_claim)


class SignInNeeded(Unauthorized):
    """A post its author is not signed in to send: 401, with why (SIGNED_OUT or SOMEONE_ELSE)."""


def author_not_signed_in() -> str | None:
    """Why this post cannot be taken as its author's act now (its `posted_by` is not who is signed in), or None.

    A post that names no author (a sign-in form, a form of a page that is not kept offline) is not for this check.
    """
    if request.method in SAFE or request.mimetype not in FORM_TYPES:
        return None
    posted_by = request.form.get(POSTED_BY)
    if not posted_by:
        return None
    if not current_user.is_authenticated:
        return SIGNED_OUT
    return SOMEONE_ELSE if posted_by != current_user.id else None


def author_of_stale_page() -> str | None:
    """Why a post refused for its stale CSRF token is a 401 its device keeps for its author (see
    `author_not_signed_in`), or None for the 400 of a stale token (a post that names no author).

    Its author signed in is no exception: their page was made before their latest sign-in here (the browser
    restarted, or someone else signed in between, which gives the next person a new token), so its token is
    stale but the post is theirs. Their device keeps it and its outbox sends it again with a token of now.
    """
    refused = author_not_signed_in()
    if refused is None and request.method not in SAFE and request.mimetype in FORM_TYPES and request.form.get(POSTED_BY):
        g.own_stale_page = True  # for the page's words (errors/_401.html)
        return STALE_PAGE
    return refused


def forget_old_pages(now: dt.datetime, retention: dt.timedelta) -> int:
    """Drop the stored page (the body) of answers received more than ``retention`` before ``now``; return how
    many. The key, with the answer's status and headers (a redirect's Location), is kept for good: a post
    whose answer was lost is applied once however late its device sends it again (a second notice of
    violation or log entry would be a false record), and answers with its first status and no page. A key
    still being applied (no status yet) is left alone."""
    result = db.session.execute(update(IdempotentRequest).where(
        IdempotentRequest.received_at < now - retention, IdempotentRequest.status.is_not(None),
        IdempotentRequest.body.is_not(None)).values(body=None))
    return result.rowcount


def _key() -> str | None:
    """The request's key, if it is an unsafe request of a signed-in user outside /sync that has one."""
    if request.method in SAFE or request.blueprint == "sync" or not current_user.is_authenticated:
        return None
    key = request.headers.get(HEADER)
    if key is None and request.mimetype in FORM_TYPES:
        key = request.form.get(FIELD) or None
    if key is not None and not KEY.match(key):
        abort(400, description="The idempotency key must be 8 to 64 letters, digits, '-' or '_'.")
    return key


def _replay_or_claim():
    key = _key()
    if key is None:
        return None
    refused = author_not_signed_in()
    if refused:
        # A post kept on a shared tablet, or a page left open when someone else signed in: it is its author's act
        # (their name, their signature), so it is never applied as another's.
        raise SignInNeeded(description=refused)
    found = db.session.get(IdempotentRequest, (current_user.id, key))
    if found is not None:
        db.session.rollback()
        return _answer_of(found)
    g.idempotency = {"user_id": current_user.id, "key": key, "method": request.method,
                     "path": request.path, "stored": False}
    return None


def _store_claim(session: Session) -> None:
    """The first commit of a request with a key stores the key with the request's own changes."""
    if not has_request_context():
        return
    claim = g.get("idempotency")
    if claim is None or claim["stored"] or session is not db.session():
        return
    claim["stored"] = True
    session.add(IdempotentRequest(user_id=claim["user_id"], key=claim["key"], method=claim["method"],
                                  path=claim["path"]))


def _record_answer(response):
    claim = g.get("idempotency")
    if claim is None or not claim["stored"]:
        return response
    # Whatever the view left uncommitted is not part of what it did (teardown would drop it anyway).
    db.session.rollback()
    row = db.session.get(IdempotentRequest, (claim["user_id"], claim["key"]))
    if row is not None and row.status is None:
        row.status = response.status_code
        row.headers = {k: response.headers[k] for k in KEPT_HEADERS if k in response.headers}
        row.body = response.get_data()
        row.answered_at = utcnow()
        g.idempotency = None  # this commit stores no claim
        db.session.commit()
    return response


def _second_delivery(error: IntegrityError):
    """A commit refused while a delivery with the same key committed first: answer what it answered."""
    claim = g.get("idempotency")
    if claim is None:
        raise error
    db.session.rollback()
    g.idempotency = None
    # Another delivery with the key committed (on PostgreSQL the refused insert waited for it): its row
    # is there. No row: the error is the request's own, not a second delivery.
    if db.session.get(IdempotentRequest, (claim["user_id"], claim["key"])) is None:
        db.session.rollback()
        raise error
    return _wait_for(claim["user_id"], claim["key"]) or _still_running()


def _wait_for(user_id: str, key: str):
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            found = db.session.get(IdempotentRequest, (user_id, key), populate_existing=True)
        except OperationalError:  # SQLite busy with the first delivery's commit
            db.session.rollback()
            found = None
        if found is not None and found.status is not None:
            answer = _answer_of(found)
            db.session.rollback()
            return answer
        db.session.rollback()
        if time.monotonic() > deadline:
            return None
        time.sleep(POLL_S)


def _answer_of(found: IdempotentRequest):
    """The stored answer, or (while the first delivery is still running) a 409 to try again later."""
    if found.method != request.method or found.path != request.path:
        abort(422, description="This idempotency key was used for another request; the form must make a new one.")
    if found.status is None:
        return _wait_for(found.user_id, found.key) or _still_running()
    headers = dict(found.headers or {}) | {"Idempotent-Replayed": "true"}
    return found.body or b"", found.status, headers


def _still_running():
    return ({"error": "The same request is still being applied; send it again in a moment."}, 409,
            {"Retry-After": "2"})
