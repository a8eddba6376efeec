"""Storing photos: checked, kept byte for byte with their renditions, linked to the record, audited."""
from __future__ import annotations

import datetime as dt
import io
from collections.abc import Mapping
from typing import Any, BinaryIO

from sqlalchemy import ColumnElement, Select, bindparam, select

from inspect_app.blobs import files
from inspect_app.audit import services as audit
from inspect_app.blobs.store import BlobStore
from inspect_app.certifications.models import MaintenanceLogEntry, OMCertification
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from inspect_app.permits.models import Permit, StormwaterStructure
from inspect_app.blobs.models import Blob
from inspect_app.photos.models import Photo
from inspect_app.photos.markup import Shape, as_json
from inspect_app.labels import shorten
from inspect_app.photos.processing import (
    CONTENT_TYPES, MAX_BYTES, PhotoData, inspect_photo, make_marked_renditions, make_renditions,
)
from inspect_app.templating import humanize, local_date
from inspect_app.types import LOCAL_TZ, canonical_uuid, local, new_id

# What a photo can be attached to: the id a form or device sends, and the record it names.
TARGETS: dict[str, type] = {
    "inspection_id": Inspection,
    "finding_id": Finding,
    "corrective_action_id": CorrectiveAction,
    "log_entry_id": MaintenanceLogEntry,
    "structure_id": StormwaterStructure,
}
# Who may add a photo to what: "photo.add", and the action that owns the record it is of.
TARGET_ACTIONS = {
    "inspection_id": "inspection.perform",
    "finding_id": "inspection.perform",
    "corrective_action_id": "action.close",
    "log_entry_id": "om.log",
    "structure_id": "photo.add",
}


def actions_for(target_keys) -> list[str]:
    """The actions a user needs to add a photo of the records named by `target_keys` (keys of TARGETS)."""
    return ["photo.add"] + [TARGET_ACTIONS[key] for key in target_keys]


# The Photo columns that say where a photo belongs (a close-out photo is named by its corrective action).
LINK_COLUMNS = ("inspection_id", "finding_id", "structure_id", "log_entry_id")
# "display", "thumb" and "print" are the marked-up copies once a photo is marked up; "plain" is never.
RENDITIONS = ("original", "display", "thumb", "print", "plain")


class PhotoRefused(ValueError):
    """A good photo that cannot go where it was sent (a submitted report, another permit's record...)."""


def blob_store() -> BlobStore:
    """The app's blob store."""
    return files.blob_store()


def store_photo(actor, permit: Permit, data: PhotoData, *, caption: str | None = None,
                inspection: Inspection | None = None, finding: Finding | None = None,
                corrective_action: CorrectiveAction | None = None,
                log_entry: MaintenanceLogEntry | None = None,
                structure: StormwaterStructure | None = None, photo_id: str | None = None) -> Photo:
    """Check a photo, store its original and renditions, link it and audit it; nothing stored if refused.

    Raises PhotoRejected for a file that is no acceptable photo and PhotoRefused for a place it cannot go.
    The same photo sent again (same ``photo_id``, or same bytes to the same place) gives the first Photo.
    """
    inspection = inspection or (finding.inspection if finding is not None else None)
    _check_target(permit, inspection, finding, corrective_action, log_entry, structure)
    photo_id = _check_photo_id(photo_id)
    stream = _seekable_stream(data)
    info = inspect_photo(stream)  # PhotoRejected: empty, too large, not an image, too many pixels
    links = _links({"inspection": inspection, "finding": finding, "structure": structure,
                    "log_entry": log_entry})
    earlier = _earlier_upload(permit, info.sha256, links, corrective_action, photo_id)
    if earlier is not None:
        return earlier
    # Renditions are made before anything is written: a JPEG damaged past its headers fails here.
    renditions = make_renditions(stream)
    store = blob_store()
    stream.seek(0)
    original_sha = files.store_file(stream, info.content_type, expected_sha=info.sha256, store=store)
    photo = Photo(
        id=photo_id or new_id(), permit_id=permit.id, original_sha256=original_sha,
        display_sha256=files.store_file(renditions.display, "image/jpeg", store=store),
        thumb_sha256=files.store_file(renditions.thumb, "image/jpeg", store=store),
        print_sha256=files.store_file(renditions.print, "image/jpeg", store=store),
        width=info.width, height=info.height, taken_at=_utc(info.taken_at),
        latitude=info.latitude, longitude=info.longitude, caption=_caption(caption),
        uploaded_by_id=getattr(actor, "id", None), **links,
    )
    db.session.add(photo)
    audit.record(actor, "photo.create", photo)
    if inspection is not None and inspection.blank:
        inspection.blank = False  # a photo kept in the draft a tap on Start made: an inspection now, owing its report
    if corrective_action is not None:
        _attach_evidence(actor, corrective_action, photo)
    return photo


def store_photo_from_blob(actor, permit: Permit, sha: str, **target: Any) -> Photo:
    """Make a Photo of an original already uploaded to the blob store (the resumable sync upload)."""
    with blob_store().open(sha) as stream:
        return store_photo(actor, permit, stream, **target)


def update_caption(actor, photo: Photo, caption: str | None) -> Photo:
    """Change a photo's caption, unless the record it belongs to is closed."""
    reason = locked_reason(photo)
    if reason:
        raise PhotoRefused(reason)
    before = audit.snapshot(photo)
    photo.caption = _caption(caption)
    audit.record(actor, "photo.caption", photo, before)
    return photo


def mark_up(actor, photo: Photo, shapes: list[Shape]) -> Photo:
    """Store the markup drawn on a photo (none: remove it) and its marked-up copies, unless the photo is
    frozen. The original file, its SHA-256 and the plain renditions never change."""
    reason = locked_reason(photo)
    if reason:
        raise PhotoRefused(reason)
    before = audit.snapshot(photo)
    photo.markup = as_json(shapes)
    photo.marked_display_sha256 = photo.marked_thumb_sha256 = photo.marked_print_sha256 = None
    if shapes:
        store = blob_store()
        try:
            with store.open(photo.display_sha256) as stream:
                marked = make_marked_renditions(stream.read(), shapes)
        except FileNotFoundError:
            raise PhotoRefused("The photo's display copy is missing from the file store: it cannot be "
                               "marked up. Tell the town's administrator.") from None
        photo.marked_display_sha256 = files.store_file(marked.display, "image/jpeg", store=store)
        photo.marked_thumb_sha256 = files.store_file(marked.thumb, "image/jpeg", store=store)
        photo.marked_print_sha256 = files.store_file(marked.print, "image/jpeg", store=store)
    audit.record(actor, "photo.markup", photo, before)
    return photo


def locked_reason(photo: Photo) -> str | None:
    """Why the photo can no longer change (its report was submitted...), or None if it can."""
    if photo.inspection_id:
        reason = _inspection_locked(db.session.get(Inspection, photo.inspection_id))
        if reason:
            return reason
    if photo.log_entry_id:
        reason = _log_entry_locked(db.session.get(MaintenanceLogEntry, photo.log_entry_id))
        if reason:
            return reason
    # Evidence of any close-out verified (one photo may show more than one action done): it stays as verified.
    actions = db.session.scalars(select(CorrectiveAction).where(CorrectiveAction.evidence_photo_id == photo.id))
    return next((reason for action in actions if (reason := _action_locked(action))), None)


def resolve_target(permit: Permit, ids: Mapping[str, str | None]) -> dict[str, Any]:
    """The records named by ``ids`` (keys of TARGETS) as store_photo keywords; LookupError if one is
    missing or belongs to another permit."""
    target: dict[str, Any] = {}
    for key, model in TARGETS.items():
        record_id = ids.get(key)
        if not record_id:
            continue
        record = db.session.get(model, record_id)
        if record is None or record.permit_id != permit.id:
            raise LookupError(f"No such {key.removesuffix('_id').replace('_', ' ')} on this permit.")
        target[key.removesuffix("_id")] = record
    return target


def photos_for(permit: Permit, target: Mapping[str, Any], visible: ColumnElement[bool] | None = None) -> list[Photo]:
    """The photos attached to exactly this target (the records resolve_target gives), oldest first; of them, those
    `visible` holds for (policy.shown: none of someone else's draft), asked in the same statement.

    A close-out's photo is its corrective action's evidence; otherwise the photo's links must match:
    an inspection's own photos leave out those of its findings and structures, which have their own.
    """
    action = target.get("corrective_action")
    if action is not None:
        if not action.evidence_photo_id:
            return []
        query = select(Photo).where(Photo.id == action.evidence_photo_id)
    else:
        links = _links(target)
        query = select(Photo).where(Photo.permit_id == permit.id)
        for column in LINK_COLUMNS:
            attribute = getattr(Photo, column)
            query = query.where(attribute == links[column] if links[column] else attribute.is_(None))
    if visible is not None:
        query = query.where(visible)
    return list(db.session.scalars(query.order_by(Photo.created_at, Photo.id)))


def report_photos(inspection: Inspection) -> list[Photo]:
    """Every photo of a report (its own, its findings', its points of discharge's and checklist items'), oldest
    first."""
    return list(db.session.scalars(_REPORT_PHOTOS, {"inspection_id": inspection.id}))


# Built once (building a statement cost about what running it did); the report is its parameter.
_REPORT_PHOTOS = (select(Photo).where(Photo.inspection_id == bindparam("inspection_id"))
                  .order_by(Photo.created_at, Photo.id))


def permit_photos(permit: Permit) -> Select[tuple[Photo]]:
    """A query of every photo of ``permit``, newest first."""
    return select(Photo).where(Photo.permit_id == permit.id).order_by(Photo.created_at.desc(), Photo.id)


def attachments(photos: list[Photo]) -> dict[str, str]:
    """For each photo id, what the photo is attached to, in words (for the permit's photo list)."""
    def records(model: type, column: str) -> dict[str, Any]:
        ids = {getattr(photo, column) for photo in photos} - {None}
        return {r.id: r for r in db.session.scalars(select(model).where(model.id.in_(ids)))} if ids else {}

    inspections, findings = records(Inspection, "inspection_id"), records(Finding, "finding_id")
    structures = records(StormwaterStructure, "structure_id")
    log_entries = records(MaintenanceLogEntry, "log_entry_id")
    evidence = set(db.session.scalars(select(CorrectiveAction.evidence_photo_id).where(
        CorrectiveAction.evidence_photo_id.in_([photo.id for photo in photos]))))
    described = {}
    for photo in photos:
        parts = []
        if photo.inspection_id in inspections:
            inspection = inspections[photo.inspection_id]
            parts.append(f"{humanize(inspection.type)} inspection, {local_date(inspection.performed_at)}")
        if photo.finding_id in findings:
            parts.append(f"finding: {shorten(findings[photo.finding_id].description)}")
        if photo.structure_id in structures:
            parts.append(structures[photo.structure_id].name)
        if photo.log_entry_id in log_entries:
            entry = log_entries[photo.log_entry_id]
            parts.append(f"O&M log, {local_date(entry.performed_on)}")
        if photo.id in evidence:
            parts.append("close-out evidence of a corrective action")
        described[photo.id] = "; ".join(parts) or "the permit"
    return described


def target_locked_reason(target: Mapping[str, Any]) -> str | None:
    """Why photos can no longer be added to this target, or None if they can."""
    inspection = target.get("inspection") or getattr(target.get("finding"), "inspection", None)
    action = target.get("corrective_action")
    return (_inspection_locked(inspection) or (_action_locked(action) if action else None)
            or _log_entry_locked(target.get("log_entry")))


def rendition_sha(photo: Photo, kind: str) -> str:
    """The SHA-256 of the file served as `kind` (Photo.shown_sha256); a photo stored before print
    renditions existed serves its display rendition as its print one."""
    return photo.shown_sha256(kind) or photo.display_sha256


def rendition(photo: Photo, kind: str) -> tuple[str, str]:
    """(sha, content type) of one of the photo's RENDITIONS (the file: `files.send_blob`). A photo's file is an
    image the upload checked, so it is served as one: a file row is shared by every upload of the same bytes, and
    keeps the type the first one gave, which another upload (an import's, as its browser declared it) may have
    given as text/html. Such a type is not served; the image's own is, read from its first bytes."""
    sha = rendition_sha(photo, kind)
    blob = db.session.get(Blob, sha)
    if blob is not None and blob.content_type in CONTENT_TYPES.values():
        return sha, blob.content_type
    return sha, _image_type(sha)


def _image_type(sha: str) -> str:
    """The image type of a stored file by its signature (JPEG, PNG, WebP), else a download of bytes."""
    try:
        with files.blob_store().open(sha) as stored:
            head = stored.read(12)
    except FileNotFoundError:
        return "application/octet-stream"
    if head.startswith(b"\xff\xd8\xff"):
        return CONTENT_TYPES["JPEG"]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return CONTENT_TYPES["PNG"]
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return CONTENT_TYPES["WEBP"]
    return "application/octet-stream"


def _check_target(permit: Permit, inspection, finding, corrective_action, log_entry, structure) -> None:
    """Every record the photo goes to belongs to ``permit``, and none of them is closed."""
    for record in (inspection, finding, corrective_action, log_entry, structure):
        if record is not None and record.permit_id != permit.id:
            raise PhotoRefused("That record belongs to another permit.")
    if finding is not None and inspection is not None and finding.inspection_id != inspection.id:
        raise PhotoRefused("That finding belongs to another inspection.")
    reason = _inspection_locked(inspection) or (
        _action_locked(corrective_action) if corrective_action is not None else None) or _log_entry_locked(log_entry)
    if reason:
        raise PhotoRefused(reason)


def _inspection_locked(inspection: Inspection | None) -> str | None:
    if inspection is None or not inspection.is_submitted:
        return None
    # A submitted report is the legal record and never changes (SPEC *Inspection*); corrections amend it.
    when = local(inspection.submitted_at)
    on = f" on {when:%b %-d, %Y}" if when else ""
    return (f"This inspection report was submitted{on} and can no longer change. "
            "To add photos, start an amendment of the report.")


def _log_entry_locked(entry: MaintenanceLogEntry | None) -> str | None:
    """Why a maintenance log entry's photos no longer change: a standing annual certification (§380-14 C(2)(l))
    covers its day, and what was certified with it stays as it was signed."""
    if entry is None:
        return None
    # The standing certifications whose period holds its day, and of them one that was signed with it (an entry
    # logged late, after the signing, is not part of it: its photos are still free).
    signed_with = db.session.scalars(select(OMCertification.contents).where(
        OMCertification.permit_id == entry.permit_id, OMCertification.status != "deficient",
        OMCertification.period_start <= entry.performed_on, OMCertification.period_end >= entry.performed_on))
    if not any(entry.id in (contents or {}).get("entry_ids", ()) for contents in signed_with):
        return None
    return "This log entry is part of a signed annual certification: its photos can no longer change."


def _action_locked(action: CorrectiveAction) -> str | None:
    if action.status != "verified":
        return None
    return "This corrective action was verified as closed; its close-out evidence can no longer change."


def _check_photo_id(photo_id: str | None) -> str | None:
    """A device's photo id in its one text form: sent again in another (upper case, hyphens elsewhere), it is the
    same photo, not a second one under an id no other part of the app writes so."""
    if photo_id is None:
        return None
    try:
        return canonical_uuid(photo_id)
    except ValueError:
        raise PhotoRefused("The photo id is not a UUID.") from None


def _earlier_upload(permit: Permit, sha: str, links: dict[str, str | None],
                    action: CorrectiveAction | None, photo_id: str | None) -> Photo | None:
    """The Photo this upload repeats (a device replaying its id, or a retried form), if any."""
    if photo_id is not None:
        photo = db.session.get(Photo, photo_id)
        if photo is None:
            return None
        if photo.original_sha256 != sha or photo.permit_id != permit.id:
            raise PhotoRefused("A different photo already has this photo id.")
        return photo
    if action is not None:  # a close-out photo is the action's evidence, checked by its id
        evidence = db.session.get(Photo, action.evidence_photo_id) if action.evidence_photo_id else None
        return evidence if evidence is not None and evidence.original_sha256 == sha else None
    query = select(Photo).where(Photo.permit_id == permit.id, Photo.original_sha256 == sha)
    for column, value in links.items():
        attribute = getattr(Photo, column)
        query = query.where(attribute == value if value else attribute.is_(None))
    return db.session.scalars(query.limit(1)).first()


def _attach_evidence(actor, action: CorrectiveAction, photo: Photo) -> None:
    """Make ``photo`` the close-out evidence of ``action`` (CGP Part 5.4: document the corrective action)."""
    before = audit.snapshot(action)
    action.evidence_photo_id = photo.id
    action.revision += 1
    audit.record(actor, "corrective_action.evidence", action, before)


def _seekable_stream(data: PhotoData) -> BinaryIO:
    """A stream that can be read more than once: checks, renditions and storage each read it."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return io.BytesIO(data)
    if data.seekable():
        data.seek(0)
        return data
    return io.BytesIO(data.read(MAX_BYTES + 1))  # one byte over is enough to refuse it as too large


def _utc(taken_at: dt.datetime | None) -> dt.datetime | None:
    """EXIF time as aware UTC; a camera time without a zone is local time in the town."""
    if taken_at is None:
        return None
    if taken_at.tzinfo is None:
        taken_at = taken_at.replace(tzinfo=LOCAL_TZ)
    return taken_at.astimezone(dt.UTC)


def _caption(caption: str | None) -> str | None:
    return (caption or "").strip() or None


def _id(record: Any) -> str | None:
    return record.id if record is not None else None


def _links(target: Mapping[str, Any]) -> dict[str, str | None]:
    """The Photo link columns for a target; a finding's photos belong to its inspection too."""
    finding = target.get("finding")
    inspection = target.get("inspection") or getattr(finding, "inspection", None)
    return {"inspection_id": _id(inspection), "finding_id": _id(finding),
            "structure_id": _id(target.get("structure")), "log_entry_id": _id(target.get("log_entry"))}
