"""Settings: defaults for the embedded (SQLite, local disk) mode, overridden by environment variables."""
from __future__ import annotations

import datetime as dt
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit


def secret_key(instance_path: Path) -> str:
    """The SECRET_KEY from the environment, else one made once and kept in the instance folder."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    key_file = instance_path / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_hex(32))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


# Where documents link when PUBLIC_URL is not set, anywhere but on a production app server: where `make run`
# (`flask run`) serves, so the demo's documents open their /verify page on this machine.
DEVELOPMENT_PUBLIC_URL = "http://127.0.0.1:5000"


class SettingError(RuntimeError):
    """A setting the app cannot start without, or cannot read; the message says what to set."""


def public_url(configured: str | None, *, production: bool) -> str:
    """The address documents link to: PUBLIC_URL checked (an http(s) address with a host, nothing after the
    path), or, outside production, DEVELOPMENT_PUBLIC_URL. A production app server without it refuses to start:
    a frozen document's verify link is permanent, and must not come from whatever Host a request named."""
    if not (configured or "").strip():
        if production:
            raise SettingError(
                "PUBLIC_URL is not set. A production app server prints the town's public address on every frozen "
                "document (its /verify link and QR code) and never takes it from a request. Set it in "
                "/etc/inspect-app/inspect-app.env, e.g. PUBLIC_URL=https://inspections.example-town.gov "
                "(docs/deploy.md).")
        return DEVELOPMENT_PUBLIC_URL
    parts = urlsplit(configured.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise SettingError(f"PUBLIC_URL must be the site's public address, like https://inspections.example-town.gov "
                           f"(http or https, a host, no query): {configured!r} is not.")
    return configured.strip().rstrip("/")


BLOB_BACKENDS = ("disk", "s3")
SMTP_SECURITIES = ("none", "starttls", "ssl")


def check_mail(settings) -> None:
    """SettingError for a way of securing the mail server's connection that is none of SMTP_SECURITIES."""
    if settings.get("SMTP_SECURITY", "none") not in SMTP_SECURITIES:
        raise SettingError(f"SMTP_SECURITY must be one of {', '.join(SMTP_SECURITIES)}: "
                           f"{settings.get('SMTP_SECURITY')!r} is not.")


def check_blob_backend(settings) -> None:
    """SettingError unless the blob settings name a store the app can use: a known BLOB_BACKEND, and for
    "s3" a bucket, and both or neither of the access key and its secret."""
    backend = settings.get("BLOB_BACKEND") or "disk"
    if backend not in BLOB_BACKENDS:
        raise SettingError(f"BLOB_BACKEND must be one of {', '.join(BLOB_BACKENDS)}: {backend!r} is not.")
    if backend != "s3":
        return
    if not settings.get("S3_BUCKET"):
        raise SettingError("BLOB_BACKEND=s3 needs S3_BUCKET, the name of the (private) bucket that keeps the "
                           "files (docs/deploy.md, *Blob storage*).")
    if bool(settings.get("S3_ACCESS_KEY_ID")) != bool(settings.get("S3_SECRET_ACCESS_KEY")):
        raise SettingError("Set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither (the SDK then finds "
                           "the credentials itself, e.g. an instance's IAM role).")
    if settings.get("S3_ADDRESSING_STYLE", "auto") not in ("auto", "path", "virtual"):
        raise SettingError("S3_ADDRESSING_STYLE must be auto, path or virtual.")


def database_engine_options(settings) -> None:
    """PostgreSQL sessions keep time in UTC, whatever the server's own TimeZone setting.

    Every time is stored as a `timestamp with time zone` and read back as an aware UTC datetime
    (`types.UTCDateTime`), and no statement works out a day or an hour in the session's zone: the town's local
    days are worked out in Python (`LOCAL_TZ`, a profile's timezone). So the zone changes no answer; it changes
    what reading a time costs. psycopg gives each time in the session's zone: in UTC as Python's own
    `datetime.UTC`, which `UTCDateTime` and the rules' facts then keep as it is; in any other zone (a server set to
    'Etc/UTC', the Debian default, or to America/New_York) as a `ZoneInfo` time each of them converts again.
    A setting given in the database address (`?options=...`) is left as it is.
    """
    uri = str(settings.get("SQLALCHEMY_DATABASE_URI") or "")
    if not uri.startswith("postgresql") or "options=" in uri:
        return
    engine = settings.setdefault("SQLALCHEMY_ENGINE_OPTIONS", {})
    engine.setdefault("connect_args", {}).setdefault("options", "-c TimeZone=UTC")


def from_environment(instance_path: Path) -> dict:
    """Settings for this process: SQLite in the instance folder unless DATABASE_URL says otherwise."""
    database_url = os.environ.get("DATABASE_URL") or f"sqlite:///{instance_path / 'inspect.sqlite3'}"
    if database_url.startswith("postgresql://"):
        database_url = "postgresql+psycopg://" + database_url.removeprefix("postgresql://")
    return {
        "SECRET_KEY": secret_key(instance_path),
        "SQLALCHEMY_DATABASE_URI": database_url,
        # Where photos, signatures and documents are kept (docs/deploy.md, *Blob storage*): "disk", a folder
        # (BLOB_ROOT) every app server mounts, or "s3", a bucket of an S3-compatible service (AWS S3, MinIO,
        # Ceph RGW) that app servers sharing no disk all reach. S3_ENDPOINT_URL is left empty for AWS itself;
        # with no access key the SDK's own chain is used (an instance's IAM role, AWS_* variables).
        "BLOB_BACKEND": (os.environ.get("BLOB_BACKEND") or "disk").strip().lower(),
        "BLOB_ROOT": os.environ.get("BLOB_ROOT") or str(instance_path / "blobs"),
        "S3_BUCKET": os.environ.get("S3_BUCKET") or None,
        "S3_ENDPOINT_URL": os.environ.get("S3_ENDPOINT_URL") or None,
        "S3_REGION": os.environ.get("S3_REGION") or None,
        "S3_ACCESS_KEY_ID": os.environ.get("S3_ACCESS_KEY_ID") or None,
        "S3_SECRET_ACCESS_KEY": os.environ.get("S3_SECRET_ACCESS_KEY") or None,
        # "path" for a service reached by an address with no bucket subdomains (MinIO, Ceph RGW, often);
        # "virtual" or "auto" (the SDK's choice) for AWS.
        "S3_ADDRESSING_STYLE": os.environ.get("S3_ADDRESSING_STYLE") or "auto",
        # A folder of further towns, each a TOML profile, added to the built-in ones (README; profiles/__init__.py).
        "PROFILE_DIR": os.environ.get("PROFILE_DIR") or None,
        # Weather: meteostat's own endpoints unless set (tests point it at 127.0.0.1).
        "WEATHER_ENDPOINT": os.environ.get("WEATHER_ENDPOINT"),
        "WEATHER_DEADLINE_S": float(os.environ.get("WEATHER_DEADLINE_S", "3")),
        # Mail: with no SMTP host, messages are only stored and shown on the sent mail page.
        "SMTP_HOST": os.environ.get("SMTP_HOST"),
        "SMTP_PORT": int(os.environ.get("SMTP_PORT", "25")),
        # A mail service that asks for a login (Microsoft 365, Google Workspace: port 587, STARTTLS): its account,
        # and how the connection is secured: "starttls", "ssl" (port 465) or "none" (a relay on the town's network).
        "SMTP_USERNAME": os.environ.get("SMTP_USERNAME") or None,
        "SMTP_PASSWORD": os.environ.get("SMTP_PASSWORD") or None,
        "SMTP_SECURITY": (os.environ.get("SMTP_SECURITY") or "none").strip().lower(),
        "MAIL_FROM": os.environ.get("MAIL_FROM", "inspections@localhost"),
        # The town's public address, printed (and QR-coded) on frozen documents for /verify/<id>; never taken
        # from a request (its Host header is the client's to write). Required of a production app server
        # (`public_url`); elsewhere it defaults to DEVELOPMENT_PUBLIC_URL.
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
        # A sign-in ends after this long with no request from it (security.SessionInterface), unless the
        # person ticked "Keep me signed in" (the remember-me cookie then signs them in again).
        "SESSION_IDLE_TIMEOUT": dt.timedelta(hours=float(os.environ.get("SESSION_IDLE_TIMEOUT_HOURS", "12"))),
        # "Keep me signed in" (a choice at sign-in, off by default) lasts two weeks, not Flask-Login's year;
        # never readable by scripts.
        "REMEMBER_COOKIE_DURATION": dt.timedelta(days=14),
        "REMEMBER_COOKIE_HTTPONLY": True,
        "REMEMBER_COOKIE_SAMESITE": "Lax",
        # How many proxies in front of the app set X-Forwarded-For/-Proto (0: trust none, the app is reached
        # directly). Behind the town's TLS proxy, 1 (docs/deploy/inspect-app.env): the client's address is
        # the one the proxy adds to X-Forwarded-For (what the sign-in and /verify limits count), and requests
        # it forwarded as https get Secure cookies.
        "TRUSTED_PROXY_COUNT": int(os.environ.get("TRUSTED_PROXY_COUNT", "0")),
        # Sign-in throttle (accounts/throttle.py): failed sign-ins allowed for one account from one address,
        # from one address whatever the account, and for one account from anywhere (slower than one
        # address can go, so failures from one address never refuse the owner elsewhere).
        "SIGNIN_FAILURE_LIMIT": os.environ.get("SIGNIN_FAILURE_LIMIT", "5 per 15 minutes"),
        "SIGNIN_ADDRESS_LIMIT": os.environ.get("SIGNIN_ADDRESS_LIMIT", "20 per 15 minutes"),
        "SIGNIN_ACCOUNT_LIMIT": os.environ.get("SIGNIN_ACCOUNT_LIMIT", "30 per hour"),
        # The public /verify page: requests allowed per address.
        "VERIFY_LIMIT": os.environ.get("VERIFY_LIMIT", "30 per minute; 300 per hour"),
        # Where the limits count: the app's database (inspect_app/rate_limits.py), shared by every worker
        # and app server. `memory://` counts in each worker process alone.
        "RATELIMIT_STORAGE_URI": os.environ.get("RATELIMIT_STORAGE_URI", "database://"),
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
