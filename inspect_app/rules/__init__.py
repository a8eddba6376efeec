"""The schedule engine: pure rules over a permit's record (no Flask, no database, no I/O).

Build `PermitFacts` from the record, then call `obligations(facts, profile, now)`.
"""
from inspect_app.rules.engine import (
    Obligation,
    ScheduleInForce,
    corrective_action_due,
    lapse_deadline,
    obligations,
    schedule_in_force,
    short_citation,
)
from inspect_app.rules.facts import (
    Area,
    AreaEvent,
    CorrectiveAction,
    FactsError,
    Inspection,
    NoticeToCorrect,
    PermitFacts,
    Report,
    StopWorkOrder,
    Storm,
    Structure,
    ViolationFinding,
)

__all__ = [
    "Area",
    "AreaEvent",
    "CorrectiveAction",
    "FactsError",
    "Inspection",
    "NoticeToCorrect",
    "Obligation",
    "PermitFacts",
    "Report",
    "ScheduleInForce",
    "StopWorkOrder",
    "Storm",
    "Structure",
    "ViolationFinding",
    "corrective_action_due",
    "lapse_deadline",
    "obligations",
    "schedule_in_force",
    "short_citation",
]
