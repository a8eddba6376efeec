"""Copy every blob of one store into another and check each by its hash (`flask blobs migrate`): a disk store
moved into a bucket when a town's service goes to several app servers, or any store copied for a backup.

Each file is read from the source, hashed as it is sent (bytes on disk that no longer hash to their name are
not copied: they are reported), then read back from the target and hashed again. A blob the target already
holds with the right hash is left as it is, so a copy broken off is simply run again. A blob the target
holds with other bytes is replaced by the source's, if those are right.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from inspect_app.blobs.store import BlobStore, HashMismatch


@dataclass
class Copied:
    """What a copy did: blobs copied, blobs already there (and right), and each that went wrong."""

    copied: int = 0
    already_there: int = 0
    problems: list[str] = field(default_factory=list)


def copy_store(source: BlobStore, target: BlobStore, progress: Callable[[Copied], None] | None = None) -> Copied:
    """Copy each blob of `source` missing from `target` (or wrong there), and check every one by its SHA-256."""
    done = Copied()
    for sha, _stored_at in source.stored():
        if target.stored_sha256(sha) == sha:
            done.already_there += 1
        else:
            problem = _copy(source, target, sha)
            if problem:
                done.problems.append(problem)
            else:
                done.copied += 1
        if progress is not None:
            progress(done)
    return done


def _copy(source: BlobStore, target: BlobStore, sha: str) -> str | None:
    """Copy one blob and read it back; what went wrong, or None."""
    target.remove(sha)  # other bytes under its name: the target would otherwise keep them (content-addressed)
    try:
        with source.open(sha) as stream:
            target.put_file(stream, expected_sha=sha)
    except HashMismatch as mismatch:
        return f"{sha}: the source's file hashes to {mismatch.actual}; it was altered or damaged, not copied"
    except FileNotFoundError:
        return f"{sha}: the source's file went away while it was copied"
    found = target.stored_sha256(sha)
    if found != sha:
        return f"{sha}: read back from the target it hashes to {found}"
    return None
