"""Settings: defaults for the embedded (SQLite, local disk) mode, overridden by environment variables."""
from __future__ import annotations

import datetime as dt
import os
import secrets
from pathlib import Path


def secret_key(instance_path: Path) -> str:
    """The SECRET_KEY from the environment, else one made once and kept in the instance folder."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    key_file = instance_path / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_hex(32))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


def from_environment(instance_path: Path) -> dict:
    """Settings for this process: SQLite in the instance folder unless DATABASE_URL says otherwise."""
    database_url = os.environ.get("DATABASE_URL") or f"sqlite:///{instance_path / 'inspect.sqlite3'}"
    if database_url.startswith("postgresql://"):
        database_url = "postgresql+psycopg://" + database_url.removeprefix("postgresql://")
    return {
        "SECRET_KEY": secret_key(instance_path),
        "SQLALCHEMY_DATABASE_URI": database_url,
        "BLOB_ROOT": os.environ.get("BLOB_ROOT") or str(instance_path / "blobs"),
        # A folder of further towns, each a TOML profile, added to the built-in ones (README; profiles/__init__.py).
        "PROFILE_DIR": os.environ.get("PROFILE_DIR") or None,
        # Weather: meteostat's own endpoints unless set (tests point it at 127.0.0.1).
        "WEATHER_ENDPOINT": os.environ.get("WEATHER_ENDPOINT"),
        "WEATHER_DEADLINE_S": float(os.environ.get("WEATHER_DEADLINE_S", "3")),
        # Mail: with no SMTP host, messages are only stored and shown on the sent mail page.
        "SMTP_HOST": os.environ.get("SMTP_HOST"),
        "SMTP_PORT": int(os.environ.get("SMTP_PORT", "25")),
        "MAIL_FROM": os.environ.get("MAIL_FROM", "inspections@localhost"),
        # The town's public address, printed (and QR-coded) on frozen documents for /verify/<id>; without it,
        # the address of the request that froze the document (a document frozen by a command gets a path only).
        "PUBLIC_URL": os.environ.get("PUBLIC_URL"),
        # Where `flask audit anchor` (run daily from cron) mails the audit chain's head, outside the database.
        "AUDIT_ANCHOR_EMAIL": os.environ.get("AUDIT_ANCHOR_EMAIL"),
        # Map tiles ({z}/{x}/{y}) and their attribution; empty: no tiles, markers on a plain grid with a scale.
        "MAP_TILE_URL": os.environ.get("MAP_TILE_URL", "https://tile.openstreetmap.org/{z}/{x}/{y}.png"),
        "MAP_TILE_ATTRIBUTION": os.environ.get(
            "MAP_TILE_ATTRIBUTION",
            '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors'),
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_HTTPONLY": True,
        # "Remember me" lasts two weeks, not Flask-Login's year; never readable by scripts.
        "REMEMBER_COOKIE_DURATION": dt.timedelta(days=14),
        "REMEMBER_COOKIE_HTTPONLY": True,
        "REMEMBER_COOKIE_SAMESITE": "Lax",
        # How many proxies in front of the app set X-Forwarded-For/-Proto (0: trust none). Behind one
        # TLS proxy, set 1: requests it forwarded as https get Secure cookies.
        "TRUSTED_PROXY_COUNT": int(os.environ.get("TRUSTED_PROXY_COUNT", "0")),
        # Sign-in throttle: failures allowed per account and per address in the window.
        "SIGNIN_FAILURE_LIMIT": os.environ.get("SIGNIN_FAILURE_LIMIT", "5 per 15 minutes"),
        # The public /verify page: requests allowed per address.
        "VERIFY_LIMIT": os.environ.get("VERIFY_LIMIT", "30 per minute; 300 per hour"),
        "RATELIMIT_STORAGE_URI": os.environ.get("RATELIMIT_STORAGE_URI", "memory://"),
        "RATELIMIT_HEADERS_ENABLED": True,
        "WTF_CSRF_TIME_LIMIT": None,
        # How long the page answering a form post with an Idempotency-Key is kept (`flask idempotency expire`).
        # It is shown only when the post was applied but its answer never reached the device: the outbox
        # sends it again as soon as the device is online and signed in, so 30 days covers a tablet left off
        # for weeks, twice over a "remember me" sign-in (14 days). The key itself is kept for good: a post
        # sent again later is still applied once, and answers its first status with no page.
        "IDEMPOTENCY_RETENTION_DAYS": int(os.environ.get("IDEMPOTENCY_RETENTION_DAYS", "30")),
        "MAX_CONTENT_LENGTH": 64 * 1024 * 1024,
        # How long the service worker waits for this server before it counts it as gone and answers from the
        # device (a held page, or the post kept in the outbox); unset: the worker's own 4 s (static/sw.js).
        "OFFLINE_SERVER_TIMEOUT_MS": int(os.environ["OFFLINE_SERVER_TIMEOUT_MS"])
        if os.environ.get("OFFLINE_SERVER_TIMEOUT_MS") else None,
    }
