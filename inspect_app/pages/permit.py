"""Permit pages: the list, one permit, and in-page edits of its inspectors, areas and structures."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from sqlalchemy import select
from wtforms import SelectChoice

from inspect_app import held_rows
from inspect_app.accounts.models import User
from inspect_app.accounts.policy import allowed, people_to_choose, permit_or_404, require, visible_permits
from inspect_app.certifications import services as om
from inspect_app.certifications import views as certifications
from inspect_app.completion import views as completion
from inspect_app.conditions import views as conditions
from inspect_app.pages.dashboard import maps
from inspect_app.pages.dashboard.services import permit_open
from inspect_app.documents import views as documents
from inspect_app.enforcement import views as enforcement
from inspect_app.certifications.models import Easement, NoticeToCorrect, OMCertification
from inspect_app.completion.models import CertificateOfCompletion, FinalSubmission, SuretyRelease
from inspect_app.conditions.models import FrozenPeriod, SnowmeltDischarge
from inspect_app.documents.models import FrozenDocument
from inspect_app.enforcement.models import NoticeOfViolation, StopWorkOrder
from inspect_app.extensions import db, htmx
from inspect_app.inspections.models import InspectionNotice
from inspect_app.geo import SitePoint
from inspect_app.inputs import query_int
from inspect_app.reporting import views as inspections
from inspect_app.pages import now
from inspect_app.permits import services
from inspect_app.permits.forms import (
    AreaForm, AreaStatusForm, AssignmentForm, BackfillForm, PermitForm, PointForm, StatusForm, StructureForm,
)
from inspect_app.permits.models import PERMIT_STATUSES, Jurisdiction, Permit, PermitAssignment, StormwaterStructure
from inspect_app.photos import views as photos
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.templating import humanize
from inspect_app.waivers import views as waivers
from inspect_app.waivers.models import Waiver
from inspect_app.types import LOCAL_TZ, utcnow

bp = Blueprint("permits", __name__, url_prefix="/permits")


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every permit page needs a signed-in user."""



def _jurisdictions() -> list[Jurisdiction]:
    towns = services.ensure_jurisdictions()
    if current_user.jurisdiction_id:
        towns = [j for j in towns if j.id == current_user.jurisdiction_id]
    return towns


def _permit_form(permit: Permit | None = None) -> PermitForm:
    form = PermitForm(obj=permit)
    if permit is not None and (clause := services.profile_of(permit).cite("permittee_is_owner")):
        form.owner_name.description = f"The permittee must be the owner of the site ({clause})."
    elif permit is None:  # the town is chosen on the form: each offered town whose permittee must be the owner
        rules = [f"in {j.name} the permittee must be the owner ({clause})" for j in _jurisdictions()
                 if (clause := services.profiles()[j.profile_key].cite("permittee_is_owner"))]
        if rules:
            form.owner_name.description = f"The owner of record of the site; {'; '.join(rules)}."
    form.jurisdiction_id.choices = [SelectChoice(j.id, j.name) for j in _jurisdictions()]
    permittees = db.session.scalars(people_to_choose(current_user, "permittee"))
    form.owner_id.choices = [SelectChoice("", "— none yet —")] + [SelectChoice(u.id, f"{u.name} ({u.email})") for u in permittees]
    if permit is not None and request.method == "GET":
        form.is_redevelopment.data = "1" if permit.is_redevelopment else "0"
        form.owner_id.data = permit.owner_id or ""
        started = permit.construction_started_at
        form.construction_started_time.data = started.astimezone(LOCAL_TZ).time() if started else None
    return form


def _permit_fields(form: PermitForm) -> dict:
    data = {name: field.data for name, field in form._fields.items() if name != "csrf_token"}
    data["is_redevelopment"] = data["is_redevelopment"] == "1"
    data["owner_id"] = data["owner_id"] or None
    data["applicant_email"] = data["applicant_email"] or None
    data["sensitive_waters_note"] = data["sensitive_waters_note"] or None
    data["npdes_id"] = (data["npdes_id"] or "").strip() or None
    data["parcel_id"] = (data["parcel_id"] or "").strip() or None
    return data


def _detail_forms(permit: Permit, blank: bool = False) -> dict:
    """The permit page's forms: bound to the request's form data, or `blank` (each drawn empty, as after the change
    it asked for was made: a form that kept its values would make the same change again at the next tap)."""
    empty = {"formdata": None} if blank else {}
    assignment = AssignmentForm(prefix="assign", **empty)
    # The list of inspectors is for those who may assign one (_assignments.html shows them the form).
    inspectors = (db.session.scalars(people_to_choose(current_user, "inspector"))
                  if allowed(current_user, "permit.assign", permit) else ())
    assignment.user_id.choices = [SelectChoice("", "— choose —")] + [SelectChoice(u.id, u.name) for u in inspectors]
    status = StatusForm(prefix="status", **empty)
    status.status.choices = [SelectChoice(s, humanize(s)) for s in PERMIT_STATUSES
                             if permit.can_become(s) and not services.own_act_refusal(permit, s)]
    return {"assign_form": assignment, "area_form": AreaForm(prefix="area", **empty),
            "structure_form": StructureForm(prefix="structure", **empty), "status_form": status,
            "status_forms": {}, "area_status_form": _blank_area_status_form, "point_form": _point_form(permit, blank),
            "backfill_forms": {}, "backfill_form": _blank_backfill_form,
            # The town's storm threshold (CGP 2022 Part 4.2 as its profile gives it), for the schedule's words.
            "storm_mm": services.profile_of(permit).storm.threshold_mm}


_POINT_GROUPS = {"area": "Disturbed areas", "structure": "Structures", "easement": "Easements"}


def _placeable(permit: Permit) -> dict[str, SitePoint]:
    """The areas, structures and easements of `permit` the user may put on its site map, by the point form's
    value ("area:<id>", "structure:<id>", "easement:<id>")."""
    found: dict[str, SitePoint] = {}
    if allowed(current_user, "area.edit", permit):
        found |= {f"area:{a.id}": a for a in permit.areas}
    if allowed(current_user, "structure.edit", permit):
        found |= {f"structure:{s.id}": s for s in permit.structures}
    if allowed(current_user, "om.plan.edit", permit):
        found |= {f"easement:{e.id}": e for e in om.easements(permit)}
    return found


def _point_form(permit: Permit, blank: bool = False) -> PointForm:
    form = PointForm(prefix="point", **({"formdata": None} if blank else {}))
    form.subject.choices = [SelectChoice("", "— choose —")] + [
        SelectChoice(key, record.point_name, optgroup=_POINT_GROUPS[key.partition(":")[0]])
        for key, record in _placeable(permit).items()]
    return form


def _blank_area_status_form(area: DisturbedArea) -> AreaStatusForm:
    return AreaStatusForm(prefix=f"area-{area.id}", formdata=None)


def _blank_backfill_form(structure: StormwaterStructure) -> BackfillForm:
    return BackfillForm(prefix=f"backfill-{structure.id}", formdata=None)


# Tables the sections read that a permit most often has no row in: which of them hold one is asked in one
# statement (held_rows), and the readers of the others return nothing without asking.
_MOSTLY_EMPTY = tuple(model.permit_id for model in (
    StopWorkOrder, NoticeOfViolation, InspectionNotice, NoticeToCorrect, Easement, OMCertification, FinalSubmission,
    SuretyRelease, CertificateOfCompletion, FrozenPeriod, SnowmeltDischarge, Waiver, FrozenDocument))


def _sections(permit: Permit, known_at: dt.datetime, open_rows: list) -> dict:
    """The permit page's sections from the other domains, each its own `section(permit)`, in page order."""
    with held_rows.asked(permit.id, _MOSTLY_EMPTY):
        found = {"enforcement": enforcement.section(permit), "inspections": inspections.section(permit),
                 "photos": photos.section(permit), "certifications": certifications.section(permit),
                 "completion": completion.section(permit), "conditions": conditions.section(permit),
                 "waivers": waivers.section(permit)}
        # The documents list the reports, orders and certificate the other sections read (once, not twice).
        found["documents"] = documents.section(permit, found["inspections"]["inspections"],
                                               found["enforcement"]["record"].orders,
                                               found["completion"]["record"].certificate)
    return found | {"site_map": maps.site_section(permit, known_at, open_rows)}


@dataclass(frozen=True, slots=True)
class Fold:
    """A part of the permit page below *What to do now*, folded away (<details>) unless `open`."""

    key: str
    title: str
    template: str
    open: bool = False


def _folds(permit: Permit) -> list[Fold]:
    """The permit page's parts after *What to do now*, in page order; the ones worked in most start open."""
    return [
        Fold("facts", "Site and permit", "permits/_facts.html"),
        Fold("enforcement", "Stop-work orders and notices of violation", "enforcement/_section.html",
             open=permit.is_under_stop_work),
        Fold("assignments", "Inspectors", "permits/_assignments.html"),
        Fold("areas", "Disturbed areas", "permits/_areas.html", open=True),
        Fold("structures", "Stormwater structures", "permits/_structures.html"),
        Fold("site_map", "Site map", "permits/_site_map.html", open=True),
        Fold("inspections", "Inspections", "inspections/_permit_section.html", open=True),
        Fold("photos", "Photos", "photos/_permit_photos.html"),
        Fold("rainfall", "Rainfall, last 60 days", "permits/_rainfall.html"),
        Fold("conditions", "Frozen conditions and snowmelt", "conditions/_section.html"),
        Fold("waivers", "Waivers", "waivers/_section.html"),
        Fold("om", "Operation and maintenance", "certifications/_permit_section.html", open=True),
        Fold("schedule", "Schedule", "dashboard/_permit_link.html"),
        Fold("completion", "Final submissions and certificate of completion", "completion/_section.html"),
        Fold("documents", "Documents", "documents/_permit_documents.html"),
    ]


def _detail(permit: Permit, status_code: int = 200, **forms):
    context = _detail_forms(permit, blank=True) | forms
    known_at = utcnow()
    # The permit's open obligations, read once for "What to do now" and the site map's stabilization clocks.
    open_rows = permit_open(permit.id, known_at)
    page = render_template("permits/detail.html", permit=permit, sections=_sections(permit, known_at, open_rows),
                           folds=_folds(permit), now_items=now.section(permit, current_user, known_at, open_rows),
                           known_at=known_at, **context)
    return page, status_code


# The permit page's parts its forms replace in place, by the id htmx sends as HX-Target.
FRAGMENTS = {"assignments": "permits/_assignments.html", "areas": "permits/_areas.html",
             "structures": "permits/_structures.html"}


def _fragment(target: str, permit: Permit, status_code: int = 200, **forms):
    """The part of the page htmx asked for (HX-Target), or the whole page (303 on success) otherwise."""
    if htmx.target == target:
        context = _detail_forms(permit, blank=True) | forms
        return render_template(FRAGMENTS[target], permit=permit, **context), status_code
    if status_code == 200:
        return redirect(url_for("permits.detail", permit_id=permit.id), code=303)
    return _detail(permit, status_code, **forms)


@bp.get("/")
def index():
    """List the permits the user may see, filtered by town, status and assigned inspector."""
    require("permit.view")
    query = visible_permits(current_user).order_by(Permit.issued_on.desc(), Permit.number)
    town, status, inspector = (request.args.get(k, "") for k in ("town", "status", "inspector"))
    if town:
        query = query.where(Permit.jurisdiction_id == town)
    if status in PERMIT_STATUSES:
        query = query.where(Permit.status == status)
    if inspector:
        query = query.where(Permit.id.in_(select(PermitAssignment.permit_id)
                                          .where(PermitAssignment.user_id == inspector)))
    page = db.paginate(query, page=query_int("page", 1, 1, 100_000, refuse=False), per_page=50, error_out=False)
    inspectors = db.session.scalars(people_to_choose(current_user, "inspector"))
    response = render_template("permits/index.html", page=page, towns=_jurisdictions(),
                               statuses=PERMIT_STATUSES, inspectors=list(inspectors),
                               filters={"town": town, "status": status, "inspector": inspector})
    return response, 200, {"Vary": "HX-Request"}


def _save(form: PermitForm, permit: Permit | None):
    """Create or update from a valid form; the form again, with its errors, otherwise."""
    if form.validate_on_submit():
        try:
            if permit is None:
                permit = services.create_permit(current_user, **_permit_fields(form))
            else:
                services.update_permit(current_user, permit, **_permit_fields(form))
        except services.PermitError as error:
            db.session.rollback()  # a refusal changes nothing, whatever was set before it was found
            getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            return redirect(url_for("permits.detail", permit_id=permit.id), code=303)
    return render_template("permits/form.html", form=form, permit=permit), 422 if form.errors else 200


@bp.route("/new", methods=["GET", "POST"])
def create():
    """Record a newly issued permit (agents and admins)."""
    require("permit.create")
    return _save(_permit_form(), None)


@bp.get("/<permit_id>")
def detail(permit_id: str):
    """One permit: its facts, inspectors, disturbed areas and structures."""
    return _detail(permit_or_404(permit_id))


@bp.route("/<permit_id>/edit", methods=["GET", "POST"])
def edit(permit_id: str):
    """Change a permit's facts (agents and admins of its town)."""
    permit = permit_or_404(permit_id, "permit.edit")
    return _save(_permit_form(permit), permit)


@bp.post("/<permit_id>/status")
def change_status(permit_id: str):
    """Move the permit to its next status."""
    permit = permit_or_404(permit_id, "permit.edit")
    form = _detail_forms(permit)["status_form"]
    refusal = services.own_act_refusal(permit, request.form.get(form.status.name, ""))
    if refusal:  # not a choice of the form (a page from before an order, a hand-made post): said, not "not valid"
        form.status.errors = [refusal]
        return _detail(permit, 422, status_form=form)
    if form.validate_on_submit():
        try:
            services.change_status(current_user, permit, form.status.data)
        except services.PermitError as error:
            form.status.errors.append(str(error))
        else:
            db.session.commit()
            return redirect(url_for("permits.detail", permit_id=permit.id), code=303)
    return _detail(permit, 422, status_form=form)


@bp.post("/<permit_id>/assignments")
def assign(permit_id: str):
    """Assign an inspector to the permit."""
    permit = permit_or_404(permit_id, "permit.assign")
    form = _detail_forms(permit)["assign_form"]
    if form.validate_on_submit():
        try:
            services.assign(current_user, permit, db.session.get(User, form.user_id.data), form.capacity.data)
        except services.PermitError as error:
            form.user_id.errors.append(str(error))
        else:
            db.session.commit()
            return _fragment("assignments", permit)
    return _fragment("assignments", permit, 422, assign_form=form)


@bp.post("/<permit_id>/assignments/<assignment_id>/delete")
def unassign(permit_id: str, assignment_id: str):
    """Take an inspector off the permit."""
    permit = permit_or_404(permit_id, "permit.assign")
    assignment = db.get_or_404(PermitAssignment, assignment_id)
    if assignment.permit_id != permit.id:
        abort(404)
    services.unassign(current_user, permit, assignment)
    db.session.commit()
    return _fragment("assignments", permit)


@bp.post("/<permit_id>/areas")
def add_area(permit_id: str):
    """Add a disturbed area to the site."""
    permit = permit_or_404(permit_id, "area.edit")
    form = AreaForm(prefix="area")
    if form.validate_on_submit():
        try:
            services.add_area(current_user, permit, form.name.data, form.acres.data)
        except services.PermitError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            return _fragment("areas", permit)
    return _fragment("areas", permit, 422, area_form=form)


@bp.post("/<permit_id>/areas/<area_id>/status")
def area_status(permit_id: str, area_id: str):
    """Record that an area's activity ceased, stabilization began, or it is stabilized."""
    permit = permit_or_404(permit_id, "area.edit")
    area = db.get_or_404(DisturbedArea, area_id)
    if area.permit_id != permit.id:
        abort(404)
    form = AreaStatusForm(prefix=f"area-{area.id}")
    if form.validate_on_submit():
        at = form.at.data.replace(tzinfo=LOCAL_TZ)
        try:
            services.change_area_status(current_user, area, form.status.data, at, form.note.data or None)
        except services.PermitError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            return _fragment("areas", permit)
    return _fragment("areas", permit, 422, status_forms={area.id: form})


@bp.post("/<permit_id>/structures")
def add_structure(permit_id: str):
    """Add a stormwater structure from the approved plan."""
    permit = permit_or_404(permit_id, "structure.edit")
    form = StructureForm(prefix="structure")
    if form.validate_on_submit():
        fields = {n: f.data for n, f in form._fields.items() if n != "csrf_token"}
        try:
            services.add_structure(current_user, permit, **fields)
        except services.PermitError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            return _fragment("structures", permit)
    return _fragment("structures", permit, 422, structure_form=form)


@bp.post("/<permit_id>/structures/<structure_id>/backfill")
def backfill(permit_id: str, structure_id: str):
    """Record that an underground structure was backfilled (§380-16 C(4)(c)), when and by whom."""
    permit = permit_or_404(permit_id, "structure.backfill")
    structure = db.get_or_404(StormwaterStructure, structure_id)
    if structure.permit_id != permit.id:
        abort(404)
    form = BackfillForm(prefix=f"backfill-{structure.id}")
    if form.validate_on_submit():
        try:
            services.record_backfill(current_user, structure, form.at.data.replace(tzinfo=LOCAL_TZ))
        except services.PermitError as error:
            form.at.errors.append(str(error))
        else:
            db.session.commit()
            return _fragment("structures", permit)
    return _fragment("structures", permit, 422, backfill_forms={structure.id: form})


@bp.post("/<permit_id>/points")
def place(permit_id: str):
    """Give one of the site's disturbed areas, structures or easements its point on the site map."""
    permit = permit_or_404(permit_id, "area.edit")
    form = _point_form(permit)
    if form.validate_on_submit():
        services.place(current_user, _placeable(permit)[form.subject.data], form.latitude.data, form.longitude.data)
        db.session.commit()
        return redirect(url_for("permits.detail", permit_id=permit.id, _anchor="site-map"), code=303)
    return _detail(permit, 422, point_form=form)
