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
    assert "This sign-in page was out of date" in response.text
    assert client.get("/permits/").status_code == 302  # not signed in


def test_a_sign_in_page_left_open_in_another_tab_asks_again_with_a_form_that_works(make, client):
    """Two tabs of the login page on a shared tablet; Dana signs in on the first. Casey's sign-in on the second
    answered a bare 400 ("The form could not be accepted"). Now the form comes back with Casey's email, a token
    that works and the reason; Casey types the password again and is signed in."""
    import re
    from html import unescape
    dana, casey = make.user("inspector", name="Dana Whitfield"), make.user("inspector", name="Casey Cole")
    first, second = client.get("/login").text, client.get("/login").text
    token = lambda page: unescape(re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1))
    assert client.post("/login", data={"email": dana.email, "password": PASSWORD,
                                       "csrf_token": token(first)}).status_code == 303
    stale = client.post("/login", data={"email": casey.email, "password": PASSWORD, "csrf_token": token(second)})
    assert stale.status_code == 400
    assert "This sign-in page was out of date" in stale.text and f'value="{casey.email}"' in stale.text
    again = client.post("/login", data={"email": casey.email, "password": PASSWORD, "csrf_token": token(stale.text)})
    assert again.status_code == 303
    assert "Casey Cole" in client.get("/permits/").text


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
