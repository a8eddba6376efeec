"""The inspection types, each declared once: what it covers and what its report does besides the checklist.

A type's words (its name, when it is made, its clause, its checklist items, who signs it) are the town's, in
its profile (`profiles.schema.InspectionType`); whether it owes advance notice is the profile's
`advance_notice`. What the code does differently for a type is declared here, and every module asks this
declaration (`spec(key)`) rather than testing the type's key. Pure Python: no Flask or database import, so the
profile schema, the models and the rules can all read it.

Adding a type is one entry in `TYPES`, its profile entry in each town that makes it, and (where the report
shows something of its own) one template section; see docs/architecture.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Covers = Literal["site", "structure", "punch_list"]


@dataclass(frozen=True)
class TypeSpec:
    """What one inspection type is, for the code (its words are the town's profile)."""

    key: str
    # What the inspector walks: the whole site, a structure before it is buried, or a walk-through's punch list.
    covers: Covers = "site"
    # §380-16 C(4)(d): the walk-through makes a punch list of the work remaining.
    makes_punch_list: bool = False
    # §380-16 C(4)(e): the final inspection resolves the punch list, and one that finds violations is enforced.
    resolves_punch_list: bool = False
    # The erosion-control report lists the site's other controls by name, each answered per checklist item.
    lists_other_controls: bool = False
    # §380-11 C(3)(a): an erosion-control report finds each area past its stabilization deadline a violation.
    finds_overdue_stabilization: bool = False


TYPES: dict[str, TypeSpec] = {spec.key: spec for spec in (
    TypeSpec("initial"),
    TypeSpec("erosion_control", lists_other_controls=True, finds_overdue_stabilization=True),
    TypeSpec("pre_bury", covers="structure"),
    TypeSpec("walk_through", makes_punch_list=True),
    TypeSpec("final", covers="punch_list", resolves_punch_list=True),
    TypeSpec("periodic"),
)}
KEYS: tuple[str, ...] = tuple(TYPES)


def spec(key: str) -> TypeSpec:
    """The declaration of the type `key`; KeyError for a key that is no type."""
    return TYPES[key]


def keys_where(**wanted: object) -> tuple[str, ...]:
    """The keys of the types whose declaration has each of `wanted` (e.g. `makes_punch_list=True`)."""
    return tuple(key for key, kind in TYPES.items() if all(getattr(kind, k) == v for k, v in wanted.items()))
