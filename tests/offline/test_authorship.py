"""Whose act a form post is, on the server: every answer names who is signed in (the device serves what it holds to
that person alone), and a post whose author (`posted_by`) is not who is signed in, expired or someone else, is
a 401 that says so and changes nothing (the device keeps it for its author)."""
from __future__ import annotations

import uuid

from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.idempotency import IdempotentRequest
from inspect_app.inspections.models import Inspection
from tests.inspections.report_helpers import filled


def _reports() -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(Inspection))


def _new_report(client, permit) -> dict[str, str]:
    """The new report's form as its author's device posts it: filled in, with a key."""
    page = client.get(f"/permits/{permit.id}/inspections/new/erosion_control").text
    return filled(page, idempotency_key=str(uuid.uuid4()))


def test_every_answer_says_who_is_signed_in_and_static_files_no_one(site, client, signed_in):
    inspector, _permit = site
    assert client.get("/login").headers["Signed-In-As"] == ""
    browser = signed_in(inspector)
    assert browser.get("/permits/").headers["Signed-In-As"] == inspector.id
    assert browser.get("/no-such-page").headers["Signed-In-As"] == inspector.id  # an error page too
    with browser.get("/static/app.js") as static:
        assert "Signed-In-As" not in static.headers
    assert browser.get("/offline/pages.json").get_json()["user"] == inspector.id


def test_a_post_filled_in_by_someone_else_than_who_is_signed_in_is_a_401_that_changes_nothing(
        site, app, make, signed_in):
    inspector, permit = site
    form = _new_report(signed_in(inspector), permit)
    other = make.user("inspector")
    made = str(uuid.uuid4())

    refused = signed_in(other).post(f"/inspections/{made}/submit", form)  # their own session and token

    assert refused.status_code == 401
    assert "opened while someone else was signed in" in refused.text and "data-kept-note hidden" in refused.text
    assert _reports() == 0 and db.session.scalar(select(func.count()).select_from(IdempotentRequest)) == 0


def test_a_post_whose_sign_in_expired_is_a_401_whether_its_session_is_gone_or_only_signed_out(
        site, app, make, signed_in):
    inspector, permit = site
    author = signed_in(inspector)
    form = _new_report(author, permit)
    made = str(uuid.uuid4())

    gone = app.test_client().post(f"/inspections/{made}/submit", data={**form, "csrf_token": author.token})
    assert gone.status_code == 401 and "Your sign-in has expired" in gone.text

    author.post("/logout")  # the same session, signed out: its token is still good, its user is not
    signed_out = author.post(f"/inspections/{made}/submit", form)
    assert signed_out.status_code == 401 and "Your sign-in has expired" in signed_out.text
    assert 'href="/login?next=/outbox"' in signed_out.text  # kept: after signing in, see it go

    in_place = author.post(f"/inspections/{made}/submit", form, htmx="findings")
    assert in_place.status_code == 401 and "<html" not in in_place.text and "data-kept-note" in in_place.text
    assert _reports() == 0


def test_a_form_that_names_no_author_posted_with_a_stale_token_is_still_the_400(client, site):
    refused = client.post("/login", data={"email": site[0].email, "password": "x", "csrf_token": "stale"})
    assert refused.status_code == 400 and "The form could not be accepted" in refused.text


def test_a_page_asked_for_signed_out_still_goes_to_the_sign_in_form(client, site):
    _inspector, permit = site
    answer = client.get(f"/permits/{permit.id}")
    assert answer.status_code == 302 and answer.location.startswith("/login?next=")
