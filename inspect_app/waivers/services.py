"""Granting a waiver of one town requirement on a permit (Longmeadow §380-8, Southborough §6.2).

§380-8 A: "The DPW Director may waive strict compliance with any requirement of these rules and regulations"
where it is allowed by federal, state and local law, is in the public interest and is consistent with the
rules' purpose; B: a request comes "accompanied by an explanation". The app records the waiver the authority
granted: which requirement (one the profile lists: the town's own, never a CGP duty), for the whole permit or
one structure, the reason, the day and who granted it. The schedule engine stops the waived obligation from
that day and cites the waiver wherever the obligation is shown. The change writes the audit log and only
flushes: the caller commits.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import joinedload

from inspect_app import held_rows
from inspect_app.audit import services as audit
from inspect_app.extensions import db, hold
from inspect_app.labels import OBLIGATION_KIND_LABELS
from inspect_app.permits.models import Permit, StormwaterStructure
from inspect_app.permits.services import profile_of
from inspect_app.rules import short_citation
from inspect_app.rules.trace import implements
from inspect_app.types import LOCAL_TZ, utcnow
from inspect_app.waivers.models import Waiver


class WaiverError(ValueError):
    """A waiver the record does not allow; `field` names the form field it is about."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def waivers_of(permit: Permit) -> list[Waiver]:
    """The permit's waivers, newest first."""
    if held_rows.none_of(Waiver.permit_id, permit.id):
        return []
    query = (select(Waiver).where(Waiver.permit_id == permit.id)
             .options(joinedload(Waiver.granted_by), joinedload(Waiver.structure)))
    return list(db.session.scalars(query.order_by(Waiver.granted_on.desc(), Waiver.recorded_at.desc())))


def waivable(permit: Permit) -> list[tuple[str, str]]:
    """(requirement, its name) the town's rules let its authority waive on this permit; none where they
    provide for no waiver."""
    return [(key, OBLIGATION_KIND_LABELS[key]) for key in profile_of(permit).waivable()]


def clause(permit: Permit) -> str:
    """The town's waiver clause ("§380-8"), or "" where its rules have none."""
    rule = profile_of(permit).waivers
    return "" if rule is None else short_citation(rule.citation)


@implements("§380-8", "§6.2")
def grant_waiver(actor, permit: Permit, requirement: str, reason: str, granted_on: dt.date,
                 structure: StormwaterStructure | None = None) -> Waiver:
    """Record the authority's waiver of `requirement` on `permit` (or on one structure's pre-bury inspection)."""
    rule = profile_of(permit).waivers
    if rule is None:
        raise WaiverError("requirement", f"{profile_of(permit).town}'s rules provide for no waiver of their "
                                         "requirements.")
    if requirement not in profile_of(permit).waivable():
        raise WaiverError("requirement", "Choose one of the town's own requirements; the CGP's are federal and no "
                                         f"town can waive them ({short_citation(rule.citation)}).")
    reason = (reason or "").strip()
    if not reason:
        raise WaiverError("reason", "Give the reason for the waiver: why strict compliance does not further the "
                                    f"purposes of the rules ({short_citation(rule.citation)}).")
    if granted_on is None or granted_on > utcnow().astimezone(LOCAL_TZ).date():
        raise WaiverError("granted_on", "Give the day the waiver was granted: today or earlier.")
    if granted_on < permit.issued_on:
        raise WaiverError("granted_on", "A waiver on this permit cannot be granted before the permit was issued.")
    if structure is not None and (structure.permit_id != permit.id or requirement != "pre_bury"
                                  or not structure.is_underground):
        raise WaiverError("structure_id", "Name an underground structure of this permit, for a pre-bury inspection "
                                          "only.")
    # The permit held first: of the same waiver posted twice at once (two tabs, two agents), the second finds the first.
    hold(Permit, permit.id)
    of_structure = Waiver.structure_id == structure.id if structure else Waiver.structure_id.is_(None)
    same = db.session.scalar(select(Waiver).where(Waiver.permit_id == permit.id, Waiver.requirement == requirement,
                                                  of_structure))
    if same is not None:
        raise WaiverError("requirement", f"This requirement{' of ' + structure.name if structure else ''} was already "
                                         f"waived on this permit, on {same.granted_on:%b %-d, %Y}: a waiver is "
                                         "recorded once.")
    waiver = Waiver(permit_id=permit.id, requirement=requirement, structure_id=structure.id if structure else None,
                    reason=reason, granted_on=granted_on, granted_by_id=actor.id)
    db.session.add(waiver)
    audit.record(actor, "waiver.grant", waiver)
    return waiver
