"""Lifting a stop-work order from one page: the open corrective actions that keep it standing, verified there, and
the order lifted in the same step.

A module of its own, above `enforcement.services` and `findings.services`: the findings domain's services import
the inspections domain's, which issue orders through `enforcement.services`, so the latter cannot import them.
Every check stays where it is: `findings.services.close_out` and `verify` for each action, then
`enforcement.services.lift_stop_work` (§380-16 C(4)(e)[5]). One refusal refuses the whole step and keeps nothing.
"""
from __future__ import annotations

from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.enforcement.services import EnforcementError, hold_order, lift_stop_work, uncorrected
from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.types import utcnow

# Kept on an action the agent closed out and verified at once on the lift form: its work was seen done by then.
CLOSED_AT_LIFT = "Seen done and verified by the town's agent when lifting the stop-work order."


def open_actions(order: StopWorkOrder) -> list[CorrectiveAction]:
    """The corrective actions not yet verified of the violations that keep `order` standing, in their order."""
    return [action for finding in uncorrected(order) for action in finding.actions if action.status != "verified"]


def verify_and_lift(actor, order: StopWorkOrder, reason: str, approval_inspection: Inspection | None,
                    verified: dict[str, str | None]) -> StopWorkOrder:
    """Verify the actions of `verified` (an action's id: the id of the photo that shows its work, or None), then
    lift the order. An action not closed out yet is closed out now, by the agent who saw it done, with that photo.
    """
    hold_order(order)  # first: a lift sent at the same time waits, then finds this one done
    if not order.is_standing:
        raise EnforcementError("reason", "This stop-work order has already been lifted.")
    actions = {action.id: action for action in open_actions(order)}
    unknown = [action_id for action_id in verified if action_id not in actions]
    if unknown:
        raise EnforcementError("verified", "Tick only the open corrective actions listed on this order.")
    with db.session.begin_nested():  # a refusal at any step rolls every step back
        for action_id, photo_id in verified.items():
            action = actions[action_id]
            try:
                if action.status == "open":
                    findings.close_out(actor, action, utcnow(), CLOSED_AT_LIFT, evidence_photo_id=photo_id)
                findings.verify(actor, action)
            except findings.FindingError as error:
                raise EnforcementError("verified", f"{action.description}: {error}") from None
        return lift_stop_work(actor, order, reason, approval_inspection)
