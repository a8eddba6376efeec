"""A permit's waivers (Longmeadow §380-8, Southborough §6.2): the page and the form to record one."""
from __future__ import annotations

from flask import Blueprint, redirect, render_template, url_for
from flask_login import current_user, login_required
from wtforms import SelectChoice

from inspect_app.accounts.policy import permit_or_404
from inspect_app.extensions import db
from inspect_app.labels import OBLIGATION_KIND_LABELS
from inspect_app.permits.models import Permit, StormwaterStructure
from inspect_app.waivers import services
from inspect_app.waivers.forms import WaiverForm

bp = Blueprint("waivers", __name__, url_prefix="/permits/<permit_id>/waivers")


def section(permit: Permit) -> dict:
    """What the permit page shows of waivers (_section.html): each with the clause it rests on."""
    return {"waivers": services.waivers_of(permit), "clause": services.clause(permit),
            "requirement_names": OBLIGATION_KIND_LABELS}


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every waiver page needs a signed-in user."""


def _form(permit: Permit, formdata: bool = True) -> WaiverForm:
    form = WaiverForm(prefix="waiver") if formdata else WaiverForm(prefix="waiver", formdata=None)
    form.requirement.choices = [SelectChoice("", "— choose —")] + [SelectChoice(k, v) for k, v in services.waivable(permit)]
    form.structure_id.choices = [SelectChoice("", "— every structure —")] + [
        SelectChoice(s.id, s.name) for s in permit.structures if s.is_underground]
    return form


def _page(permit: Permit, form: WaiverForm, status_code: int = 200):
    return render_template("waivers/page.html", permit=permit, form=form, **section(permit)), status_code


@bp.get("/")
def page(permit_id: str):
    """The permit's waivers, and for the authority the form to record one."""
    permit = permit_or_404(permit_id)
    return _page(permit, _form(permit, formdata=False))


@bp.post("/")
def grant(permit_id: str):
    """Record a waiver the authority granted (agents of the permit's town)."""
    permit = permit_or_404(permit_id, "waiver.grant")
    form = _form(permit)
    if form.validate_on_submit():
        structure = db.session.get(StormwaterStructure, form.structure_id.data) if form.structure_id.data else None
        try:
            services.grant_waiver(current_user, permit, form.requirement.data, form.reason.data,
                                  form.granted_on.data, structure)
        except services.WaiverError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            db.session.commit()
            return redirect(url_for("waivers.page", permit_id=permit.id), code=303)
    return _page(permit, form, 422)
