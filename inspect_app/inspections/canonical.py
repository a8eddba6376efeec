"""The canonical record of a report and its hash: what PDFs, sync and the integrity checks reuse.

Only what the report says is in it, so the record (and the hash) of a submitted report never changes;
the one exception is the server filling the weather that was pending at submission (`reseal_record`).
"""
from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from sqlalchemy import select

from inspect_app.audit import services as audit
from inspect_app.blobs import files
from inspect_app.extensions import db
from inspect_app.inspections.models import Finding, Inspection, PunchListItem
from inspect_app.inspections.queries import punch_items_of, type_of, videos_of
from inspect_app.photos.models import Photo
from inspect_app.profiles.schema import InspectionType, Profile
from inspect_app.rules.trace import implements
from inspect_app.types import canonical_json

# 40 CFR 122.22(d), word for word: the certification of every report this app has signed (CGP 2022 Part 4.7.1,
# Appendix I.11.d). The one source of these words: the report, its page, its PDF and sync all read it from here.
CFR_122_22_D = (
    "I certify under penalty of law that this document and all attachments were prepared under my direction "
    "or supervision in accordance with a system designed to assure that qualified personnel properly gather "
    "and evaluate the information submitted. Based on my inquiry of the person or persons who manage the "
    "system, or those persons directly responsible for gathering the information, the information submitted "
    "is, to the best of my knowledge and belief, true, accurate, and complete. I am aware that there are "
    "significant penalties for submitting false information, including the possibility of fine and "
    "imprisonment for knowing violations."
)
# What a town's own report (§380-16 C(4)(f)[1]) certifies besides: the program the inspection was made under.
PROGRAM_CERTIFICATION = "I also certify that the inspection this report records was performed as {program} requires."


@implements("40 CFR 122.22(d)")
def certification_statement(profile: Profile, kind: InspectionType) -> str:
    """The signer's statement for a report of `kind`: 40 CFR 122.22(d) word for word; where the town's profile
    asks for its own statement (`certification = "town"`), followed by the sentence naming the town's
    inspection program (`inspection_program`), never another town's section."""
    if kind.certification == "40 CFR 122.22(d)":
        return CFR_122_22_D
    return f"{CFR_122_22_D} {PROGRAM_CERTIFICATION.format(program=profile.inspection_program)}"


def _iso(value: dt.datetime | dt.date | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    return value.isoformat()


def report_record(inspection: Inspection) -> dict[str, Any]:
    """The report as plain JSON data: fields (a)-(h), the type's part, answers, findings, photos, signature.

    Only what the report says is included; later follow-up (a finding's review status, a corrective
    action's close-out, actions opened after submission) is not, so the record of a submitted report
    never changes.
    """
    permit, kind = inspection.permit, type_of(inspection)
    cutoff = inspection.submitted_at
    photos = select(Photo.original_sha256).where(Photo.inspection_id == inspection.id)
    return {
        "id": inspection.id,
        "permit": {"id": permit.id, "number": permit.number, "site_address": permit.site_address,
                   "town": permit.jurisdiction.name, "npdes_id": permit.npdes_id},
        "amends_id": inspection.amends_id,
        "a_date_and_location": {"performed_at": _iso(inspection.performed_at), "latitude": inspection.latitude,
                                "longitude": inspection.longitude, "location_source": inspection.location_source},
        "b_inspector": {"id": inspection.inspector_id, "name": inspection.inspector_name,
                        "credentials": inspection.inspector_credentials, "title": inspection.inspector_title,
                        "organization": inspection.inspector_organization,
                        "contact": inspection.inspector_contact},
        "ended_at": _iso(inspection.ended_at),
        "construction_phase": inspection.construction_phase,
        "occasion": {"trigger": inspection.trigger, "schedule_in_force": inspection.schedule_in_force},
        "storms": inspection.storms,
        "c_type": {"key": inspection.type, "name": kind.name, "citation": kind.citation},
        "d_last_inspection_at": _iso(inspection.last_inspection_at),
        "e_weather": {"status": inspection.weather_status, "temperature_c": inspection.temperature_c,
                      "conditions": inspection.conditions, "wind_kmh": inspection.wind_kmh,
                      "wind_direction_deg": inspection.wind_direction_deg, "station_id": inspection.station_id,
                      "station_name": inspection.station_name, "station_distance_m": inspection.station_distance_m,
                      "sources": inspection.weather_sources, "attribution": inspection.weather_attribution,
                      "fetched_at": _iso(inspection.weather_fetched_at)}
                     # The inspector's own observation, as signed; absent where none was written, so the record
                     # (and the hash) of a report from before the field existed reads as it did.
                     | ({"observed": inspection.observed_weather} if inspection.observed_weather else {}),
        "f_precipitation_24h": {"station_mm": inspection.precip_24h_mm, "hours": inspection.precip_hours,
                                "gauge_mm": inspection.gauge_precip_mm, "used_mm": inspection.precipitation_mm},
        "g_evaluation": inspection.evaluation,
        "h_corrective_steps": inspection.corrective_steps,
        "notes": inspection.notes,
        "details": inspection.details or {},
        "notice": {"id": inspection.notice_id, "given": inspection.notice_given,
                   "given_at": _iso(inspection.notice.given_at) if inspection.notice else None,
                   "planned_for": _iso(inspection.notice.planned_for) if inspection.notice else None},
        "under_stop_work": inspection.under_stop_work,
        "storm_event_id": inspection.storm_event_id,
        "answers": sorted(({"item": a.item_key, "subject": a.subject_id, "answer": a.answer, "note": a.note}
                           for a in inspection.answers), key=lambda a: (a["item"], a["subject"])),
        "findings": [_finding_record(f, cutoff) for f in sorted(inspection.findings, key=lambda f: f.id)],
        "punch_list": [{"id": p.id, "description": p.description} for p in punch_items_of(inspection)],
        "punch_resolved": _resolved_record(inspection),
        "pipe_videos": [{"structure_id": v.structure_id, "recorded_on": _iso(v.recorded_on),
                         "reference": v.reference, "blob_sha256": v.blob_sha256}
                        for v in sorted(videos_of(inspection).values(), key=lambda v: v.structure_id)],
        "photos": sorted(db.session.scalars(photos)),
        "signature": {"sha256": inspection.signature_sha256, "signer_name": inspection.signer_name,
                      "signer_credentials": inspection.signer_credentials,
                      "statement": inspection.certification_statement, "signed_at": _iso(inspection.signed_at)},
        "permittee_signature": {"sha256": inspection.permittee_signature_sha256,
                                "signer_name": inspection.permittee_signer_name,
                                "signer_title": inspection.permittee_signer_title},
        "submitted_at": _iso(inspection.submitted_at),
    }


def in_report(action, submitted_at: dt.datetime | None) -> bool:
    """Whether a corrective action is part of its finding's report as signed: opened before the report was
    submitted (a draft's are all). One opened on the finding later is follow-up: its discovery still dates from the
    inspection (the deadline counts from it, CGP 2022 Part 5.2), so that time cannot tell. An action kept from before
    creation times were recorded is told by its discovery, as it was."""
    opened = action.created_at or action.discovered_at
    return submitted_at is None or opened <= submitted_at


def _finding_record(finding: Finding, cutoff: dt.datetime | None) -> dict[str, Any]:
    actions = [a for a in finding.actions if in_report(a, cutoff)]
    return {
        "id": finding.id, "description": finding.description, "location": finding.location,
        "severity": finding.severity, "is_violation": finding.is_violation, "citation": finding.citation,
        "area_id": finding.area_id, "structure_id": finding.structure_id, "is_automatic": finding.is_automatic,
        "actions": [{"id": a.id, "kind": a.kind, "description": a.description, "owner_id": a.owner_id,
                     "owner_name": a.owner_name, "discovered_at": _iso(a.discovered_at), "due_at": _iso(a.due_at)}
                    for a in sorted(actions, key=lambda a: a.id)],
    }


def _resolved_record(inspection: Inspection) -> list[dict[str, Any]]:
    query = select(PunchListItem).where(PunchListItem.resolved_in_id == inspection.id)
    return [{"id": p.id, "description": p.description, "resolution": p.resolution, "resolved_at": _iso(p.resolved_at)}
            for p in sorted(db.session.scalars(query), key=lambda p: p.id)]


def record_hash(inspection: Inspection) -> str:
    """SHA-256 (hex) of the report's canonical JSON."""
    return hashlib.sha256(canonical_json(report_record(inspection))).hexdigest()


# The parts of a report's record kept in rows of their own, not in the report's row (which its guard freezes):
# what `parts_sha256` seals at signing. Not the permit's words or the type's name, which may change after.
PARTS = ("answers", "findings", "punch_list", "punch_resolved", "pipe_videos", "photos")


def _parts_hash(record: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json({part: record[part] for part in PARTS})).hexdigest()


def seal(inspection: Inspection) -> None:
    """At signing: the report's record hash, and the hash of its parts kept in rows of their own."""
    record = report_record(inspection)
    inspection.record_sha256 = hashlib.sha256(canonical_json(record)).hexdigest()
    inspection.parts_sha256 = _parts_hash(record)


class RecordAltered(Exception):
    """A submitted report's answers, findings, photos, punch list or videos are not those it was signed with."""

    def __init__(self, inspection: Inspection) -> None:
        super().__init__(f"inspections {inspection.id}: the answers, findings, photos, punch list or videos of this "
                         "submitted report are not those it was signed with: they were changed outside the app")
        self.inspection = inspection


def check_parts(inspection: Inspection, record: dict[str, Any] | None = None) -> None:
    """RecordAltered unless the report's parts kept in rows of their own hash as they did at signing (a report
    signed before that hash was kept is not checked); `record`, its record if already read."""
    if inspection.parts_sha256 is None:
        return
    if _parts_hash(record if record is not None else report_record(inspection)) != inspection.parts_sha256:
        raise RecordAltered(inspection)


def altered_reports(batch: int = 500) -> tuple[int, list[str]]:
    """`flask audit verify`: (how many submitted reports' parts were checked, one line for each that differs)."""
    checked, problems = 0, []
    query = (select(Inspection).where(Inspection.status == "submitted", Inspection.parts_sha256.is_not(None))
             .order_by(Inspection.id).execution_options(yield_per=batch))
    for inspection in db.session.scalars(query):
        checked += 1
        try:
            check_parts(inspection)
        except RecordAltered as altered:
            problems.append(str(altered))
    return checked, problems


def altered_signatures(batch: int = 500) -> tuple[int, list[str]]:
    """`flask audit verify`: re-hash the drawn signatures of submitted reports (a few kilobytes each): (how many
    were read, one line for each no longer stored, or changed in the file store since it was signed)."""
    store, checked, problems = files.blob_store(), 0, []
    query = (select(Inspection.id, Inspection.signature_sha256, Inspection.permittee_signature_sha256)
             .where(Inspection.status == "submitted").order_by(Inspection.id).execution_options(yield_per=batch))
    for report_id, *drawn in db.session.execute(query):
        for sha in filter(None, drawn):
            checked += 1
            found = store.stored_sha256(sha)
            if found != sha:
                problems.append(f"inspections {report_id}: its drawn signature {sha} "
                                + ("is not in the file store" if found is None
                                   else "was changed in the file store since it was signed"))
    return checked, problems


def reseal_record(actor, inspection: Inspection) -> str:
    """Recompute a submitted report's hash after the server filled its pending weather (and audit it).
    RecordAltered, and nothing sealed, if its parts kept in rows of their own changed since it was signed: the
    new version may differ from the signed one in its weather alone."""
    record = report_record(inspection)  # read once: its parts checked, then the whole hashed
    check_parts(inspection, record)
    before = audit.snapshot(inspection)
    inspection.record_sha256 = hashlib.sha256(canonical_json(record)).hexdigest()
    audit.record(actor, "inspection.reseal", inspection, before)
    return inspection.record_sha256
