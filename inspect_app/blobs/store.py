"""The blob store: files named by the SHA-256 of their bytes, kept on local disk (`DiskStore`) or in an
S3-compatible bucket (`blobs/s3.py`), behind one interface (`BlobStore`) so no caller asks which.

Every caller reads a blob as a stream (`open`), never by a path: a bucket has none. Both backends keep a blob
under ``ab/cd/<sha256>`` (a folder or a key), and both take device uploads in resumable chunks with the same
answers (OffsetMismatch with the offset to resume from, HashMismatch on completion).

On disk a blob lives at ``root/ab/cd/<sha256>``. It only ever appears under that name complete and verified:
writes go to a temporary file that is flushed to disk and then renamed into place, so a crash leaves
at most a stray temporary file, never a half-written blob. Uploads from devices arrive in chunks that
can resume after a broken connection (the sync protocol): the received bytes wait in
``root/.partial/<sha256>`` until ``complete`` checks their hash.
"""
from __future__ import annotations

import abc
import contextlib
import fcntl
import hashlib
import io
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

CHUNK_SIZE = 1024 * 1024
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class BlobError(Exception):
    """A blob could not be stored or read; the message says why."""


class OffsetMismatch(BlobError):
    """A chunk was sent for the wrong offset; the client resumes from ``offset``."""

    def __init__(self, sha: str, offset: int) -> None:
        super().__init__(f"The upload of {sha} has {offset} bytes; send the chunk that starts there.")
        self.offset = offset


class HashMismatch(BlobError):
    """The bytes received do not hash to the name they were sent under; they were discarded."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(
            f"The bytes sent for {expected} hash to {actual}; they were discarded, send them again."
        )
        self.expected = expected
        self.actual = actual


class AlteredBlob(BlobError):
    """A stored file no longer hashes to the name it was stored under: it was changed outside the app."""

    def __init__(self, sha: str, actual: str) -> None:
        super().__init__(f"The stored file {sha} hashes to {actual} now: it was changed after it was stored.")
        self.expected = sha
        self.actual = actual


class BlobStore(abc.ABC):
    """What every blob store does: keep a file whole or from resumable chunks, tell whether and how much of it
    is kept, give it back as a stream, list and remove (garbage collection only)."""

    max_bytes: int | None = None  # refuse blobs larger than this; None for no limit

    @abc.abstractmethod
    def exists(self, sha: str) -> bool:
        """True if the blob is stored."""

    @abc.abstractmethod
    def size(self, sha: str) -> int:
        """The blob's length in bytes; FileNotFoundError if it is not stored."""

    @abc.abstractmethod
    def open(self, sha: str) -> BinaryIO:
        """The blob opened for reading (a stream, perhaps not seekable); FileNotFoundError if it is not stored."""

    @abc.abstractmethod
    def put_file(self, source: Path | str | BinaryIO, expected_sha: str | None = None) -> str:
        """Store a file or stream, read in chunks; return its SHA-256, or HashMismatch if not expected."""

    @abc.abstractmethod
    def received(self, sha: str) -> int:
        """How many bytes of ``sha`` the store holds: all of them once stored, else the upload so far."""

    @abc.abstractmethod
    def begin(self, sha: str) -> int:
        """Start or resume an upload of ``sha``; returns the offset to send from."""

    @abc.abstractmethod
    def append(self, sha: str, offset: int, chunk: bytes) -> int:
        """Add ``chunk`` at ``offset`` of the upload of ``sha``; returns the new offset.

        OffsetMismatch (with the offset the store is at) if ``offset`` is not where the upload stands.
        """

    @abc.abstractmethod
    def complete(self, sha: str) -> None:
        """Verify the uploaded bytes hash to ``sha`` and store them; HashMismatch discards them."""

    @abc.abstractmethod
    def head(self, sha: str, size: int = 16) -> bytes:
        """The first bytes of the upload of ``sha`` so far (or of the stored blob), to tell its type."""

    @abc.abstractmethod
    def remove(self, sha: str) -> bool:
        """Delete the stored blob ``sha`` (garbage collection only); False if it was not stored."""

    @abc.abstractmethod
    def stored(self) -> Iterator[tuple[str, float]]:
        """Each stored blob's SHA-256 and the time it was stored (a timestamp)."""

    @abc.abstractmethod
    def stored_at(self, sha: str) -> float | None:
        """When the blob ``sha`` was stored, or stored again (a timestamp); None if it is not stored."""

    @abc.abstractmethod
    def remove_abandoned(self, before: float) -> int:
        """Delete unfinished uploads (and temporary files) untouched since ``before`` (a timestamp)."""

    def put_bytes(self, data: bytes, expected_sha: str | None = None) -> str:
        """Store ``data`` and return its SHA-256; HashMismatch if it is not ``expected_sha``."""
        return self.put_file(io.BytesIO(data), expected_sha)

    def read(self, sha: str) -> bytes:
        """The whole blob (for small files: a signature, a PDF); FileNotFoundError if it is not stored, AlteredBlob
        if its bytes are not those stored under `sha` (a drawn signature swapped in the store is never shown)."""
        with self.open(sha) as stream:
            data = stream.read()
        actual = hashlib.sha256(data).hexdigest()
        if actual != sha:
            raise AlteredBlob(sha, actual)
        return data

    def stored_sha256(self, sha: str) -> str | None:
        """What the stored file of ``sha`` hashes to now: ``sha`` itself, unless it was changed since it was
        stored; None if it is not stored. Read in chunks."""
        try:
            with self.open(sha) as stream:
                return sha256_of(stream)
        except FileNotFoundError:
            return None

    @contextlib.contextmanager
    def local_copy(self, sha: str) -> Iterator[Path]:
        """A file on this machine holding the blob, for a library that wants a path (a spreadsheet reader),
        removed after; FileNotFoundError if it is not stored. The disk store gives its own file (read-only)."""
        with tempfile.TemporaryDirectory(prefix="blob-") as folder:
            copy = Path(folder) / sha
            with self.open(sha) as source, copy.open("wb") as target:
                while chunk := source.read(CHUNK_SIZE):
                    target.write(chunk)
            yield copy


class DiskStore(BlobStore):
    """Blobs under ``root`` on this machine (or a folder every app server mounts), put whole or uploaded in
    resumable chunks."""

    def __init__(self, root: Path | str, *, max_bytes: int | None = None) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes  # refuse blobs larger than this; None for no limit
        self._tmp = self.root / ".tmp"
        self._partial = self.root / ".partial"
        self._tmp.mkdir(parents=True, exist_ok=True)
        self._partial.mkdir(parents=True, exist_ok=True)

    def path(self, sha: str) -> Path:
        """Where the blob ``sha`` lives (whether or not it is stored)."""
        check_sha(sha)
        return self.root / sha[:2] / sha[2:4] / sha

    def exists(self, sha: str) -> bool:
        """True if the blob is stored."""
        return self.path(sha).is_file()

    def size(self, sha: str) -> int:
        """The blob's length in bytes; FileNotFoundError if it is not stored."""
        return self.path(sha).stat().st_size

    def open(self, sha: str) -> BinaryIO:
        """The blob opened for reading; FileNotFoundError if it is not stored."""
        return self.path(sha).open("rb")

    @contextlib.contextmanager
    def local_copy(self, sha: str) -> Iterator[Path]:
        """The stored file itself (read-only): no copy needed on disk."""
        if not self.exists(sha):
            raise FileNotFoundError(sha)
        yield self.path(sha)

    def put_file(self, source: Path | str | BinaryIO, expected_sha: str | None = None) -> str:
        """Store a file or stream, read in chunks; return its SHA-256, or HashMismatch if not expected."""
        if expected_sha is not None:
            check_sha(expected_sha)
        if isinstance(source, (str, os.PathLike)):
            with open(source, "rb") as stream:
                return self._put_stream(stream, expected_sha)
        return self._put_stream(source, expected_sha)

    def received(self, sha: str) -> int:
        """How many bytes of ``sha`` the store holds: all of them once stored, else the upload so far."""
        if self.exists(sha):
            return self.size(sha)
        try:
            return self._partial_path(sha).stat().st_size
        except FileNotFoundError:
            return 0

    def begin(self, sha: str) -> int:
        """Start or resume an upload of ``sha``; returns the offset to send from."""
        if not self.exists(sha):
            self._partial_path(sha).touch(exist_ok=True)
        return self.received(sha)

    def append(self, sha: str, offset: int, chunk: bytes) -> int:
        """Add ``chunk`` at ``offset`` of the upload of ``sha``; returns the new offset.

        OffsetMismatch (with the offset the store is at) if ``offset`` is not where the upload stands.
        """
        if self.exists(sha):
            raise OffsetMismatch(sha, self.size(sha))
        partial = self._partial_path(sha)
        flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT if offset == 0 else 0)
        try:
            fd = os.open(partial, flags, 0o600)
        except FileNotFoundError:
            raise OffsetMismatch(sha, self.received(sha)) from None
        with os.fdopen(fd, "ab") as out:
            # One writer at a time, across threads and worker processes: check-then-write must not race.
            fcntl.flock(out, fcntl.LOCK_EX)
            if not _is_current(out, partial):  # completed or discarded while we waited for the lock
                return self.append(sha, offset, chunk)
            current = os.fstat(out.fileno()).st_size
            if offset != current:
                raise OffsetMismatch(sha, current)
            if self.max_bytes is not None and current + len(chunk) > self.max_bytes:
                raise BlobError(f"The upload of {sha} would pass the limit of {self.max_bytes} bytes.")
            # No fsync per chunk: if the server crashes, the file is shorter than acknowledged and the
            # next append is refused with the true offset, or complete finds a bad hash; either way the
            # client resends, and complete fsyncs before the blob takes its name.
            out.write(chunk)
            return current + len(chunk)

    def complete(self, sha: str) -> None:
        """Verify the uploaded bytes hash to ``sha`` and store them; HashMismatch discards them."""
        partial = self._partial_path(sha)
        if self.exists(sha):  # a replayed complete, or the same bytes stored another way: kept, and new again
            try:
                os.utime(self.path(sha))  # (gc removes no file no row names within its grace period)
                partial.unlink(missing_ok=True)
                return
            except FileNotFoundError:
                pass  # removed meanwhile: stored from the upload below
        try:
            upload = open(partial, "rb")
        except FileNotFoundError:
            raise BlobError(f"There is no upload of {sha} to complete; begin it first.") from None
        with upload:
            fcntl.flock(upload, fcntl.LOCK_EX)
            if not _is_current(upload, partial):
                return self.complete(sha)
            upload.seek(0)
            actual = sha256_of(upload)
            if actual != sha:
                partial.unlink()
                raise HashMismatch(sha, actual)
            os.fsync(upload.fileno())
            self._move_into_place(partial, sha)

    def _put_stream(self, stream: BinaryIO, expected_sha: str | None) -> str:
        """Copy ``stream`` to a temporary file while hashing it, then move it into place."""
        digest = hashlib.sha256()
        written = 0
        fd, tmp_name = tempfile.mkstemp(dir=self._tmp)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                while chunk := stream.read(CHUNK_SIZE):
                    written += len(chunk)
                    if self.max_bytes is not None and written > self.max_bytes:
                        raise BlobError(f"The file is larger than the limit of {self.max_bytes} bytes.")
                    digest.update(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            sha = digest.hexdigest()
            if expected_sha is not None and sha != expected_sha:
                raise HashMismatch(expected_sha, sha)
            self._move_into_place(tmp, sha)
            return sha
        finally:
            tmp.unlink(missing_ok=True)  # gone already if it was moved into place

    def head(self, sha: str, size: int = 16) -> bytes:
        """The first bytes of the upload of ``sha`` so far (or of the stored blob), to tell its type."""
        path = self.path(sha) if self.exists(sha) else self._partial_path(sha)
        try:
            with open(path, "rb") as f:
                return f.read(size)
        except FileNotFoundError:
            return b""

    def remove(self, sha: str) -> bool:
        """Delete the stored blob ``sha`` (garbage collection only); False if it was not stored."""
        try:
            self.path(sha).unlink()
        except FileNotFoundError:
            return False
        return True

    def stored(self) -> Iterator[tuple[str, float]]:
        """Each stored blob's SHA-256 and the time it was stored (its file's mtime)."""
        for path in self.root.glob("[0-9a-f][0-9a-f]/[0-9a-f][0-9a-f]/*"):
            if SHA256_HEX.fullmatch(path.name) and path.is_file():
                yield path.name, path.stat().st_mtime

    def stored_at(self, sha: str) -> float | None:
        try:
            return self.path(sha).stat().st_mtime
        except FileNotFoundError:
            return None

    def remove_abandoned(self, before: float) -> int:
        """Delete unfinished uploads and temporary files untouched since ``before`` (a timestamp)."""
        removed = 0
        for folder in (self._partial, self._tmp):
            for path in folder.iterdir():
                try:
                    if path.stat().st_mtime < before:
                        path.unlink()
                        removed += 1
                except FileNotFoundError:
                    continue
        return removed

    def _move_into_place(self, source: Path, sha: str) -> None:
        """Atomically give the flushed file ``source`` its final name, read-only."""
        final = self.path(sha)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(source, 0o444)  # a stored blob is part of the record; nothing should edit it
        os.replace(source, final)
        _fsync_dir(final.parent)  # the rename itself must survive a crash

    def _partial_path(self, sha: str) -> Path:
        """Where the bytes of an unfinished upload wait."""
        check_sha(sha)
        return self._partial / sha


def check_sha(sha: str) -> None:
    """Refuse anything but 64 lowercase hex digits, which also keeps names inside the store."""
    if not isinstance(sha, str) or not SHA256_HEX.fullmatch(sha):
        raise BlobError(f"{sha!r} is not a SHA-256 (64 lowercase hex digits).")


def _is_current(f: BinaryIO, path: Path) -> bool:
    """True if the open file ``f`` is still the one at ``path``."""
    try:
        return os.path.samestat(os.fstat(f.fileno()), os.stat(path))
    except FileNotFoundError:
        return False


def sha256_of(f: BinaryIO) -> str:
    """SHA-256 hex of a stream, read in chunks from where it stands."""
    digest = hashlib.sha256()
    while chunk := f.read(CHUNK_SIZE):
        digest.update(chunk)
    return digest.hexdigest()


def _fsync_dir(directory: Path) -> None:
    """Flush a directory's entries to disk."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
