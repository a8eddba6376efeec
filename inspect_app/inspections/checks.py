"""What the CGP asks of an erosion-control (and periodic) report beyond the checklist: the discharges seen at each
point of discharge, and the conditions requiring corrective action that a report records (a control answered
"no" to an item the profile ties to a CGP 2022 Part 5.1 condition; a discharge with visible sediment), each of
which must be tied to its fix. Reads only; never writes.

Stored in the report's `details` (so the canonical record, its hash, the PDF and sync carry them as they are):
- `discharge_points`: the points of discharge named on the report, `[{"id", "name"}]` (the permit's outfall
  structures are points too, under their own ids);
- `discharges`: point id → `{"now", "since_last"}` ("yes"/"no"/None), `"signs"` (DISCHARGE_SIGN_LABELS keys),
  `"description"` and `"photos"` (SHA-256 of the originals);
- `fixes`: fix key → `{"repair", "first_observed"` (ISO date), `"action_id"` (the corrective action it is tied
  to, opened with the report or already open), and, to open one, `"kind"` and `"owner_name"}`;
- `item_photos`: the photos taken on a checklist item for one subject, by the item's fix key → the SHA-256 of the
  originals (the photos themselves are the report's, like those of a point of discharge).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.inspections.queries import Subject, checklist, type_of
from inspect_app.labels import shorten
from inspect_app.permits.models import Permit
from inspect_app.photos.models import Photo
from inspect_app.permits.services import profile_of
from inspect_app.profiles.schema import CorrectiveCondition
from inspect_app.rules.trace import implements

SEDIMENT = "sediment"


@dataclass(frozen=True)
class NeededFix:
    """A condition requiring corrective action found on this report, and the fix it needs."""

    key: str  # the fix's place in details["fixes"] and its form fields (`fix-<key>-repair`, ...)
    subject: str  # the control or point of discharge
    what: str  # what was found: the item answered "no", or the discharge's signs
    condition: CorrectiveCondition


def fix_key(item_key: str, subject_id: str) -> str:
    """The fix of a "no" to `item_key` for one subject (the answer's own field name, without `answer-`)."""
    return f"{item_key}-{subject_id or 'site'}"


def item_photos_field(item_key: str, subject_id: str) -> str:
    """The form field of the photos taken on a checklist item for one subject."""
    return f"item-{fix_key(item_key, subject_id)}-photos"


def item_photo_caption(item_text: str, subject_name: str) -> str:
    """The caption of a photo taken on a checklist item when none was typed: what it was taken for."""
    return f"Checklist: {shorten(item_text)} ({subject_name})"


def item_photos(inspection: Inspection, details: dict[str, Any]) -> dict[str, list[Photo]]:
    """The photos taken on each checklist item for one subject (by its fix key), as the report's details list
    them. An amendment lists those of the report it corrects too: they are found there."""
    kept = details.get("item_photos") or {}
    shas = {sha for listed in kept.values() for sha in listed}
    if not shas:
        return {}
    reports, report = [], inspection
    while report is not None and report.id not in reports:
        reports.append(report.id)
        report = db.session.get(Inspection, report.amends_id) if report.amends_id else None
    found: dict[str, Photo] = {}
    query = select(Photo).where(Photo.inspection_id.in_(reports), Photo.original_sha256.in_(shas))
    for photo in db.session.scalars(query.order_by(Photo.created_at, Photo.id)):
        if photo.original_sha256 not in found or photo.inspection_id == inspection.id:  # the report's own first
            found[photo.original_sha256] = photo
    return {key: [found[sha] for sha in listed if sha in found] for key, listed in kept.items()}


def discharge_fix_key(point_id: str) -> str:
    return f"discharge-{point_id}"


def discharges_asked(inspection: Inspection) -> bool:
    """Whether the town asks this report for the discharges at each point of discharge."""
    rule = profile_of(inspection.permit).discharges
    return rule is not None and rule.asked_on(inspection.type)


def discharge_points(permit: Permit, details: dict[str, Any]) -> list[Subject]:
    """The permit's outfall structures, then the points of discharge named on the report."""
    named = [Subject(p["id"], p["name"]) for p in details.get("discharge_points", [])]
    return [Subject(s.id, s.name) for s in permit.structures if s.kind == "outfall"] + named


def unsafe_allowed(inspection: Inspection) -> bool:
    """Whether an item of this report may be left uninspected because it was unsafe (profile data)."""
    return type_of(inspection).unsafe_citation is not None


@implements("CGP 2022 Part 5.1")
def needed_fixes(inspection: Inspection, answers: dict[tuple[str, str], tuple[str | None, str | None]],
                 details: dict[str, Any]) -> list[NeededFix]:
    """Every condition requiring corrective action the report records, in the order of the form."""
    profile = profile_of(inspection.permit)
    needed = []
    for item, found in checklist(inspection, details):
        if item.corrective_condition is None:
            continue
        for subject in found:
            if answers.get((item.key, subject.id), (None, None))[0] == "no":
                needed.append(NeededFix(fix_key(item.key, subject.id), subject.name, f"“No”: {item.text}",
                                        profile.condition(item.corrective_condition)))
    if discharges_asked(inspection):
        seen = details.get("discharges", {})
        for point in discharge_points(inspection.permit, details):
            if SEDIMENT in (seen.get(point.id) or {}).get("signs", []):
                needed.append(NeededFix(discharge_fix_key(point.id), point.name, "Discharge with visible sediment",
                                        profile.condition(profile.discharges.sediment_condition)))
    return needed


def linked_action(inspection: Inspection, action_id: str | None) -> CorrectiveAction | None:
    """The corrective action a fix is tied to, if it is one of this permit's still open that the report's
    author may see: not one opened on someone else's draft (queries.sees_report), whose id a
    hand-made post could name."""
    action = db.session.get(CorrectiveAction, action_id) if action_id else None
    if action is None or action.permit_id != inspection.permit_id or action.status == "verified":
        return None
    source = action.finding.inspection if action.finding is not None else None
    if source is not None and not source.is_submitted and source.id != inspection.id \
            and source.author_id != inspection.author_id:
        return None
    return action


def opened_here(inspection: Inspection, action_id: str | None) -> bool:
    """Whether the corrective action `action_id` was opened on this report (by one of its fixes)."""
    action = db.session.get(CorrectiveAction, action_id) if action_id else None
    return action is not None and action.finding is not None and action.finding.inspection_id == inspection.id


def problems(inspection: Inspection, answers: dict[tuple[str, str], tuple[str | None, str | None]],
             details: dict[str, Any]) -> dict[str, str]:
    """What the CGP's parts of the report still lack before it can be submitted, by form field: whether each
    point of discharge was discharging (now and since the last inspection), the reason an item was not
    inspected because unsafe, and each condition requiring corrective action tied to its fix."""
    found: dict[str, str] = {}
    if discharges_asked(inspection):
        seen = details.get("discharges", {})
        for point in discharge_points(inspection.permit, details):
            for when, words in (("now", "at the time of the inspection"), ("since_last", "since the last inspection")):
                if (seen.get(point.id) or {}).get(when) is None:
                    found[f"discharge-{point.id}-{when}"] = f"{point.name}: say whether it was discharging {words}."
    for (item_key, subject_id), (answer, note) in answers.items():
        if answer == "unsafe" and not (note or "").strip():
            found[f"note-{fix_key(item_key, subject_id)}"] = "Say why it was unsafe to inspect (the reason is the note)."
    return found | fix_problems(inspection, answers, details)


def recorded_fixes(inspection: Inspection) -> list[tuple[NeededFix, dict[str, Any], CorrectiveAction | None]]:
    """Each condition requiring corrective action the stored report records, with its fix and action."""
    details = inspection.details or {}
    answers = {(a.item_key, a.subject_id): (a.answer, a.note) for a in inspection.answers}
    actions = actions_of(inspection, details)
    fixes = details.get("fixes", {})
    return [(need, fixes.get(need.key) or {}, actions.get((fixes.get(need.key) or {}).get("action_id")))
            for need in needed_fixes(inspection, answers, details)]


def actions_of(inspection: Inspection, details: dict[str, Any]) -> dict[str, CorrectiveAction]:
    """The corrective actions of the report's permit its fixes are tied to, by id."""
    ids = [f["action_id"] for f in details.get("fixes", {}).values() if f.get("action_id")]
    if not ids:
        return {}
    return {a.id: a for a in db.session.scalars(select(CorrectiveAction).where(
        CorrectiveAction.id.in_(ids), CorrectiveAction.permit_id == inspection.permit_id))}


def fix_problems(inspection: Inspection, answers: dict[tuple[str, str], tuple[str | None, str | None]],
                 details: dict[str, Any]) -> dict[str, str]:
    """What each condition requiring corrective action still lacks before the report can be submitted:
    the repair, the date first observed and its corrective action (CGP 2022 Part 5.1, Part 5.4)."""
    problems = {}
    fixes = details.get("fixes", {})
    profile = profile_of(inspection.permit)
    for need in needed_fixes(inspection, answers, details):
        fix, name = fixes.get(need.key) or {}, f"fix-{need.key}"
        condition = profile.filed_under(need.condition, fix.get("kind"))
        if not (fix.get("repair") or "").strip():
            problems[f"{name}-repair"] = f"{need.subject}: say what repair is needed ({condition.citation})."
        if not fix.get("first_observed"):
            problems[f"{name}-first_observed"] = f"{need.subject}: give the date the condition was first observed."
        if linked_action(inspection, fix.get("action_id")) is None:
            problems[f"{name}-action"] = (f"{need.subject}: {condition.text} ({condition.citation}) needs "
                                          "a corrective action: open one (its kind and who does it) or choose "
                                          "an open one.")
    return problems


def first_observed(fix: dict[str, Any]) -> dt.date | None:
    value = fix.get("first_observed")
    return dt.date.fromisoformat(value) if value else None
