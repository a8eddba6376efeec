"""The schedule engine: pure rules over a permit's record (no Flask, no database, no I/O).

Build `PermitFacts` from the record, then call `obligations(facts, profile, now)`.
"""
from inspect_app.rules.engine import (
    Obligation,
    ScheduleInForce,
    corrective_action_due,
    extension_apply_by,
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
    FrozenPeriod,
    Inspection,
    NoticeToCorrect,
    PermitFacts,
    Report,
    SnowmeltDischarge,
    StopWorkOrder,
    Storm,
    Structure,
    ViolationFinding,
    Waiver,
)

__all__ = [
    "Area",
    "AreaEvent",
    "CorrectiveAction",
    "FactsError",
    "FrozenPeriod",
    "Inspection",
    "NoticeToCorrect",
    "Obligation",
    "PermitFacts",
    "Report",
    "ScheduleInForce",
    "SnowmeltDischarge",
    "StopWorkOrder",
    "Storm",
    "Structure",
    "ViolationFinding",
    "Waiver",
    "corrective_action_due",
    "extension_apply_by",
    "lapse_deadline",
    "obligations",
    "schedule_in_force",
    "short_citation",
]
