"""What the policy must know of other domains' records, declared by each model on its own class.

`policy.py` imports no domain's models: it reads two declarations from every mapped model.

- **`draft_parts`: a draft report's parts**, the records of a report that are its author's alone until it is
  submitted. Each `DraftPart` gives, for one table, a query of the ids hidden from a user, built from the hidden
  ids of the tables it comes after: a finding is hidden when its report is, its corrective action when the
  finding is. Several declarations of one table are joined with UNION (a photo is part of a draft through its
  report, its finding or the action it is the evidence of), so each part uses its own index.
- **`blob_columns`: the columns that name a stored file.** Whoever sees a row sees the files it names
  (`policy.sees_blob`): a row of a permit they see, not part of someone else's draft, unless the model says
  otherwise with `blob_rows_seen`.

`tests/accounts/test_record_declarations.py` fails on a table that points at a report or a finding, or a column
that names a file, that no declaration covers.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import CompoundSelect, Select, and_, or_, select, union

from inspect_app.extensions import db

Ids = Select | CompoundSelect


@dataclass(frozen=True)
class DraftPart:
    """Rows of `table` are part of a draft report: `ids(user_id, hidden)` are those hidden from the user with
    that id (None: from no one, every draft's), where `hidden` holds the hidden ids of the tables named in
    `after`."""

    table: str
    ids: Callable[[Any, dict[str, Ids]], Select]
    after: tuple[str, ...] = ()


def _models() -> list[type]:
    return [mapper.class_ for mapper in db.Model.registry.mappers]


def draft_tables() -> frozenset[str]:
    return frozenset(table for table, _ in _parts_in_order(len(db.Model.registry.mappers)))


@functools.cache
def _parts_in_order(mapped: int) -> tuple[tuple[str, tuple[DraftPart, ...]], ...]:
    """The declared parts by table, each table after those it comes after. Worked out once for the `mapped`
    models there are: a model mapped later (a test's) makes it worked out again."""
    pending: dict[str, list[DraftPart]] = {}
    for model in _models():
        for part in getattr(model, "draft_parts", ()):
            pending.setdefault(part.table, []).append(part)
    ordered: list[tuple[str, tuple[DraftPart, ...]]] = []
    while pending:
        done = {table for table, _ in ordered}
        ready = sorted(table for table, parts in pending.items()
                       if all(before in done for part in parts for before in part.after))
        if not ready:
            raise RuntimeError(f"Draft parts wait on tables no model declares: {sorted(pending)}")
        ordered.extend((table, tuple(pending.pop(table))) for table in ready)
    return tuple(ordered)


def hidden_parts(user, *, shared: bool = False) -> dict[str, Ids]:
    """By table, the ids of the draft parts `user` may not see, each table after those it comes after.

    `shared`: the parts other parts read (reports, findings) are common table expressions, which PostgreSQL
    plans and runs once in a statement, not once in every part that reads them: for a statement that leaves
    out every hidden part (NOT IN), which works each set out whole anyway. Not for one that looks for a few rows
    among them (IN): inside the statement, the planner starts from those rows instead."""
    return dict(_hidden_parts(user_key(user), shared, len(db.Model.registry.mappers)))


def user_key(user) -> str | None:
    """What a user's hidden parts depend on: their id (none for the signed-out, or no user: every draft)."""
    return user.id if getattr(user, "is_authenticated", False) else None


def kept_per_user(build: Callable[[dict[str, Ids]], Select], *, shared: bool = False) -> Callable[[Any], Select]:
    """`build(hidden)`, a statement made on a user's hidden parts (`shared` as `hidden_parts`) whose other values
    are its parameters, built once per user and kept as the parts are: built at every request, walking the parts
    to find the statement's compiled form cost about what running it did."""
    @functools.lru_cache(maxsize=64)
    def kept(user_id: str | None, mapped: int) -> Select:
        return build(dict(_hidden_parts(user_id, shared, mapped)))

    return lambda user: kept(user_key(user), len(db.Model.registry.mappers))


@functools.lru_cache(maxsize=128)
def _hidden_parts(user_id: str | None, shared: bool, mapped: int) -> dict[str, Ids]:
    """`hidden_parts`, built once per user and kept: a statement is never changed once built (each `where`
    makes a new one), and building these took as long as a page's own query of them. Both kinds of a user's
    take about 27 KB: the last 64 users' are kept, under 2 MB a worker."""
    hidden: dict[str, Ids] = {}
    ordered = _parts_in_order(mapped)
    read_again = {before for _, parts in ordered for part in parts for before in part.after}
    for table, parts in ordered:
        queries = [part.ids(user_id, hidden) for part in parts]
        query = queries[0] if len(queries) == 1 else union(*queries)
        if shared and table in read_again:
            query = select(*query.cte().c)
        hidden[table] = query
    return hidden


def blob_columns() -> list[Any]:
    """Every column declared to name a stored file."""
    return [getattr(model, name) for model in _models() for name in getattr(model, "blob_columns", ())]


def naming(sha: str, permits: Select, hidden: dict[str, Ids]) -> list[Select]:
    """Queries of the rows that name the file `sha` and that a user sees: `permits` the ids of the permits they
    see, `hidden` their hidden draft parts."""
    queries = []
    for model in _models():
        columns = [getattr(model, name) for name in getattr(model, "blob_columns", ())]
        if not columns:
            continue
        if hasattr(model, "blob_rows_seen"):
            seen = model.blob_rows_seen(permits, hidden)
        else:
            seen = model.permit_id.in_(permits)
            if model.__tablename__ in hidden:
                seen = and_(seen, model.id.not_in(hidden[model.__tablename__]))
        queries.append(select(model.id).where(seen, or_(*(column == sha for column in columns))))
    return queries

