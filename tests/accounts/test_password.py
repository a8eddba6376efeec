"""Changing one's password in the app (issue 29): other sessions end, device tokens stop working."""
from __future__ import annotations

from sqlalchemy import select

from factories import PASSWORD, SignedIn

from inspect_app.extensions import db
from sync.models import SyncDevice
from sync.services import create_device

NEW = "a much better password"


def _change(browser, current: str, new: str, again: str | None = None):
    return browser.post("/account/password", {"current_password": current, "new_password": new,
                                              "confirm": new if again is None else again})


def _token_works(app, token: str) -> bool:
    return app.test_client().get("/sync/permits", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def _signed_in(client) -> bool:
    return client.get("/permits/").status_code == 200


def test_the_account_menu_leads_to_the_password_page(app, make, signed_in):
    browser = signed_in(make.user("inspector"))
    assert 'href="/account/password"' in browser.get("/permits/").text
    page = browser.get("/account/password")
    assert page.status_code == 200
    for label in ("Current password", "New password", "New password again"):
        assert label in page.text
    assert app.test_client().get("/account/password").status_code == 302  # signed out: to the sign-in page


def test_a_new_password_ends_other_sessions_and_device_tokens_and_keeps_this_one(app, make, client):
    user = make.user("inspector")
    make.permit(inspectors=[user])
    _device, token = create_device(None, user, "tablet")
    db.session.commit()
    browser = SignedIn(client, user, remember=True)
    other = app.test_client()
    SignedIn(other, user)
    assert _token_works(app, token) and _signed_in(other)

    changed = _change(browser, PASSWORD, NEW)
    assert changed.status_code == 303 and changed.headers["Location"] == "/account/password"
    page = browser.get("/account/password").text
    assert "Your password is changed. Every other sign-in of your account has ended" in page
    assert _signed_in(browser.client)  # this session goes on, and so does its remember-me cookie
    later = app.test_client()
    later.set_cookie("remember_token", browser.client.get_cookie("remember_token").value)
    assert _signed_in(later)
    assert not _signed_in(other)
    assert not _token_works(app, token)
    assert db.session.scalar(select(SyncDevice.revoked_at).where(SyncDevice.user_id == user.id)) is not None
    assert SignedIn(app.test_client()).post("/login", {"email": user.email, "password": PASSWORD}).status_code == 422
    SignedIn(app.test_client(), user, password=NEW)


def test_refused_changes_say_why_beside_the_field_and_change_nothing(app, make, client):
    user = make.user("agent")
    _device, token = create_device(None, user, "tablet")
    db.session.commit()
    browser = SignedIn(client, user)
    cases = [
        (("wrong password", NEW), "The current password is not right"),
        ((PASSWORD, NEW, "another new password"), "The two new passwords are not the same."),
        ((PASSWORD, "short"), "At least 8 characters"),
        ((PASSWORD, PASSWORD), "The new password must differ from the current one"),
        (("", NEW), "This field is required."),
    ]
    for arguments, message in cases:
        answer = _change(browser, *arguments)
        assert answer.status_code == 422, arguments
        assert message in answer.text, (arguments, answer.text[answer.text.find("<main"):][:2000])
    assert _signed_in(browser.client) and _token_works(app, token)
    SignedIn(app.test_client(), user)  # the old password still signs in


def test_guessing_the_current_password_is_limited_as_at_sign_in(app, make, client):
    user = make.user("agent")
    browser = SignedIn(client, user)
    answers = [_change(browser, f"guess {n}", NEW).status_code for n in range(6)]
    assert answers == [422] * 5 + [429]
    assert _change(browser, PASSWORD, NEW).status_code == 429  # until the window ends, even the right one


def test_a_password_set_with_the_command_ends_device_tokens_too(app, make, runner):
    user = make.user("inspector")
    make.permit(inspectors=[user])
    _device, token = create_device(None, user, "tablet")
    db.session.commit()
    assert _token_works(app, token)
    result = runner.invoke(args=["users", "password", "--email", user.email], input=f"{NEW}\n{NEW}\n")
    assert result.exit_code == 0, result.output
    assert not _token_works(app, token)
