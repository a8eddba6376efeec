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


# A type's own part of the report, besides the checklist, findings and photos: the fields its form reads into
# `Inspection.details`, what a submission needs of them, and its section of the report page and of the PDF.
# Each module that handles parts has one table by part name (forms, services, report.html, documents.reports).
Part = Literal["site_conditions", "controls", "structures", "punch_list", "system_acceptance", "om_facilities"]


@dataclass(frozen=True)
class TypeSpec:
    """What one inspection type is, for the code (its words are the town's profile)."""

    key: str
    # What the inspector walks: the whole site, or the underground structures chosen on the report (pre-bury).
    covers: Covers = "site"
    # Its own part of the report (above), if it has one.
    part: Part | None = None
    # The policy action (accounts/policy.py) that performs and edits it. §380-16 C(4)(f): periodic and random
    # inspections by the engineer's PE representative or the authority; the others by the engineer or the
    # erosion-control inspector (§380-16 C(2)-(3)).
    action: str = "inspection.regulatory"
    # §380-16 C(4)(d): the walk-through makes a punch list of the work remaining.
    makes_punch_list: bool = False
    # §380-16 C(4)(e): the final inspection resolves the punch list, and one that finds violations is enforced.
    resolves_punch_list: bool = False
    # The erosion-control report lists the site's other controls by name, each answered per checklist item.
    lists_other_controls: bool = False
    # §380-11 C(3)(a): an erosion-control report finds each area past its stabilization deadline a violation.
    finds_overdue_stabilization: bool = False
    # §380-16 C(4)(c): a report of the whole site finds each structure backfilled without its pre-bury inspection
    # a violation (once: the backfill cannot be undone; its correction is the structure exposed and inspected).
    finds_missed_pre_bury: bool = False
    # CGP 2022 Part 4.2: started while a storm's inspection is owed, it answers that storm (rules/engine.py).
    answers_storms: bool = False
    # The obligations of the schedule (rules/engine.py) a report of this type meets: §380-16 C(4)(b)[1] and CGP
    # 2022 Part 4.2 (before construction, routine, after a storm), C(4)(c) before backfill, C(4)(d) walk-through;
    # "om_inspection": the regular inspections of a completed project's facilities (§380-14 A(3)), owed every
    # `interval` months of the town's profile from the certificate of completion.
    meets: tuple[str, ...] = ()
    # Made of a completed project (§380-14 A(3): the O&M agreement's access "for regular inspections"), so offered
    # only once the permit is completed, its certificate of completion issued.
    after_completion: bool = False
    # §380-14 E: a violation found on its submitted report is a failure to maintain; the town's agent may issue
    # the notice to correct it (certifications), citing the report's findings, and the cure period runs.
    feeds_notice_to_correct: bool = False
    # §380-16 C(4)(a): "Initial Site Inspection: prior to approval of any plan": made before its permit is issued.
    # Every other type is made under the permit, so a report of it dated before the issue date is refused.
    before_approval: bool = False


TYPES: dict[str, TypeSpec] = {spec.key: spec for spec in (
    TypeSpec("initial", part="site_conditions", before_approval=True),
    TypeSpec("erosion_control", part="controls", lists_other_controls=True, finds_overdue_stabilization=True,
             finds_missed_pre_bury=True, answers_storms=True,
             meets=("pre_construction", "inspection", "storm_inspection")),
    TypeSpec("pre_bury", covers="structure", part="structures", meets=("pre_bury",)),
    TypeSpec("walk_through", part="punch_list", makes_punch_list=True, meets=("walk_through",)),
    TypeSpec("final", part="system_acceptance", resolves_punch_list=True),
    TypeSpec("periodic", action="inspection.perform", finds_missed_pre_bury=True),
    # §380-14 A(3): the O&M agreement's "access to the facility at reasonable times for regular inspections by the
    # DPW Director or their authorized representative" (the town's agent, who reviews the O&M: "om.review"), of a
    # completed project; each stormwater structure is answered per checklist item; a violation found feeds the
    # notice to correct and its cure period (§380-14 E); owed at the profile's interval from the certificate.
    TypeSpec("om_facility", part="om_facilities", action="om.review", after_completion=True,
             feeds_notice_to_correct=True, meets=("om_inspection",)),
)}
KEYS: tuple[str, ...] = tuple(TYPES)


def spec(key: str) -> TypeSpec:
    """The declaration of the type `key`; KeyError for a key that is no type."""
    return TYPES[key]


def accepts_system(key: str | None) -> bool:
    """§380-16 C(4)(e): whether a report of this type is the final acceptance of the system (completion rests
    on it; one that finds violations brings the final stop-work order)."""
    return key in TYPES and TYPES[key].part == "system_acceptance"


def meeting(obligation_kind: str) -> str:
    """The key of the type whose report meets an obligation of this kind; KeyError if none does."""
    for key, kind in TYPES.items():
        if obligation_kind in kind.meets:
            return key
    raise KeyError(obligation_kind)


def obligations_met() -> tuple[str, ...]:
    """Every kind of obligation an inspection meets (they go on the inspector's calendar), in the types' order."""
    return tuple(obligation for kind in TYPES.values() for obligation in kind.meets)


def keys_where(**wanted: object) -> tuple[str, ...]:
    """The keys of the types whose declaration has each of `wanted` (e.g. `makes_punch_list=True`)."""
    return tuple(key for key, kind in TYPES.items() if all(getattr(kind, k) == v for k, v in wanted.items()))
