"""Submitting a report with what was found: the one service the report form and a device's operation call.

It sits above the domains it drives (inspections, findings, photos, enforcement, documents): a final inspection
that fails issues its stop-work order here, after the report is filed, and the report is mailed with its PDF.

A report is sent with its parts: findings (each with its corrective actions), a walk-through's punch list and
photos (of the report, of a new finding, of a point of discharge). The report form reads them from its fields
(`report_parts`), a device's operation from its payload (sync); both hand them here as `ReportParts`, and they
are recorded on the draft in one order by the domains' own services, then the report is signed, submitted
and sent. Everything only flushes: the caller commits, or rolls back on an error.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select

from inspect_app import inspection_types
from inspect_app.enforcement import services as enforcement
from inspect_app.extensions import db, hold
from inspect_app.findings import services as findings
from inspect_app.inspections.models import Finding, Inspection, PunchListItem
from inspect_app.permits.models import Permit
from inspect_app.findings.services import FindingError, NewFinding
from inspect_app.inspections import services as inspections
from inspect_app.inspections.queries import type_of
from inspect_app.inspections.services import ReportInput
from inspect_app.permits.services import profile_of
from inspect_app.photos import services as photos
from inspect_app.photos.markup import Shape
from inspect_app.photos.models import Photo
from inspect_app.photos.posted import Sent, sent_sha256, store_sent
from inspect_app.photos.processing import PhotoRejected
from inspect_app.photos.services import PhotoRefused
from inspect_app.reporting import notification
from inspect_app.templating import local_time


class PartRefused(ValueError):
    """A part of the report the services refused; `field` is where: `form` (a fix the checklist asks for),
    `findings.<i>.<field>`, `punch_list.<i>.<field>`, `photos.<i>.sha256`, `photos_markup` or `photos_caption`."""

    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field = field_name


@dataclass
class NewPhoto:
    """A photo sent with the report; of one of its new findings (`finding`: its index), of a point of discharge
    (`discharge`: the point's id) or of a checklist item for one subject (`item`: its key in the report's
    `item_photos`, inspections/checks.py), else of the report itself. `id` made by a device, if it made one;
    `caption` when none was typed for it (ReportParts.captions)."""

    sent: Sent
    caption: str | None = None
    id: str | None = None
    finding: int | None = None
    discharge: str | None = None
    item: str | None = None

    @property
    def kept_in_details(self) -> bool:
        """Whether the report's details say what it shows (a point of discharge, a checklist item)."""
        return self.discharge is not None or self.item is not None


@dataclass
class NewPunchItem:
    """An item of a walk-through's punch list (§380-16 C(4)(d)); `id` made by a device, if it made one."""

    description: str
    id: str | None = None


@dataclass
class ReportParts:
    findings: list[NewFinding] = field(default_factory=list)
    punch_list: list[NewPunchItem] = field(default_factory=list)
    photos: list[NewPhoto] = field(default_factory=list)
    # Shapes drawn on photos before they were sent, by the SHA-256 of each original (photos/markup.py).
    markup: dict[str, list[Shape]] = field(default_factory=dict)
    # Captions typed for photos before they were sent, by the SHA-256 of each original (photos/captions.py).
    captions: dict[str, str] = field(default_factory=dict)


def record_parts(actor, inspection: Inspection, parts: ReportParts, data: ReportInput) -> None:
    """Record the parts on the draft, before the report's own fields (`data`, which takes the photos of each
    point of discharge and the corrective actions opened for its fixes). PartRefused says what was refused."""
    _photos_kept_in_details(actor, inspection, parts, data)
    try:  # CGP 2022 Part 5.1: each control or discharge needing a fix opens its action
        findings.open_fixes(actor, inspection, data)
    except FindingError as error:
        raise PartRefused("form", str(error)) from None
    made = [_finding(actor, inspection, index, new) for index, new in enumerate(parts.findings)]
    for index, item in enumerate(parts.punch_list):
        _punch_item(actor, inspection, index, item)
    for index, photo in enumerate(parts.photos):
        if not photo.kept_in_details:
            target = {"inspection": inspection} | ({"finding": made[photo.finding]} if photo.finding is not None else {})
            _photo(actor, inspection, f"photos.{index}", photo, parts.captions, **target)
    _caption(actor, inspection, parts.captions)
    _mark_up(actor, inspection, parts.markup)


def submit_report(actor, inspection: Inspection, data: ReportInput, parts: ReportParts,
                  fetch_weather: bool = True, observed_weather_asked: bool = True) -> Inspection:
    """Record the parts, sign and submit the report (§380-16 C(4)), and send it to the applicant and the
    authority. PartRefused, or ReportIncomplete with every problem: the caller rolls back."""
    record_parts(actor, inspection, parts, data)
    inspections.submit(actor, inspection, data, fetch_weather=fetch_weather,
                       observed_weather_asked=observed_weather_asked)
    if (inspection_types.accepts_system(inspection.type) and inspection.evaluation == "violations"
            and profile_of(inspection.permit).failed_final_stops_work and _not_as_planned(inspection)):
        _enforce_failed_final(actor, inspection)
    notification.send_report(inspection)
    return inspection


def _not_as_planned(inspection: Inspection) -> bool:
    """Whether the final found the system not complying with the plan: a "no" to its item so marked
    (`no_stops_work`). §380-16 C(4)(e)[4]: a system "built as called for in the stormwater management plan" that
    fails in operation "shall be corrected by the permittee", the surety behind it; the order is [5]'s alone."""
    marked = {item.key for item in type_of(inspection).checklist if item.no_stops_work}
    return any(answer.item_key in marked and answer.answer == "no" for answer in inspection.answers)


def _enforce_failed_final(actor, inspection: Inspection) -> None:
    """§380-16 C(4)(e)[5]: written notice of violation and a stop-work order until corrected and approved."""
    permit = inspection.permit
    findings = [f for f in inspection.findings if f.is_violation and f.status != "corrected"]
    clause = profile_of(permit).cite("stop_work_final")  # the town's own clause, none where it cites none
    text = (f"The final inspection of {local_time(inspection.performed_at)} found that the stormwater "
            f"management system does not comply with the approved plan{f' ({clause})' if clause else ''}.\n\n"
            f"Corrective actions required:\n{inspection.corrective_steps}")
    # The permit held first, as an order issued or lifted holds it: an agent's order issued meanwhile is found
    # standing (and this notice goes with it), and a lift waits for this report, then sees its violation.
    hold(Permit, permit.id)
    standing = enforcement.standing_order(permit)
    if standing is None and permit.can_become("stop_work"):
        enforcement.issue_stop_work(actor, permit, f"Final inspection failed: {inspection.corrective_steps}",
                                    findings, inspection, notice_text=text)
    else:
        enforcement.issue_notice_of_violation(actor, permit, text, inspection, standing)


def _finding(actor, inspection: Inspection, index: int, new: NewFinding) -> Finding:
    try:
        return findings.record_finding(actor, inspection, new)
    except FindingError as error:
        raise PartRefused(f"findings.{index}.{error.field}", str(error)) from None


def _punch_item(actor, inspection: Inspection, index: int, item: NewPunchItem) -> None:
    """Add the item, unless it is here already under its id (sent again); another report's id is refused."""
    here = db.session.get(PunchListItem, item.id) if item.id else None
    if here is not None:
        if here.walk_through_id != inspection.id:
            raise PartRefused(f"punch_list.{index}.id", "Another punch-list item already has this id.")
        return
    try:
        findings.add_punch_item(actor, inspection, item.description, item_id=item.id)
    except FindingError as error:
        raise PartRefused(f"punch_list.{index}.{error.field}", str(error)) from None


def _photo(actor, report: Inspection, where: str, photo: NewPhoto, captions: dict[str, str], **target):
    """Store the photo (kept byte for byte, renditions made here) under its device id, if it has one, with the
    caption typed for it, else its own."""
    caption = captions.get(sent_sha256(photo.sent)) if captions else None
    try:
        return store_sent(actor, report.permit, photo.sent, caption=caption or photo.caption, photo_id=photo.id,
                          **target)
    except (PhotoRejected, PhotoRefused) as error:
        raise PartRefused(f"{where}.sha256", str(error)) from None


def _caption(actor, inspection: Inspection, captions: dict[str, str]) -> None:
    """Give the report's photos the captions typed for them before they were sent, each found by its original's
    SHA-256: a photo stored by an earlier post of the same form (sent again from the outbox) takes it too."""
    if not captions:
        return
    query = select(Photo).where(Photo.inspection_id == inspection.id, Photo.original_sha256.in_(captions))
    for photo in db.session.scalars(query.order_by(Photo.id)):
        if photo.caption != captions[photo.original_sha256]:
            try:
                photos.update_caption(actor, photo, captions[photo.original_sha256])
            except PhotoRefused as error:
                raise PartRefused("photos_caption", str(error)) from None


def _mark_up(actor, inspection: Inspection, markup: dict[str, list[Shape]]) -> None:
    """Draw on the report's photos what the inspector drew on them before they were sent, each found by its
    original's SHA-256. A markup of a photo the report does not have (chosen, marked up, then not sent) is
    nothing to draw."""
    if not markup:
        return
    query = select(Photo).where(Photo.inspection_id == inspection.id, Photo.original_sha256.in_(markup))
    for photo in db.session.scalars(query.order_by(Photo.id)):
        try:
            photos.mark_up(actor, photo, markup[photo.original_sha256])
        except PhotoRefused as error:
            raise PartRefused("photos_markup", str(error)) from None


def _photos_kept_in_details(actor, inspection: Inspection, parts: ReportParts, data: ReportInput) -> None:
    """Photos of each point of discharge, kept with its observation, and of each checklist item, kept under the
    item and subject, in the report's details (inspections/checks.py), by their originals' SHA-256."""
    seen = data.details.get("discharges", {})
    for index, photo in enumerate(parts.photos):
        if not photo.kept_in_details:
            continue
        stored = _photo(actor, inspection, f"photos.{index}", photo, parts.captions, inspection=inspection)
        if photo.discharge in seen:
            held = seen[photo.discharge]["photos"]
            seen[photo.discharge]["photos"] = list(dict.fromkeys(held + [stored.original_sha256]))
        elif photo.item is not None:
            items = data.details.setdefault("item_photos", {})
            items[photo.item] = list(dict.fromkeys(items.get(photo.item, []) + [stored.original_sha256]))
