"""Whose act a form post is, on the server: every answer names who is signed in (the device serves what it holds to
that person alone), and a post whose author (`posted_by`) is not who is signed in, expired or someone else, is
a 401 that says so and changes nothing (the device keeps it for its author)."""
from __future__ import annotations

import re
import uuid

from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.idempotency import IdempotentRequest
from inspect_app.inspections.models import Inspection
from factories import SignedIn
from tests.inspections.report_helpers import filled, start, submit


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
    _inspector, permit = site
    refused = client.post(f"/permits/{permit.id}/inspections", data={"type": "erosion_control", "csrf_token": "stale"})
    assert refused.status_code == 400 and "The form could not be accepted" in refused.text
    # The sign-in form itself comes back, with a token that works (tests/accounts/test_login.py).
    login = client.post("/login", data={"email": site[0].email, "password": "x", "csrf_token": "stale"})
    assert login.status_code == 400 and "This sign-in page was out of date" in login.text


def test_a_page_asked_for_signed_out_still_goes_to_the_sign_in_form(client, site):
    _inspector, permit = site
    answer = client.get(f"/permits/{permit.id}")
    assert answer.status_code == 302 and answer.location.startswith("/login?next=")


_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def test_a_page_left_open_from_someone_elses_sign_in_sends_nothing_under_the_next_person(site, app, make):
    """Dana's submitted report stays open in a tab, showing her name; she signs out and Casey signs in on the same
    browser. Amend, on Dana's page, was taken as Casey's: an amendment made and signed by Casey, who never opened
    it. Another person's sign-in now gives the browser a new token: Dana's page sends nothing as Casey."""
    dana, permit = site
    casey = make.user("inspector", name="Casey Cole")
    own = make.permit(inspectors=[casey])  # Casey has work of their own in the town
    tablet = app.test_client()
    as_dana = SignedIn(tablet, dana)
    original = start(as_dana, permit, "erosion_control")
    assert submit(as_dana, original).status_code == 303
    page = as_dana.get(f"/inspections/{original.id}").text
    left_open = _TOKEN.findall(page)[-1]  # the Amend form's
    as_dana.post("/logout")

    as_casey = SignedIn(tablet, casey)
    assert as_casey.token != left_open
    amend = tablet.post(f"/inspections/{original.id}/amend", data={"csrf_token": left_open})
    assert amend.status_code == 400 and "The form could not be accepted" in amend.text
    # A form of Dana's that names her: a 401 that says it is someone else's; her device keeps it for her.
    named = tablet.post(f"/permits/{permit.id}/areas", data={"csrf_token": left_open, "posted_by": dana.id,
                                                              "area-name": "Lot 9", "area-acres": "1"})
    assert named.status_code == 401 and "opened while someone else was signed in" in named.text
    db.session.expire_all()
    assert _reports() == 1 and [a.name for a in permit.areas] == ["Lot 1 pad"]
    # Casey's own pages work as ever.
    assert start(as_casey, own, "erosion_control").created_by_id == casey.id


def test_the_same_person_signing_in_again_keeps_the_pages_they_left_open(site, app, make):
    """Signing out and in again, also after a colleague signed in and out meanwhile on the tablet, is the same
    person: the pages they left open still send (a form, an autosave, Log out)."""
    dana, permit = site
    casey = make.user("inspector")
    tablet = app.test_client()
    as_dana = SignedIn(tablet, dana)
    draft = start(as_dana, permit, "erosion_control")
    page_token = as_dana.token
    for who in (dana, casey):
        SignedIn(tablet, who).post("/logout")
    SignedIn(tablet, dana)
    added = tablet.post(f"/permits/{permit.id}/areas", data={"csrf_token": page_token, "posted_by": dana.id,
                                                              "area-name": "Lot 9", "area-acres": "1"})
    assert added.status_code in (200, 303)
    autosaved = tablet.post(f"/inspections/{draft.id}", headers={"X-Autosave": "1"},
                            data={"csrf_token": page_token, "posted_by": dana.id, "notes": "Gate locked"})
    assert autosaved.status_code == 204
    db.session.expire_all()
    assert "Lot 9" in [a.name for a in permit.areas] and db.session.get(Inspection, draft.id).notes == "Gate locked"
    assert tablet.post("/logout", data={"csrf_token": page_token}).status_code == 303
    assert tablet.get("/permits/").headers["Signed-In-As"] == ""


def test_a_browser_signed_in_again_by_its_remember_me_cookie_keeps_that_sign_ins_token(site, app):
    """The session ended (the browser restarted) and the remember-me cookie signed Dana in again: the pages she
    opens then keep working after she signs out and in."""
    dana, permit = site
    tablet = app.test_client()
    SignedIn(tablet, dana, remember=True)
    tablet.delete_cookie("session")
    page = tablet.get(f"/permits/{permit.id}")
    assert page.headers["Signed-In-As"] == dana.id
    token = _TOKEN.findall(page.text)[-1]
    tablet.post("/logout", data={"csrf_token": token})
    SignedIn(tablet, dana)
    added = tablet.post(f"/permits/{permit.id}/areas", data={"csrf_token": token, "area-name": "Lot 9",
                                                              "area-acres": "1"})
    assert added.status_code in (200, 303)


def test_a_post_of_its_author_with_the_token_of_an_earlier_session_is_kept_for_them_not_refused(site, app):
    """Dana's page was made before the browser restarted (its session, and its token, gone); she signs in again.
    The page's token is stale, but the post is hers: a 401 her device keeps (its outbox sends it again with a token
    of now), never the 400 that would drop it; nothing is changed by it."""
    dana, permit = site
    as_dana = SignedIn(app.test_client(), dana)
    form = _new_report(as_dana, permit)
    made = str(uuid.uuid4())
    restarted = app.test_client()
    SignedIn(restarted, dana)

    kept = restarted.post(f"/inspections/{made}/submit", data=form)  # the page's own, stale, token
    assert kept.status_code == 401
    words = " ".join(kept.text.split())
    assert "opened before your latest sign-in" in words and "older than your sign-in" in words
    assert "sent by itself, once, in a moment" in words  # the note the device shows when it kept it
    assert _reports() == 0
