"""The audit log's hash chain: each entry's hash covers its content and the hash of the entry before it.

`hash = SHA-256(prev_hash ‖ canonical entry)`, where `prev_hash` is the 64 hex digits of the previous
entry's hash (64 zeros for the first) and the canonical entry is one byte-exact JSON text of the entry's
columns: sorted keys, no spaces, UTF-8, times as UTC ISO 8601. Entries are chained in commit order
(`commit_seq`, the order the sync pull cursor reads), so a writer that took a lower `seq` but committed later
still links after the one that committed first. Changing, deleting, inserting or reordering an entry breaks
the link of the entry after it; rewriting the whole chain from some point on changes the head hash, which
`flask audit anchor` sends outside the database every day.

This module reads no clock and no database: the same columns always give the same hash.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from inspect_app.types import canonical_json

GENESIS = "0" * 64
# The columns the hash covers: everything but the chain's own two.
CONTENT_COLUMNS = ("seq", "commit_seq", "at", "actor_id", "action", "entity", "entity_id", "permit_id",
                   "before", "after")


def canonical_entry(row: Mapping[str, Any]) -> bytes:
    """One byte-exact JSON text of an entry's content columns."""
    content = {name: row[name] for name in CONTENT_COLUMNS}
    return canonical_json(content)


def entry_hash(prev_hash: str, row: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the previous hash's 64 hex digits followed by the canonical entry."""
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_entry(row)).hexdigest()


def link(prev_hash: str, rows: Iterable[Mapping[str, Any]]) -> Iterator[tuple[Mapping[str, Any], str, str]]:
    """(row, prev_hash, hash) for rows in commit order, chained on from `prev_hash`."""
    for row in rows:
        digest = entry_hash(prev_hash, row)
        yield row, prev_hash, digest
        prev_hash = digest


@dataclass(frozen=True)
class Break:
    """The first entry that does not match: which, and why."""

    seq: int
    commit_seq: int | None
    reason: str

    def __str__(self) -> str:
        return f"entry {self.commit_seq} (seq {self.seq}): {self.reason}"


@dataclass(frozen=True)
class Walk:
    """What a walk of the chain found: how many entries matched, the head, and the first break if any."""

    verified: int
    head_commit_seq: int | None
    head_hash: str
    broken: Break | None


def walk(rows: Iterable[Mapping[str, Any]]) -> Walk:
    """Check rows in commit order, one at a time (constant memory); stops at the first that does not match."""
    prev_hash, count, head_seq = GENESIS, 0, None
    for row in rows:
        if row["prev_hash"] != prev_hash:
            reason = ("its link does not match the hash of the entry before it: an entry before it was "
                      "deleted, inserted, changed or reordered" if row["prev_hash"] else "it is not sealed")
            return Walk(count, head_seq, prev_hash, Break(row["seq"], row["commit_seq"], reason))
        if entry_hash(prev_hash, row) != row["hash"]:
            return Walk(count, head_seq, prev_hash,
                        Break(row["seq"], row["commit_seq"], "its content does not match its hash"))
        prev_hash, count, head_seq = row["hash"], count + 1, row["commit_seq"]
    return Walk(count, head_seq, prev_hash, None)
