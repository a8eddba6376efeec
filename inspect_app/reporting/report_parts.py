"""The repeating parts of the report form: findings (each with its corrective action and its photos) and a
walk-through's punch-list items, posted with the report itself (save or submit), online or sent again
from a device's outbox. Each part is a fieldset named `<part>-new-<id>-<field>`, the id made on the device
as it clones the part's <template>; the server's own forms check them, errors beside their fields."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from werkzeug.datastructures import MultiDict

from inspect_app.reporting import submission
from inspect_app.findings.forms import ActionForm, FindingForm, PunchForm, action_form, finding_form
from inspect_app.findings.services import NewAction, NewFinding
from inspect_app.reporting.submission import NewPhoto, NewPunchItem
from inspect_app.inspections import checks
from inspect_app.inspections.models import Inspection
from inspect_app.inspections.queries import checklist
from inspect_app.inspections.services import ReportInput
from inspect_app.permits.models import Permit
from inspect_app.photos.captions import CaptionRefused, parse_photo_captions
from inspect_app.photos.markup import MarkupRefused, Shape, parse_photo_markups
from inspect_app.photos.posted import sent_under

PART = re.compile(r"^(finding|punch)-new-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-description$")
NO_CSRF = {"csrf": False}  # the report form's own token covers its parts


@dataclass
class NewPart:
    """A finding typed into the report form (with its corrective action, if one is asked for)."""

    id: str
    finding: FindingForm
    action: ActionForm
    wants_action: bool


@dataclass
class Parts:
    findings: list[NewPart] = field(default_factory=list)
    punch: list[tuple[str, PunchForm]] = field(default_factory=list)
    # What was drawn on photos chosen on the form, by each original's SHA-256 (`photos_markup`).
    markup: dict[str, list[Shape]] = field(default_factory=dict)
    # The captions typed for them, by each original's SHA-256 (`photos_caption`).
    captions: dict[str, str] = field(default_factory=dict)


def blank(permit: Permit) -> Parts:
    """One blank part of each kind under the id `__id__`, for the page's <template>s."""
    return Parts([_finding(permit, "__id__", None)], [("__id__", _punch("__id__", None))])


def read(permit: Permit, form: MultiDict) -> tuple[Parts, dict[str, str]]:
    """The new parts posted with the report, checked by their forms; the second value: field id → message."""
    parts, errors = Parts(), {}
    for kind, part_id in dict.fromkeys(m.groups() for m in map(PART.match, form) if m):
        if kind == "finding":
            part = _finding(permit, part_id, form)
            parts.findings.append(part)
            checked = [part.finding, part.action] if part.wants_action else [part.finding]
        else:
            punch = _punch(part_id, form)
            parts.punch.append((part_id, punch))
            checked = [punch]
        for sub in checked:
            if not sub.validate():
                errors.update({f.id: f.errors[0] for f in sub if f.errors})
    try:
        parts.markup = parse_photo_markups(form.get("photos_markup"))
    except MarkupRefused as refusal:
        errors["new-parts"] = f"The markup drawn on a photo was refused: {refusal}"
    try:
        parts.captions = parse_photo_captions(form.get("photos_caption"))
    except CaptionRefused as refusal:
        errors["new-parts"] = f"The caption of a photo was refused: {refusal}"
    return parts, errors


def apply(actor, inspection: Inspection, parts: Parts, data: ReportInput) -> dict[str, str]:
    """Record the parts on the draft (`submission.record_parts`); the message of what was refused, by field id."""
    try:
        submission.record_parts(actor, inspection, sent(inspection, parts, data), data)
    except submission.PartRefused as error:
        return {"new-parts": str(error)}
    return {}


def sent(inspection: Inspection, parts: Parts, data: ReportInput) -> submission.ReportParts:
    """The parts as the submit service takes them, with the photos posted for the report, for each checklist item
    and subject (`item-<item>-<subject>-photos`), for each point of discharge (`discharge-<point id>-photos`) and
    for each new finding."""
    photos = [NewPhoto(each) for each in sent_under("photos")]
    for item, found in checklist(inspection, data.details):
        for subject in found:
            caption = checks.item_photo_caption(item.text, subject.name)
            photos += [NewPhoto(each, caption=caption, item=checks.fix_key(item.key, subject.id))
                       for each in sent_under(checks.item_photos_field(item.key, subject.id))]
    for point in checks.discharge_points(inspection.permit, data.details):
        photos += [NewPhoto(each, caption=f"Point of discharge: {point.name}", discharge=point.id)
                   for each in sent_under(f"discharge-{point.id}-photos")]
    new_findings = []
    for index, part in enumerate(parts.findings):
        new_findings.append(_new_finding(part))
        photos += [NewPhoto(each, finding=index) for each in sent_under(f"finding-new-{part.id}-photos")]
    punch = [NewPunchItem(form.description.data) for _, form in parts.punch]
    return submission.ReportParts(new_findings, punch, photos, parts.markup, parts.captions)


def _new_finding(part: NewPart) -> NewFinding:
    f, a = part.finding, part.action
    actions = [NewAction(a.kind.data, a.description.data, a.owner_id.data or None, a.owner_name.data)
               ] if part.wants_action else []
    return NewFinding(f.description.data, f.location.data, f.severity.data, f.is_violation.data, f.citation.data,
                      f.area_id.data, f.structure_id.data, actions)


def _finding(permit: Permit, part_id: str, form: MultiDict | None) -> NewPart:
    # Prefixes end in "-" so WTForms adds none (it adds none after "__id__" either).
    finding = finding_form(permit, prefix=f"finding-new-{part_id}-", formdata=form, meta=NO_CSRF)
    action = action_form(permit, f"new-{part_id}-", formdata=form, meta=NO_CSRF)
    wants = bool(form and (form.get(f"action-new-{part_id}-description") or "").strip())
    return NewPart(part_id, finding, action, wants)


def _punch(part_id: str, form: MultiDict | None) -> PunchForm:
    return PunchForm(prefix=f"punch-new-{part_id}-", formdata=form, meta=NO_CSRF)
