"""Signing in and out, and CSRF on every form."""
from factories import PASSWORD


def test_login_page_is_served(client):
    response = client.get("/login")
    assert response.status_code == 200
    assert "Log in" in response.text
    assert 'name="csrf-token"' in response.text


def test_user_logs_in_and_sees_permits(make, signed_in):
    agent = make.user("agent")
    browser = signed_in(agent)
    response = browser.get("/", follow_redirects=True)
    assert response.status_code == 200
    assert "Permits" in response.text
    assert agent.name in response.text


def test_wrong_password_is_refused_beside_the_field(make, signed_in):
    user = make.user("inspector")
    browser = signed_in()
    response = browser.post("/login", {"email": user.email, "password": "not it"})
    assert response.status_code == 422
    assert "Email or password is not right." in response.text
    assert browser.get("/permits/").status_code == 302  # still signed out


def test_disabled_account_cannot_log_in(make, signed_in, app):
    from inspect_app.extensions import db

    user = make.user("inspector")
    user.is_enabled = False
    db.session.commit()
    response = signed_in().post("/login", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 422


def test_post_without_csrf_token_is_refused(make, client):
    user = make.user("inspector")
    response = client.post("/login", data={"email": user.email, "password": PASSWORD})
    assert response.status_code == 400
    assert "CSRF" in response.text or "expired" in response.text.lower()


def test_login_never_redirects_off_site(make, signed_in):
    user = make.user("inspector")
    browser = signed_in()
    response = browser.post("/login?next=//evil.example/x", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 303
    assert response.headers["Location"] == "/"


def test_logout(make, signed_in):
    browser = signed_in(make.user("agent"))
    assert browser.post("/logout").status_code == 303
    assert browser.get("/permits/").status_code == 302
