"""The permit holder's home: their permits, each with its reports, stop-work orders, the corrective actions
assigned to them and the O&M deadlines."""
from __future__ import annotations

import datetime as dt
from typing import Any

from flask import Blueprint, redirect, render_template, url_for
from flask_login import current_user, login_required
from sqlalchemy import select

from inspect_app import inspection_types
from inspect_app.accounts.models import User
from inspect_app.accounts.policy import allowed, shown, visible_permits
from inspect_app.certifications.services import summary
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.pages import now
from inspect_app.permits.models import Permit
from inspect_app.types import utcnow

bp = Blueprint("permittee", __name__)
# Obligations the page lists on lines of their own, or not at all: the O&M certification, a notice's cure, and
# corrective actions (those assigned to the permit holder have their line; others' are not theirs to do).
OWN_LINES = ("om_certification", "cure", "corrective_action", "corrective_action_record")
# The authority's own inspections of a completed project (§380-14 A(3): the agreement gives the DPW Director access
# for them) are the town's to make, not the permit holder's: not listed as theirs.
AUTHORITYS_OWN = tuple(obligation for key in inspection_types.keys_where(after_completion=True)
                       for obligation in inspection_types.spec(key).meets)


def _owed(permit: Permit, user: User, at: dt.datetime) -> list[now.NowItem]:
    """The permit's other obligations due or overdue at `at` (the inspections owed, stabilization, ...), a chain
    of missed ones folded into one line."""
    return [item for item in now.section(permit, user, at)
            if item.status in ("due", "overdue") and item.row.obligation.kind not in (*OWN_LINES, *AUTHORITYS_OWN)]


def permittee_overview(user: User, visible: list[Permit]) -> list[dict[str, Any]]:
    """For each permit a permittee owns: reports, stop-work orders, actions assigned to them, deadlines."""
    rows = []
    at = utcnow()
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
        om, owed = summary(permit), _owed(permit, user, at)
        # "Nothing due" only when nothing is: no obligation, certification, notice or action of theirs open.
        nothing_due = (not owed and om["status"] not in ("due", "overdue") and not om["open_notices"]
                       and all(action.completed_at is not None for action in actions))
        rows.append({"permit": permit, "reports": reports, "orders": orders, "actions": actions, "owed": owed,
                     "nothing_due": nothing_due, **om})
    return rows


@bp.get("/my-permits")
@login_required
def my_permits():
    """A permittee's home: their permits, reports, orders, actions assigned to them, and deadlines."""
    if not allowed(current_user, "permit.list_mine"):
        return redirect(url_for("permits.index"))
    permits = db.session.scalars(visible_permits(current_user).order_by(Permit.number)).all()
    return render_template("certifications/my_permits.html", rows=permittee_overview(current_user, permits))
