"""Fixtures: an app on a real database (SQLite by default, PostgreSQL when TEST_DATABASE_URL is set).

The schema is made once per test session; each test then starts from empty tables.
"""
from __future__ import annotations

import contextvars
import os
import socket
import struct
import sys
import threading
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from playwright.sync_api import expect
from sqlalchemy import text
from werkzeug.routing import Rule

sys.path.insert(0, str(Path(__file__).parent))

from inspect_app import create_app, freeze_startup_objects  # noqa: E402
from inspect_app.audit import guards  # noqa: E402
from inspect_app.extensions import db, limiter  # noqa: E402
from inspect_app.weather import source  # noqa: E402
from tests import builders  # noqa: E402
from tests.databases import worker_database  # noqa: E402
from tests.s3_server import blob_backend, s3_app, s3_server, s3_settings  # noqa: E402,F401  (fixtures: BLOB_BACKEND=s3)


# Playwright's `expect` gives up after 5 s, its actions and waits after 30 s: on a loaded two-core machine a
# page held by the service worker, or an outbox sending photos, can take longer than 5 s. A check that holds
# returns at once, so only a failing run waits longer.
expect.set_options(timeout=30_000)


def _one_url_builder_per_rule() -> None:
    """Every test makes its own app, and Werkzeug writes and compiles the Python of two URL builders for each of
    the app's rules: about 0.15 s an app, more than a short test takes. The builder's code depends only on the
    rule (its text, parts and defaults' names) and it is handed the rule it builds for, so the first app's serve
    every later app of the session. A rule whose defaults fill its own parts gets its builder made as before."""
    make, made = Rule._compile_builder, {}

    def builder(self, append_unknown=True):
        defaults = self.defaults or {}
        if any(is_dynamic and data in defaults for is_dynamic, data in self._trace):
            return make(self, append_unknown)
        key = (self.rule, tuple(self._trace), tuple(defaults), append_unknown)
        if key not in made:
            made[key] = make(self, append_unknown)
        return made[key]

    Rule._compile_builder = builder


_one_url_builder_per_rule()


def _database_url(tmp_root: Path) -> str:
    return worker_database("inspect_test") or f"sqlite:///{tmp_root / 'test.sqlite3'}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    """The browser tests run one after another on one worker (`--dist loadgroup`): two Chromiums, each with
    its live server, on a 2-core machine make each other's pages slow enough to look offline (the service
    worker gives the server 4 s). First: xdist names a test's group from its marks in this same hook."""
    for item in items:
        if item.get_closest_marker("browser") or "page" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("browser"))


def pytest_collection_finish(session) -> None:
    """What is loaded by now lives as long as the test process: out of the collector's rounds, as an app
    server's start-up objects are (wsgi.py). Else each collection after a PDF (documents/services.py) walks
    every module and collected test again: a quarter of a second, eleven times for the demo."""
    freeze_startup_objects()


_TESTS_BETWEEN_FREEZES = 50
_tests_run = 0


def pytest_runtest_logfinish(nodeid, location) -> None:
    """So again every 50 tests: what outlives a test (reports, SQLAlchemy's caches; about 1,800 objects a test)
    would otherwise make each later collection walk all the tests before it."""
    global _tests_run
    _tests_run += 1
    if _tests_run % _TESTS_BETWEEN_FREEZES == 0:
        freeze_startup_objects()


def pytest_report_header(config) -> str:
    url = os.environ.get("TEST_DATABASE_URL", "")
    return f"database: {'PostgreSQL' if url.startswith('postgresql') else 'SQLite'}"


@pytest.fixture(scope="session")
def database_url(tmp_path_factory) -> str:
    """Make the schema of an empty database once per session and give its URL.

    The schema comes from the models; tests/test_migrations.py proves the migrations make the same.
    """
    root = tmp_path_factory.mktemp("db")
    url = _database_url(root)
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": url,
                      "BLOB_ROOT": str(root / "blobs")})
    with app.app_context():
        db.drop_all()
        with db.engine.begin() as connection:
            connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
        db.create_all()
        db.engine.dispose()
    return url


def _empty_tables() -> None:
    tables = [t.name for t in db.metadata.sorted_tables]
    with db.engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # DELETE, not TRUNCATE: a test leaves a few rows, and TRUNCATE makes every table's files anew (about
            # a tenth of a second for all of them, each test). With the session as a replica no trigger fires:
            # neither the guards, which refuse to delete what is final, nor the foreign keys' checks.
            connection.execute(text("SET LOCAL session_replication_role = replica"))
            connection.execute(text("; ".join(f"DELETE FROM {name}" for name in tables)))
            for (sequence,) in connection.execute(text("SELECT sequencename FROM pg_sequences")):
                connection.execute(text(f"ALTER SEQUENCE {sequence} RESTART"))
        else:
            # The guards refuse to delete what is final; TRUNCATE (above) fires no row triggers, DELETE does.
            guards.drop(connection)
            for name in reversed(tables):  # children first, so foreign keys stay checked
                connection.execute(text(f"DELETE FROM {name}"))
            guards.create(connection, db.metadata)


_ENGINES: dict[str, object] = {}


def _share_engine(app) -> None:
    """Each test's app gets the test process's one engine for its database, as an app server's requests all
    share theirs. An engine keeps the SQL it compiled: with an engine of its own, each test compiled the same
    statements again, about a third of the time a test took to make its records. The pool is still emptied
    after each test (`dispose`), so no connection outlives its test."""
    engines = db._app_engines[app]  # Flask-SQLAlchemy's engines of this app, by bind (None: the default)
    kept = _ENGINES.setdefault(app.config["SQLALCHEMY_DATABASE_URI"], engines[None])
    if kept is not engines[None]:
        engines[None].dispose()
        engines[None] = kept


class IsolatedClient(FlaskClient):
    """Each request runs in its own app context, as in production.

    The test itself holds an app context (to use `db.session`); without this a request would share it,
    and with it the test's database session and Flask-Login's `g`: a view that forgot to commit would
    still look right to the test.
    """

    def open(self, *args, **kwargs):
        return contextvars.Context().run(super().open, *args, **kwargs)


@pytest.fixture
def app(database_url, tmp_path):
    """A fresh app on empty tables, with its own blob folder."""
    app = create_app({
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": database_url,
        "BLOB_ROOT": str(tmp_path / "blobs"),
        "SERVER_NAME": None,
        "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
        # The outside weather service is unreachable unless a test serves a fake one on 127.0.0.1.
        "WEATHER_ENDPOINT": "http://127.0.0.1:9",
        # No map tiles from outside: a test that wants tiles serves them on 127.0.0.1 (tests/maps_tiles.py).
        "MAP_TILE_URL": "",
        # A page of this server on a loaded machine can take longer than the worker's 4 s (the report page
        # looks up its weather first): the worker would answer from the device and the test see "Saved on
        # this device". No test needs it to give up on a live server sooner: a stopped one refuses at once,
        # an offline browser is not asked (tests/offline/test_app_shell_browser.py tests the 4 s itself).
        "OFFLINE_SERVER_TIMEOUT_MS": 60_000,
    })
    app.test_client_class = IsolatedClient
    _share_engine(app)
    with app.app_context():
        _empty_tables()
        limiter.reset()  # no failures counted from an earlier test (the counters' table is emptied above too)
        yield app
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def make(app):
    """Factories for records (see tests/factories.py), bound to this test's app."""
    import factories

    return factories.Factories()


@pytest.fixture
def signed_in(client):
    """`signed_in(user)` gives a test client signed in as `user`."""
    import factories

    return lambda user=None: factories.SignedIn(client, user)


class InFlight:
    """A live server's app, counting the requests it is answering. A request's thread outlives the server's
    shutdown, and one still writing (a browser's last autosave) once deadlocked with the next test emptying the
    tables: a server's fixture waits for its requests to end (`wait`) before the next test begins."""

    def __init__(self, app) -> None:
        self.app, self.answering, self.closed, self.changed = app, 0, False, threading.Condition()

    def __call__(self, environ, start_response):
        with self.changed:
            if self.closed:  # a request on a connection kept open past the end: answered by no app
                start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
                return [b"The test's server has stopped."]
            self.answering += 1
        try:
            return self.app(environ, start_response)  # (Flask ends the request's context before it returns)
        finally:
            with self.changed:
                self.answering -= 1
                self.changed.notify_all()

    def wait(self, timeout: float = 10) -> None:
        """Answer no more requests; wait for those being answered to end."""
        with self.changed:
            self.closed = True
            self.changed.wait_for(lambda: self.answering == 0, timeout)


@pytest.fixture
def live_server(app):
    """The test's app served by a real HTTP server on 127.0.0.1 (a free port), stopped after the test."""
    from werkzeug.serving import make_server

    requests = InFlight(app)
    server = make_server("127.0.0.1", 0, requests, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_port}"
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(timeout=5)
        server.server_close()
        requests.wait()


def _chromium() -> str:
    for candidate in ("/usr/lib/chromium/chromium", "/usr/bin/chromium"):
        if Path(candidate).exists():
            return candidate
    raise RuntimeError("Debian's chromium is not installed: `make test` installs it")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's Chromium, headless, never reaching outside hosts (see docs of the offline tests)."""
    return {
        **browser_type_launch_args,
        "executable_path": _chromium(),
        "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    }


@pytest.fixture
def sign_in(live_server):
    """`sign_in(page, user)` logs a browser page in through the real login form."""
    from browser_pages import signed_in_page

    return lambda page, user, **kwargs: signed_in_page(page, live_server.url, user, **kwargs)


class RestartableServer:
    """The app on a real HTTP server that a test can stop and start again on the SAME port.

    A new port would be a new origin (no service worker, cache or IndexedDB), so restarts keep it.
    """

    def __init__(self, app):
        self.app = app
        self.port = 0
        self.server = None
        self.thread = None
        self.running = False
        self.requests = InFlight(self._serve)

    def _serve(self, environ, start_response):
        """The app; once stopped, a request on a connection the browser kept open (keep-alive outlives the
        listening socket's close) finds the server gone: the connection is reset, as a server that is down does.
        Else a browser "offline" could still be answered by the app, depending on its connection reuse."""
        if not self.running:
            connection = environ["werkzeug.socket"]
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.shutdown(socket.SHUT_RDWR)
            start_response("503 Service Unavailable", [])
            return []
        return self.app(environ, start_response)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        from werkzeug.serving import make_server

        self.server = make_server("127.0.0.1", self.port, self.requests, threaded=True)
        self.port = self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.running = True
        self.thread.start()

    def stop(self) -> None:
        self.running = False
        if self.server is not None:
            self.server.shutdown()
            self.thread.join(timeout=5)
            self.server.server_close()
            self.server = None


@pytest.fixture
def server(app):
    """A restartable live server (see RestartableServer); always stopped after the test."""
    server = RestartableServer(app)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        server.requests.wait()


@pytest.fixture
def weather_offline(app, tmp_path):
    """The weather service is a closed port on 127.0.0.1: lookups fail at once and weather stays pending."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    app.config["WEATHER_ENDPOINT"] = closed
    source.configure(closed, tmp_path / "meteostat-cache", timeout_s=0.5)


@pytest.fixture
def smtp_server(app):
    """A real SMTP server on a free loopback port that the app sends to: the messages it received."""
    with builders.smtp_server() as (port, received):
        app.config.update(SMTP_HOST="127.0.0.1", SMTP_PORT=port)
        yield received
