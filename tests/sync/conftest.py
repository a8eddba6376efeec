"""Live instances for sync tests: the central record and a field copy, each on 127.0.0.1 with its own
database and blob folder, plus a TCP proxy that cuts a connection after a number of bytes."""
from __future__ import annotations

import multiprocessing
import socket
import threading
import time
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from inspect_app import create_app
from inspect_app.extensions import db
from sync.services import create_device


class LiveServer:
    """An app served by werkzeug in a thread; `stop` takes milliseconds."""

    def __init__(self, app, port: int = 0) -> None:
        self.app = app
        self.server = make_server("127.0.0.1", port, app, threaded=True)
        self.port = self.server.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def _serve(database_url: str, blob_root: str, port: int) -> None:
    """The body of the child process: a fresh app on the given database, served until killed."""
    app = create_app({"SQLALCHEMY_DATABASE_URI": database_url, "BLOB_ROOT": blob_root,
                      "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
                      # Commits every 10 operations, so a kill can land between two commits of one batch.
                      "SYNC_COMMIT_EVERY": 10})
    make_server("127.0.0.1", port, app, threaded=True).serve_forever(poll_interval=0.05)


class ServerProcess:
    """The central record in a child process, so a test can kill it outright and start it again.

    Forked, so the child starts with the modules already imported (milliseconds, not seconds).
    """

    def __init__(self, database_url: str, blob_root: Path, port: int) -> None:
        self.args = (database_url, str(blob_root), port)
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.process = None

    def start(self) -> None:
        self.process = multiprocessing.get_context("fork").Process(target=_serve, args=self.args, daemon=True)
        self.process.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if not self.process.is_alive():
                    raise RuntimeError(f"the central record exited with {self.process.exitcode}") from None
                time.sleep(0.02)
        raise RuntimeError("the central record did not start")

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, as when a server dies."""
        if self.process is None or not self.process.is_alive():
            return
        self.process.kill()
        self.process.join(5)


class CuttingProxy:
    """Forwards 127.0.0.1:port to a server; cuts the first connection that passes `cut_after` bytes.

    `direction` "up" counts bytes sent to the server (a request broken off), "down" bytes coming back
    (the server did the work, the answer is lost). After one cut every connection passes untouched.
    """

    def __init__(self, target_port: int, cut_after: int, direction: str = "up") -> None:
        self.target_port = target_port
        self.cut_after = cut_after
        self.direction = direction
        self.cuts = 0
        self.counted = 0
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self._pipe, args=(client, upstream, "up"), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, "down"), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, direction: str) -> None:
        try:
            while data := source.recv(16384):
                if direction == self.direction and self._over_budget(len(data)):
                    allowed = max(0, len(data) - (self.counted - self.cut_after))
                    sink.sendall(data[:allowed])
                    for s in (source, sink):
                        s.shutdown(socket.SHUT_RDWR)
                    return
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def _over_budget(self, size: int) -> bool:
        with self.lock:
            if self.cuts:
                return False
            self.counted += size
            if self.counted > self.cut_after:
                self.cuts += 1
                return True
            return False

    def stop(self) -> None:
        self.stopped = True
        self.listener.close()


@pytest.fixture
def central(app):
    """The central record: the suite's app and database, served on 127.0.0.1."""
    server = LiveServer(app)
    yield server
    server.stop()


@pytest.fixture
def field(tmp_path):
    """A field copy: its own app, SQLite file and blob folder, served on 127.0.0.1."""
    root = tmp_path / "field"
    root.mkdir()
    field_app = create_app({
        "TESTING": True, "SQLALCHEMY_DATABASE_URI": f"sqlite:///{root / 'field.sqlite3'}",
        "BLOB_ROOT": str(root / "blobs"), "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
    })
    with field_app.app_context():
        db.create_all()
    server = LiveServer(field_app)
    yield server
    server.stop()
    with field_app.app_context():
        db.engine.dispose()


@pytest.fixture
def device_token(app):
    """`device_token(user, name)`: a bearer token for one of the user's devices on the central record."""

    def make(user, name: str = "tablet") -> str:
        _device, token = create_device(None, user, name)
        db.session.commit()
        return token

    return make


@pytest.fixture
def server_process(database_url, app):
    """`server_process()`: the central record's database served by a child process, killed at the end."""
    made: list[ServerProcess] = []

    def make() -> ServerProcess:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        made.append(ServerProcess(database_url, Path(app.config["BLOB_ROOT"]), port))
        made[-1].start()
        return made[-1]

    yield make
    for server in made:
        server.kill()


@pytest.fixture
def proxy():
    """`proxy(target_port, cut_after, direction)`: a cutting TCP proxy, stopped at the end."""
    made: list[CuttingProxy] = []

    def make(target_port: int, cut_after: int, direction: str = "up") -> CuttingProxy:
        made.append(CuttingProxy(target_port, cut_after, direction))
        return made[-1]

    yield make
    for p in made:
        p.stop()
