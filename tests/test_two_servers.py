"""Two app servers behind one database (docs/deploy.md): one device talks to both, and one of them dies. And
the sign-in and /verify limits, counted in the database, hold across gunicorn's workers behind the proxy.

Two real gunicorn instances on two ports of 127.0.0.1 share the test's PostgreSQL and one blob store, as two
machines behind the town's proxy share the database server and the blob storage: a folder both mount
(BLOB_ROOT), or an S3 bucket both reach (BLOB_BACKEND=s3, a real S3 server on 127.0.0.1: tests/s3_server.py). One device
sends its pushes, replays and the chunks of a resumable upload to either, in turn; one server is killed
(SIGKILL, no clean stop) with a push and a chunk on their way to it, and started again. Every operation
must be applied exactly once, and the blob must be stored whole, with its own SHA-256.
"""
from __future__ import annotations

import configparser
import datetime as dt
import hashlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import func, select

from factories import PASSWORD

from inspect_app.blobs.files import blob_store
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import utcnow
from bench.load import PRODUCTION_ENV, PRODUCTION_FLAGS
from sync.client import SyncClient, new_op
from sync.models import SyncOperation
from sync.services import create_device
from tests.s3_server import bucket_keys

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "docs" / "deploy" / "inspect-app.service"


def unit_environment() -> dict[str, str]:
    """The variables the systemd unit sets with its `Environment=` lines (configparser keeps only the last)."""
    return dict(line.removeprefix("Environment=").split("=", 1) for line in UNIT.read_text().splitlines()
                if line.startswith("Environment="))
CHUNK = 256 * 1024
STEPS = ("activity_ceased", "stabilization_initiated")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gunicorn:
    """`gunicorn --preload wsgi:app` (2 workers x 2 threads unless told, forked from a master that made the
    app, with one malloc arena and python -OO, as the deployment runs it) on a fixed port of 127.0.0.1,
    killable outright. With `access_log`, each request's line there starts with the pid of the worker that
    answered it."""

    def __init__(self, env: dict[str, str], workers: int = 2, threads: int = 2, access_log: Path | None = None) -> None:
        self.env = env | unit_environment()
        self.workers, self.threads, self.access_log = workers, threads, access_log
        self.port, self.process = free_port(), None
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        logging = ["--access-logfile", str(self.access_log), "--access-logformat", "%(p)s %(m)s %(U)s %(s)s"] \
            if self.access_log else []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--preload", "--workers", str(self.workers),
             "--threads", str(self.threads), "--bind", f"127.0.0.1:{self.port}", "--log-level", "warning",
             *logging, "wsgi:app"],
            cwd=ROOT, env=self.env, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn on port {self.port} did not start") from None
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL to the master and its workers at once, as when the machine dies."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


def send_without_reading(port: int, head: str, body: bytes) -> socket.socket:
    """Send a request (or the start of one) and leave the answer unread: the device loses it."""
    connection = socket.create_connection(("127.0.0.1", port))
    connection.sendall(head.encode() + b"\r\n\r\n" + body)
    return connection


@pytest.fixture(params=["disk", "s3"])
def servers(request, app, database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("two app servers share one PostgreSQL; SQLite is a database for one machine")
    # With S3, the servers (and this test, through its app) keep files in one bucket; the folder they are
    # also given must stay empty (s3_app checks).
    shared = {"BLOB_ROOT": app.config["BLOB_ROOT"], "BLOB_BACKEND": request.param}
    if request.param == "s3":
        request.getfixturevalue("s3_app")
        shared |= {name: value for name, value in app.config.items() if name.startswith("S3_") and value}
    env = os.environ | shared | {"DATABASE_URL": database_url, "SECRET_KEY": "two-servers-test",
                                 "PUBLIC_URL": "https://inspections.example-town.gov",
                                 "WEATHER_ENDPOINT": "http://127.0.0.1:9", "PYTHONPATH": str(ROOT)}
    pair = [Gunicorn(env), Gunicorn(env)]
    try:
        with ThreadPoolExecutor(2) as starting:  # both at once: each master makes the app on a core of its own
            list(starting.map(Gunicorn.start, pair))
        yield pair
    finally:
        for server in pair:
            server.kill()


def test_one_device_alternating_between_two_servers_one_killed_mid_upload(app, make, servers):
    first, second = servers
    inspector = make.user("inspector")
    since = utcnow() - dt.timedelta(days=2)
    permit = make.permit(inspectors=[inspector])
    areas = [permits.add_area(None, permit, f"Lot {n} pad", 1, since=since).id for n in range(4)]
    _device, token = create_device(None, inspector, "tablet")
    db.session.commit()
    # Eight batches; batch k moves each of the four areas on from revision k + 1.
    batches = [[new_op("area.status", area, {"status": STEPS[k % 2], "at": (since + dt.timedelta(minutes=k + 1)).isoformat()},
                       base_revision=k + 1) for area in areas] for k in range(8)]
    data = b"\xff\xd8\xff\xe0" + os.urandom(12 * CHUNK + 12345)  # begins as a JPEG, the type the client declares
    sha = hashlib.sha256(data).hexdigest()
    to = {server: SyncClient(server.url, token, backoff_s=0.05) for server in servers}

    def push(server, batch, expected: set[str]) -> None:
        statuses = {r["status"] for r in to[server].push(batch)}
        assert statuses <= expected, statuses

    def put_chunk(server, offset: int) -> int:
        answer = to[server]._json("PUT", f"/sync/blobs/{sha}", data[offset:offset + CHUNK], ok=(200,),
                                  headers={"Upload-Offset": str(offset), "Content-Type": "application/octet-stream"})
        return answer["received"]

    offset = 0
    for k in range(3):  # a push to one server, its replay to the other, a chunk to each
        push(servers[k % 2], batches[k], {"applied"})
        push(servers[(k + 1) % 2], batches[k], {"duplicate"})
        offset = put_chunk(servers[k % 2], offset)
        offset = put_chunk(servers[(k + 1) % 2], offset)
    assert offset == 6 * CHUNK

    # Batch 3 and half of the next chunk are on their way to the first server when it dies.
    body = json.dumps({"ops": batches[3]}).encode()
    in_flight = [
        send_without_reading(first.port, f"POST /sync/push HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}"
                             f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}", body),
        send_without_reading(first.port, f"PUT /sync/blobs/{sha} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                             f"{token}\r\nUpload-Offset: {offset}\r\nContent-Type: application/octet-stream\r\n"
                             f"Content-Length: {CHUNK}", data[offset:offset + CHUNK // 2]),
    ]
    time.sleep(0.3)
    first.kill()
    for connection in in_flight:
        connection.close()

    # The device never heard back: it sends batch 3 again, to the server that is up, and asks it
    # where the upload stands. Whether or not the dead server committed the batch, each op counts once.
    push(second, batches[3], {"applied", "duplicate"})
    offset = to[second].blob_status(sha)["received"]
    assert offset == 6 * CHUNK  # the half chunk was never acknowledged, so it is not kept
    first.start()
    for k in range(4, 8):
        push(servers[k % 2], batches[k], {"applied"})
        push(servers[(k + 1) % 2], batches[k], {"duplicate"})
        offset = put_chunk(servers[k % 2], offset)
        offset = put_chunk(servers[(k + 1) % 2], offset)
    while offset < len(data):
        offset = put_chunk(first, offset)
    assert to[first]._json("POST", f"/sync/blobs/{sha}/complete", {"content_type": "image/jpeg"})["complete"]
    assert to[second]._json("POST", f"/sync/blobs/{sha}/complete", {"content_type": "image/jpeg"})["complete"]
    everything = [op for batch in batches for op in batch]
    assert {r["status"] for r in to[second].push(everything)} == {"duplicate"}

    # Exactly once: one stored operation each, all applied; one status event per op on each area.
    db.session.expire_all()
    assert db.session.scalar(select(func.count()).select_from(SyncOperation)) == len(everything)
    assert set(db.session.scalars(select(SyncOperation.status))) == {"applied"}
    for area_id in areas:
        area = db.session.get(DisturbedArea, area_id)
        events = db.session.scalar(select(func.count()).where(AreaStatusEvent.area_id == area_id))
        assert (area.revision, events, area.status) == (9, 9, STEPS[7 % 2])
    # The blob whole and true, seen alike by both servers, and no chunk of it left behind.
    store = blob_store()
    assert store.read(sha) == data
    assert store.stored_sha256(sha) == sha
    assert store.received(sha) == len(data)
    assert [p for p in Path(app.config["BLOB_ROOT"]).rglob("*") if ".partial" in p.parts and p.is_file()] == []
    if app.config["BLOB_BACKEND"] == "s3":
        assert bucket_keys(app.config, "partial/") == []
    for server in servers:
        assert to[server].blob_status(sha) == {"sha256": sha, "received": len(data), "complete": True}


# --- the limits, shared by every worker, behind the documented proxy ------------------------------------

ENV_TEMPLATE = ROOT / "docs" / "deploy" / "inspect-app.env"


def env_template() -> dict[str, str]:
    """The settings of the deployment's env file (docs/deploy/inspect-app.env)."""
    return dict(line.split("=", 1) for line in ENV_TEMPLATE.read_text().splitlines()
                if line.strip() and not line.startswith("#"))


class ThroughTheProxy:
    """A browser at `address` reaching the app through the town's TLS proxy (nginx.conf): the proxy connects
    from its own address (here 127.0.0.1), says the request came over https, and adds the client's address
    to whatever X-Forwarded-For the client sent itself (`made_up`)."""

    def __init__(self, server: Gunicorn, address: str) -> None:
        self.server, self.address, self.cookie, self.token = server, address, "", ""

    def request(self, method: str, path: str, form: dict[str, str] | None = None, made_up: str = ""):
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        origin = f"https://127.0.0.1:{self.server.port}"
        headers = {"X-Forwarded-For": f"{made_up}, {self.address}" if made_up else self.address,
                   "X-Forwarded-Proto": "https", "Referer": f"{origin}/login", "Cookie": self.cookie}
        body = urllib.parse.urlencode(form) if form is not None else None
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, path, body=body, headers=headers)
        answer = connection.getresponse()
        answer.text = answer.read().decode()
        connection.close()
        return answer

    def open_login(self) -> str:
        """The sign-in page, its session cookie kept (over https: Secure) and its CSRF token read; the
        session cookie as set."""
        answer = self.request("GET", "/login")
        session = next(c for c in answer.headers.get_all("Set-Cookie") if c.startswith("session="))
        self.cookie = session.split(";")[0]
        self.token = re.search(r'name="csrf-token" content="([^"]+)"', answer.text).group(1)
        return session

    def sign_in(self, email: str, password: str, made_up: str = ""):
        return self.request("POST", "/login", {"csrf_token": self.token, "email": email, "password": password},
                            made_up=made_up)


@pytest.fixture
def behind_the_proxy(app, database_url, tmp_path):
    """gunicorn as the deployment runs it (4 workers x 4 threads, the unit's environment) with the env
    template's proxy setting, on this test's database (SQLite or PostgreSQL): the limits' counters are in it."""
    env = os.environ | {"DATABASE_URL": database_url, "BLOB_ROOT": app.config["BLOB_ROOT"],
                        "SECRET_KEY": "limits-test", "WEATHER_ENDPOINT": "http://127.0.0.1:9", "PYTHONPATH": str(ROOT),
                        # as documented; the app's own default (0) where the template says nothing
                        "TRUSTED_PROXY_COUNT": env_template().get("TRUSTED_PROXY_COUNT", "0"),
                        "PUBLIC_URL": env_template()["PUBLIC_URL"],
                        "VERIFY_LIMIT": "5 per minute"}
    server = Gunicorn(env, workers=4, threads=4, access_log=tmp_path / "access.log")
    try:
        server.start()
        yield server
    finally:
        server.kill()


def test_the_sign_in_and_verify_limits_hold_across_workers_without_refusing_other_addresses(make, behind_the_proxy):
    """Issue 29: with the counts in each worker's memory, 19 of 40 wrong passwords for one account were checked
    with a limit of 5; and the limits counted the proxy's address, so failures from anyone refused everyone."""
    server = behind_the_proxy
    email = make.user("agent").email
    guesser = ThroughTheProxy(server, "203.0.113.66")
    # Over https through the trusted proxy, the session cookie is Secure (issue 29, 6 (d)).
    assert "Secure" in guesser.open_login()
    # 40 wrong passwords at once, each with a made-up X-Forwarded-For of its own before the proxy's.
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda n: guesser.sign_in(email, "not the password", made_up=f"192.0.2.{n}"),
                                range(40)))
    statuses = [answer.status for answer in answers]
    assert statuses.count(422) == 5 and statuses.count(429) == 35, statuses  # 5 passwords checked, no more
    assert all("Email or password is not right." in a.text for a in answers if a.status == 422)
    workers = {line.split()[0] for line in server.access_log.read_text().splitlines() if " /login " in line}
    assert len(workers) >= 2, workers  # the guesses were answered by several workers
    # The right password from that address waits for the window; from another address the owner signs in.
    assert guesser.sign_in(email, PASSWORD).status == 429
    owner = ThroughTheProxy(server, "198.51.100.7")
    owner.open_login()
    signed_in = owner.sign_in(email, PASSWORD)
    assert signed_in.status == 303
    assert all("Secure" in cookie for cookie in signed_in.headers.get_all("Set-Cookie"))
    # The public /verify page: 5 a minute from one address (this test's setting), across the workers too.
    reader = ThroughTheProxy(server, "203.0.113.80")
    with ThreadPoolExecutor(12) as pool:
        verified = list(pool.map(lambda _: reader.request("GET", f"/verify/{uuid.uuid4()}").status, range(12)))
    assert sorted(verified) == [404] * 5 + [429] * 7, verified
    assert ThroughTheProxy(server, "203.0.113.81").request("GET", f"/verify/{uuid.uuid4()}").status == 404


# --- the deployment files of docs/deploy.md ---------------------------------------------------------

def nginx_blocks(text: str) -> dict[str, list[str]]:
    """A small reader of nginx's syntax: each block's path (e.g. 'http/upstream inspect') -> its directives.

    Raises ValueError on unbalanced braces or a directive not ended by ';', as `nginx -t` would.
    """
    tokens = re.findall(r"#[^\n]*|\"[^\"]*\"|'[^']*'|[{};]|[^\s{};]+", text)
    blocks: dict[str, list[str]] = {"": []}
    stack, words = [""], []
    for token in tokens:
        if token.startswith("#"):
            continue
        if token == "{":
            path = "/".join(filter(None, [stack[-1], " ".join(words)]))
            stack.append(path)
            blocks.setdefault(path, [])
            words = []
        elif token == ";":
            if not words:
                raise ValueError("an empty directive")
            blocks[stack[-1]].append(" ".join(words))
            words = []
        elif token == "}":
            if words or len(stack) == 1:
                raise ValueError(f"unbalanced '}}' after {words}")
            stack.pop()
        else:
            words.append(token)
    if words or len(stack) != 1:
        raise ValueError("the file ends inside a block or a directive")
    return blocks


def test_the_proxy_configuration_parses_and_balances_two_app_servers():
    blocks = nginx_blocks((ROOT / "docs" / "deploy" / "nginx.conf").read_text())
    upstream = next(v for k, v in blocks.items() if k.endswith("upstream inspect_app"))
    assert len([d for d in upstream if d.startswith("server ")]) >= 2
    tls = next(v for k, v in blocks.items() if k.endswith("server") and "listen 443 ssl" in v)
    assert any(d.startswith("ssl_certificate ") for d in tls)
    assert "client_max_body_size 64m" in tls  # the app's MAX_CONTENT_LENGTH
    app_location = next(v for k, v in blocks.items() if k.endswith("location /"))
    assert "proxy_pass http://inspect_app" in app_location
    # The proxy closes an idle connection to an app server before gunicorn does: a request the proxy sends
    # on a connection gunicorn is closing would be lost.
    proxy_idle = next(int(d.split()[1].removesuffix("s")) for d in upstream if d.startswith("keepalive_timeout "))
    gunicorn_start = UNIT.read_text()
    assert int(re.search(r"--keep-alive (\d+)", gunicorn_start).group(1)) > proxy_idle
    assert "proxy_set_header X-Forwarded-Proto $scheme" in app_location
    plain = next(v for k, v in blocks.items() if k.endswith("server") and "listen 80" in v)
    assert any(d.startswith("return 301 https://") for d in plain)
    with pytest.raises(ValueError):
        nginx_blocks("http { server { listen 80 }")


def test_the_systemd_units_start_gunicorn_on_loopback_with_the_settings_the_app_reads():
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # systemd's keys are case-sensitive
    unit.read_string(UNIT.read_text())
    assert {"Unit", "Service", "Install"} <= set(unit.sections())
    start = unit["Service"]["ExecStart"]
    assert "gunicorn" in start and "wsgi:app" in start and "--bind 127.0.0.1:8000" in start
    # The load and memory benches run gunicorn with the unit's flags, so they measure what a town runs
    # (--preload among them: workers forked from a master that made the app).
    words = start.split()
    assert "--preload" in PRODUCTION_FLAGS
    for at, flag in enumerate(PRODUCTION_FLAGS):
        if flag.startswith("--"):
            assert flag in words, flag
            value = PRODUCTION_FLAGS[at + 1] if at + 1 < len(PRODUCTION_FLAGS) else ""
            if not value.startswith("--"):
                assert words[words.index(flag) + 1] == value, flag
    assert PRODUCTION_ENV and PRODUCTION_ENV.items() <= unit_environment().items(), (PRODUCTION_ENV, unit_environment())
    environment_file = unit["Service"]["EnvironmentFile"]
    settings = (ROOT / "docs" / "deploy" / "inspect-app.env").read_text()
    assert environment_file.endswith("inspect-app.env")
    for name in ("DATABASE_URL", "BLOB_ROOT", "SECRET_KEY", "PUBLIC_URL"):
        assert re.search(rf"^{name}=", settings, re.MULTILINE), name
    scheduled = set()
    for timer_file in sorted((ROOT / "docs" / "deploy").glob("*.timer")):
        timer = configparser.ConfigParser(strict=False, interpolation=None)
        timer.read_string(timer_file.read_text())
        assert timer["Timer"]["OnCalendar"], timer_file.name
        service_file = timer_file.with_suffix(".service")
        # systemd allows several ExecStart= lines in a oneshot unit; configparser keeps the last, so read them all.
        starts = re.findall(r"^ExecStart=\S*/flask (.+)$", service_file.read_text(), re.MULTILINE)
        assert starts, service_file.name
        scheduled |= {" ".join(start.split()[:2]) for start in starts}
    # Every job the README's cron runs has a timer too.
    readme = (ROOT / "README.md").read_text()
    cron = {" ".join(line.split()[6:8]) for line in readme.splitlines() if re.match(r"^[0-9*]+\s+[0-9*]+ \* \* \*\s+flask ", line)}
    assert len(cron) >= 7 and cron <= scheduled, cron - scheduled
