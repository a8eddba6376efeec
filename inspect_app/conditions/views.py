"""Frozen conditions and snowmelt discharges of a permit (CGP 2022 Parts 4.2-4.4): the page and its forms."""
from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, url_for
from flask_login import current_user, login_required

from inspect_app.accounts.policy import permit_or_404
from inspect_app.conditions import services
from inspect_app.conditions.forms import FrozenEndForm, FrozenForm, SnowmeltForm
from inspect_app.conditions.models import FrozenPeriod
from inspect_app.extensions import db
from inspect_app.permits.models import Permit
from inspect_app.types import LOCAL_TZ

bp = Blueprint("conditions", __name__, url_prefix="/permits/<permit_id>/conditions")


def section(permit: Permit) -> dict:
    """What the permit page shows of the site's conditions (_section.html)."""
    return {"periods": services.periods_of(permit), "discharges": services.discharges_of(permit),
            "snow_threshold": services.threshold_words(permit)}


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every page of a permit's conditions needs a signed-in user."""


def _page(permit: Permit, status_code: int = 200, **forms):
    forms.setdefault("frozen_form", FrozenForm(prefix="frozen", formdata=None))
    forms.setdefault("end_form", FrozenEndForm(prefix="end", formdata=None))
    forms.setdefault("snowmelt_form", SnowmeltForm(prefix="snowmelt", formdata=None))
    return render_template("conditions/page.html", permit=permit, **section(permit), **forms), status_code


def _done(permit: Permit):
    db.session.commit()
    return redirect(url_for("conditions.page", permit_id=permit.id), code=303)


@bp.get("/")
def page(permit_id: str):
    """The permit's frozen-conditions periods and snowmelt discharges, with the forms to record them."""
    return _page(permit_or_404(permit_id))


@bp.post("/frozen")
def begin_frozen(permit_id: str):
    """Record the beginning of frozen conditions (CGP 2022 Part 4.4)."""
    permit = permit_or_404(permit_id, "conditions.record")
    form = FrozenForm(prefix="frozen")
    if form.validate_on_submit():
        try:
            services.record_frozen(current_user, permit, form.kind.data == "suspended",
                                   form.starts_at.data.replace(tzinfo=LOCAL_TZ), form.note.data)
        except services.ConditionError as error:
            getattr(form, {"suspended": "kind"}.get(error.field, error.field)).errors.append(str(error))
        else:
            return _done(permit)
    return _page(permit, 422, frozen_form=form)


@bp.post("/frozen/<period_id>/end")
def end_frozen(permit_id: str, period_id: str):
    """Record the end of frozen conditions: the regular schedule applies again."""
    permit = permit_or_404(permit_id, "conditions.record")
    period = db.get_or_404(FrozenPeriod, period_id)
    if period.permit_id != permit.id:
        abort(404)
    form = FrozenEndForm(prefix="end")
    if form.validate_on_submit():
        try:
            services.end_frozen(current_user, period, form.ends_at.data.replace(tzinfo=LOCAL_TZ))
        except services.ConditionError as error:
            form.ends_at.errors.append(str(error))
        else:
            return _done(permit)
    return _page(permit, 422, end_form=form)


@bp.post("/snowmelt")
def snowmelt(permit_id: str):
    """Record a snowmelt discharge seen on site (CGP 2022 Parts 4.2, 4.3)."""
    permit = permit_or_404(permit_id, "conditions.record")
    form = SnowmeltForm(prefix="snowmelt")
    if form.validate_on_submit():
        try:
            services.record_snowmelt(current_user, permit, form.discharge_at.data.replace(tzinfo=LOCAL_TZ),
                                     form.snow_in.data, form.note.data)
        except services.ConditionError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            return _done(permit)
    return _page(permit, 422, snowmelt_form=form)
