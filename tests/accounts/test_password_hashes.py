"""Password hashes: Argon2id with OWASP's parameters, and a hash the app made before (Werkzeug's scrypt) made
again with Argon2id at its owner's next sign-in (accounts/passwords.py)."""
from __future__ import annotations

from factories import PASSWORD, SignedIn
from werkzeug.security import generate_password_hash

from inspect_app.extensions import db
from sync.services import create_device

ARGON2ID_OWASP = "$argon2id$v=19$m=19456,t=2,p=1$"


def test_a_new_password_is_stored_as_argon2id_and_signs_in(app, make, client):
    app.config["PASSWORD_HASH_METHOD"] = "argon2id"  # production's (the suite's own is a cheap PBKDF2)
    user = make.user("agent")
    assert user.password_hash.startswith(ARGON2ID_OWASP)
    browser = SignedIn(client)
    assert browser.post("/login", {"email": user.email, "password": PASSWORD + "x"}).status_code == 422
    assert browser.post("/login", {"email": user.email, "password": PASSWORD}).status_code == 303
    assert client.get("/permits/").status_code == 200


def test_an_older_scrypt_hash_is_made_again_with_argon2id_at_the_next_sign_in(app, make, client):
    app.config["PASSWORD_HASH_METHOD"] = "argon2id"
    user = make.user("inspector")
    user.password_hash = generate_password_hash(PASSWORD, method="scrypt")  # as the app stored them before
    _device, device_token = create_device(None, user, "tablet")
    db.session.commit()
    before = user.password_hash
    browser = SignedIn(client)

    assert browser.post("/login", {"email": user.email, "password": "not the password"}).status_code == 422
    db.session.expire_all()
    assert user.password_hash == before  # a wrong password changes nothing

    assert browser.post("/login", {"email": user.email, "password": PASSWORD}).status_code == 303
    db.session.expire_all()
    assert user.password_hash.startswith(ARGON2ID_OWASP)
    # Nothing else of the account changed: the session goes on, the tablet still syncs, and the same password
    # signs in elsewhere, with the new hash (which is left as it is then).
    assert client.get("/permits/").status_code == 200
    pulled = app.test_client().get("/sync/changes?cursor=0", headers={"Authorization": f"Bearer {device_token}"})
    assert pulled.status_code == 200
    rehashed = user.password_hash
    SignedIn(app.test_client(), user)
    db.session.expire_all()
    assert user.password_hash == rehashed


def test_the_suites_cheap_method_leaves_a_hash_as_it_is(app, make, client):
    user = make.user("inspector")
    user.password_hash = generate_password_hash(PASSWORD, method="scrypt")
    db.session.commit()
    SignedIn(client, user)
    db.session.expire_all()
    assert user.password_hash.startswith("scrypt:")
