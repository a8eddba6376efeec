"""O&M pages (§380-14): a permittee's home, the plan, the maintenance log, certifications and notices.

Also the daily `flask om remind` command that emails certification reminders.
"""
from __future__ import annotations

import datetime as dt

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from sqlalchemy import select
from wtforms import SelectChoice

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import allowed, people_to_choose, permit_or_404
from inspect_app.certifications import services
from inspect_app.certifications.forms import (
    CertifyForm, EasementForm, LogEntryForm, NoticeForm, PartyForm, PlanForm, ReviewForm, ScheduleForm,
    SignAmendmentForm,
)
from inspect_app.certifications.models import (
    Easement, MaintenanceLogEntry, NoticeToCorrect, OMCertification, ResponsibleParty, ScheduleAmendment,
)
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.permits.models import Permit, StormwaterStructure
from inspect_app.photos.models import Photo
from inspect_app.photos.posted import store_posted
from inspect_app.photos.processing import PhotoRejected
from inspect_app.photos.services import PhotoRefused

bp = Blueprint("certifications", __name__)


def section(permit: Permit) -> dict:
    """What the permit page shows of O&M: next certification, cure clocks, easements (_permit_section.html)."""
    return {"summary": services.summary(permit), "easements": services.easements(permit)}



def _child(model, child_id: str, permit: Permit):
    """A record of `permit`, or 404 (never one of another permit)."""
    record = db.get_or_404(model, child_id)
    if record.permit_id != permit.id:
        abort(404)
    return record


def _fail(form, error: services.OMError) -> None:
    """Put a service's messages beside the form's fields (or above the form when no field matches)."""
    for name, message in error.errors.items():
        field = getattr(form, name, None)
        if field is not None:
            field.errors = list(field.errors) + [message]
        else:
            form.form_errors.append(message)


# -- the O&M plan ----------------------------------------------------------------------------------------


def _party_form(**kwargs) -> PartyForm:
    form = PartyForm(prefix="party", **kwargs)
    permittees = db.session.scalars(people_to_choose(current_user, "permittee"))
    form.user_id.choices = [SelectChoice("", "— no account —")] + [
        SelectChoice(u.id, f"{u.name} ({u.email})") for u in permittees]
    return form


def _easement_form(permit: Permit, easement: Easement | None = None, **kwargs) -> EasementForm:
    form = EasementForm(prefix=f"e-{easement.id}" if easement else "easement", obj=easement, **kwargs)
    form.grantor_id.choices = [SelectChoice("", "— none recorded —")] + [
        SelectChoice(p.id, p.name) for p in services.easement_grantors(permit)]
    return form


def _plan_page(permit: Permit, status_code: int = 200, **forms):
    plan = services.plan_of(permit)
    blank = {"formdata": None}  # the other forms of the page stay blank when one of them fails
    easements = services.easements(permit)
    context = {"plan_form": PlanForm(prefix="plan", obj=plan, **blank), "party_form": _party_form(**blank),
               "notice_form": NoticeForm(prefix="notice", **blank), "schedule_forms": {},
               "easement_form": _easement_form(permit, **blank), "easement_forms": {}} | forms
    for s in permit.structures:
        context["schedule_forms"].setdefault(s.id, ScheduleForm(prefix=f"s-{s.id}", obj=s, formdata=None))
    for e in easements:
        context["easement_forms"].setdefault(e.id, _easement_form(permit, e, **blank))
    return render_template(
        "certifications/plan.html", permit=permit, plan=plan, parties=services.party_history(permit),
        recording=services.plan_recording(permit),
        easements=easements,
        today=services.today_at(permit), certifications=services.certifications(permit),
        notices=services.notices(permit), summary=services.summary(permit),
        amendments=services.pending_amendments(permit), unsigned=services.unsigned_parties, **context,
    ), status_code


@bp.get("/permits/<permit_id>/om")
@login_required
def plan(permit_id: str):
    """The O&M plan: responsible parties and their history, schedule, easements, budget, certifications."""
    return _plan_page(permit_or_404(permit_id))


@bp.post("/permits/<permit_id>/om/plan")
@login_required
def save_plan(permit_id: str):
    """Record the plan's easements, budget and registry recording (agents and admins)."""
    permit = permit_or_404(permit_id, "om.plan.edit")
    form = PlanForm(prefix="plan")
    if form.validate_on_submit():
        try:
            services.save_plan(current_user, permit, estimated_annual_budget=form.estimated_annual_budget.data,
                               registry_reference=form.registry_reference.data or None,
                               recorded_on=form.recorded_on.data)
        except services.OMError as error:
            _fail(form, error)
        else:
            db.session.commit()
            return redirect(url_for("certifications.plan", permit_id=permit.id), code=303)
    return _plan_page(permit, 422, plan_form=form)


@bp.post("/permits/<permit_id>/om/easements")
@login_required
def add_easement(permit_id: str):
    """List a stormwater management easement with its purpose and location (agents and admins)."""
    return _save_easement(permit_or_404(permit_id, "om.plan.edit"), None)


@bp.post("/permits/<permit_id>/om/easements/<easement_id>")
@login_required
def edit_easement(permit_id: str, easement_id: str):
    """Change an easement: its purpose, location, grantor or registry recording (agents and admins)."""
    permit = permit_or_404(permit_id, "om.plan.edit")
    return _save_easement(permit, _child(Easement, easement_id, permit))


def _save_easement(permit: Permit, easement: Easement | None):
    form = _easement_form(permit, easement)
    if form.validate_on_submit():
        try:
            services.save_easement(current_user, permit, easement, purpose=form.purpose.data,
                                   location=form.location.data, grantor_id=form.grantor_id.data or None,
                                   registry_reference=form.registry_reference.data,
                                   recorded_on=form.recorded_on.data)
        except services.OMError as error:
            _fail(form, error)
        else:
            db.session.commit()
            return redirect(url_for("certifications.plan", permit_id=permit.id) + "#easements", code=303)
    if easement is None:
        return _plan_page(permit, 422, easement_form=form)
    return _plan_page(permit, 422, easement_forms={easement.id: form})


@bp.post("/permits/<permit_id>/om/structures/<structure_id>")
@login_required
def schedule(permit_id: str, structure_id: str):
    """Set one structure's inspection and maintenance task and interval (agents and admins)."""
    permit = permit_or_404(permit_id, "om.plan.edit")
    structure = _child(StormwaterStructure, structure_id, permit)
    form = ScheduleForm(prefix=f"s-{structure.id}")
    if form.validate_on_submit():
        try:
            services.set_maintenance_schedule(current_user, structure, (form.maintenance_task.data or "").strip() or None,
                                              form.maintenance_interval_months.data)
        except services.OMError as error:
            _fail(form, error)
        else:
            db.session.commit()
            return redirect(url_for("certifications.plan", permit_id=permit.id) + "#schedule", code=303)
    return _plan_page(permit, 422, schedule_forms={structure.id: form})


@bp.post("/permits/<permit_id>/om/amendments/<amendment_id>/sign")
@login_required
def sign_amendment(permit_id: str, amendment_id: str):
    """A responsible party signs a schedule amendment, or the agent records its written signature (§380-14 F(2))."""
    permit = permit_or_404(permit_id)
    amendment = _child(ScheduleAmendment, amendment_id, permit)
    form = SignAmendmentForm()
    if form.validate_on_submit():
        party = db.session.get(ResponsibleParty, form.party_id.data)
        if party is None or party.permit_id != permit.id:
            abort(404)
        try:
            services.sign_amendment(current_user, amendment, party)
        except services.OMError as error:
            return _plan_page(permit, 422, amendment_error=next(iter(error.errors.values())))
        db.session.commit()
        return redirect(url_for("certifications.plan", permit_id=permit.id) + "#schedule", code=303)
    return _plan_page(permit, 422, amendment_error="Choose the party who signs.")


@bp.post("/permits/<permit_id>/om/parties")
@login_required
def change_party(permit_id: str):
    """Record a new responsible party: change of ownership or of financial responsibility (§380-14 F)."""
    permit = permit_or_404(permit_id, "om.plan.edit")
    form = _party_form()
    if form.validate_on_submit():
        try:
            services.change_responsible_party(
                current_user, permit, role=form.role.data, name=form.name.data, email=form.email.data or None,
                address=form.address.data or None, starts_on=form.starts_on.data,
                user=db.session.get(User, form.user_id.data) if form.user_id.data else None,
                replaces_current=form.replaces_current.data, make_permit_owner=form.make_permit_owner.data)
        except services.OMError as error:
            _fail(form, error)
        else:
            db.session.commit()
            return redirect(url_for("certifications.plan", permit_id=permit.id) + "#parties", code=303)
    return _plan_page(permit, 422, party_form=form)


# -- the maintenance log -----------------------------------------------------------------------------------


def _log_form(permit: Permit) -> LogEntryForm:
    form = LogEntryForm(prefix="log")
    form.structure_id.choices = [SelectChoice("", "— none —")] + [SelectChoice(s.id, s.name) for s in permit.structures]
    return form


def _log_page(permit: Permit, form: LogEntryForm, status_code: int = 200):
    return render_template("certifications/log.html", permit=permit, form=form, entries=services.log_entries(permit),
                           structures={s.id: s.name for s in permit.structures}, today=services.today_at(permit),
                           can_log=allowed(current_user, "om.log", permit)), status_code


@bp.get("/permits/<permit_id>/om/log")
@login_required
def log(permit_id: str):
    """The maintenance log (§380-14 C(2)(i),(j)), with the form to add an entry."""
    permit = permit_or_404(permit_id)
    form = _log_form(permit)
    form.performed_on.data, form.performed_by.data = services.today_at(permit), current_user.name
    return _log_page(permit, form)


@bp.post("/permits/<permit_id>/om/log")
@login_required
def add_log_entry(permit_id: str):
    """Add an inspection, repair, replacement or disposal to the log (permittees and inspectors)."""
    permit = permit_or_404(permit_id, "om.log")
    form = _log_form(permit)
    if form.validate_on_submit():
        fields = {n: f.data for n, f in form._fields.items() if n != "csrf_token"}
        try:
            entry = services.add_log_entry(current_user, permit, **fields)
            store_posted(current_user, permit, "photos", log_entry=entry)
        except services.OMError as error:
            db.session.rollback()
            _fail(form, error)
        except (PhotoRejected, PhotoRefused) as error:
            db.session.rollback()
            form.form_errors.append(str(error))
        else:
            db.session.commit()
            return redirect(url_for("certifications.log_entry", permit_id=permit.id, entry_id=entry.id), code=303)
    return _log_page(permit, form, 422)


@bp.get("/permits/<permit_id>/om/log/<entry_id>")
@login_required
def log_entry(permit_id: str, entry_id: str):
    """One maintenance log entry, with its photos."""
    permit = permit_or_404(permit_id)
    entry = _child(MaintenanceLogEntry, entry_id, permit)
    photos = db.session.scalars(select(Photo).where(Photo.log_entry_id == entry.id).order_by(Photo.created_at)).all()
    structure = db.session.get(StormwaterStructure, entry.structure_id) if entry.structure_id else None
    return render_template("certifications/log_entry.html", permit=permit, entry=entry, structure=structure,
                           photos=photos, photo_target={"log_entry_id": entry.id},
                           editable=allowed(current_user, "om.log", permit),
                           created_by=db.session.get(User, entry.created_by_id) if entry.created_by_id else None)


# -- the annual certification ---------------------------------------------------------------------------------


def _certify_page(permit: Permit, form: CertifyForm, status_code: int = 200):
    due = services.next_period(permit)
    today = services.today_at(permit)
    assembly = services.assemble(permit, due) if due and due.start <= today else None
    return render_template("certifications/certify.html", permit=permit, form=form, period=due, assembly=assembly,
                           signer=current_user.name,
                           statement=services.certification_statement(permit, due) if assembly else None,
                           structures={s.id: s.name for s in permit.structures}), status_code


@bp.get("/permits/<permit_id>/om/certify")
@login_required
def certify_form(permit_id: str):
    """The certification of the period due, assembled from the log, ready to sign (§380-14 C(2)(l))."""
    permit = permit_or_404(permit_id, "om.certify")
    return _certify_page(permit, CertifyForm(prefix="cert"))


@bp.post("/permits/<permit_id>/om/certify")
@login_required
def certify(permit_id: str):
    """Sign and submit the annual O&M certification."""
    permit = permit_or_404(permit_id, "om.certify")
    form = CertifyForm(prefix="cert")
    try:  # the period the page was signed for (a page held on a device may be a period late)
        period_start = dt.date.fromisoformat(request.form["period_start"]) if request.form.get("period_start") else None
    except ValueError:
        abort(400, description="The period of the certification is not a date.")
    if form.validate_on_submit():
        try:
            cert = services.certify(current_user, permit, signature_png=form.signature.data or None,
                                    period_start=period_start, without_entries_confirmed=form.without_entries.data)
        except services.OMError as error:
            _fail(form, error)
        else:
            db.session.commit()
            return redirect(url_for("certifications.certification", permit_id=permit.id, cert_id=cert.id), code=303)
    return _certify_page(permit, form, 422)


def _certification_page(permit: Permit, cert: OMCertification, form: ReviewForm | None = None, status_code: int = 200):
    return render_template("certifications/certification.html", permit=permit, cert=cert,
                           record=services.certification_record(cert), form=form or ReviewForm(prefix="review"),
                           can_review=allowed(current_user, "om.review", permit)), status_code


@bp.get("/permits/<permit_id>/om/certifications/<cert_id>")
@login_required
def certification(permit_id: str, cert_id: str):
    """One certification as submitted: the period's log entries, tasks with no entry, signature, review."""
    permit = permit_or_404(permit_id)
    return _certification_page(permit, _child(OMCertification, cert_id, permit))


@bp.post("/permits/<permit_id>/om/certifications/<cert_id>/review")
@login_required
def review(permit_id: str, cert_id: str):
    """Accept a certification, or find it deficient and send a notice to correct (agents)."""
    permit = permit_or_404(permit_id, "om.review")
    cert = _child(OMCertification, cert_id, permit)
    form = ReviewForm(prefix="review")
    if form.validate_on_submit():
        try:
            services.review(current_user, cert, decision=form.decision.data, note=form.note.data)
        except services.OMError as error:
            _fail(form, error)
        else:
            db.session.commit()
            return redirect(url_for("certifications.certification", permit_id=permit.id, cert_id=cert.id), code=303)
    return _certification_page(permit, cert, form, 422)


# -- failure to maintain (§380-14 E) ---------------------------------------------------------------------------


@bp.post("/permits/<permit_id>/om/notices")
@login_required
def issue_notice(permit_id: str):
    """Send a notice to correct maintenance; the cure clock starts (agents)."""
    permit = permit_or_404(permit_id, "om.review")
    form = NoticeForm(prefix="notice")
    if form.validate_on_submit():
        try:
            services.issue_notice(current_user, permit, form.text.data, inspection=_cited_report(form, permit))
        except services.OMError as error:
            _fail(form, error)
        else:
            db.session.commit()
            return redirect(url_for("certifications.plan", permit_id=permit.id) + "#notices", code=303)
    return _plan_page(permit, 422, notice_form=form)


def _cited_report(form: NoticeForm, permit: Permit) -> Inspection | None:
    """The report a notice is issued from (its violations cited), if the form names one."""
    if not form.inspection_id.data:
        return None
    inspection = db.session.get(Inspection, form.inspection_id.data)
    if inspection is None or inspection.permit_id != permit.id:
        raise services.OMError({"text": "No inspection of this permit has this id."})
    return inspection


@bp.post("/permits/<permit_id>/om/notices/<notice_id>/cured")
@login_required
def mark_cured(permit_id: str, notice_id: str):
    """Record that the maintenance was corrected, which ends the cure clock (agents)."""
    permit = permit_or_404(permit_id, "om.review")
    notice = _child(NoticeToCorrect, notice_id, permit)
    try:
        services.mark_cured(current_user, notice)
    except services.OMError:
        pass  # already marked cured (a second click): the first time and person stand
    db.session.commit()
    return redirect(url_for("certifications.plan", permit_id=permit.id) + "#notices", code=303)
