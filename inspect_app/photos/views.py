"""Photo pages: upload to a record, the files themselves, caption edits and a permit's photo list."""
from __future__ import annotations

import json
import re
import math
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from sqlalchemy import bindparam, func, select

from inspect_app.accounts.policy import allowed, permit_or_404, require, sees_part, shown
from inspect_app.accounts.records import kept_per_user
from inspect_app.blobs import files
from inspect_app.extensions import db, htmx
from inspect_app.inputs import query_int
from inspect_app.permits.models import Permit
from inspect_app.photos import services
from inspect_app.photos.forms import CaptionForm, MarkupForm, PhotoUploadForm
from inspect_app.photos.models import Photo
from inspect_app.photos.processing import MAX_BYTES, PhotoRejected

bp = Blueprint("photos", __name__)

# Who may attach a photo to what, beyond "photo.add": the action that owns that kind of record.
# The files are addressed by their content, so a browser may keep them as long as it likes.
CACHE_SECONDS = 365 * 24 * 3600


@dataclass
class Picker:
    """What the photo picker partial shows: its id, photos, forms and limits."""

    id: str
    permit: Permit
    target_ids: dict[str, str]
    photos: list[Photo]
    form: PhotoUploadForm
    editable: bool
    locked_reason: str | None
    upload_url: str
    max_bytes: int
    too_large_message: str


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every photo page needs a signed-in user."""


@bp.app_template_global()
def photo_picker(permit: Permit, photo_target: dict[str, str], photos: list[Photo] | None = None,
                 editable: bool = False, form: PhotoUploadForm | None = None) -> Picker:
    """The picker for ``photo_target`` (e.g. {"inspection_id": id}) of ``permit``, for the partial."""
    target_ids = {key: value for key, value in photo_target.items() if value}
    target = services.resolve_target(permit, target_ids)
    picker_id = _picker_id(target_ids)
    if form is None:
        form = PhotoUploadForm(formdata=None)
    form.photo.id, form.caption.id = f"{picker_id}-photo", f"{picker_id}-caption"
    locked = services.target_locked_reason(target)
    limit = min(MAX_BYTES, request.max_content_length or MAX_BYTES)
    return Picker(
        id=picker_id, permit=permit, target_ids=target_ids,
        photos=photos if photos is not None else services.photos_for(permit, target, shown(current_user, Photo)),
        form=form,
        editable=editable and locked is None and _may(_target_actions(target_ids), permit),
        locked_reason=locked, upload_url=url_for("photos.upload", permit_id=permit.id, **target_ids),
        max_bytes=limit, too_large_message=_too_large_message(limit),
    )


def section(permit: Permit) -> dict:
    """What the permit page shows of photos: how many the current user may see (_permit_photos.html)."""
    return {"count": db.session.scalar(_photos_shown_to(current_user), {"permit_id": permit.id})}


# Counted on the table itself: not a subquery of the list's every column, in its order.
_photos_shown_to = kept_per_user(lambda hidden: select(func.count()).select_from(Photo).where(
    Photo.permit_id == bindparam("permit_id"), Photo.id.not_in(hidden["photos"])), shared=True)


@bp.app_template_global()
def photo_caption_form(photo: Photo, form: CaptionForm | None = None) -> CaptionForm | None:
    """The caption form of one photo tile, or None when the photo can no longer change."""
    if services.locked_reason(photo) or not _may(_photo_actions(photo), _permit_of(photo)):
        return None
    form = form or CaptionForm(formdata=None, data={"caption": photo.caption or ""})
    form.caption.id = f"caption-{photo.id}"
    return form


@bp.app_template_global()
def may_mark_up(photo: Photo) -> bool:
    """Whether the current user may draw on this photo now (a tile's "Mark up" link)."""
    return services.locked_reason(photo) is None and _may(_markup_actions(photo), _permit_of(photo))


@bp.app_template_global()
def photo_src(photo: Photo, kind: str) -> str:
    """The URL of a photo's file of `kind`, naming its content: a new markup is a new URL, never a stale copy."""
    return url_for("photos.file", photo_id=photo.id, kind=kind, v=services.rendition_sha(photo, kind)[:16])


@bp.get("/permits/<permit_id>/photos/add")
def add(permit_id: str):
    """A page with the picker of one record of the permit, for adding its photos."""
    permit = permit_or_404(permit_id, "photo.add")
    target_ids, _ = _target(permit)
    return render_template("photos/upload.html", permit=permit, photo_target=target_ids, editable=True)


@bp.post("/permits/<permit_id>/photos")
def upload(permit_id: str):
    """Add a photo (field ``photo``, ``caption``) to one record of the permit named by its id."""
    permit = permit_or_404(permit_id, "photo.add")
    target_ids, target = _target(permit)
    form = PhotoUploadForm()
    if form.validate_on_submit():
        try:
            services.store_photo(current_user, permit, form.photo.data.stream, caption=form.caption.data,
                                 photo_id=form.photo_id.data or None, **target)
        except (PhotoRejected, services.PhotoRefused) as refusal:
            form.photo.errors.append(str(refusal))  # beside the file input
        else:
            db.session.commit()
            if htmx.target != _picker_id(target_ids):
                return redirect(url_for("photos.index", permit_id=permit.id), code=303)
            return _picker(permit, target_ids)
    # The id is the device's, in a field no one sees: what is wrong with it is said beside the photo.
    form.photo.errors = [*form.photo.errors, *form.photo_id.errors]
    return _picker(permit, target_ids, form, 422)


@bp.post("/photos/<photo_id>/caption")
def caption(photo_id: str):
    """Change a photo's caption while its report is still a draft."""
    photo = _photo_or_404(photo_id)
    permit = permit_or_404(photo.permit_id, "photo.add")
    for action in _photo_actions(photo):
        require(action, permit)
    form = CaptionForm()
    status = 422
    if form.validate_on_submit():
        try:
            services.update_caption(current_user, photo, form.caption.data)
        except services.PhotoRefused as refusal:
            form.caption.errors.append(str(refusal))
        else:
            db.session.commit()
            status, form = 200, None
    if htmx.target != f"photo-{photo.id}" and status == 200:
        return redirect(url_for("photos.index", permit_id=photo.permit_id), code=303)
    return render_template("photos/_photo_tile.html", photo=photo, caption_form=form, editable=True), status


# "Mark up" on a photo of a draft report comes back to the report (`back`): a report's own address, nothing else.
REPORT_PATH = re.compile(r"^/inspections/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _back() -> str | None:
    """The report page to return to after drawing, when the link named one (any other address is ignored)."""
    back = request.args.get("back", "")
    return back if REPORT_PATH.fullmatch(back) else None


@bp.get("/photos/<photo_id>/markup")
def markup(photo_id: str):
    """A photo with its markup, and (for whoever may edit what it belongs to) a canvas to draw on it."""
    photo = _photo_or_404(photo_id)
    return _markup_page(photo, MarkupForm(formdata=None, data={"markup": json.dumps(photo.markup or [])}))


@bp.post("/photos/<photo_id>/markup")
def save_markup(photo_id: str):
    """Store the arrows, circles and labels drawn on a photo (field ``markup``, JSON); 422 if refused."""
    photo = _photo_or_404(photo_id)
    for action in _markup_actions(photo):
        require(action, _permit_of(photo))
    form = MarkupForm()
    if form.validate_on_submit():
        try:
            services.mark_up(current_user, photo, form.shapes)
        except services.PhotoRefused as refusal:
            form.markup.errors.append(str(refusal))
        else:
            db.session.commit()
            back = _back()
            return redirect(f"{back}#photo-{photo.id}" if back else url_for("photos.markup", photo_id=photo.id),
                            code=303)
    return _markup_page(photo, form, 422)


@bp.get("/photos/<photo_id>/<kind>")
def file(photo_id: str, kind: str):
    """A photo's original (byte for byte), display rendition or thumbnail."""
    photo = _photo_or_404(photo_id)
    if kind not in services.RENDITIONS:
        abort(404)
    sha, content_type = services.rendition(photo, kind)
    image = content_type.startswith("image/")
    extension = content_type.removeprefix("image/").replace("jpeg", "jpg") if image else "bin"
    try:
        response = files.send_blob(sha, mimetype=content_type, etag=sha, max_age=CACHE_SECONDS,
                                   download_name=f"photo-{photo.id}-{kind}.{extension}")
    except FileNotFoundError:
        abort(404)
    # Only people who may see the permit get the photo: no shared caches, but the browser keeps it.
    response.cache_control.public = False
    response.cache_control.private = True
    response.cache_control.immutable = True
    return response


@bp.get("/permits/<permit_id>/photos")
def index(permit_id: str):
    """Every photo of a permit, newest first, with what each is attached to."""
    permit = permit_or_404(permit_id)
    page = db.paginate(_permit_photos(permit), page=query_int("page", 1, 1, 100_000, refuse=False),
                       per_page=60, error_out=False)
    return render_template("photos/index.html", permit=permit, page=page,
                           attached=services.attachments(page.items))


@bp.app_errorhandler(413)
def too_large(error):
    """A request body over the size limit: a page in plain words instead of a bare 413."""
    limit = request.max_content_length
    message = _too_large_message(limit) if limit else "The upload is too large."
    return render_template("photos/too_large.html", message=message), 413



def _markup_page(photo: Photo, form: MarkupForm, status: int = 200):
    return render_template("photos/markup.html", photo=photo, permit=_permit_of(photo), form=form, back=_back(),
                           editable=may_mark_up(photo), locked_reason=services.locked_reason(photo)), status


def _picker(permit: Permit, target_ids: dict[str, str], form: PhotoUploadForm | None = None,
            status: int = 200):
    """The picker htmx asked for (HX-Target), or the upload page around it for any other post."""
    template = "photos/_photo_picker.html" if htmx.target == _picker_id(target_ids) else "photos/upload.html"
    return render_template(template, permit=permit, photo_target=target_ids, photo_form=form,
                           editable=True), status, {"Vary": "HX-Target"}


def _picker_id(target_ids: dict[str, str]) -> str:
    """The id of the picker of one record, e.g. "photos-inspection-<id>" (what htmx sends as HX-Target)."""
    return "photos-" + "-".join(f"{key.removesuffix('_id')}-{value}" for key, value in target_ids.items())


def _photo_or_404(photo_id: str) -> Photo:
    """The photo, if the current user sees its permit and it is not of someone else's draft report."""
    photo = db.get_or_404(Photo, photo_id)
    permit_or_404(photo.permit_id)
    if not sees_part(current_user, photo):
        abort(404)
    return photo


def _permit_photos(permit: Permit):
    """The permit's photos the current user may see: none of someone else's draft report."""
    return services.permit_photos(permit).where(shown(current_user, Photo))


def _target_actions(target_ids: dict[str, str]) -> list[str]:
    return services.actions_for(target_ids)


def _photo_actions(photo: Photo) -> list[str]:
    """The actions owning what a photo is attached to; one attached to nothing is a close-out's."""
    keys = [key for key in services.LINK_COLUMNS if getattr(photo, key)] or ["corrective_action_id"]
    return _target_actions(dict.fromkeys(keys, ""))


def _markup_actions(photo: Photo) -> list[str]:
    """Drawing on a photo: "photo.markup" and the actions owning what it is attached to."""
    return ["photo.markup", *_photo_actions(photo)[1:]]


def _may(actions: list[str], permit: Permit) -> bool:
    return all(allowed(current_user, action, permit) for action in actions)


def _permit_of(photo: Photo) -> Permit:
    return db.session.get(Permit, photo.permit_id)


def _target(permit: Permit) -> tuple[dict[str, str], dict[str, Any]]:
    """The record ids sent with an upload, and those records; 404 if one is not on this permit."""
    target_ids = {key: request.values[key] for key in services.TARGETS if request.values.get(key)}
    if not target_ids:
        abort(400, description="Say what the photo is of: an inspection, finding, corrective action, "
                               "log entry or structure.")
    for action in _target_actions(target_ids):
        require(action, permit)
    try:
        target = services.resolve_target(permit, target_ids)
    except LookupError:
        abort(404)
    if not all(sees_part(current_user, record) for record in target.values()):
        abort(404)  # someone else's draft report does not exist for you
    return target_ids, target


def _too_large_message(limit: int) -> str:
    """The limit in words, rounded down so a file that fits the words always fits the limit."""
    if limit < 1024 * 1024:
        size = f"{limit // 1024} KB"
    else:
        size = f"{math.floor(limit * 10 / (1024 * 1024)) / 10:g} MB"
    return (f"The photo is too large to send: the limit is {size}. "
            "Take the photo again at a lower resolution, or send a smaller copy.")
