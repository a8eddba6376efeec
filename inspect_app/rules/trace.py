"""`@implements(...)`: a rule names the clauses it implements (see inspect_app/traceability.py)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def implements(*clauses: str) -> Callable[[F], F]:
    """Mark a rule with the clauses it implements."""

    def mark(function: F) -> F:
        function.__clauses__ = clauses  # type: ignore[attr-defined]
        return function

    return mark
