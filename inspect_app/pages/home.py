"""The permit holder's home: their permits, each with its reports, stop-work orders, the corrective actions
assigned to them and the O&M deadlines."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, redirect, render_template, url_for
from flask_login import current_user, login_required
from sqlalchemy import select

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import allowed, shown, visible_permits
from inspect_app.certifications.services import summary
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.findings.models import CorrectiveAction
from inspect_app.inspections.models import Inspection
from inspect_app.permits.models import Permit

bp = Blueprint("permittee", __name__)


def permittee_overview(user: User, visible: list[Permit]) -> list[dict[str, Any]]:
    """For each permit a permittee owns: reports, stop-work orders, actions assigned to them, deadlines."""
    rows = []
    for permit in visible:
        reports = db.session.scalars(select(Inspection).where(Inspection.permit_id == permit.id,
                                                              Inspection.status == "submitted")
                                     .order_by(Inspection.performed_at.desc())).all()
        orders = db.session.scalars(select(StopWorkOrder).where(StopWorkOrder.permit_id == permit.id)
                                    .order_by(StopWorkOrder.issued_at.desc())).all()
        actions = db.session.scalars(select(CorrectiveAction).where(CorrectiveAction.permit_id == permit.id,
                                                                    CorrectiveAction.owner_id == user.id,
                                                                    shown(user, CorrectiveAction))
                                     .order_by(CorrectiveAction.due_at)).all()
        rows.append({"permit": permit, "reports": reports, "orders": orders, "actions": actions,
                     **summary(permit)})
    return rows


@bp.get("/my-permits")
@login_required
def my_permits():
    """A permittee's home: their permits, reports, orders, actions assigned to them, and deadlines."""
    if not allowed(current_user, "permit.list_mine"):
        return redirect(url_for("permits.index"))
    permits = db.session.scalars(visible_permits(current_user).order_by(Permit.number)).all()
    return render_template("certifications/my_permits.html", rows=permittee_overview(current_user, permits))
