"""Failed sign-ins, counted where every worker of every app server sees the same numbers.

Three counts, each in fixed windows, in the rate limiter's storage (the database: inspect_app/rate_limits.py):

- one account from one address (SIGNIN_FAILURE_LIMIT, 5 per 15 minutes): someone guessing a password;
- one address, whatever the account (SIGNIN_ADDRESS_LIMIT, 20 per 15 minutes): one address trying many;
- one account from anywhere (SIGNIN_ACCOUNT_LIMIT, 30 per hour): many addresses guessing one account. It is
  slower than one address may go (5 per 15 minutes is at most 25 in any hour), so failures from one
  address never refuse the owner signing in from another; only many addresses together reach it, and
  only until its window ends. Nobody is locked out for good.

The address is the client's: X-Forwarded-For as the TRUSTED_PROXY_COUNT proxies in front saw it
(ProxyFix, in create_app), never the proxy's own.

A sign-in takes its place in each count before its password is checked, and gives it back when the
password was right or a count refused it: a count holds the failures, and the sign-ins being checked
right now. So concurrent guesses cannot all pass a check made before any of them was counted: at most
the limit are ever checked, however many workers answer them. The email is counted as typed (trimmed,
lower case), an account or not, so the answer tells nothing about which accounts exist.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

from flask import current_app, request
from limits import parse_many
from werkzeug.exceptions import TooManyRequests

from inspect_app.extensions import limiter

# Each count: its setting, what the refusal says was too many, and whose it is (below).
COUNTS = (
    ("SIGNIN_FAILURE_LIMIT", "Too many failed sign-ins for this account from here", ("account", "address")),
    ("SIGNIN_ADDRESS_LIMIT", "Too many failed sign-ins from here", ("address",)),
    ("SIGNIN_ACCOUNT_LIMIT", "Too many failed sign-ins for this account", ("account",)),
)


class TooManyFailures(TooManyRequests):
    """A sign-in refused before its password was checked: says which count, and when to try again."""

    def __init__(self, what: str, wait_s: float) -> None:
        super().__init__(description=what, retry_after=max(1, math.ceil(wait_s)))


@dataclass(frozen=True)
class Taken:
    """One place taken in one count's window."""

    key: str
    window_s: int


def take(email: str) -> list[Taken]:
    """Count a sign-in about to have its password checked; TooManyFailures if a count is full."""
    if not current_app.config.get("RATELIMIT_ENABLED", True):
        return []
    whose = {"account": email.strip().lower()[:254], "address": request.remote_addr or "unknown"}
    storage, taken = limiter.storage, []
    for setting, what, parts in COUNTS:
        for limit in parse_many(current_app.config[setting]):
            place = Taken(limit.key_for("signin", *parts, *(whose[part] for part in parts)), limit.get_expiry())
            taken.append(place)
            if storage.incr(place.key, place.window_s) > limit.amount:
                wait_s = storage.get_expiry(place.key) - time.time()
                give_back(taken)
                raise TooManyFailures(what, wait_s)
    return taken


def give_back(taken: list[Taken]) -> None:
    """The sign-in was right (or refused unchecked): it is not a failure in any count."""
    for place in taken:
        limiter.storage.incr(place.key, place.window_s, amount=-1)
