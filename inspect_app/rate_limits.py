"""Rate-limit counters in the database: every worker of every app server counts the same requests.

The public /verify page (Flask-Limiter) and the sign-in throttle (accounts/throttle.py) keep their counts
in the storage RATELIMIT_STORAGE_URI names. `database://`, the default, is this one: a table of fixed-window
counters in the app's own database, so a limit holds however many gunicorn workers and app servers answer
(in each worker's memory, `memory://`, 4 workers let through 4 times the limit). No other service to run.

Each change of a count is one statement (INSERT ... ON CONFLICT DO UPDATE ... RETURNING), on its own
connection and committed at once: concurrent requests never lose a count, and a count holds whatever the
request's own transaction does afterwards. A window that has ended is started again by the next count;
windows ended long ago are removed now and then (`_sweep`).
"""
from __future__ import annotations

import time

from limits.storage import Storage
from sqlalchemy import Float, Integer, String, case, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Mapped, mapped_column

from inspect_app.extensions import db

# How often (per process) the windows that have ended are removed, and how many at a time.
SWEEP_EVERY_S = 600
SWEEP_BATCH = 1000


class RateLimitCounter(db.Model):
    """One limit's count in its current window (the key is the limiter's: what is limited, and for whom)."""

    __tablename__ = "rate_limit_counters"

    key: Mapped[str] = mapped_column(String(512), primary_key=True)
    count: Mapped[int] = mapped_column(Integer)
    # When the window ends, in seconds since the epoch: the limits library's own unit.
    expires_at: Mapped[float] = mapped_column(Float, index=True)


class DatabaseStorage(Storage):
    """The `limits` storage of `database://`: fixed-window counters in `rate_limit_counters`.

    It uses the database of the app in whose context it is called (`db.engine`).
    """

    STORAGE_SCHEME = ["database"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._next_sweep = 0.0

    @property
    def base_exceptions(self) -> type[Exception]:
        return SQLAlchemyError

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """Add `amount` (less than 0: give some back) to the count of `key`, starting a window of `expiry`
        seconds if there is none; the count after it, never below 0."""
        table = RateLimitCounter.__table__
        now = time.time()
        insert = (postgresql.insert if db.engine.dialect.name == "postgresql" else sqlite.insert)(table)
        ended = table.c.expires_at <= now
        statement = insert.values(key=key, count=max(amount, 0), expires_at=now + expiry).on_conflict_do_update(
            index_elements=[table.c.key],
            set_={"count": case((ended, max(amount, 0)), (table.c.count + amount < 0, 0),
                                else_=table.c.count + amount),
                  "expires_at": case((ended, now + expiry), else_=table.c.expires_at)},
        ).returning(table.c.count)
        with db.engine.begin() as connection:
            count = connection.execute(statement).scalar_one()
        self._sweep(now)
        return count

    def get(self, key: str) -> int:
        row = self._current(key)
        return row.count if row is not None else 0

    def get_expiry(self, key: str) -> float:
        row = self._current(key)
        return row.expires_at if row is not None else time.time()

    def check(self) -> bool:
        try:
            with db.engine.connect() as connection:
                connection.execute(select(1))
        except SQLAlchemyError:
            return False
        return True

    def reset(self) -> int | None:
        with db.engine.begin() as connection:
            return connection.execute(delete(RateLimitCounter.__table__)).rowcount

    def clear(self, key: str) -> None:
        table = RateLimitCounter.__table__
        with db.engine.begin() as connection:
            connection.execute(delete(table).where(table.c.key == key))

    def _current(self, key: str):
        table = RateLimitCounter.__table__
        with db.engine.connect() as connection:
            return connection.execute(select(table.c.count, table.c.expires_at)
                                      .where(table.c.key == key, table.c.expires_at > time.time())).first()

    def _sweep(self, now: float) -> None:
        """Every SWEEP_EVERY_S in this process, remove windows that have ended: an address that asked once
        would otherwise keep its row for good. Rows another transaction holds are left for the next sweep
        (SKIP LOCKED on PostgreSQL), so two processes sweeping at once never wait on each other."""
        if now < self._next_sweep:
            return
        self._next_sweep = now + SWEEP_EVERY_S
        table = RateLimitCounter.__table__
        ended = (select(table.c.key).where(table.c.expires_at <= now).limit(SWEEP_BATCH)
                 .with_for_update(skip_locked=True))
        with db.engine.begin() as connection:
            connection.execute(delete(table).where(table.c.key.in_(ended)))
