"""Sign-in time with an unknown email beside a known email with a wrong password (issue 15).

A sign-in that answers faster for an unknown email tells an attacker which accounts exist. Both answers
must cost the same password hash.

Prints, one per line:
  signin_known_email_median_ms      median wall time of a refused sign-in for an existing account
  signin_unknown_email_median_ms    median wall time of a refused sign-in for an email with no account
  signin_unknown_to_known_ratio     unknown / known (1.0 is the same time; well below 1 leaks)
  signin_older_hash_median_ms       the same for an account whose hash the app made before Argon2id (Werkzeug's
                                    scrypt): until its owner signs in, which hashes the password again, its
                                    refusals take longer than an unknown email's

Each attempt is one POST of the real sign-in form through the app, with its CSRF token (the throttle off, so
every attempt reaches the password check), on a throwaway SQLite database, with the production password hash.

Run from the repository root: python -m bench.signin [runs]
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from werkzeug.security import generate_password_hash

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, however it is run

from inspect_app import create_app  # noqa: E402
from inspect_app.accounts.services import create_user  # noqa: E402
from inspect_app.extensions import db  # noqa: E402

RUNS = 15


def _timed(client, token: str, email: str) -> float:
    started = time.perf_counter()
    response = client.post("/login", data={"email": email, "password": "not the password", "csrf_token": token})
    elapsed = time.perf_counter() - started
    assert response.status_code in (200, 422), response.status_code  # refused, shown beside the field
    return elapsed * 1000


def main(runs: int = RUNS) -> None:
    with tempfile.TemporaryDirectory() as folder:
        app = create_app({
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder}/bench.sqlite",
            "BLOB_ROOT": folder,
            "RATELIMIT_ENABLED": False,
            "SECRET_KEY": "bench",
        })
        with app.app_context():
            db.create_all()
            create_user(email="engineer@example.org", name="Engineer", role="inspector",
                        password="the right password 42")
            older = create_user(email="older@example.org", name="Older Hash", role="inspector",
                                password="the right password 42")
            older.password_hash = generate_password_hash("the right password 42", method="scrypt")
            db.session.commit()
        client = app.test_client()
        token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', client.get("/login").text).group(1)
        _timed(client, token, "nobody@example.org")  # warm up: imports, the first dummy hash
        known, unknown, older_hash = [], [], []
        for _ in range(runs):  # interleaved, so a change in machine load touches all three alike
            known.append(_timed(client, token, "engineer@example.org"))
            unknown.append(_timed(client, token, "nobody@example.org"))
            older_hash.append(_timed(client, token, "older@example.org"))
    known_ms, unknown_ms = statistics.median(known), statistics.median(unknown)
    print(f"signin_known_email_median_ms={known_ms:.1f}")
    print(f"signin_unknown_email_median_ms={unknown_ms:.1f}")
    print(f"signin_unknown_to_known_ratio={unknown_ms / known_ms:.2f}")
    print(f"signin_older_hash_median_ms={statistics.median(older_hash):.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS)
