"""Sign-in throttle, remember-me and the idle timeout, cookies behind a TLS proxy, and the headers on every
response (security and no-store)."""
from __future__ import annotations

import datetime as dt
import time
from email.utils import parsedate_to_datetime
from pathlib import Path

from factories import PASSWORD, SignedIn

from inspect_app import config, create_app
from inspect_app.extensions import db

ENV_TEMPLATE = Path(__file__).resolve().parents[2] / "docs" / "deploy" / "inspect-app.env"


def _login(client, token, email, password, address="10.0.0.1"):
    return client.post("/login", data={"csrf_token": token, "email": email, "password": password},
                       environ_base={"REMOTE_ADDR": address})


def test_failed_sign_ins_are_throttled_per_account_then_allowed_again(app, make, client):
    # The slow count of one account's failures from every address (accounts/throttle.py).
    app.config["SIGNIN_ACCOUNT_LIMIT"] = "3 per 2 seconds"
    user = make.user("agent")
    token = SignedIn(client).token
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):  # a different address each time: per account
        assert _login(client, token, user.email, "wrong password", address).status_code == 422
    refused = _login(client, token, user.email.upper(), PASSWORD, "10.0.0.4")
    assert refused.status_code == 429
    assert "Too many failed sign-ins for this account. Try again in 1 minute." in refused.text
    assert refused.headers["Retry-After"] in ("1", "2")
    time.sleep(2.1)  # the window has passed: the owner is not locked out for good
    assert _login(client, token, user.email, PASSWORD, "10.0.0.4").status_code == 303


def test_failed_sign_ins_are_throttled_per_address(app, make, client):
    app.config["SIGNIN_ADDRESS_LIMIT"] = "3 per 15 minutes"
    user = make.user("agent")
    token = SignedIn(client).token
    for n in range(3):
        assert _login(client, token, f"guess{n}@example.org", "password1").status_code == 422
    refused = _login(client, token, user.email, PASSWORD)
    assert refused.status_code == 429, refused.text
    assert "Too many failed sign-ins from here. Try again in 15 minutes." in refused.text, \
        refused.text[refused.text.find("<main"):][:1500]
    # Someone else, elsewhere, signs in as usual; successful sign-ins never count.
    for _ in range(5):  # each from a sign-in page of its own (the first sign-in gave the browser a new token)
        assert _login(client, SignedIn(client).token, user.email, PASSWORD, "10.9.9.9").status_code == 303


def test_the_outbox_asking_who_is_signed_in_never_voids_the_sign_in_form(app, make, client):
    """A tablet with posts waiting: its outbox asks /sync/session while the sign-in page loads, both with no
    session yet. Each answer used to start a session with its own CSRF token; when the outbox's cookie came
    last, the person's sign-in was refused (400)."""
    user = make.user("inspector")
    token = SignedIn(client).token  # the sign-in page, with its session cookie
    asked = app.test_client().get("/sync/session")  # at the same time, with no cookie either
    assert asked.status_code == 401 and asked.json["user"] is None
    for cookie in asked.headers.getlist("Set-Cookie"):  # what the browser would keep, arriving last
        name, value = cookie.split(";")[0].split("=", 1)
        client.set_cookie(name, value)
    assert _login(client, token, user.email, PASSWORD).status_code == 303
    assert asked.json["csrf_token"] is None  # no session, so no token of one


def _cookies(response) -> dict[str, str]:
    return {c.split("=", 1)[0]: c for c in response.headers.getlist("Set-Cookie")}


def test_remember_cookie_lasts_two_weeks_and_is_secure_only_behind_a_trusted_tls_proxy(app, make, client):
    user = make.user("agent")
    token = SignedIn(client).token
    plain = _cookies(client.post("/login", data={"csrf_token": token, "email": user.email, "password": PASSWORD,
                                                 "remember": "y"},
                                 headers={"X-Forwarded-Proto": "https"}))
    remember = plain["remember_token"]
    assert "HttpOnly" in remember and "SameSite=Lax" in remember
    expires = parsedate_to_datetime(remember.split("Expires=")[1].split(";")[0])
    assert dt.timedelta(days=13.9) < expires - dt.datetime.now(dt.UTC) <= dt.timedelta(days=14)
    assert "Secure" not in remember and "Secure" not in plain["session"]  # no proxy is trusted by default
    behind = create_app({**app.config, "TRUSTED_PROXY_COUNT": 1})
    proxied = behind.test_client()
    token = SignedIn(proxied).token
    cookies = _cookies(proxied.post("/login", data={"csrf_token": token, "email": user.email, "password": PASSWORD,
                                                    "remember": "y"},
                                    headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9",
                                             "Referer": "https://localhost/login"}))
    assert "Secure" in cookies["remember_token"] and "Secure" in cookies["session"]
    db.session.remove()


def test_every_kind_of_response_carries_the_security_headers(app, make, signed_in, client):
    permit = make.permit()
    browser = signed_in(make.user("agent"))
    for response in (client.get("/login"), client.get("/sw.js"), client.get("/static/app.js"),
                     client.get("/nowhere"), client.get("/sync/changes"), browser.get(f"/permits/{permit.id}"),
                     browser.get("/permits/?page=%00")):
        csp = response.headers.get("Content-Security-Policy", "")
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, response.request.path
        assert "unsafe-inline" not in csp
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Referrer-Policy"] == "same-origin"
        response.close()


def _copied(app, client):
    """A second browser holding copies of `client`'s session and remember-me cookies."""
    thief = app.test_client()
    for name in ("session", "remember_token"):
        cookie = client.get_cookie(name)
        if cookie is not None:
            thief.set_cookie(name, cookie.value)
    return thief


def _remember_only(app, client):
    """A browser holding only the remember-me cookie (its session long expired)."""
    later = app.test_client()
    later.set_cookie("remember_token", client.get_cookie("remember_token").value)
    return later


def _signed_in_page(browser) -> bool:
    return browser.get("/permits/").status_code == 200


def test_logging_out_ends_every_session_and_remember_cookie(app, make, client):
    user = make.user("agent")
    browser = SignedIn(client, user, remember=True)
    thief, later = _copied(app, client), _remember_only(app, client)
    assert _signed_in_page(thief) and _signed_in_page(later)
    assert browser.post("/logout").status_code == 303
    assert not _signed_in_page(thief) and not _signed_in_page(later)
    assert not _signed_in_page(_remember_only(app, thief))


def test_a_new_password_or_a_disabled_account_ends_its_sessions(app, make, client, runner):
    user = make.user("agent")
    SignedIn(client, user, remember=True)
    thief, later = _copied(app, client), _remember_only(app, client)
    assert _signed_in_page(thief)
    result = runner.invoke(args=["users", "password", "--email", user.email],
                           input="another good password\nanother good password\n")
    assert result.exit_code == 0, result.output
    assert not _signed_in_page(thief) and not _signed_in_page(later) and not _signed_in_page(client)
    other = app.test_client()
    SignedIn(other, user, password="another good password")
    assert _signed_in_page(other)
    assert runner.invoke(args=["users", "disable", "--email", user.email]).exit_code == 0
    assert not _signed_in_page(other)


def test_a_sign_in_takes_as_long_for_an_unknown_email_as_for_a_known_one(app, make, client):
    """Timed as an attacker would, over HTTP, with production's password hash (Argon2id): pairs of tries
    interleaved, so a busy machine slows both alike. Without the dummy hash an unknown email answered in
    about 3 % of the time of a known one."""
    app.config.update(PASSWORD_HASH_METHOD="argon2id", SIGNIN_FAILURE_LIMIT="1000 per minute")
    user = make.user("agent")  # hashed with Argon2id
    token = SignedIn(client).token
    known, unknown = [], []
    for n in range(9):
        for email, times in ((user.email, known), (f"nobody{n}@example.org", unknown)):
            started = time.perf_counter()
            assert _login(client, token, email, "wrong password").status_code == 422
            times.append(time.perf_counter() - started)
    ratio = sorted(unknown)[4] / sorted(known)[4]  # medians
    assert 0.5 < ratio < 2, (ratio, known, unknown)


def test_keep_me_signed_in_is_a_choice_off_by_default(app, make, client):
    """Issue 29: every sign-in set a 14-day remember-me cookie. Now only the person who ticks the box gets one."""
    user = make.user("agent")
    page = client.get("/login").text
    assert 'name="remember"' in page and "Keep me signed in on this device" in page
    assert "checked" not in page[page.find('name="remember"') - 200:page.find('name="remember"') + 100]
    token = SignedIn(client).token
    cookies = _cookies(client.post("/login", data={"csrf_token": token, "email": user.email, "password": PASSWORD}))
    assert "remember_token" not in cookies
    assert "Expires=" not in cookies["session"]  # ends with the browser
    ticked = app.test_client()
    token = SignedIn(ticked).token
    cookies = _cookies(ticked.post("/login", data={"csrf_token": token, "email": user.email, "password": PASSWORD,
                                                   "remember": "y"}))
    assert "Expires=" in cookies["remember_token"]


def test_a_sign_in_ends_after_the_idle_timeout_and_answers_as_any_signed_out_request(app, make, client):
    """Issue 29: a session had no idle timeout. After SESSION_IDLE_TIMEOUT with no request the sign-in ends
    (a copied cookie too); a request keeps it going. The session keeps its CSRF token, so a form post the
    outbox sends again is a 401 that says the sign-in expired and /sync/session answers 401, as for a sign-in ended any
    other way: never a CSRF refusal (400), which the outbox would take for the server refusing the post."""
    app.config["SESSION_IDLE_TIMEOUT"] = dt.timedelta(seconds=3)
    user = make.user("agent")
    permit = make.permit()
    browser = SignedIn(client, user)
    thief = _copied(app, client)
    time.sleep(1.7)
    assert _signed_in_page(browser.client)
    time.sleep(1.7)  # 3.4 s since the sign-in, 1.7 s since the last request: still signed in
    assert _signed_in_page(browser.client)
    assert not _signed_in_page(thief)  # its copy of the cookie saw no request for 3.4 s
    time.sleep(3.2)
    assert browser.get("/permits/").headers["Location"].startswith("/login")
    # A form posted signed out is a 401 that says so (the device keeps the post for its author), never a
    # visit of the sign-in page that would lose it (issue 28), and never a CSRF refusal.
    post = browser.post(f"/permits/{permit.id}/areas", {"area-name": "Lot 9", "area-acres": "1"})
    assert post.status_code == 401 and "sign-in has expired" in post.text.lower()
    asked = browser.get("/sync/session")
    assert asked.status_code == 401 and asked.json["user"] is None and asked.json["csrf_token"]
    db.session.expire_all()
    assert [a.name for a in permit.areas] == []
    # Who chose to stay signed in is signed in again by the remember-me cookie.
    remembered = app.test_client()
    SignedIn(remembered, user, remember=True)
    time.sleep(3.2)
    assert _signed_in_page(remembered)


def test_the_idle_timeout_is_twelve_hours_unless_set(app, monkeypatch):
    assert app.config["SESSION_IDLE_TIMEOUT"] == dt.timedelta(hours=12)
    monkeypatch.setenv("SESSION_IDLE_TIMEOUT_HOURS", "0.5")
    assert config.from_environment(Path(app.instance_path))["SESSION_IDLE_TIMEOUT"] == dt.timedelta(minutes=30)


def test_signed_in_pages_fragments_and_json_are_never_stored_by_a_cache(app, make, signed_in, client):
    """Issue 29: signed-in pages and JSON carried no Cache-Control. Files keep the caching they are served with."""
    permit = make.permit(areas=["Pad"])
    browser = signed_in(make.user("agent"))
    for response in (browser.get(f"/permits/{permit.id}"), browser.get("/permits/", htmx="permit-list"),
                     browser.get("/sync/changes"), browser.get("/sync/permits"), client.get("/login")):
        assert response.headers["Cache-Control"] == "no-store", response.request.path
    static = client.get("/static/app.js")
    assert static.headers["Cache-Control"] == "no-cache"  # Flask's own: asked again, answered 304 if unchanged
    static.close()


def test_behind_the_documented_proxy_on_another_host_cookies_are_secure(app, make, monkeypatch):
    """Issue 29: with the proxy on another machine saying X-Forwarded-Proto: https, no cookie was Secure: the
    deployment's settings trusted no proxy. The env template sets how many proxies to trust."""
    template = dict(line.split("=", 1) for line in ENV_TEMPLATE.read_text().splitlines()
                    if line and not line.startswith("#"))
    assert "TRUSTED_PROXY_COUNT" in template, "docs/deploy/inspect-app.env must set TRUSTED_PROXY_COUNT"
    monkeypatch.setenv("TRUSTED_PROXY_COUNT", template["TRUSTED_PROXY_COUNT"])
    deployed = create_app({k: v for k, v in app.config.items() if k != "TRUSTED_PROXY_COUNT"})
    user = make.user("agent")
    browser = deployed.test_client()
    from_proxy = {"REMOTE_ADDR": "10.0.0.2"}  # the proxy's machine, not this one
    token = SignedIn(browser).token
    answer = browser.post("/login", data={"csrf_token": token, "email": user.email, "password": PASSWORD,
                                          "remember": "y"}, environ_base=from_proxy,
                          headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9",
                                   "Referer": "https://localhost/login"})
    assert answer.status_code == 303
    cookies = _cookies(answer)
    assert "Secure" in cookies["session"] and "Secure" in cookies["remember_token"]
    db.session.remove()


def test_the_next_person_signing_in_drops_the_keep_me_signed_in_cookie_of_the_one_before(app, make, client):
    """Dana ticked "Keep me signed in" on the tablet; Casey signs in after her without ticking it. Her cookie stayed:
    once Casey's sign-in idled out, the tablet signed itself in again as Dana, and what Casey did next was hers."""
    app.config["SESSION_IDLE_TIMEOUT"] = dt.timedelta(seconds=2)
    dana, casey = make.user("inspector", name="Dana Whitfield"), make.user("inspector", name="Casey Cole")
    SignedIn(client, dana, remember=True)
    assert client.get_cookie("remember_token") is not None
    token = SignedIn(client).token
    cookies = _cookies(client.post("/login", data={"csrf_token": token, "email": casey.email, "password": PASSWORD}))
    assert "remember_token=;" in cookies["remember_token"]  # removed with Casey's sign-in
    assert client.get_cookie("remember_token") is None
    assert client.get("/permits/").headers["Signed-In-As"] == casey.id
    time.sleep(2.3)
    idle = client.get("/permits/")
    assert idle.status_code == 302 and idle.headers["Signed-In-As"] == ""  # signed out, not signed in as Dana
    # Casey ticking it gets Casey's own.
    SignedIn(client, casey, remember=True)
    time.sleep(2.3)
    assert client.get("/permits/").headers["Signed-In-As"] == casey.id
