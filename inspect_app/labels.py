"""The words for stored values: one home per label set, for forms, pages (the `label` filter), PDFs and mail.

Each set's keys are the values the database allows (the models take their choices from here), so a value
and its words cannot drift apart. Pure Python: no Flask or database import.
"""
from __future__ import annotations

# A finding's severity.
SEVERITY_LABELS = {"observation": "Observation", "minor": "Minor", "major": "Major", "critical": "Critical"}
# CGP 2022 Part 5.2: the kind of a corrective action, with when it must be finished.
ACTION_KIND_LABELS = {
    "routine_maintenance": "Routine maintenance (by the close of the next business day)",
    "new_or_replacement_control": "New or replacement control (within 7 calendar days)",
    "significant_repair": "Significant repair (within 7 calendar days)",
}
# A maintenance-log entry's kind (§380-14).
LOG_KIND_LABELS = {"inspection": "Inspection", "repair": "Repair", "replacement": "Replacement",
                   "disposal": "Disposal"}
# A responsible party's role in the O&M plan (§380-14).
# §380-14 F(2): "Responsible parties shall include owner(s), persons with financial responsibility, and
# persons with operational responsibility, and easement grantors."
PARTY_ROLE_LABELS = {"owner": "Owner", "financial": "Financially responsible",
                     "operational": "Operationally responsible", "easement_grantor": "Easement grantor"}
# An annual O&M certification's review.
CERTIFICATION_STATUS_LABELS = {"submitted": "Submitted, awaiting review", "accepted": "Accepted",
                               "deficient": "Found deficient"}
# What each kind of obligation of the schedule engine is called on screen, in the regulations' words.
OBLIGATION_KIND_LABELS = {
    "pre_construction": "Pre-construction inspection",
    "inspection": "Erosion-control inspection",
    "storm_inspection": "Storm inspection",
    "stabilization": "Stabilization started",
    "stabilization_complete": "Stabilization completed",
    "corrective_action": "Corrective action",
    "pre_bury": "Pre-bury inspection",
    "walk_through": "Walk-through",
    "start_of_work": "Start of work",
    "lapse": "Permit lapse",
    "extension_request": "Extension request",
    "om_certification": "O&M certification",
    "cure": "Cure after notice to correct",
    "report": "Inspection report",
    "corrective_action_record": "Corrective action documented",
    "om_inspection": "O&M facility inspection",
}
# The final submissions; each one's clause is the town's (profile `citations`, `<kind>_submission`).
SUBMISSION_KIND_LABELS = {"om_plan": "Final operation and maintenance plan", "as_built": "As-built drawings",
                          "final_report": "Final inspection report"}
# A checklist answer.
# "unsafe": the area was not inspected because it was unsafe to (CGP areas not inspected, with the reason); it
# is offered only where the town's profile says so (`unsafe_citation` of the inspection type).
ANSWER_LABELS = {"yes": "Yes", "no": "No", "na": "N/A", "unsafe": "Not inspected: unsafe"}
# What a discharge looked like at a point of discharge (CGP 2022 Part 4.6, as the profile cites it).
DISCHARGE_SIGN_LABELS = {"sediment": "Sediment", "turbidity": "Turbidity", "sheen": "Oil sheen",
                         "colour": "Colour", "odour": "Odour", "floating_solids": "Floating solids"}
# Whether stormwater was discharging at a point of discharge.
DISCHARGING_LABELS = {"yes": "Discharging", "no": "Not discharging"}

# Why an inspection was made (issue 20; CGP 2022 Part 4.7.1, §380-16 C(4)(b)): the schedule, a storm, the
# authority's right to random inspections (§380-16 C(4)(b)[2]), or to follow up an earlier finding.
TRIGGER_LABELS = {"routine": "Routine, on the schedule", "storm_event": "Storm event",
                  "random": "Random inspection by the authority", "follow_up": "Follow-up of an earlier inspection"}
# A report's evaluation (§380-16 C(4)(f)[1](g)), as a list of reports says it.
EVALUATION_LABELS = {"compliant": "In compliance", "violations": "Violations"}
# Where a storm's total comes from (CGP 2022 Part 4.2: a representative weather station or an on-site gauge).
STORM_SOURCE_LABELS = {"station": "Weather station", "gauge": "On-site rain gauge"}

# By name, for the `label` filter: `{{ finding.severity|label("severity") }}`.
LABELS: dict[str, dict[str, str]] = {
    "severity": SEVERITY_LABELS, "action_kind": ACTION_KIND_LABELS, "log_kind": LOG_KIND_LABELS,
    "party_role": PARTY_ROLE_LABELS, "certification_status": CERTIFICATION_STATUS_LABELS,
    "submission_kind": SUBMISSION_KIND_LABELS, "answer": ANSWER_LABELS, "trigger": TRIGGER_LABELS,
    "storm_source": STORM_SOURCE_LABELS, "evaluation": EVALUATION_LABELS,
    "discharge_sign": DISCHARGE_SIGN_LABELS, "discharging": DISCHARGING_LABELS,
}


def label(value: str | None, of: str, missing: str = "—") -> str:
    """The words for `value` in the label set `of`; a value the set does not know is shown as it is."""
    if not value:
        return missing
    return LABELS[of].get(value, value)


def choices(of: str) -> list[tuple[str, str]]:
    """The (value, words) pairs of a label set, in order, for a form's select or radio buttons."""
    return list(LABELS[of].items())


def shorten(text: str, length: int = 60) -> str:
    """`text` cut to at most `length` characters, ending in "…" where it was cut (for a list or a choice)."""
    return text if len(text) <= length else text[: length - 1].rstrip() + "…"
