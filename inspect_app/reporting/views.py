"""The report pages: start, the draft form, save, submit, amend, discard, the 24-hour notice, the signatures."""
from __future__ import annotations

import re
from functools import cache
from zoneinfo import ZoneInfo

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from sqlalchemy import Select, bindparam, select, update
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.orm import joinedload
from sqlalchemy.orm.attributes import set_committed_value

from inspect_app import held_rows, inspection_types
from inspect_app.accounts.policy import allowed, permit_or_404, require
from inspect_app.accounts.records import kept_per_user
from inspect_app.blobs import files
from inspect_app.blobs.store import AlteredBlob
from inspect_app.extensions import db, htmx
from inspect_app.idempotency import SignInNeeded, author_not_signed_in
from inspect_app.reporting import report_parts, submission
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction, Inspection, PipeVideo, PunchListItem
from inspect_app.findings.pages import page_context
from inspect_app.inspections import canonical, checks, forms, queries, services, wording
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.photos import services as photos
from inspect_app.photos.captions import CAPTION_MAX
from inspect_app.types import LOCAL_TZ

bp = Blueprint("inspections", __name__)
# The policy action a report of a type needs, so a page asks the policy (`allowed`) about the right one.
bp.add_app_template_global(queries.action_for, "report_action")
# The id a device makes for a report started with no server (crypto.randomUUID()).
DEVICE_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
LOCATION_UNREADABLE = "The device location could not be read; start again without it."
DISCARD_UNCONFIRMED = "Tick the box to confirm: the draft and everything typed in it are thrown away."
DISCARDED = "The draft was discarded: it owes nothing and is listed nowhere."


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every inspection page needs a signed-in user."""


def load_inspection(inspection_id: str, edit: bool = False) -> Inspection:
    """The inspection, if the current user may see it (a draft: its author alone, see the policy)."""
    inspection = db.session.execute(_inspection_with_permit(), {"inspection_id": inspection_id}).unique().scalar()
    if inspection is None:
        abort(404)
    # The report holds on to its permit for the rest of the request: the session forgets an object nothing
    # refers to, and the permit was read up to three times a page. Read with the report, `permit_or_404` finds
    # it in the session and only checks it.
    set_committed_value(inspection, "permit", permit_or_404(inspection.permit_id))
    if not queries.sees_report(current_user, inspection):
        abort(404)
    if edit:
        require(queries.action_for(inspection.type), inspection.permit)
    return inspection


@cache
def _inspection_with_permit() -> Select[tuple[Inspection]]:
    """`load_inspection`'s statement: a report by the parameter `inspection_id`, with its permit and the permit's
    assignments (what `permit_or_404` reads): one statement, not two."""
    return (select(Inspection).where(Inspection.id == bindparam("inspection_id"))
            .options(joinedload(Inspection.permit).joinedload(Permit.assignments)))


def locked(inspection: Inspection, message: str):
    """The answer to any change of a submitted report: 403 with the reason and the way to correct it."""
    return render_template("inspections/locked.html", inspection=inspection, message=message), 403


def section(permit: Permit, notice_form=None) -> dict:
    """What the permit page's Inspections section shows to the current user."""
    profile = profile_of(permit)
    startable = [k for k in queries.startable(permit) if allowed(current_user, queries.action_for(k.key), permit)]
    may_notice = allowed(current_user, "inspection.notice", permit)
    return {"profile": profile, "startable": startable,
            "inspections": queries.reports_seen_by(current_user, permit),
            "notices": queries.notices_of(permit) if allowed(current_user, "inspection.notice.view", permit) else [],
            # A blank one unless a refused one is given: after a notice is sent, a form still holding it would send
            # (and mail the authority) the same notice again at the next tap.
            "notice_form": (notice_form or forms.notice_form(profile, formdata=None)) if may_notice else None,
            "open_actions": visible_open_actions(permit)}


def visible_open_actions(permit: Permit) -> list:
    """The permit's open corrective actions the current user may see (not those of someone else's draft)."""
    return list(db.session.scalars(_open_actions_shown_to(current_user), {"permit_id": permit.id}))


# Someone else's draft's actions left out in the same statement (the permit's own only: a few rows).
_open_actions_shown_to = kept_per_user(lambda hidden: findings.open_actions_query(CorrectiveAction.id.not_in(
    hidden["corrective_actions"].where(CorrectiveAction.permit_id == bindparam("permit_id")))))


# What a report most often has none of: which of them it has is asked in one statement (held_rows), and the
# readers of the others return nothing without asking.
_MOSTLY_EMPTY = (PipeVideo.inspection_id, PunchListItem.resolved_in_id, Inspection.amends_id)


def render_page(inspection: Inspection, values: services.ReportInput | None = None,
                errors: dict[str, str] | None = None, status: int = 200, extra: dict | None = None,
                new_record: bool = False, parts: report_parts.Parts | None = None):
    """The report page: the draft form (with `errors` beside their fields) or the submitted report."""
    with held_rows.asked(inspection.id, _MOSTLY_EMPTY):
        return _render_page(inspection, values, errors, status, extra, new_record, parts)


def _render_page(inspection: Inspection, values: services.ReportInput | None, errors: dict[str, str] | None,
                 status: int, extra: dict | None, new_record: bool, parts: report_parts.Parts | None):
    values = values or services.values_of(inspection)
    permit, profile, kind = inspection.permit, profile_of(inspection.permit), queries.type_of(inspection)
    declared = inspection_types.spec(inspection.type)
    zone = ZoneInfo(profile.timezone)
    storms = (queries.storm_choices(permit, inspection.performed_at)
              if kind.states_occasion and not inspection.is_submitted else [])
    checklist = queries.checklist(inspection, values.details)
    sections = queries.checklist_sections(checklist, values.answers, errors or {})
    item_photos = checks.item_photos(inspection, values.details)
    under_items = {photo.id for listed in item_photos.values() for photo in listed}
    context = {
        "inspection": inspection, "permit": permit, "profile": profile, "kind": kind, "declared": declared,
        "values": values, "errors": errors or {}, "editable": not inspection.is_submitted,
        "checklist": checklist, "sections": sections,
        "first_unanswered": queries.first_unanswered(sections, values.answers),
        "clocks": queries.area_clocks(permit, profile, values.performed_at or inspection.performed_at),
        "underground": queries.underground_structures(permit), "pipes": queries.pipe_runs(permit),
        "open_punch": queries.open_punch_items(permit) if declared.resolves_punch_list else [],
        "resolved_punch": findings.resolved_in(inspection),
        "amendments": queries.amendments_seen_by(current_user, inspection),
        "amended_by_another": queries.amended_by_another(inspection),
        # A corrected report is amended through the latest version of its line of corrections, never again.
        "latest": queries.latest_version(inspection) if inspection.is_submitted else inspection,
        # A draft correction of a report someone else corrected meanwhile cannot be signed: said before it is filled.
        "corrected_meanwhile": (queries.correction_of(inspection.amends) if inspection.amends_id
                                and not inspection.is_submitted else None),
        "statement": inspection.certification_statement or canonical.certification_statement(profile, kind),
        "storm_choices": [(s.id, wording.storm_words(queries.storm_record(s), zone)) for s in storms],
        "new_record": new_record, "local_tz": LOCAL_TZ.key, "wording": wording, "zone": zone,
        "new_parts": parts or report_parts.Parts(), "blank_parts": report_parts.blank(permit),
        # The CGP's parts (inspections/checks.py): points of discharge, each fix's action, actions to link.
        "discharge_points": checks.discharge_points(permit, values.details) if checks.discharges_asked(inspection)
        else None, "unsafe_allowed": checks.unsafe_allowed(inspection),
        "fix_actions": checks.actions_of(inspection, values.details),
        "item_photos": item_photos, "fix_key": checks.fix_key,
        # The report's other photos (the site's, its findings', its points of discharge's), captioned: a draft's
        # too, or a photo saved with it looks lost ("No file chosen" again) and is taken a second time.
        "other_photos": [p for p in photos.report_photos(inspection) if p.id not in under_items],
        "item_photos_field": checks.item_photos_field, "caption_max": CAPTION_MAX,
        "link_actions": visible_open_actions(permit) if not inspection.is_submitted else [],
        "weather_pending": queries.weather_pending(inspection),
    } | (extra if extra is not None else page_context(inspection))
    return render_template("inspections/report.html", **context), status, {"Vary": "HX-Request"}


@bp.post("/permits/<permit_id>/inspections")
def start(permit_id: str):
    """Start an inspection of the permit, pre-filled with time, place, inspector and notice."""
    permit = permit_or_404(permit_id)
    form = forms.StartForm()
    refused = queries.not_offered(permit, form.type.data)
    if refused:
        abort(400, description=refused)
    require(queries.action_for(form.type.data), permit)
    if not form.validate_on_submit():
        abort(400, description=LOCATION_UNREADABLE)
    inspection = (services.blank_draft(current_user, permit, form.type.data)
                  or services.start_inspection(current_user, permit, form.type.data,
                                               form.latitude.data, form.longitude.data))
    # The address is made before the commit, which expires the report: its id would be read again.
    location = url_for("inspections.detail", inspection_id=inspection.id)
    db.session.commit()
    return redirect(location, code=303)


@bp.post("/permits/<permit_id>/inspection-notices")
def give_notice(permit_id: str):
    """Give the authority the 24-hour notice of a planned inspection (§380-16 C(3))."""
    permit = permit_or_404(permit_id)
    require("inspection.notice", permit)
    form = forms.notice_form(profile_of(permit))
    if form.validate_on_submit():
        try:
            planned = form.planned_for.data.replace(tzinfo=LOCAL_TZ)
            services.give_notice(current_user, permit, form.inspection_type.data, planned, form.note.data)
        except services.InspectionError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            if htmx.target != "inspections":
                return redirect(url_for("permits.detail", permit_id=permit.id), code=303)
            form = None
    status = 422 if form is not None else 200
    # The permit page's Inspections section when htmx asked for it, else the notice page around it.
    template = "inspections/_permit_section.html" if htmx.target == "inspections" else "inspections/notice.html"
    return render_template(template, permit=permit, section_data=section(permit, form)), status


@bp.get("/inspections/<inspection_id>")
def detail(inspection_id: str):
    """One inspection: the draft form, or the submitted report read-only."""
    return render_page(load_inspection(inspection_id))


@bp.get("/permits/<permit_id>/inspections/new/<inspection_type>")
def new(permit_id: str, inspection_type: str):
    """A new report's whole form before the server has a row for it: the page a device holds offline.

    Its form posts to /inspections/<id> under an id the device makes as the page opens
    (`data-new-record`), with the permit and type, so the first save or submit creates the report
    (create-or-submit, below) whether it is sent at once or later from the device's outbox.
    """
    permit = permit_or_404(permit_id)
    if queries.not_offered(permit, inspection_type):
        abort(404)
    require(queries.action_for(inspection_type), permit)
    planned = services.start_inspection(current_user, permit, inspection_type, fetch_weather=False)
    db.session.flush()  # its id, for the page to name (and the device to replace)
    values = services.values_of(planned)
    values.performed_at = None  # the device fills in when it is opened, not when it was saved
    page = render_page(planned, values, extra=None, new_record=True)
    db.session.rollback()  # nothing is kept: the row is made by the first save
    return page


def load_or_create(inspection_id: str) -> Inspection:
    """The draft to save or submit; a report a device started (its id made there) is created first."""
    # Held in `stored` while load_inspection looks it up again: the session forgets what nothing refers to.
    stored = db.session.get(Inspection, inspection_id)
    if stored is not None or "permit_id" not in request.form:
        return load_inspection(inspection_id, edit=True)
    if not DEVICE_ID.match(inspection_id):
        abort(404)
    permit = permit_or_404(request.form["permit_id"])
    inspection_type = request.form.get("type") or ""
    refused = queries.not_offered(permit, inspection_type)
    if refused:
        abort(400, description=refused)
    require(queries.action_for(inspection_type), permit)
    # The device's position as the form opened, when it gave one (the start form's fields, checked the same).
    where = forms.StartForm()
    if not where.validate():
        abort(400, description=LOCATION_UNREADABLE)
    return services.start_inspection(current_user, permit, inspection_type, where.latitude.data, where.longitude.data,
                                     inspection_id=inspection_id)


def _read_report(inspection: Inspection) -> tuple[services.ReportInput, report_parts.Parts, dict[str, str]]:
    """The posted report: its fields, its repeatable parts (findings, photos, punch list, controls), and
    what is wrong with either, by field."""
    data, errors = forms.parse_report(current_user, inspection, request.form)
    parts, part_errors = report_parts.read(inspection.permit, request.form)
    return data, parts, errors | part_errors


# Sent by the report page as the inspector goes (static/autosave.js): the answer is only whether the draft was kept
# (204, with the draft's revision now), how many fields were refused (422, kept on the device meanwhile) or that the
# page is older than the draft's last save (409), never a page.
AUTOSAVE = "X-Autosave"
REVISION = "Draft-Revision"


def _stale(inspection: Inspection, background: bool) -> bool:
    """Count this save of the draft, unless it is a background save from a page made before the draft's last save
    (its `revision`): another tab's or device's save came in between, and this one, the whole form as that page had
    it, would silently undo it while both pages said "Saved". One statement compares and counts, so of two saves
    sent at once from pages of the same revision, one is kept.

    A Save draft tapped is kept, whatever its page's revision: the inspector keeps what they see, and the page that
    answers shows it (a post sent again from the outbox is one of these, never refused for a page held earlier).
    Its count makes the other pages' background saves stale. A post with no revision is counted and kept."""
    if sa_inspect(inspection).pending:  # made by this post
        inspection.revision = 1
        return False
    posted = request.form.get("revision", "")
    counted = update(Inspection).where(Inspection.id == inspection.id)
    # A revision is a count the page was given: ASCII digits, within the column's 32 bits ("²" is a digit to
    # Python and no number to int(); 99999999999 overflowed PostgreSQL's integer: each a 500). Any other is none.
    if background and posted.isascii() and posted.isdigit() and int(posted) < 2 ** 31:
        counted = counted.where(Inspection.revision == int(posted))
    return db.session.execute(counted.values(revision=Inspection.revision + 1)).rowcount == 0


def _meanwhile(inspection_id: str, error: Exception, stored: bool = True):
    """The answer to a save, Sign and submit or discard of a draft that another tab, device or background save
    submitted or discarded while this one was on its way: the database's guard refused the change to the report
    signed meanwhile (an IntegrityError, a 500 the outbox sent again). The report as it is now says which: the
    locked page, or a 404 for one discarded. Any other refusal is the request's own: raised again."""
    db.session.rollback()
    now = db.session.get(Inspection, inspection_id)
    if now is not None and now.is_submitted:
        return locked(now, str(services.ReportLocked(now)))
    if now is None and stored:  # (a device's new report, never stored: the refusal is its own)
        abort(404, description=DISCARDED)
    raise error


@bp.post("/inspections/<inspection_id>")
def save(inspection_id: str):
    """Keep the draft as entered so far (a device's new report: start it under the device's id)."""
    background = bool(request.headers.get(AUTOSAVE))
    refused = author_not_signed_in() if background else None
    if refused:
        # A page left open by someone whose sign-in has gone: never kept under whoever is signed in now.
        raise SignInNeeded(description=refused)
    # A background save keeps a report that is stored; it never makes one (a device's new report is made by its
    # first Save or Submit), nor brings back one discarded from another tab.
    inspection = load_inspection(inspection_id, edit=True) if background else load_or_create(inspection_id)
    if inspection.is_submitted:
        return locked(inspection, str(services.ReportLocked(inspection)))
    stored = not sa_inspect(inspection).pending
    try:
        return _keep_draft(inspection, inspection_id, background)
    except (IntegrityError, StaleDataError) as error:
        return _meanwhile(inspection_id, error, stored)


def _keep_draft(inspection: Inspection, inspection_id: str, background: bool):
    data, parts, errors = _read_report(inspection)
    if not errors and _stale(inspection, background):
        db.session.rollback()
        return {"kept": False, "stale": True}, 409
    if not errors:
        errors = report_parts.apply(current_user, inspection, parts, data)
    if not errors:
        services.save_draft(current_user, inspection, data)
    if errors and background:
        db.session.rollback()
        return {"kept": False, "refused": sorted(errors)}, 422
    if errors:
        db.session.rollback()  # nothing of a refused save is kept
        page = render_page(db.session.get(Inspection, inspection_id) or load_or_create(inspection_id),
                           data, errors, 422, parts=parts)
        db.session.rollback()
        return page
    revision = inspection.revision
    db.session.commit()
    if background:
        return "", 204, {REVISION: str(revision)}
    # The report's id is the address's (a device's new report too): not read again from the expired report.
    return redirect(url_for("inspections.detail", inspection_id=inspection_id, _anchor="saved"), code=303)


@bp.post("/inspections/<inspection_id>/submit")
def submit(inspection_id: str):
    """Sign and submit the report; it becomes the record and goes to the applicant and the authority."""
    inspection = load_or_create(inspection_id)
    if inspection.is_submitted:
        return locked(inspection, str(services.ReportLocked(inspection)))
    data, parts, errors = _read_report(inspection)
    stored = not sa_inspect(inspection).pending
    try:
        if not errors:
            try:  # recorded with the report's parts, and sent to the applicant and the authority in the same commit
                submission.submit_report(current_user, inspection, data, report_parts.sent(inspection, parts, data))
            except submission.PartRefused as refused:
                errors = {"new-parts": str(refused)}
            except services.ReportIncomplete as incomplete:
                errors = incomplete.problems
        if not errors:
            db.session.commit()
    except (IntegrityError, StaleDataError) as error:
        return _meanwhile(inspection_id, error, stored)
    if errors:
        db.session.rollback()  # nothing of a refused submission is kept (a device's new report neither)
        page = render_page(db.session.get(Inspection, inspection_id) or load_or_create(inspection_id),
                           data, errors, 422, parts=parts)
        db.session.rollback()
        return page
    return redirect(url_for("inspections.detail", inspection_id=inspection_id), code=303)


@bp.post("/inspections/<inspection_id>/discard")
def discard(inspection_id: str):
    """Throw away the author's own draft, once they tick that they mean it; back to the permit."""
    inspection = load_inspection(inspection_id, edit=True)
    permit_id = inspection.permit_id
    if inspection.is_submitted:
        return locked(inspection, str(services.ReportLocked(inspection)))
    if request.form.get("confirm") != "yes":
        return render_page(inspection, errors={"discard": DISCARD_UNCONFIRMED}, status=422)
    # Claimed first, as a draft still (its row held till the commit): of two discards, or a discard and a Sign and
    # submit, sent at once, the second finds the draft gone or signed, and says so.
    claimed = update(Inspection).where(Inspection.id == inspection.id, Inspection.status == "draft")
    if db.session.execute(claimed.values(revision=Inspection.revision + 1)).rowcount == 0:
        return _meanwhile(inspection_id, LookupError(inspection_id))
    try:
        services.discard_draft(current_user, inspection)
        db.session.commit()
    except services.InspectionError as error:
        db.session.rollback()
        return render_page(load_inspection(inspection_id), errors={"discard": str(error)}, status=422)
    except (IntegrityError, StaleDataError) as error:
        return _meanwhile(inspection_id, error)
    flash(DISCARDED, "success")
    return redirect(url_for("permits.detail", permit_id=permit_id), code=303)


@bp.post("/inspections/<inspection_id>/amend")
def amend(inspection_id: str):
    """Open an amendment: a new draft correcting a submitted report."""
    original = load_inspection(inspection_id, edit=True)
    try:
        amendment = services.amend(current_user, original)
    except services.InspectionError as error:
        correction = queries.correction_of(original)
        if correction is None:
            return locked(original, str(error))
        # Corrected already (by someone else, or on another device): the way on is the line's latest version.
        return render_template("inspections/locked.html", inspection=original, message=str(error),
                               latest=queries.latest_version(correction)), 409
    location = url_for("inspections.detail", inspection_id=amendment.id)
    db.session.commit()
    return redirect(location, code=303)


@bp.get("/inspections/<inspection_id>/signature.png")
def signature(inspection_id: str):
    """The signature drawn on the report."""
    return _signature_image(load_inspection(inspection_id).signature_sha256)


@bp.get("/inspections/<inspection_id>/permittee-signature.png")
def permittee_signature(inspection_id: str):
    """The signature of the permittee's authorized signatory, where the town asks for it."""
    return _signature_image(load_inspection(inspection_id).permittee_signature_sha256)


def _signature_image(sha: str | None):
    if not sha:
        abort(404)
    # A signature is a few kilobytes: read it whole, so no file handle outlives the request.
    try:
        png = files.blob_store().read(sha)
    except FileNotFoundError:
        abort(404)
    except AlteredBlob:  # never shown as the signature; `flask audit verify` names it
        abort(409, "The stored signature image is not the one signed: it was changed in the file store since.")
    return png, 200, {"Content-Type": "image/png", "Cache-Control": "private, max-age=3600"}
