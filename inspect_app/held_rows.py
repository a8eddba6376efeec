"""Which of a permit's tables hold any row of it, asked in one statement by a page that reads many of them.

The permit page reads a dozen tables a permit most often has no row in (its stop-work orders, waivers, frozen
periods, certificate...), each in a statement of its own. Within `asked(permit, models)`, which of `models`
hold a row of the permit is known from one statement, and `none_of(model, permit)` is True for those that hold
none: their readers return nothing without a statement. Anywhere else (outside the block, another permit, a
model not asked about) `none_of` is False and a reader asks as it always has.

Only for reads: a row added inside the block would not be seen by `none_of`. The permit page asks as it reads
its sections, after any change a request made has been flushed (the question is a query: it flushes first).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from flask import g, has_app_context
from sqlalchemy import exists, literal, select, union_all

from inspect_app.extensions import db

_KEY = "held_rows"  # in flask.g while a block runs: (permit id, tables asked about, those holding a row)


@contextmanager
def asked(permit_id: str, models: Iterable[type]) -> Iterator[None]:
    """For the block: which of `models` (each with a `permit_id` column) hold a row of the permit."""
    models = list(models)
    checks = [select(literal(model.__tablename__)).where(exists().where(model.permit_id == permit_id))
              for model in models]
    held = frozenset(db.session.scalars(union_all(*checks)))
    before = g.get(_KEY)
    setattr(g, _KEY, (permit_id, frozenset(model.__tablename__ for model in models), held))
    try:
        yield
    finally:
        setattr(g, _KEY, before)


def none_of(model: type, permit_id: str) -> bool:
    """True only inside `asked` for this permit and model, when the permit has no row in its table."""
    known = g.get(_KEY) if has_app_context() else None
    if known is None or known[0] != permit_id:
        return False
    return model.__tablename__ in known[1] and model.__tablename__ not in known[2]
