"""The inspections a permit's record owed and did not get: the required ones never made, and the periodic ones
missed, as the certificate of completion and the permit history state them.

Read from the stored record through the rules engine's full history (`rules.obligations`), so a rule the engine
changes (a waiver that stops an obligation, frozen ground that suspends inspections) changes these lists too.
The initial site inspection and the final inspection are not obligations of the engine (one is made before the
plan is approved, the other closes the work): they are found among the submitted reports.

- **Required** (`required_not_made`), from the town's `completion.required_inspections`: the initial site
  inspection (§380-16 C(4)(a)), the erosion-control inspection before construction starts (C(4)(b)[1]), a
  pre-bury inspection of each underground structure (C(4)(c)), the walk-through (C(4)(d)) and the final
  (C(4)(e)). One not made blocks the certificate unless the authority waives it with its reason.
- **Missed** (`missed_inspections`): every routine or storm erosion-control inspection (CGP 2022 Parts 4.2-4.4)
  not made by its deadline, made late or never, and every required one not made on time.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import select

from inspect_app import inspection_types
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.permits.models import Permit
from inspect_app.rules import Obligation, obligations
from inspect_app.rules.calendar import zone
from inspect_app.schedule.facts import Record, load_records, subject_label

# The engine's obligations that are inspections: the required ones, and the periodic ones of CGP 2022 Part 4.
REQUIRED_KINDS = ("pre_construction", "pre_bury", "walk_through")
PERIODIC_KINDS = ("inspection", "storm_inspection")
_OPEN = ("due", "overdue", "upcoming")


@dataclass(frozen=True)
class MissedInspection:
    """An inspection the record owed: which (`key`, stable for a waiver), in words, under which clause, by when,
    and when it was made (None: never)."""

    key: str  # "initial", "pre_construction", "walk_through", "final", "pre_bury:<structure id>", ...
    inspection: str
    citation: str
    due_at: dt.datetime | None = None
    made_at: dt.datetime | None = None

    def as_record(self) -> dict:
        """As a document's record keeps it (times as ISO 8601, UTC)."""
        return {"key": self.key, "inspection": self.inspection, "citation": self.citation,
                "due_at": self.due_at.astimezone(dt.UTC).isoformat() if self.due_at else None,
                "made_at": self.made_at.astimezone(dt.UTC).isoformat() if self.made_at else None}


class ScheduleUnknown(ValueError):
    """The record cannot be evaluated, so what it owed cannot be said (the message says why)."""


def _history(permit: Permit, now: dt.datetime) -> tuple[Record, list[Obligation]]:
    """Every obligation of the permit's record as of `now`, met ones too."""
    (record,) = load_records(select(Permit).where(Permit.id == permit.id))
    if record.facts is None or record.profile is None:
        raise ScheduleUnknown(record.problem or "The record cannot be evaluated.")
    return record, obligations(record.facts, record.profile, now)


def _made(permit: Permit, kind: str, tz) -> dt.datetime | None:
    """When the first submitted report of `kind` was made, if there is one. An inspection the program puts before
    approval (§380-16 C(4)(a): "Initial Site Inspection: prior to approval of any plan") counts only if made by the
    day the permit was issued (its time is not kept): one made after is not the inspection required."""
    query = select(Inspection.performed_at).where(
        Inspection.permit_id == permit.id, Inspection.type == kind, Inspection.status == "submitted")
    if inspection_types.spec(kind).before_approval and permit.issued_on is not None:
        by = dt.datetime.combine(permit.issued_on + dt.timedelta(days=1), dt.time(), tzinfo=tz)
        query = query.where(Inspection.performed_at < by.astimezone(dt.UTC))
    return db.session.scalar(query.order_by(Inspection.performed_at).limit(1))


def _words(ob: Obligation, record: Record) -> str:
    """What the obligation's inspection is, in the words of the town's inspection types."""
    name = record.profile.name_of(inspection_types.meeting(ob.kind))  # the type that meets it
    if ob.kind == "pre_construction":
        return f"{name} before construction started"
    if ob.kind == "pre_bury":
        return f"{name} of {subject_label(ob.subject, record)}"
    if ob.kind == "storm_inspection":
        return f"{name} after the {subject_label(ob.subject, record).lower()}"
    return name


def _key(ob: Obligation) -> str:
    return f"pre_bury:{ob.subject.split(':', 1)[1]}" if ob.kind == "pre_bury" else ob.kind


def required_not_made(permit: Permit, now: dt.datetime) -> list[MissedInspection]:
    """The town's required inspections the record does not have (in the order of the inspection program)."""
    record, found = _history(permit, now)
    profile = record.profile
    required = profile.completion.required_inspections
    missing = []
    for key in required:
        if key in inspection_types.TYPES and not inspection_types.spec(key).meets:  # no obligation: made or not
            # (the profile requires only types the town offers: profiles/schema.py)
            if _made(permit, key, zone(profile.timezone)) is None:
                kind = profile.inspection_type(key)
                missing.append(MissedInspection(key, kind.name, kind.citation))
            continue
        for ob in found:
            if ob.kind == key and ob.status in _OPEN:
                missing.append(MissedInspection(_key(ob), _words(ob, record), ob.citation, ob.due_at))
    return missing


def missed_inspections(permit: Permit, now: dt.datetime) -> list[MissedInspection]:
    """Every inspection the record owed and did not get on time, made late or never, by its deadline."""
    record, found = _history(permit, now)
    missed = [MissedInspection(_key(ob), _words(ob, record), ob.citation, ob.due_at, ob.met_at)
              for ob in found if ob.kind in (*REQUIRED_KINDS, *PERIODIC_KINDS) and ob.late]
    return sorted(missed, key=lambda m: (m.due_at or dt.datetime.max.replace(tzinfo=dt.UTC), m.key))
