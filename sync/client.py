"""A Python client of the sync protocol (docs/sync.md), on the standard library's urllib.

It retries what is safe to retry: a push (every operation carries the id its device made, so a
replay is answered, not applied again), a blob chunk (sent at an offset the server checks) and reads.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import http.client
import json
import socket
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

CHUNK_SIZE = 1024 * 1024
BATCH_SIZE = 200
# What a dropped connection or a restarting server looks like from here.
TRANSIENT = (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError)


class SyncError(Exception):
    """The server refused a request (a 4xx), or kept failing; `status` and `body` say how."""

    def __init__(self, status: int, body: Any) -> None:
        message = body.get("error") if isinstance(body, dict) else str(body)
        super().__init__(f"{status}: {message}")
        self.status = status
        self.body = body


@dataclass
class UploadReport:
    """How an upload went: bytes sent in all (resent ones included) and where it resumed from."""

    sha256: str
    size: int
    bytes_sent: int
    resumed_from: list[int]


def new_op(kind: str, record_id: str, payload: dict[str, Any], base_revision: int | None = None,
           device_time: dt.datetime | None = None) -> dict[str, Any]:
    """An operation with a fresh device-made id, stamped with this machine's clock."""
    return {"op_id": str(uuid.uuid4()), "kind": kind, "record_id": record_id, "base_revision": base_revision,
            "device_time": (device_time or dt.datetime.now(dt.UTC)).isoformat(), "payload": payload}


class SyncClient:
    """Talks to one server as one device (bearer token) or as a signed-in session."""

    def __init__(self, server: str, token: str | None = None, *, retries: int = 8, backoff_s: float = 0.1,
                 timeout_s: float = 30, chunk_size: int = CHUNK_SIZE, batch_size: int = BATCH_SIZE,
                 clock=None) -> None:
        self.server = server.rstrip("/")
        self.token = token
        self.retries = retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.chunk_size = chunk_size
        self.batch_size = batch_size
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        # No proxies: a sync goes straight to the server it was pointed at.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # --- push --------------------------------------------------------------------------------

    def push(self, ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send operations in batches; one result per operation, in order. SyncError on a refusal."""
        results: list[dict[str, Any]] = []
        for start in range(0, len(ops), self.batch_size):
            batch = ops[start:start + self.batch_size]
            # sent_at is read per attempt, so the server measures this device's clock offset honestly.
            results += self._retrying(lambda b=batch: self._json(
                "POST", "/sync/push", {"ops": b, "sent_at": self.clock().isoformat()}))["results"]
        return results

    # --- pull --------------------------------------------------------------------------------

    def permits(self) -> list[dict[str, Any]]:
        """The permits this device's user may see."""
        return self._retrying(lambda: self._json("GET", "/sync/permits"))["permits"]

    def snapshot(self, permit_id: str) -> dict[str, Any]:
        """Everything needed to inspect one permit offline."""
        return self._retrying(lambda: self._json("GET", f"/sync/permits/{permit_id}/snapshot"))

    def pages(self, cursor: int = 0, limit: int = 500) -> Iterator[dict[str, Any]]:
        """Pages of changes after `cursor`, until the server has no more."""
        while True:
            page = self._retrying(lambda c=cursor: self._json("GET", f"/sync/changes?cursor={c}&limit={limit}"))
            yield page
            cursor = page["cursor"]
            if not page["more"]:
                return

    def pull(self, cursor: int = 0) -> tuple[list[dict[str, Any]], int]:
        """Every change after `cursor`, and the cursor to pull from next time."""
        changes: list[dict[str, Any]] = []
        for page in self.pages(cursor):
            changes += page["changes"]
            cursor = page["cursor"]
        return changes, cursor

    # --- blobs -------------------------------------------------------------------------------

    def blob_status(self, sha: str) -> dict[str, Any]:
        """How much of blob `sha` the server holds."""
        return self._retrying(lambda: self._json("GET", f"/sync/blobs/{sha}"))

    def upload_blob(self, source: bytes | Path | str, content_type: str = "application/octet-stream",
                    sha: str | None = None) -> UploadReport:
        """Upload a blob in chunks, resuming from the server's offset after any break."""
        data = source if isinstance(source, bytes) else None
        path = None if data is not None else Path(source)
        size = len(data) if data is not None else path.stat().st_size
        sha = sha or (hashlib.sha256(data).hexdigest() if data is not None else _file_sha256(path))
        report = UploadReport(sha, size, 0, [])
        with (path.open("rb") if path else _NoFile()) as stream:
            def attempt() -> None:
                status = self._json("GET", f"/sync/blobs/{sha}")
                offset = status["received"]
                if status["complete"]:
                    return
                report.resumed_from.append(offset)
                while offset < size:
                    chunk = data[offset:offset + self.chunk_size] if data is not None else _read_at(
                        stream, offset, self.chunk_size)
                    report.bytes_sent += len(chunk)
                    answer = self._json("PUT", f"/sync/blobs/{sha}", chunk, ok=(200, 409),
                                        headers={"Upload-Offset": str(offset),
                                                 "Content-Type": "application/octet-stream"})
                    offset = answer["received"]
                self._json("POST", f"/sync/blobs/{sha}/complete", {"content_type": content_type})

            self._retrying(attempt)
        return report

    # --- plumbing ----------------------------------------------------------------------------

    def _retrying(self, call):
        """Run `call`, again after a dropped connection or a 5xx, with growing pauses."""
        for attempt in range(self.retries + 1):
            try:
                return call()
            except SyncError as error:
                if error.status < 500 or attempt == self.retries:
                    raise
            except TRANSIENT:
                if attempt == self.retries:
                    raise
            time.sleep(min(self.backoff_s * 2 ** attempt, 2.0))
        raise AssertionError("unreachable")

    def _json(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201),
              headers: dict[str, str] | None = None) -> Any:
        """One request; the JSON answer, or SyncError if its status is not in `ok`."""
        headers = dict(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.server + path, data=body, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        try:
            answer = json.loads(raw) if raw else {}
        except ValueError:
            answer = raw.decode("utf-8", "replace")
        if status not in ok:
            raise SyncError(status, answer)
        return answer


class _NoFile:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


def _read_at(stream: BinaryIO, offset: int, size: int) -> bytes:
    stream.seek(offset)
    return stream.read(size)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK_SIZE):
            digest.update(chunk)
    return digest.hexdigest()
