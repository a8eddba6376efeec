"""Stop-work order pages: issue one, see it, acknowledge it, lift it (§380-16 C(4)(e)[5], §380-19)."""
from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from wtforms import SelectChoice

from inspect_app.accounts.policy import allowed, permit_or_404, shown
from inspect_app.enforcement import lifting, services
from inspect_app.enforcement.forms import AcknowledgeForm, IssueStopWorkForm, LiftStopWorkForm
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import Finding, Inspection
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.photos import services as photos
from inspect_app.photos.models import Photo
from inspect_app.templating import humanize, local_time

bp = Blueprint("enforcement", __name__, url_prefix="/permits/<permit_id>/stop-work")
# The newest photos of the permit offered, as thumbnails, to show each corrective action's work on the lift form.
PHOTO_CHOICES = 12


def section(permit: Permit) -> dict:
    """What the permit page shows of enforcement: the orders and notices (_section.html) and, under a
    stop-work order, the standing order in the red banner (_banner.html)."""
    return {"record": services.enforcement_record(permit),
            "standing_order": services.standing_order(permit) if permit.is_under_stop_work else None}


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every enforcement page needs a signed-in user."""



def _order(permit_id: str, order_id: str, action: str = "permit.view") -> StopWorkOrder:
    permit = permit_or_404(permit_id, action)
    order = db.get_or_404(StopWorkOrder, order_id)
    if order.permit_id != permit.id:
        abort(404)
    return order


def _inspection_label(inspection: Inspection) -> str:
    return f"{humanize(inspection.type)} inspection, {local_time(inspection.performed_at)}, " \
           f"{inspection.inspector_name}"


def _issue_form(permit: Permit) -> IssueStopWorkForm:
    form = IssueStopWorkForm()
    form.finding_ids.choices = [SelectChoice(f.id, f"{f.description} ({f.severity}, {f.status})")
                                for f in services.open_findings(permit)]
    form.inspection_id.choices = [SelectChoice("", "— none —")] + [
        SelectChoice(i.id, _inspection_label(i)) for i in services.submitted_inspections(permit)]
    return form


def _issue_choices(form: IssueStopWorkForm) -> dict:
    inspection_id = form.inspection_id.data
    return {"findings": [db.session.get(Finding, i) for i in form.finding_ids.data],
            "inspection": db.session.get(Inspection, inspection_id) if inspection_id else None,
            "notice_text": form.notice_text.data if form.with_notice.data else None}


def _lift_form(order: StopWorkOrder) -> LiftStopWorkForm:
    form = LiftStopWorkForm()
    authority = permits.profile_of(order.permit).authority_title
    form.approves_work.label.text = f"I approve, for the {authority}, all work previously completed on this permit"
    form.approval_inspection_id.description = services.LIFT_INSPECTION_NOTE
    form.approval_inspection_id.choices = [SelectChoice("", "— none —")] + [
        SelectChoice(i.id, _inspection_label(i)) for i in services.approving_inspections(order)]
    return form


def _order_page(order: StopWorkOrder, status_code: int = 200, **context):
    context.setdefault("lift_form", _lift_form(order))
    context.setdefault("keeping", services.uncorrected(order) if order.is_standing else [])
    if order.is_standing and allowed(current_user, "stop_work.lift", order.permit):
        # The open corrective actions, to verify on this page, and the permit's photos to show their work.
        context.setdefault("open_actions", lifting.open_actions(order))
        mine = photos.permit_photos(order.permit).where(shown(current_user, Photo))  # not another's draft's
        context.setdefault("photos", list(db.session.scalars(mine.limit(PHOTO_CHOICES))))
    context.setdefault("verified", {})
    context.setdefault("authority", permits.profile_of(order.permit).authority_title)
    context.setdefault("lifting", services.lifting_clause(order.citation_purpose))
    context.setdefault("lift_conditions", [c.format(authority=context["authority"]) for c in services.LIFT_CONDITIONS])
    context.setdefault("ack_form", AcknowledgeForm())
    return render_template("enforcement/order.html", order=order, permit=order.permit, **context), status_code


@bp.route("/new", methods=["GET", "POST"])
def issue(permit_id: str):
    """Issue a stop-work order with its reasons and the open findings it cites (agents)."""
    permit = permit_or_404(permit_id, "stop_work.issue")
    form = _issue_form(permit)
    if form.validate_on_submit():
        try:
            order = services.issue_stop_work(current_user, permit, form.reason.data, **_issue_choices(form))
        except services.EnforcementError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            return redirect(url_for("enforcement.order", permit_id=permit.id, order_id=order.id), code=303)
    standing = services.standing_order(permit)
    page = render_template("enforcement/issue.html", permit=permit, form=form, standing=standing)
    return page, 422 if form.errors else 200


@bp.get("/<order_id>")
def order(permit_id: str, order_id: str):
    """One stop-work order: its reasons, findings, notices, and who issued, acknowledged and lifted it."""
    return _order_page(_order(permit_id, order_id))


@bp.post("/<order_id>/acknowledge")
def acknowledge(permit_id: str, order_id: str):
    """The permittee acknowledges receipt of the order."""
    order = _order(permit_id, order_id, "stop_work.acknowledge")
    form = AcknowledgeForm()
    if form.validate_on_submit():
        try:
            services.acknowledge(current_user, order)
        except services.EnforcementError as error:
            return _order_page(order, 422, ack_error=str(error))
        db.session.commit()
        return redirect(url_for("enforcement.order", permit_id=permit_id, order_id=order.id), code=303)
    return _order_page(order, 422, ack_error="The form expired; try again.")


@bp.post("/<order_id>/lift")
def lift(permit_id: str, order_id: str):
    """Lift the order once every violation is corrected and the agent approves the work (agents); the open
    corrective actions ticked "verified" on the page are verified in the same step (enforcement/lifting.py)."""
    order = _order(permit_id, order_id, "stop_work.lift")
    form = _lift_form(order)
    # Each action ticked "verified", with the photo chosen for it (if any).
    verified = {action_id: request.form.get(f"photo-{action_id}") or None
                for action_id in request.form.getlist("verified")}
    errors = {}
    if form.validate_on_submit():
        approval_id = form.approval_inspection_id.data
        try:
            lifting.verify_and_lift(current_user, order, form.reason.data,
                                    db.session.get(Inspection, approval_id) if approval_id else None, verified)
        except services.EnforcementError as error:
            if error.field == "verified":
                errors["verified_error"] = str(error)
            elif not order.is_standing:  # lifted meanwhile (in another tab, by another agent): no form to show it on
                errors["lift_error"] = str(error)
            else:
                getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            return redirect(url_for("enforcement.order", permit_id=permit_id, order_id=order.id), code=303)
    return _order_page(order, 422, lift_form=form, verified=verified, **errors)
