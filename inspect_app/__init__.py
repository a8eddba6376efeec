"""Stormwater field inspections: an offline-first Flask + HTMX app for Massachusetts towns."""
from __future__ import annotations

import gc
import os
from importlib import import_module
from pathlib import Path

from flask import Flask, redirect, url_for
from flask_login import current_user
from werkzeug.middleware.proxy_fix import ProxyFix

from inspect_app import config, rate_limits, read_commits, security  # noqa: F401  (rate_limits: the `database://` storage)
from inspect_app.extensions import csrf, db, htmx, limiter, login_manager

__version__ = "0.1.0"

# One package per domain, each with a `views.bp` blueprint.
DOMAINS = (
    "accounts", "stabilization", "reporting", "photos", "enforcement",
    "completion", "certifications", "weather", "documents", "offline", "conditions", "waivers", "transfer",
)
# The pages that gather several domains (inspect_app/pages/), each module with its `bp` blueprint.
PAGES = ("permit", "rainfall", "dashboard.views", "home", "mail")


def create_app(test_config: dict | None = None, *, commands: bool = True) -> Flask:
    """Make and configure the app; `commands=False` (wsgi.py: an app server) leaves out what only the `flask`
    command uses, `flask db` (see `register_migrations`), and is given the stored holidays first (below)."""
    app = Flask(__name__, instance_relative_config=True)
    os.makedirs(app.instance_path, exist_ok=True)
    app.config.from_mapping(config.from_environment(Path(app.instance_path)))
    if test_config:
        app.config.update(test_config)
    # An app server (wsgi.py, gunicorn) is production unless debugging or testing; `flask run` and the other
    # `flask` commands are not app servers (`make run` serves the demo with no setup).
    app.config["PUBLIC_URL"] = config.public_url(app.config.get("PUBLIC_URL"),
                                                 production=not (commands or app.debug or app.testing))
    config.check_blob_backend(app.config)
    config.check_mail(app.config)
    config.database_engine_options(app.config)
    if app.config["BLOB_BACKEND"] == "s3":
        # The S3 store and the AWS SDK, loaded once here: gunicorn's workers, forked from the master that made
        # the app, share them, instead of each loading them at its first file (an app on disk never does).
        import_module("inspect_app.blobs.s3")
    db.init_app(app)  # adds no request hook: `security.register` below is still the first
    read_commits.register(app)  # a teardown: it runs before Flask-SQLAlchemy's, which removes the session

    from inspect_app.profiles import load_profiles
    from inspect_app.schedule.holidays import give_stored_holidays

    if not commands:
        # An app server is given the holidays stored by `flask towns sync` before it checks the profiles'
        # holiday calendars, so it does not import the `holidays` package (about 13 MB of a worker, issue 18).
        with app.app_context():
            give_stored_holidays()

    # The built-in towns, plus any town made only of a TOML file in PROFILE_DIR.
    app.extensions["profiles"] = load_profiles(extra=app.config.get("PROFILE_DIR") or None)

    from inspect_app import models  # noqa: F401  (every table, for SQLAlchemy and Alembic)

    # First: after-request hooks run last-registered first, so this one sees the cookies every other
    # hook (Flask-Login's remember cookie) has set.
    security.register(app)
    if commands:
        register_migrations(app)
    login_manager.init_app(app)
    csrf.init_app(app)
    htmx.init_app(app)
    limiter.init_app(app)
    if app.config.get("TRUSTED_PROXY_COUNT"):
        # The client's address and scheme as the trusted proxies saw them (X-Forwarded-For, -Proto): the
        # sign-in and /verify limits count real clients, and https requests get Secure cookies. Not the
        # host: the proxy sends the Host header itself (docs/deploy/nginx.conf) and passes on whatever
        # X-Forwarded-Host a client made up.
        proxies = int(app.config["TRUSTED_PROXY_COUNT"])
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=0)

    from inspect_app import cli, errors, idempotency, inputs, templating
    from inspect_app.pages import template_globals

    for domain in DOMAINS:
        app.register_blueprint(import_module(f"inspect_app.{domain}.views").bp)
    app.register_blueprint(import_module("inspect_app.reporting.finding_views").bp)  # a report's findings
    for page in PAGES:
        app.register_blueprint(import_module(f"inspect_app.pages.{page}").bp)
    # The one place inspect_app names sync/: its tables and its blueprint.
    from sync import models as sync_models  # noqa: F401
    from sync.views import bp as sync_bp

    app.register_blueprint(sync_bp)
    app.register_blueprint(cli.bp)
    inputs.register(app)
    idempotency.register(app)  # after the CSRF check: a replay needs a valid token too
    app.register_blueprint(import_module("inspect_app.documents.views").public)  # /verify: no sign-in
    errors.register(app)
    templating.register(app, __version__)
    template_globals.register(app)
    import_module("inspect_app.weather.services").init_app(app)  # bounded meteostat lookups
    install_database_hooks()

    @app.get("/")
    def home():
        """Send people to their permits, or to the login page."""
        if not current_user.is_authenticated:
            return redirect(url_for("accounts.login"))
        if template_globals.allowed("permit.list_mine"):
            return redirect(url_for("permittee.my_permits"))
        return redirect(url_for("permits.index"))

    @app.get("/healthz")
    def health():
        """A plain liveness answer for load balancers and tests."""
        return {"ok": True, "version": __version__}

    return app


def freeze_startup_objects() -> None:
    """Once a server process has made its app: take every object alive now out of the garbage
    collector's rounds for good (gc.freeze).

    They live as long as the process anyway (modules, the app, SQLAlchemy's mappers and compiled
    statements). Left in, each full collection walks all of them again, and a request that keeps many
    objects alive for its length (a sync push of 200 operations) sets one off: about a fifth of a push's
    CPU. Frozen, a full collection walks only what was made since; and a collection in a worker forked
    from gunicorn's master (--preload) does not write to those objects, so their pages stay shared with
    the master. Called by wsgi.py (gunicorn's master, before it forks the workers) and by a bench that
    serves the app itself, once, after its setup.
    """
    gc.collect()  # garbage made while loading is freed, not frozen
    gc.freeze()


def install_database_hooks() -> None:
    """The database hooks, all installed here and in this order (each once per process).

    SQLAlchemy runs the listeners of one event in the order they were added, and each before-commit step
    needs the ones before it:

    1. the guards: whenever `create_all` makes the tables, the triggers that refuse to change what is
       final are made with them (audit/guards.py);
    2. the schedule: before commit, the open obligations of every permit the transaction changed are
       stored again (schedule/obligations.py);
    3. documents: before commit, what the transaction signed or issued is frozen, with audit entries of
       its own (documents/services.py);
    4. the audit log: no entry may change; last before commit, the transaction's entries are numbered
       and sealed under the commit-order lock, held for the commit alone (audit/models.py);
    5. held rows: every flush that writes is counted, so a page's one-statement answer of which tables
       hold a permit's rows is not used once the request has written (held_rows.py). It only counts.
    """
    from inspect_app import held_rows
    from inspect_app.audit import guards
    from inspect_app.audit import models as audit_log
    from inspect_app.schedule import obligations
    from inspect_app.documents import services as documents

    guards.install(db.metadata)
    for install in (obligations.install, documents.install_freezing, audit_log.install_session_hooks,
                    held_rows.install):
        install()


def register_migrations(app: Flask) -> None:
    """`flask db` (Alembic, through Flask-Migrate) on the migrations folder.

    Flask-Migrate is imported here, not with this module: it brings Alembic and Mako (about 11 MB per
    process), which an app server's worker never uses (issue 18), so wsgi.py makes the app without it.
    """
    from flask_migrate import Migrate  # noqa: PLC0415  (third-party, only for the `flask` command)

    Migrate(app, db, directory=str(Path(__file__).parent.parent / "migrations"), render_as_batch=True,
            compare_type=True)
