"""Issuing, acknowledging and lifting stop-work orders, and notices of violation (§380-16 C(4)(e)[5], §380-19).

Each change writes the audit log in the same transaction and only flushes: the caller commits. None of
these needs a request, so the final-inspection code can issue an order when a final inspection fails.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select

from inspect_app import held_rows
from inspect_app.accounts.policy import shown
from inspect_app.rules.trace import implements
from inspect_app.audit import services as audit
from inspect_app.audit.models import AuditEntry
from inspect_app.completion.models import FinalSubmission
from inspect_app.enforcement.models import NoticeOfViolation, StopWorkOrder
from inspect_app.extensions import db, hold
from inspect_app.inspections.models import Finding, Inspection
from inspect_app.mail import services as mail
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.templating import local_time
from inspect_app.types import utcnow


class EnforcementError(ValueError):
    """A change the record does not allow; `field` names the form field it is about."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class EnforcementRecord:
    """What the permit page shows of enforcement: the standing order, earlier ones, notices."""

    standing: StopWorkOrder | None
    lifted: list[StopWorkOrder]
    notices: list[NoticeOfViolation]
    orders: list[StopWorkOrder]  # every order, standing or lifted, newest first


def orders_of(permit: Permit) -> list[StopWorkOrder]:
    """Every stop-work order of `permit`, newest first (by id among those issued at the same moment)."""
    if held_rows.none_of(StopWorkOrder.permit_id, permit.id):
        return []
    query = select(StopWorkOrder).where(StopWorkOrder.permit_id == permit.id)
    return list(db.session.scalars(query.order_by(StopWorkOrder.issued_at.desc(), StopWorkOrder.id)))


def _hold_permit(permit: Permit) -> None:
    """Hold `permit` until the transaction ends, before its orders are read to be changed: of two agents (or two
    tabs) issuing an order at once, the second waits, then finds the first's order standing (PostgreSQL: FOR NO
    KEY UPDATE; SQLite: the database's write lock). Read again as it is now (its status, its revision): the request
    read it before it waited for the lock."""
    hold(Permit, permit.id)


def hold_order(order: StopWorkOrder) -> None:
    """Hold `order` and read it again, as it is now: of two lifts (or acknowledgements) sent at once, the second
    waits, then finds it lifted (or acknowledged) and says so."""
    hold(StopWorkOrder, order.id)
    _hold_permit(order.permit)  # and its permit, whose status the lift puts back (the order first, always)


def standing_order(permit: Permit) -> StopWorkOrder | None:
    """The stop-work order that stands on `permit`, if any."""
    query = select(StopWorkOrder).where(StopWorkOrder.permit_id == permit.id,
                                        StopWorkOrder.lifted_at.is_(None))
    return db.session.scalar(query.order_by(StopWorkOrder.issued_at.desc()).limit(1))


def notices_of(permit: Permit) -> list[NoticeOfViolation]:
    """Every notice of violation of `permit`, newest first."""
    if held_rows.none_of(NoticeOfViolation.permit_id, permit.id):
        return []
    query = select(NoticeOfViolation).where(NoticeOfViolation.permit_id == permit.id)
    return list(db.session.scalars(query.order_by(NoticeOfViolation.issued_at.desc())))


def enforcement_record(permit: Permit) -> EnforcementRecord:
    """The standing order, the lifted ones and the notices of `permit`, for its page."""
    orders = orders_of(permit)
    standing = next((o for o in orders if o.is_standing), None)
    return EnforcementRecord(standing, [o for o in orders if not o.is_standing], notices_of(permit), orders)


def open_findings(permit: Permit) -> list[Finding]:
    """The findings of `permit` not yet corrected: the reasons an order may cite (not a draft's)."""
    query = select(Finding).where(Finding.permit_id == permit.id, Finding.status != "corrected",
                                  shown(None, Finding))
    return list(db.session.scalars(query.order_by(Finding.created_at)))


def open_violations(permit: Permit) -> list[Finding]:
    """The violations found on `permit` in submitted reports and not yet corrected, cited on an order or not."""
    query = (select(Finding).join(Inspection, Inspection.id == Finding.inspection_id)
             .where(Finding.permit_id == permit.id, Finding.is_violation.is_(True), Finding.status != "corrected",
                    Inspection.status == "submitted"))
    return list(db.session.scalars(query.order_by(Finding.created_at)))


def uncorrected(order: StopWorkOrder) -> list[Finding]:
    """What keeps `order` standing: the findings it cites not yet corrected, then every other open violation
    of its permit (§380-16 C(4)(e)[5]: "until any violations are corrected", not only those it names)."""
    cited = order.uncorrected_findings
    return cited + [f for f in open_violations(order.permit) if f not in cited]


def submitted_inspections(permit: Permit) -> list[Inspection]:
    """The submitted inspections of `permit`, newest first."""
    query = select(Inspection).where(Inspection.permit_id == permit.id, Inspection.status == "submitted")
    return list(db.session.scalars(query.order_by(Inspection.performed_at.desc())))


def approving_inspections(order: StopWorkOrder) -> list[Inspection]:
    """Inspections that can approve lifting `order`: submitted, compliant, performed after it."""
    return [i for i in submitted_inspections(order.permit) if _approves(i, order)]


def _approves(inspection: Inspection, order: StopWorkOrder) -> bool:
    return (inspection.permit_id == order.permit_id and inspection.status == "submitted"
            and inspection.evaluation == "compliant" and inspection.performed_at > order.issued_at)


def _clause(order: StopWorkOrder) -> str:
    """' (§380-16 C(4)(f)[2])': the town's own clause for this order (after the final inspection, §380-16
    C(4)(e)[5]; after any other, §380-16 C(4)(f)[2]), or nothing where it cites none."""
    clause = permits.profile_of(order.permit).cite(order.citation_purpose)
    return f" ({clause})" if clause else ""


def lifting_clause(rests_on: str) -> str:
    """The purpose of the clause that says when an order resting on `rests_on` is lifted: after the final inspection,
    the clause itself (§380-16 C(4)(e)[5]: "until any violations are corrected and all work previously completed has
    received approval"); after any other, the town's enforcement section, under which the authority proceeds
    (§380-16 C(4)(f)[2]: "enforcement action will proceed ... in accordance with the procedures described in
    § 380-19"), not (f)[2], which says nothing of lifting."""
    return "stop_work_final" if rests_on == "stop_work_final" else "violation"


def _recipients(permit: Permit) -> list[str]:
    """The permittee, the assigned engineers and the applicant: who must hear of an order."""
    people = [permit.owner] + [a.user for a in permit.assignments]
    return [p.email for p in people if p is not None] + [permit.applicant_email or ""]


def _describe(order: StopWorkOrder) -> str:
    permit = order.permit
    lines = [f"Permit {permit.number}, {permit.site_address}", "", "Reasons:", order.reason]
    lines += [f"- {f.description}" + (f" ({f.location})" if f.location else "") for f in order.findings]
    return "\n".join(lines)


def issue_stop_work(actor, permit: Permit, reason: str, findings: Iterable[Finding] = (),
                    inspection: Inspection | None = None,
                    notice_text: str | None = None) -> StopWorkOrder:
    """Issue a stop-work order on `permit` citing `reason` and its open `findings`, and notify.

    With `notice_text`, a written notice of violation goes with it (§380-16 C(4)(e)[5]).
    """
    if actor is None or getattr(actor, "id", None) is None:
        raise EnforcementError("reason", "A stop-work order must name the person who issues it.")
    reason = (reason or "").strip()
    if not reason:
        raise EnforcementError("reason", "Give the reasons for the stop-work order.")
    _hold_permit(permit)
    if standing_order(permit) is not None:
        raise EnforcementError("reason", "A stop-work order already stands on this permit; lift it "
                                         "before issuing another.")
    findings = list(findings)
    for finding in findings:
        if finding.permit_id != permit.id or finding.status == "corrected":
            raise EnforcementError("finding_ids", "Choose only open findings of this permit.")
    if inspection is not None and inspection.permit_id != permit.id:
        raise EnforcementError("inspection_id", "Choose an inspection of this permit.")
    if notice_text is not None and not notice_text.strip():
        raise EnforcementError("notice_text", "Write the notice of violation: what is wrong and what "
                                              "must be corrected.")
    try:
        permits.change_status(actor, permit, "stop_work", by_its_act=True)
    except permits.PermitError as error:
        raise EnforcementError("reason", str(error)) from None
    order = StopWorkOrder(permit_id=permit.id, permit=permit, reason=reason, issued_by_id=actor.id,
                          inspection_id=inspection.id if inspection else None, inspection=inspection,
                          findings=findings)
    db.session.add(order)
    audit.record(actor, "stop_work.issue", order)
    body = _describe(order)
    if notice_text is not None:
        notice = issue_notice_of_violation(actor, permit, notice_text, inspection, order, notify=False)
        body += f"\n\nNotice of violation:\n{notice.text}"
    profile = permits.profile_of(permit)
    lifted_when = profile.cite(lifting_clause(order.citation_purpose))
    # In the order's own words (documents/reports.py): who issued it and for whom, and what may go on meanwhile.
    mail.send(_recipients(permit), f"Stop-work order: permit {permit.number}",
              f"A stop-work order was issued {local_time(utcnow())} by {_issuer(actor, order)}{_clause(order)}. "
              "All construction and land-disturbing activity on the site must stop, except the work needed to "
              "correct the violations below and to keep erosion and sediment controls working, until the order is "
              f"lifted in writing. It stands until the violations are corrected and the work is approved by the "
              f"{profile.authority_title}{f' ({lifted_when})' if lifted_when else ''}.\n\n{body}",
              permit_id=permit.id)
    return order


def _issuer(actor, order: StopWorkOrder) -> str:
    """Who issued the order, as its document says: for the authority, or (a failed final's order, issued at once by
    whoever made that inspection, often the applicant's engineer) on their inspection."""
    permit = order.permit
    if order.citation_purpose == "stop_work_final" and not is_town_agent(actor, permit):
        return f"{actor.name}, on the final inspection that found the system not complying with the plan"
    return f"{actor.name}, for the {permits.profile_of(permit).authority_title}"


def issue_notice_of_violation(actor, permit: Permit, text: str, inspection: Inspection | None = None,
                              order: StopWorkOrder | None = None, notify: bool = True) -> NoticeOfViolation:
    """Record a written notice of the violation and the corrections required (§380-16 C(4)(e)[5])."""
    text = (text or "").strip()
    if not text:
        raise EnforcementError("notice_text", "Write the notice of violation: what is wrong and what "
                                              "must be corrected.")
    notice = NoticeOfViolation(permit_id=permit.id, text=text, issued_by_id=actor.id,
                               inspection_id=inspection.id if inspection else None,
                               stop_work_order=order)
    db.session.add(notice)
    audit.record(actor, "violation.notice", notice)
    if notify:
        mail.send(_recipients(permit), f"Notice of violation: permit {permit.number}",
                  f"Permit {permit.number}, {permit.site_address}\n\n{text}", permit_id=permit.id)
    return notice


def acknowledge(actor, order: StopWorkOrder) -> StopWorkOrder:
    """Record that the permittee has received the standing order."""
    hold_order(order)
    if not order.is_standing:
        raise EnforcementError("order", "This stop-work order has been lifted.")
    if order.acknowledged_at is not None:
        raise EnforcementError("order", "This stop-work order was already acknowledged.")
    before = audit.snapshot(order)
    order.acknowledged_at, order.acknowledged_by_id = utcnow(), actor.id
    audit.record(actor, "stop_work.acknowledge", order, before)
    return order


def is_town_agent(actor, permit: Permit) -> bool:
    """True for an agent (or admin) of the permit's own town: who may approve the work for the authority."""
    return (getattr(actor, "role", None) in ("agent", "admin")
            and getattr(actor, "jurisdiction_id", None) == permit.jurisdiction_id)


# §380-16 C(4)(e)[5], as `lift_stop_work` checks it, in the words the lift form shows (enforcement/order.html):
# every condition the server holds the order to, and nothing it does not.
LIFT_CONDITIONS = (
    "every violation on the permit is corrected: those the order cites and any other found in a submitted "
    "report, each corrected once all its corrective actions are closed out and verified;",
    "an agent of the permit's town approves, for the {authority}, all work previously completed (the box below);",
    "the agent says why the order is lifted.",
)
LIFT_INSPECTION_NOTE = ("An inspection found compliant after the order was issued may be named as what the approval "
                        "rests on. It is optional, and it never replaces the corrections.")


def _status_before(order: StopWorkOrder) -> str:
    """Where a lifted order leaves its permit: the status the order found it in, as the audit log's entry of
    the permit's move into stop-work keeps it (active, or its final submissions: §380-18, its certificate follows
    their approval). An order the log says nothing of (none is issued without an entry) goes by the permit's final
    submissions: in them when some are filed and not rejected, else active."""
    moves = db.session.execute(select(AuditEntry.before, AuditEntry.after).where(
        AuditEntry.entity == "permits", AuditEntry.entity_id == order.permit_id, AuditEntry.action == "permit.status")
        .order_by(AuditEntry.seq.desc())).all()  # the permit's few status moves, newest first
    found = next(((before or {}).get("status") for before, after in moves
                  if (after or {}).get("status") == "stop_work"), None)
    if found in ("active", "final_submissions"):
        return found
    filed = db.session.scalar(select(FinalSubmission.id).where(FinalSubmission.permit_id == order.permit_id,
                                                               FinalSubmission.status != "rejected").limit(1))
    return "final_submissions" if filed is not None else "active"


@implements("§380-16 C(4)(e)[5]")
def lift_stop_work(actor, order: StopWorkOrder, reason: str,
                   approval_inspection: Inspection | None = None) -> StopWorkOrder:
    """Lift a standing order once every violation of the permit is corrected AND the work is approved.

    §380-16 C(4)(e)[5]: the order stands "until any violations are corrected and all work previously
    completed has received approval by the DPW Director". "Any violations" are every open violation found
    on the permit, whether the order cites it or not (an order issued with reasons only cites none), and
    the findings the order cites. The approval is the act of the person lifting the order: an agent of
    the permit's town, to whom the DPW Director's powers are delegated (§380-6); the order records who
    (`lifted_by`) and may point to the compliant inspection the approval rests on.
    """
    reason = (reason or "").strip()
    hold_order(order)
    if not order.is_standing:
        raise EnforcementError("reason", "This stop-work order has already been lifted.")
    if not is_town_agent(actor, order.permit):
        raise EnforcementError("reason", "Only an agent of the permit's town can approve the work and lift "
                                         f"the order{_clause(order)}.")
    if not reason:
        raise EnforcementError("reason", "Say why the order is lifted.")
    if approval_inspection is not None and not _approves(approval_inspection, order):
        raise EnforcementError("approval_inspection_id", "The approval must be a submitted inspection of "
                               "this permit, found compliant, performed after the order was issued.")
    open_ = uncorrected(order)
    if open_:
        cited = set(order.findings)
        listed = "; ".join(f.description + ("" if f in cited else " (not cited on the order)") for f in open_)
        raise EnforcementError("reason", f"Violations not yet corrected: {listed}. The order stands until every "
                                         "violation on the permit is corrected and the work is approved"
                                         f"{_clause(order)}; an approving inspection does not replace "
                                         "the corrections.")
    before = audit.snapshot(order)
    order.lifted_at, order.lifted_by_id, order.lift_reason = utcnow(), actor.id, reason
    order.approval_inspection_id = approval_inspection.id if approval_inspection else None
    # Back to the status the order found it in: a permit in its final submissions stays in them (§380-18).
    permits.change_status(actor, order.permit, _status_before(order), by_its_act=True)
    audit.record(actor, "stop_work.lift", order, before)
    permit = order.permit
    mail.send(_recipients(permit), f"Stop-work order lifted: permit {permit.number}",
              f"The stop-work order of {local_time(order.issued_at)} on permit {permit.number}, "
              f"{permit.site_address}, was lifted {local_time(order.lifted_at)} by {actor.name}, for the "
              f"{permits.profile_of(permit).authority_title}; work may resume.\n\nWhy: {reason}",
              permit_id=permit.id)
    return order
