"""What to do now on a permit: its open obligations, most pressing first, each beside what answers it.

The obligations are those `schedule.obligations` stored for the permit (never worked out again here);
their order, status and words come from `dashboard.services`. This module only says, per kind of
obligation, which action meets it and where on the permit page (or beyond it) that action is done.
Whether the user may take it is the policy's question (`allowed(answer.action, permit)`), asked by the
page, so a user sees only what they may do. A report still in draft is its author's alone
(accounts/policy.py): to anyone else its obligation shows with no link to it.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from flask import url_for
from sqlalchemy import bindparam

from inspect_app import inspection_types
from inspect_app.accounts.records import kept_per_user
from inspect_app.labels import OBLIGATION_KIND_LABELS
from inspect_app.pages.dashboard.services import Row, owed, permit_open, when_due
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.profiles.schema import Profile


@dataclass(frozen=True, slots=True)
class Answer:
    """What meets an obligation: a word for its button, the policy action it needs, and where it is done.

    `inspection_type`: a "Start" of that inspection type (the permit page's start form). Otherwise
    `endpoint` (a page of its own, given the permit, or the report for `inspection:<id>` subjects) or
    `section` (the id of the permit page's part where it is done).
    """

    label: str
    action: str
    inspection_type: str = ""
    endpoint: str = ""
    section: str = ""


def _start(inspection_type: str) -> Answer:
    """A "Start" of an inspection of this type, by whoever may make it (the registry's action for the type:
    §380-16 C(2)-(3), C(4)(f))."""
    return Answer("Start", inspection_types.spec(inspection_type).action, inspection_type=inspection_type)


# §380-11 C(3)(a), CGP 2022 Part 2.2.14: recorded on the area (stabilization begun, then stabilized).
_AREA = Answer("Record", "area.edit", section="areas")
# CGP 2022 Part 5.2, §380-16 C(4)(f)[2]: closed out from the report that found it.
_CLOSE_OUT = Answer("Close out", "action.close", section="inspections")
# §380-10 K: the permit's own dates (construction start, extension), recorded by editing the permit.
_PERMIT_DATES = Answer("Update", "permit.edit", endpoint="permits.edit")
ANSWERS: dict[str, Answer] = {
    # An inspection's duties are met by starting the type that meets them (inspection_types: `meets`): routine,
    # storm and pre-construction (§380-16 C(4)(b)[1], CGP 2022 Part 4.2), before backfill (C(4)(c)), the
    # walk-through (C(4)(d)).
    **{obligation: _start(inspection_types.meeting(obligation)) for obligation in inspection_types.obligations_met()},
    "stabilization": _AREA, "stabilization_complete": _AREA,
    "corrective_action": _CLOSE_OUT, "corrective_action_record": _CLOSE_OUT,
    # CGP 2022 Part 4.7.1: the report of an inspection, finished and signed by its author.
    "report": Answer("Finish", "inspection.regulatory", endpoint="inspections.detail"),
    # §380-14 C(2)(l): the annual O&M certification; §380-14 E: the cure of a failure to maintain.
    "om_certification": Answer("Certify", "om.certify", endpoint="certifications.certify_form"),
    "cure": Answer("Log the work", "om.log", endpoint="certifications.log"),
    "start_of_work": _PERMIT_DATES, "extension_request": _PERMIT_DATES, "lapse": _PERMIT_DATES,
}


def answer_for(kind: str, profile: Profile) -> Answer | None:
    """What meets an obligation of `kind` in the town of `profile`: no Start of an inspection type the town does
    not offer (its schedule may still owe the CGP's inspections, made under another of its types)."""
    answer = ANSWERS.get(kind)
    if answer is not None and answer.inspection_type and not profile.offers(answer.inspection_type):
        return None
    return answer


@dataclass(frozen=True, slots=True)
class NowItem:
    """One open obligation as the permit page's first part shows it."""

    row: Row
    headline: str
    when: str
    answer: Answer | None
    href: str = ""
    # Further open obligations of the same duty that the same action meets (dashboard.services.Owed).
    more: int = 0

    @property
    def status(self) -> str:
        return self.row.obligation.status


def _href(permit: Permit, answer: Answer | None, subject: str) -> str:
    if answer is None or answer.inspection_type:
        return ""
    if answer.endpoint == "inspections.detail":
        return url_for(answer.endpoint, inspection_id=subject.partition(":")[2])
    if answer.endpoint:
        return url_for(answer.endpoint, permit_id=permit.id)
    return url_for("permits.detail", permit_id=permit.id, _anchor=answer.section)


def _others_drafts(permit: Permit, user, rows: list[Row]) -> set[str]:
    """The `inspection:<id>` subjects of `rows` that are someone else's draft (one query, if any)."""
    if not any(row.obligation.subject.startswith("inspection:") for row in rows):
        return set()
    hidden = db.session.scalars(_drafts_hidden_from(user), {"permit_id": permit.id})
    return {f"inspection:{inspection_id}" for inspection_id in hidden}


_drafts_hidden_from = kept_per_user(
    lambda hidden: hidden["inspections"].where(Inspection.permit_id == bindparam("permit_id")))


def section(permit: Permit, user, now: dt.datetime, rows: list[Row] | None = None) -> list[NowItem]:
    """The permit's open obligations as of `now`, overdue first, then due, then upcoming, for `user`. `rows`: the
    permit's `permit_open` rows as of `now`, when the page read them already."""
    rows, profile = permit_open(permit.id, now) if rows is None else rows, profile_of(permit)
    not_theirs = _others_drafts(permit, user, rows)
    items = []
    for each in owed(rows):
        row, ob = each.row, each.row.obligation
        answer = None if ob.subject in not_theirs else answer_for(ob.kind, profile)
        headline = f"{OBLIGATION_KIND_LABELS.get(ob.kind, ob.kind)}: {row.subject}"
        items.append(NowItem(row, headline, when_due(ob, now), answer, _href(permit, answer, ob.subject), each.more))
    return items
