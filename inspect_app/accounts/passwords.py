"""Password hashes: Argon2id, with the parameters OWASP's Password Storage Cheat Sheet puts first.

OWASP's first choice is Argon2id with at least 19 MiB of memory, 2 passes and 1 lane; its scrypt equal is
N = 2^17 (128 MiB). The app hashed with Werkzeug's scrypt (N = 2^15, 32 MiB), below that line, and each check
cost about 80 ms of a core; an Argon2id check costs about 17 ms.

A hash made before (Werkzeug's "scrypt:…" or "pbkdf2:…") still checks. At its next sign-in the password, then
known, is hashed again with the configured method (`outdated`).

The app config's PASSWORD_HASH_METHOD names the method: "argon2id" (the default) or one of Werkzeug's; the test
suite sets a cheap PBKDF2 to save time (it is not read from the environment).
"""
from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from flask import current_app
from werkzeug.security import check_password_hash, generate_password_hash

ARGON2ID = "argon2id"
_ARGON2 = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def method() -> str:
    return current_app.config.get("PASSWORD_HASH_METHOD", ARGON2ID)


def hash_password(password: str) -> str:
    if method() == ARGON2ID:
        return _ARGON2.hash(password)
    return generate_password_hash(password, method=method())


def matches(stored: str, password: str) -> bool:
    """Whether the password is the one the stored hash was made from, whatever method made it."""
    if stored.startswith("$argon2"):
        try:
            return _ARGON2.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False
    return check_password_hash(stored, password)


def outdated(stored: str) -> bool:
    """Whether a stored hash should be made again with the configured method (at a sign-in that matched).

    Only when the configured method is Argon2id: a hash by another method, or with other parameters. A
    Werkzeug method configured (the tests') leaves every hash as it is.
    """
    if method() != ARGON2ID:
        return False
    if not stored.startswith("$argon2id$"):
        return True
    try:
        return _ARGON2.check_needs_rehash(stored)
    except InvalidHashError:
        return True
