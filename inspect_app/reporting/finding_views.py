"""In-page (htmx) edits of a report's findings, corrective actions and punch list, and their review.

A new finding is added as a repeatable part of the report form itself (reporting/report_parts.py), saved or
submitted with the report, online or from the outbox: there is no second way to add one here."""
from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_login import current_user, login_required

from inspect_app.accounts.policy import require
from inspect_app.extensions import db, hold, htmx
from inspect_app.findings import forms, services
from inspect_app.findings.pages import page_context
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection, PunchListItem
from inspect_app.inspections.services import ReportLocked
from inspect_app.reporting.views import load_inspection, locked, render_page
from inspect_app.photos.posted import uploaded_original
from inspect_app.photos.processing import PhotoRejected
from inspect_app.templating import local_time
from inspect_app.types import LOCAL_TZ

bp = Blueprint("findings", __name__)


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every findings page needs a signed-in user."""


# The report page's parts these forms replace in place, by the id htmx sends as HX-Target.
FRAGMENTS = {"findings": "findings/_findings.html", "punch-list": "findings/_punch.html"}


def _answer(inspection: Inspection, target: str = "findings", status: int = 200, **overrides):
    """The part of the report page htmx asked for (HX-Target), else the whole page (303 back on success)."""
    if htmx.target == target:
        context = {"inspection": inspection, "permit": inspection.permit} | page_context(inspection, **overrides)
        return render_template(FRAGMENTS[target], **context), status
    if status == 200:
        return redirect(url_for("inspections.detail", inspection_id=inspection.id, _anchor="findings"), code=303)
    return render_page(inspection, status=status, extra=page_context(inspection, **overrides))


def _finding(finding_id: str) -> Finding:
    finding = db.get_or_404(Finding, finding_id)
    load_inspection(finding.inspection_id)
    return finding


def _action(action_id: str) -> CorrectiveAction:
    action = db.get_or_404(CorrectiveAction, action_id)
    _finding(action.finding_id)
    return action


@bp.post("/findings/<finding_id>/delete")
def remove(finding_id: str):
    """Take a finding off the draft report."""
    finding = _finding(finding_id)
    inspection = load_inspection(finding.inspection_id, edit=True)
    if inspection.is_submitted:
        return locked(inspection, str(ReportLocked(inspection)))
    services.remove_finding(current_user, finding)
    db.session.commit()
    return _answer(inspection)


@bp.post("/findings/<finding_id>/actions")
def open_action(finding_id: str):
    """Open a corrective action on a finding, with its deadline."""
    finding = _finding(finding_id)
    inspection = finding.inspection
    require("inspection.perform", inspection.permit)
    form = forms.action_form(inspection.permit, finding.id)
    if form.validate_on_submit():
        try:
            services.open_action(current_user, finding, form.kind.data, form.description.data,
                                 form.owner_id.data or None, form.owner_name.data)
        except services.FindingError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            return _answer(inspection)
    return _answer(inspection, status=422, forms_for={f"action-{finding.id}": form})


@bp.post("/actions/<action_id>/close")
def close_out(action_id: str):
    """Record that a corrective action was done, with its evidence (a photo sent with it, or one uploaded)."""
    action = _action(action_id)
    inspection = action.finding.inspection
    require("action.close", inspection.permit)
    if not inspection.is_submitted:  # (its page shows no close-out form: said in words, not beside a field)
        abort(409, description=services.NOT_SIGNED_YET)
    form = forms.CloseOutForm(prefix=f"close-{action.id}")
    if form.validate_on_submit():
        # The form is offered for an open action alone: a post finding it done meanwhile (another person's
        # close-out, from a page opened after this one, or this page's post kept offline and sent later) would
        # replace that close-out, its time, note and photo, without a word. It waits for a close-out sent at once.
        hold(CorrectiveAction, action.id)
        if action.status != "open":
            abort(409, description=_done_meanwhile(action))
        photo = form.evidence_photo.data  # None when no file was chosen
        try:
            # Sent again from a device's outbox, the photo was uploaded first and is named by its SHA-256.
            with uploaded_original(current_user, request.form.get(f"{form.evidence_photo.name}_sha256")) as uploaded:
                services.close_out(current_user, action, form.completed_at.data.replace(tzinfo=LOCAL_TZ),
                                   form.note.data, form.evidence_photo_id.data,
                                   uploaded or (photo.stream if photo else None))
        except services.FindingError as error:
            getattr(form, error.field).errors.append(str(error))
        except PhotoRejected as error:
            form.evidence_photo.errors.append(str(error))
        else:
            db.session.commit()
            return _answer(inspection)
    return _answer(inspection, status=422, forms_for={f"close-{action.id}": form})


def _done_meanwhile(action: CorrectiveAction) -> str:
    note = f" ({action.closeout_note})" if action.closeout_note else ""
    said = f"This action was recorded done meanwhile: done {local_time(action.completed_at)}{note}"
    if action.status == "verified":
        said += f", verified by {action.verified_by.name if action.verified_by else 'an agent'}"
    return said + ". Nothing was changed: reload the report to see it."


@bp.post("/actions/<action_id>/verify")
def verify(action_id: str):
    """An agent confirms a corrective action's close-out."""
    action = _action(action_id)
    inspection = action.finding.inspection
    require("finding.review", inspection.permit)
    try:
        services.verify(current_user, action)
    except services.FindingError as error:
        abort(400, description=str(error))
    db.session.commit()
    return _answer(inspection)


@bp.post("/findings/<finding_id>/return")
def send_back(finding_id: str):
    """An agent sends a finding back to the field with a comment."""
    finding = _finding(finding_id)
    inspection = finding.inspection
    require("finding.review", inspection.permit)
    if finding.status == "corrected":  # (its page shows no form to send it back: said in words)
        abort(409, description=services.CORRECTED)
    form = forms.ReturnForm(prefix=f"return-{finding.id}")
    if form.validate_on_submit():
        try:
            services.return_to_field(current_user, finding, form.comment.data)
        except services.FindingError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            return _answer(inspection)
    return _answer(inspection, status=422, forms_for={f"return-{finding.id}": form})


@bp.post("/inspections/<inspection_id>/punch")
def punch_form_gone(inspection_id: str):
    """The punch list's own form is gone (410): a post of it kept on a device is answered with a page
    that says where the item goes now, with what was typed; its button (`moved`) opens the report."""
    inspection = load_inspection(inspection_id, edit=True)
    if request.form.get("moved"):  # sent from that page: nothing to change, the report to open
        return redirect(url_for("inspections.detail", inspection_id=inspection.id, _anchor="punch-list"), code=303)
    return render_template("findings/punch_form_gone.html", inspection=inspection,
                           description=request.form.get("newpunch-description", "")), 410


@bp.post("/punch/<item_id>/delete")
def remove_punch(item_id: str):
    """Take an item off the draft walk-through's punch list."""
    item = db.get_or_404(PunchListItem, item_id)
    inspection = load_inspection(item.walk_through_id, edit=True)
    if inspection.is_submitted:
        return locked(inspection, str(ReportLocked(inspection)))
    services.remove_punch_item(current_user, item)
    db.session.commit()
    return _answer(inspection, "punch-list")
