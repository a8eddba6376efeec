"""The one place that decides who may see or change what (SPEC *Who uses it*).

- A permittee sees only the permits they own.
- An inspector sees the permits they are assigned to.
- An agent sees everything in their jurisdiction.
- An admin configures everything in their jurisdiction, or in every town when they have none.
"""
from __future__ import annotations

from flask import abort
from flask_login import current_user
from sqlalchemy import Select, false, select, true

from inspect_app.permits.models import Permit, PermitAssignment

# action → roles that may do it, before the per-permit check below.
ACTIONS: dict[str, frozenset[str]] = {
    "permit.view": frozenset({"inspector", "agent", "permittee", "admin"}),
    "permit.create": frozenset({"agent", "admin"}),
    "permit.edit": frozenset({"agent", "admin"}),
    "permit.assign": frozenset({"agent", "admin"}),
    "area.edit": frozenset({"inspector", "agent", "admin"}),
    "structure.edit": frozenset({"agent", "admin"}),
    "inspection.perform": frozenset({"inspector", "agent"}),
    # §380-16 C(2)-(3): the five scheduled inspections are the engineer's; agents do periodic/random ones.
    "inspection.regulatory": frozenset({"inspector"}),
    "inspection.notice": frozenset({"inspector"}),
    "finding.review": frozenset({"agent"}),
    "action.close": frozenset({"inspector", "agent", "permittee"}),
    "photo.add": frozenset({"inspector", "agent", "permittee"}),
    "stop_work.issue": frozenset({"agent"}),
    "stop_work.lift": frozenset({"agent"}),
    "stop_work.acknowledge": frozenset({"permittee"}),
    "completion.submit": frozenset({"inspector", "permittee"}),
    "completion.review": frozenset({"agent"}),
    "certificate.issue": frozenset({"agent"}),
    "surety.release": frozenset({"agent"}),
    "om.log": frozenset({"permittee", "inspector"}),
    "om.certify": frozenset({"permittee"}),
    "om.review": frozenset({"agent"}),
    "om.plan.edit": frozenset({"agent", "admin"}),
    "dashboard.view": frozenset({"agent", "admin"}),
    "dashboard.my_day": frozenset({"inspector"}),
    "dashboard.calendar": frozenset({"inspector", "agent", "admin"}),
    "users.manage": frozenset({"admin"}),
    "mail.view": frozenset({"admin"}),
}


def _in_jurisdiction(user, permit: Permit) -> bool:
    if user.role == "admin" and user.jurisdiction_id is None:
        return True
    return user.jurisdiction_id == permit.jurisdiction_id


def is_assigned(user, permit: Permit) -> bool:
    return any(a.user_id == user.id for a in permit.assignments)


def sees(user, permit: Permit) -> bool:
    """Whether `user` may see `permit` at all."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.role in ("agent", "admin"):
        return _in_jurisdiction(user, permit)
    if user.role == "inspector":
        return is_assigned(user, permit)
    return user.role == "permittee" and permit.owner_id == user.id


def allowed(user, action: str, permit: Permit | None = None) -> bool:
    """Whether `user` may do `action`, on `permit` when the action concerns one."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.role not in ACTIONS[action]:
        return False
    if permit is None:
        return True
    return sees(user, permit)


def require(action: str, permit: Permit | None = None) -> None:
    """Refuse the request with 403 unless the current user may do `action`."""
    if not allowed(current_user, action, permit):
        abort(403)


def permit_or_404(permit_id: str, action: str = "permit.view") -> Permit:
    """The permit, if the current user may see it and do `action` on it.

    A permit you may not see does not exist for you (404); one you see but may not act on is 403.
    """
    from inspect_app.extensions import db

    permit = db.get_or_404(Permit, permit_id)
    if not sees(current_user, permit):
        abort(404)
    require(action, permit)
    return permit


def visible_permits(user) -> Select[tuple[Permit]]:
    """A query of the permits `user` may see; the same rule as `sees`, in SQL."""
    query = select(Permit)
    if not getattr(user, "is_authenticated", False):
        return query.where(false())
    if user.role in ("agent", "admin"):
        if user.role == "admin" and user.jurisdiction_id is None:
            return query.where(true())
        return query.where(Permit.jurisdiction_id == user.jurisdiction_id)
    if user.role == "inspector":
        assigned = select(PermitAssignment.permit_id).where(PermitAssignment.user_id == user.id)
        return query.where(Permit.id.in_(assigned))
    return query.where(Permit.owner_id == user.id)
