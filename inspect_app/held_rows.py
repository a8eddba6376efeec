"""Which of several columns hold a value in any row, asked in one statement by a page that reads many tables.

The permit page reads a dozen tables a permit most often has no row in (its stop-work orders, waivers, frozen
periods, certificate...), each in a statement of its own; a report page, the amendments, pipe videos and
punch-list items of its report. Within `asked(value, columns)`, which of `columns` hold `value` is known from
one statement, and `none_of(column, value)` is True for those that hold none: their readers return nothing
without a statement. Anywhere else (outside the block, another value, a column not asked about) `none_of` is
False and a reader asks as it always has.

Made for reads, and safe with writes: the question is a query, so it flushes what the request changed before;
and inside the block, once anything is written (a flush) or while a row of a column's table waits to be
written, `none_of` is False for it and the reader asks as it always has.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from flask import g, has_app_context
from sqlalchemy import CompoundSelect, bindparam, event, exists, literal, select, union_all
from sqlalchemy.orm import Session

from inspect_app.extensions import db

_KEY = "held_rows"  # in flask.g while a block runs: (value, columns asked about, those holding it, flushes then)
_FLUSHES = "held_rows.flushes"  # in a session's info: how many of its flushes wrote something


def _name(column) -> str:
    return f"{column.class_.__tablename__}.{column.key}"


# Each question built once (the value is its parameter): building one took as long as running it.
_QUESTIONS: dict[tuple[str, ...], CompoundSelect] = {}


def _question(columns: list) -> tuple[tuple[str, ...], CompoundSelect]:
    names = tuple(_name(column) for column in columns)
    question = _QUESTIONS.get(names)
    if question is None:
        value = bindparam("value")
        question = _QUESTIONS[names] = union_all(*(
            select(literal(name)).where(exists().where(column == value)) for name, column in zip(names, columns)))
    return names, question


@contextmanager
def asked(value: str, columns: Iterable) -> Iterator[None]:
    """For the block: which of `columns` (mapped attributes, each indexed) hold `value` in any row."""
    names, question = _question(list(columns))
    held = frozenset(db.session.scalars(question, {"value": value}))  # flushes first
    before = g.get(_KEY)
    setattr(g, _KEY, (value, frozenset(names), held, db.session.info.get(_FLUSHES, 0)))
    try:
        yield
    finally:
        setattr(g, _KEY, before)


def none_of(column, value: str) -> bool:
    """True only inside `asked` for this value and column, when no row holds the value there: nothing written
    since it was asked, and no row of the column's table waiting to be."""
    known = g.get(_KEY) if has_app_context() else None
    if known is None or known[0] != value:
        return False
    name = _name(column)
    if name not in known[1] or name in known[2]:
        return False
    session = db.session
    if session.info.get(_FLUSHES, 0) != known[3]:
        return False
    return not any(isinstance(row, column.class_) for row in (*session.new, *session.dirty))


def _count_flush(session: Session, flush_context) -> None:
    session.info[_FLUSHES] = session.info.get(_FLUSHES, 0) + 1


def install() -> None:
    """Count every session's flushes that write (once per process): an answer asked before one is not used."""
    if not event.contains(Session, "after_flush", _count_flush):
        event.listen(Session, "after_flush", _count_flush)
