"""The sign-in limits (accounts/throttle.py) and the database counters they keep (inspect_app/rate_limits.py).

Issue 29: the counts lived in each worker's memory (19 of 40 wrong passwords checked with a limit of 5), and
failures from anyone refused the account everywhere. The end-to-end test with gunicorn's workers behind the
documented proxy settings is in tests/test_two_servers.py.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import requests
from sqlalchemy import select, text

from factories import PASSWORD, SignedIn

from inspect_app import create_app
from inspect_app.extensions import db
from inspect_app.rate_limits import DatabaseStorage, RateLimitCounter

WRONG = "not the password"


def _login(client, token: str, email: str, password: str, address: str = "10.0.0.1"):
    return client.post("/login", data={"csrf_token": token, "email": email, "password": password},
                       environ_base={"REMOTE_ADDR": address})


def test_one_address_guessing_is_stopped_and_never_refuses_the_owner_elsewhere(app, make, client):
    user = make.user("agent")
    token = SignedIn(client).token
    answers = [_login(client, token, user.email, WRONG, "203.0.113.66") for _ in range(12)]
    assert [a.status_code for a in answers] == [422] * 5 + [429] * 7
    assert "Too many failed sign-ins for this account from here. Try again in 15 minutes." in answers[5].text
    assert "Email or password is not right." not in answers[5].text  # refused before the password was checked
    # The right password from that address waits too; from anywhere else the owner signs in as usual.
    assert _login(client, token, user.email, PASSWORD, "203.0.113.66").status_code == 429
    assert _login(client, token, user.email, PASSWORD, "198.51.100.7").status_code == 303


def test_many_addresses_together_reach_the_slower_limit_of_the_account(app, make, client):
    user = make.user("agent")
    token = SignedIn(client).token
    # The defaults: 5 per 15 minutes from one address, 30 per hour for the account from anywhere.
    for n in range(6):
        for _ in range(5):
            assert _login(client, token, user.email, WRONG, f"203.0.113.{n}").status_code == 422
    refused = _login(client, token, user.email, PASSWORD, "198.51.100.7")
    assert refused.status_code == 429
    assert "Too many failed sign-ins for this account. Try again in 60 minutes." in refused.text
    assert _login(client, token, "someone.else@example.org", WRONG, "198.51.100.7").status_code == 422


def test_a_right_password_gives_its_place_back(app, make, client):
    app.config["SIGNIN_FAILURE_LIMIT"] = "2 per 15 minutes"
    user = make.user("agent")
    for _ in range(5):  # signing in and out all day never counts
        browser = SignedIn(app.test_client(), user)
        assert browser.post("/logout").status_code == 303
    token = SignedIn(client).token
    assert [_login(client, token, user.email, WRONG).status_code for _ in range(3)] == [422, 422, 429]


def test_concurrent_guesses_check_at_most_the_limit(app, make, live_server):
    """Twenty wrong passwords at once, each taking a real password hash: only 5 are checked. A count taken after
    the check (as Flask-Limiter's deduct_when does) let every guess in flight through its test first."""
    app.config["PASSWORD_HASH_METHOD"] = "scrypt"  # about 50 ms a check: the guesses overlap
    email = make.user("agent").email
    session = requests.Session()
    page = session.get(f"{live_server.url}/login").text
    token = page.split('name="csrf-token" content="')[1].split('"')[0]

    def guess(_):
        return session.post(f"{live_server.url}/login", allow_redirects=False,
                            data={"csrf_token": token, "email": email, "password": WRONG}).status_code

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(guess, range(20)))
    assert sorted(answers) == [422] * 5 + [429] * 15
    session.close()


def test_the_counts_are_shared_by_every_worker_through_the_database(app, make, client):
    """A second app on the same database (another gunicorn worker, another app server) sees the same counts."""
    user = make.user("agent")
    token = SignedIn(client).token
    for _ in range(5):
        assert _login(client, token, user.email, WRONG).status_code == 422
    other_worker = create_app({k: v for k, v in app.config.items()}).test_client()
    token = SignedIn(other_worker).token
    assert _login(other_worker, token, user.email, WRONG).status_code == 429
    keys = set(db.session.scalars(select(RateLimitCounter.key)))
    assert any(user.email in key and "10.0.0.1" in key for key in keys)
    db.session.remove()


def test_the_address_counted_is_the_one_the_trusted_proxy_saw(app, make):
    """Behind one trusted proxy every request comes from the proxy's address: the client is the address the
    proxy added last to X-Forwarded-For. What a client puts there itself, before it, changes nothing."""
    behind = create_app({**app.config, "TRUSTED_PROXY_COUNT": 1}).test_client()
    user = make.user("agent")
    token = SignedIn(behind).token
    proxy = {"REMOTE_ADDR": "10.0.0.2"}

    def login(password: str, client_address: str, made_up: str = ""):
        forwarded = f"{made_up}, {client_address}" if made_up else client_address
        return behind.post("/login", data={"csrf_token": token, "email": user.email, "password": password},
                           environ_base=proxy, headers={"X-Forwarded-For": forwarded})

    answers = [login(WRONG, "203.0.113.66", made_up=f"192.0.2.{n}").status_code for n in range(7)]
    assert answers == [422] * 5 + [429] * 2
    assert login(PASSWORD, "198.51.100.7").status_code == 303  # another client through the same proxy
    db.session.remove()


# --- the counters ------------------------------------------------------------------------------------

def test_a_counter_counts_in_its_window_then_starts_again(app):
    storage = DatabaseStorage()
    assert [storage.incr("k", 2) for _ in range(3)] == [1, 2, 3]
    assert storage.get("k") == 3 and time.time() < storage.get_expiry("k") <= time.time() + 2
    assert storage.incr("k", 2, amount=-1) == 2
    assert storage.get("other") == 0
    time.sleep(2.1)
    assert storage.get("k") == 0
    assert storage.incr("k", 2) == 1  # a new window
    assert storage.incr("k", 2, amount=-5) == 0  # never below nothing
    storage.clear("k")
    assert storage.get("k") == 0 and storage.check()


def test_windows_long_ended_are_swept_away(app):
    with db.engine.begin() as connection:
        connection.execute(text("INSERT INTO rate_limit_counters (key, count, expires_at) VALUES ('old', 3, :at)"),
                           {"at": time.time() - 3600})
    DatabaseStorage().incr("new", 60)
    assert set(db.session.scalars(select(RateLimitCounter.key))) == {"new"}
