"""Every change to a permit, its assignments, areas and structures; each writes the audit log."""
from __future__ import annotations

import datetime as dt
from typing import Any

from flask import current_app
from sqlalchemy import select

from inspect_app.rules.trace import implements
from inspect_app.audit import services as audit
from inspect_app.audit.models import add_after_flush
from inspect_app.extensions import db, hold
from inspect_app.geo import SitePoint
from inspect_app.permits.models import Jurisdiction, Permit, PermitAssignment, StormwaterStructure
from inspect_app.profiles.schema import Profile, short_citation
from inspect_app.rules import extension_apply_by, lapse_deadline
from inspect_app.rules.calendar import zone
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import LOCAL_TZ, new_id, utcnow


class PermitError(ValueError):
    """A change the record does not allow; `field` names the form field it is about."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def profiles() -> dict[str, Profile]:
    return current_app.extensions["profiles"]


def profile_of(permit: Permit) -> Profile:
    """The town rule profile that governs `permit`."""
    return profiles()[permit.jurisdiction.profile_key]


def ensure_jurisdictions() -> list[Jurisdiction]:
    """One jurisdiction row per loaded town profile (added when missing). A name already recorded stays as it is,
    whatever the profile says now: every signed report's record carries its town's name, and its hash with it
    (`flask towns sync` says where the two differ)."""
    existing = {j.profile_key: j for j in db.session.scalars(select(Jurisdiction))}
    for key, profile in profiles().items():
        if key not in existing:
            existing[key] = Jurisdiction(profile_key=key, name=profile.town)
            db.session.add(existing[key])
    db.session.flush()
    return sorted(existing.values(), key=lambda j: j.name)


def _number_taken(jurisdiction_id: str, number: str, exclude_id: str | None = None) -> bool:
    query = select(Permit.id).where(Permit.jurisdiction_id == jurisdiction_id, Permit.number == number)
    if exclude_id:
        query = query.where(Permit.id != exclude_id)
    return db.session.scalar(query) is not None


@implements("§380-2")
def _start_moment(permit: Permit, time: dt.time | None) -> None:
    """§380-2 "start of construction": the moment of the first land-disturbing activity, from its day and its
    local time; with no time, only the day is known (the schedule reads it as its end)."""
    day = permit.construction_started_on
    permit.construction_started_at = (None if day is None or time is None
                                      else dt.datetime.combine(day, time, tzinfo=LOCAL_TZ).astimezone(dt.UTC))


def start_time_stale(permit: Permit) -> bool:
    """Whether the start's kept time (§380-2) is of another day than the start's day now: the day was changed
    without its time."""
    started = permit.construction_started_at
    return started is not None and started.astimezone(LOCAL_TZ).date() != permit.construction_started_on


def create_permit(actor, **fields: Any) -> Permit:
    """Record a newly issued permit."""
    if _number_taken(fields["jurisdiction_id"], fields["number"]):
        raise PermitError("number", "This town already has a permit with that number.")
    time = fields.pop("construction_started_time", None)
    permit = Permit(status="issued", **fields)
    _check_extension(permit)
    _start_moment(permit, time)
    settle_status(permit)
    db.session.add(permit)
    audit.record(actor, "permit.create", permit)
    return permit


def update_permit(actor, permit: Permit, **fields: Any) -> Permit:
    """Change a permit's facts (not its status: see `change_status`)."""
    jurisdiction_id = fields.get("jurisdiction_id", permit.jurisdiction_id)
    if _number_taken(jurisdiction_id, fields.get("number", permit.number), exclude_id=permit.id):
        raise PermitError("number", "This town already has a permit with that number.")
    before = audit.snapshot(permit)
    timed = "construction_started_time" in fields
    time = fields.pop("construction_started_time", None)
    extension_before = (permit.extension_requested_on, permit.extension_granted_on)
    for name, value in fields.items():
        setattr(permit, name, value)
    if (permit.extension_requested_on, permit.extension_granted_on) != extension_before:
        _check_extension(permit)
    if timed or start_time_stale(permit):
        _start_moment(permit, time)  # (a day changed without its time keeps no stale time)
    settle_status(permit)
    permit.revision += 1
    audit.record(actor, "permit.update", permit, before)
    return permit


def settle_status(permit: Permit) -> None:
    """The status a permit's facts give it: an issued permit on which construction started is active, unless the
    work began after the permit had lapsed (§9.7: it lapses "unless significant land-disturbing activity ... has
    begun"; work begun after is work without a permit): it is then lapsed; a lapsed one with a start and an
    extension granted in time is revived (§9.7). A new permit or changed facts (a form, an import) go through here."""
    if permit.status == "issued" and permit.construction_started_on:
        permit.status = "lapsed" if _began_after_lapse(permit) else "active"
    if permit.status == "lapsed" and permit.construction_started_on and permit.extension_granted_on:
        deadline = lapses_at(permit)
        if deadline is not None and utcnow() <= deadline:
            permit.status = "active"  # §9.7: revived by the extension recorded with the start


def _began_after_lapse(permit: Permit) -> bool:
    """Whether the permit's work began after its lapse (`lapses_at`), for a permit being made too (in no session
    yet: its town is read by its id)."""
    if permit.jurisdiction_id is None or permit.construction_started_on is None:
        return False
    profile = profiles()[db.session.get(Jurisdiction, permit.jurisdiction_id).profile_key]
    deadline = _lapse_under(profile, permit)
    began = permit.construction_started_at or _start_of_day(permit.construction_started_on, profile)
    return deadline is not None and began > deadline


def _start_of_day(day: dt.date | None, profile: Profile) -> dt.datetime | None:
    return None if day is None else dt.datetime.combine(day, dt.time.min, tzinfo=zone(profile.timezone))


@implements("§9.7")
def _check_extension(permit: Permit) -> None:
    """§9.7: "may be granted a one-year extension by applying to the Commission, in writing at least 30 days prior
    to the date when the SMP is due to lapse". PermitError for an application recorded later than that: it does
    not extend the permit, and the lapse would have moved a year all the same. (The text sets no day for the
    grant: a timely application may be decided after.)"""
    if permit.extension_requested_on is None or permit.jurisdiction_id is None:
        return
    # A permit being made is in no session yet: its town is read by its id.
    profile = profiles()[db.session.get(Jurisdiction, permit.jurisdiction_id).profile_key]
    clock = profile.permit_clock
    if clock is None or clock.kind != "lapse_after":
        return
    lapse = lapse_deadline(profile, _start_of_day(permit.issued_on, profile),
                           _start_of_day(permit.decision_filed_on, profile))
    apply_by = extension_apply_by(profile, lapse)
    if apply_by is None or permit.extension_requested_on <= apply_by.astimezone(zone(profile.timezone)).date():
        return
    tz = zone(profile.timezone)
    raise PermitError("extension_requested_on", (
        f"An extension is applied for in writing at least {clock.extension_request_days_before} days before the "
        f"permit lapses on {lapse.astimezone(tz):%b %-d, %Y}: by {apply_by.astimezone(tz):%b %-d, %Y} "
        f"({short_citation(clock.citation)}). An application received later does not extend it."))


@implements("§9.7")
def lapses_at(permit: Permit) -> dt.datetime | None:
    """§9.7: when `permit` lapses unless work has begun (None where the town's permits do not lapse)."""
    return _lapse_under(profile_of(permit), permit)


def _lapse_under(profile: Profile, permit: Permit) -> dt.datetime | None:
    return lapse_deadline(profile, _start_of_day(permit.issued_on, profile),
                          _start_of_day(permit.decision_filed_on, profile),
                          _start_of_day(permit.extension_granted_on, profile))


@implements("§9.7")
def lapse_if_due(actor, permit: Permit, now: dt.datetime | None = None) -> bool:
    """§9.7: an issued permit on which no work began by its lapse date becomes *lapsed*; True if it did."""
    deadline = lapses_at(permit)
    if permit.status != "issued" or permit.construction_started_on is not None or deadline is None:
        return False
    if (now or utcnow()) <= deadline:
        return False
    before = audit.snapshot(permit)
    permit.status = "lapsed"
    permit.revision += 1
    audit.record(actor, "permit.status", permit, before)
    return True


def lapse_due_permits(actor, now: dt.datetime | None = None) -> list[Permit]:
    """Mark every issued permit past its lapse date (§9.7) lapsed; the caller commits."""
    issued = db.session.scalars(select(Permit).where(Permit.status == "issued",
                                                     Permit.construction_started_on.is_(None)))
    return [permit for permit in issued if lapse_if_due(actor, permit, now)]


# Statuses only their own act sets or ends: a stop-work order is issued and lifted on its page (§380-16 C(4)(e)[5]:
# it stands until the violations are corrected and the work approved), and a permit is completed by its
# certificate of completion (§380-18). The status form moves none of them.
BY_THEIR_OWN_ACT = {"stop_work": "A stop-work order is issued and lifted on its own page: the permit's status follows "
                                 "the order.",
                    "completed": "A permit is completed by issuing its certificate of completion (§380-18)."}


def own_act_refusal(permit: Permit, status: str) -> str | None:
    """Why the status form may not move `permit` to `status` (into or out of a status of `BY_THEIR_OWN_ACT`);
    None if it may."""
    return BY_THEIR_OWN_ACT.get(status) or BY_THEIR_OWN_ACT.get(permit.status)


def change_status(actor, permit: Permit, status: str, *, by_its_act: bool = False) -> Permit:
    """Move a permit along issued → active → stop-work ↔ active → final submissions → completed. Into or out
    of a status of `BY_THEIR_OWN_ACT` only `by_its_act` (the order's issue and lift, the certificate)."""
    refusal = None if by_its_act else own_act_refusal(permit, status)
    if refusal:
        raise PermitError("status", refusal)
    if permit.status == "lapsed" and status == "active":
        # §9.7: a lapsed permit comes back only on an extension granted by the Commission.
        deadline = lapses_at(permit)
        if permit.extension_granted_on is None or (deadline is not None and utcnow() > deadline):
            raise PermitError("status", "This permit has lapsed (§9.7): it can become active again only with an "
                                        "extension granted before the lapse; record the extension first.")
    elif not permit.can_become(status):
        raise PermitError("status", f"A permit that is {permit.status.replace('_', '-')} cannot become "
                                    f"{status.replace('_', '-')}.")
    before = audit.snapshot(permit)
    permit.status = status
    if status == "active" and permit.construction_started_on is None:
        # §380-2: work starts as the permit becomes active, at this moment.
        started = utcnow()
        permit.construction_started_on, permit.construction_started_at = started.astimezone(LOCAL_TZ).date(), started
    permit.revision += 1
    audit.record(actor, "permit.status", permit, before)
    return permit


def assign(actor, permit: Permit, user, capacity: str) -> PermitAssignment:
    """Assign an inspector to a permit as its design engineer or erosion-control inspector."""
    if user.role != "inspector":
        raise PermitError("user_id", "Only inspectors can be assigned to a permit.")
    if any(a.user_id == user.id and a.capacity == capacity for a in permit.assignments):
        raise PermitError("user_id", f"{user.name} is already assigned in that capacity.")
    assignment = PermitAssignment(user=user, capacity=capacity)
    permit.assignments.append(assignment)
    audit.record(actor, "permit.assign", assignment, permit_id=permit.id)
    return assignment


def unassign(actor, permit: Permit, assignment: PermitAssignment) -> None:
    before = audit.snapshot(assignment)
    permit.assignments.remove(assignment)
    audit.record(actor, "permit.unassign_delete", assignment, before, permit_id=permit.id)


def add_area(actor, permit: Permit, name: str, acres, since: dt.datetime | None = None) -> DisturbedArea:
    """Add a portion of the site; it starts as disturbed."""
    if any(a.name.lower() == name.strip().lower() for a in permit.areas):
        raise PermitError("name", "This permit already has an area with that name.")
    _refuse_under_stop_work(permit, "name", "no new area may be disturbed")
    since = since or utcnow()
    area = DisturbedArea(name=name.strip(), acres=acres, status="disturbed", status_since=since)
    area.events.append(AreaStatusEvent(status="disturbed", at=since, recorded_by_id=getattr(actor, "id", None)))
    permit.areas.append(area)
    audit.record(actor, "area.create", area, permit_id=permit.id)
    return area


def change_area_status(actor, area: DisturbedArea, status: str, at: dt.datetime, note: str | None = None,
                       inspection_id: str | None = None, *, batched: bool = False) -> None:
    """Add an event to an area's timeline; its newest event is its status (§380-11 C(3)(a) clock).

    `batched`: one of many changes applied together (a sync push): the event is written as a row with the
    others of its kind after the next flush, in one statement, rather than as an object of its own, and
    the area's timeline, if loaded, does not show it. The area changes in the same call, so the flush
    that writes the area writes the event too (and the schedule notes it: schedule/obligations.py).
    """
    if at > utcnow() + dt.timedelta(minutes=5):
        raise PermitError("at", "The date cannot be in the future.")
    if not batched:
        # Held and read again as it is now (a sync push holds the areas it changes): a device's change applied
        # since this request read the area is the one this change follows, its time and revision with it.
        hold(DisturbedArea, area.id)
    if status == "disturbed":
        _refuse_under_stop_work(area.permit, "status", f"{area.name} may not be disturbed")
    if at < area.status_since:
        since = area.status_since.astimezone(LOCAL_TZ).strftime("%b %-d, %Y %-I:%M %p")
        raise PermitError("at", f"The area has been {area.status.replace('_', ' ')} since {since}; "
                                "give a later time.")
    before = audit.snapshot(area)
    event = {"id": new_id(), "area_id": area.id, "status": status, "at": at, "note": note,
             "inspection_id": inspection_id, "recorded_by_id": getattr(actor, "id", None), "recorded_at": utcnow()}
    if batched:
        add_after_flush(db.session(), event, AreaStatusEvent.__table__)
    else:  # joined from the event's side: a loaded timeline gets it, one not loaded stays unread
        db.session.add(AreaStatusEvent(area=area, **event))
    area.status, area.status_since = status, at
    area.revision += 1
    audit.record(actor, "area.status", area, before)


@implements("§380-16 C(4)(e)[5]", "§5.0 (Stop Work Order)")
def _refuse_under_stop_work(permit: Permit, field: str, what: str) -> None:
    """§380-16 C(4)(e)[5]: a standing stop-work order stops construction: refuse a construction change."""
    if permit.is_under_stop_work:
        standing = next(iter(permit.standing_stop_work_orders), None)
        clause = profile_of(permit).cite(standing.citation_purpose if standing is not None else "stop_work")
        raise PermitError(field, f"A stop-work order stands on permit {permit.number}: {what} until it is "
                                 f"lifted{f' ({clause})' if clause else ''}. Stabilizing areas and maintaining "
                                 "controls may go on.")


@implements("§380-16 C(4)(c)")
def record_backfill(actor, structure: StormwaterStructure, at: dt.datetime) -> StormwaterStructure:
    """§380-16 C(4)(c): record when an underground structure was backfilled, and who recorded it. Its pre-bury
    inspection is due "prior to backfilling": from this moment one not made is overdue, a violation."""
    if not structure.is_underground:
        raise PermitError("at", f"{structure.name} is not underground: nothing is backfilled over it.")
    if structure.backfilled_at is not None:
        when = structure.backfilled_at.astimezone(LOCAL_TZ).strftime("%b %-d, %Y %-I:%M %p")
        raise PermitError("at", f"{structure.name} was already recorded as backfilled on {when}.")
    if at > utcnow() + dt.timedelta(minutes=5):
        raise PermitError("at", "The backfill cannot be in the future.")
    issued = structure.permit.issued_on
    if at.astimezone(LOCAL_TZ).date() < issued:
        raise PermitError("at", "The backfill cannot be before the permit was issued.")
    before = audit.snapshot(structure)
    structure.backfilled_at, structure.backfilled_by_id = at, getattr(actor, "id", None)
    structure.revision += 1
    audit.record(actor, "structure.backfill", structure, before)
    return structure


def add_structure(actor, permit: Permit, **fields: Any) -> StormwaterStructure:
    """Add a BMP, pipe run, infiltration system or basin from the approved plan."""
    if any(s.name.lower() == fields["name"].strip().lower() for s in permit.structures):
        raise PermitError("name", "This permit already has a structure with that name.")
    structure = StormwaterStructure(**fields)
    permit.structures.append(structure)
    audit.record(actor, "structure.create", structure, permit_id=permit.id)
    return structure


@implements("§380-14 C(2)(m)")
def place(actor, record: SitePoint, latitude: float, longitude: float) -> None:
    """Give a disturbed area, a structure or an easement its point on the site map (tapped there, or the
    device's GPS); the site map with its list is then the "map and list of stormwater management easements"
    of §380-14 C(2)(m).

    The area's `revision` stays: sync compares it to catch two devices changing the status timeline at
    once, and a point is not part of that timeline."""
    before = audit.snapshot(record)
    record.latitude, record.longitude = latitude, longitude
    audit.record(actor, f"{record.point_kind}.point", record, before)
