"""Every change to an inspection report (§380-16 C(4)): start, save, submit, amend, and the 24-hour
notice; each writes the audit log and only flushes.

A report is a draft until it is signed and submitted; then it is the legal record and never changes
(`ReportLocked`). A correction is an amendment: a new draft that points at the report it corrects.
What the pages show is in `queries`, the canonical record and its hash in `canonical`, and the message that
sends a submitted report in `notification` (the caller sends it; `submit` does not).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import or_, select

from inspect_app import inspection_types
from inspect_app.blobs import files
from inspect_app.blobs.store import AlteredBlob
from inspect_app.audit import services as audit
from inspect_app.extensions import db, hold
from inspect_app.inspections.models import CITATION_LENGTH, Finding
from inspect_app.inspections.models import (
    ANSWERS, EVALUATIONS, INSPECTION_TYPES, ChecklistAnswer, Inspection, InspectionNotice, PipeVideo,
)
from inspect_app.inspections import checks, weather
from inspect_app.inspections.canonical import certification_statement, seal
from inspect_app.inspections.queries import (
    AreaClock, area_clocks, authority_addresses, checklist, covered_structures, last_inspection_before, correction_of,
    correction_words, latest_version, matching_notice, not_offered, open_punch_items, pipe_runs, schedule_in_force,
    storm_to_answer, storms_of, type_of, underground_structures, videos_of, weather_pending,
)
from inspect_app.mail import services as mail
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.blobs.models import Blob
from inspect_app.profiles.schema import InspectionType, Profile
from inspect_app.rules import calendar, corrective_action_due, short_citation
from inspect_app.rules.trace import implements
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.templating import local_time
from inspect_app.types import LOCAL_TZ, utcnow
from inspect_app.waivers.models import Waiver
from inspect_app.weather.source import MIN_PRECIP_HOURS
from inspect_app import signatures, units

# More than this in 24 hours would beat the state's record storm: a typing slip, not a reading.
GAUGE_MAX_INCHES = 20.0


class InspectionError(ValueError):
    """A change the record does not allow; `field` names the form field it is about."""

    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field = field_name


class ReportIncomplete(InspectionError):
    """A report that cannot be submitted yet; `problems` maps each field to what is missing."""

    def __init__(self, problems: dict[str, str]):
        super().__init__(next(iter(problems)), "; ".join(problems.values()))
        self.problems = problems


class ReportLocked(PermissionError):
    """A submitted report is the legal record: it cannot be changed, only amended."""

    def __init__(self, inspection: Inspection):
        when = local_time(inspection.submitted_at)
        super().__init__(f"This report was submitted on {when} and is part of the legal record; it "
                         "cannot be changed. To correct it, make an amendment.")


@dataclass
class ReportInput:
    """What an inspector entered on a report form, parsed and checked for shape (not completeness)."""

    performed_at: dt.datetime | None = None
    evaluation: str | None = None
    corrective_steps: str | None = None
    notes: str | None = None
    signature_png: bytes | None = None
    signature_data_url: str = ""
    # (f) the inspector's on-site rain-gauge reading, in mm (entered in inches)
    gauge_precip_mm: float | None = None
    # (e) the weather as the inspector observed it on site (required while the station's is pending)
    observed_weather: str | None = None
    # (item key, subject id) → (yes/no/na or None, note)
    answers: dict[tuple[str, str], tuple[str | None, str | None]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    # pipe-run structure id → {"recorded_on": date | None, "reference": str | None, "blob_sha256": ...}
    videos: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Why and when (CGP 2022 Part 4.7.1): the trigger (None: not posted, the draft's stands), the storm a
    # storm-event inspection answers, when the inspection ended and the phase of construction.
    trigger: str | None = None
    storm_event_id: str | None = None
    # The permittee's authorized signatory, where the profile asks for a second signature (`permittee_signs`).
    permittee_signer_name: str | None = None
    permittee_signer_title: str | None = None
    permittee_signature_png: bytes | None = None
    permittee_signature_data_url: str = ""
    ended_at: dt.datetime | None = None
    construction_phase: str | None = None


def values_of(inspection: Inspection) -> ReportInput:
    """The report's stored values, in the shape the form posts them."""
    videos = {sid: {"recorded_on": v.recorded_on, "reference": v.reference, "blob_sha256": v.blob_sha256}
              for sid, v in videos_of(inspection).items()}
    return ReportInput(
        performed_at=inspection.performed_at, evaluation=inspection.evaluation,
        corrective_steps=inspection.corrective_steps, notes=inspection.notes,
        answers={(a.item_key, a.subject_id): (a.answer, a.note) for a in inspection.answers},
        details=dict(inspection.details or {}), videos=videos, gauge_precip_mm=inspection.gauge_precip_mm,
        observed_weather=inspection.observed_weather,
        trigger=inspection.trigger, storm_event_id=inspection.storm_event_id, ended_at=inspection.ended_at,
        construction_phase=inspection.construction_phase, permittee_signer_name=inspection.permittee_signer_name,
        permittee_signer_title=inspection.permittee_signer_title,
    )


# -- the on-site rain gauge ---------------------------------------------------------------------------

def gauge_mm(inches: float) -> float:
    """An on-site rain-gauge reading entered in inches, as stored (mm); InspectionError if implausible."""
    if not 0 <= inches <= GAUGE_MAX_INCHES:  # also refuses nan
        raise InspectionError("gauge_precip_in", "A rain-gauge reading cannot be negative." if inches < 0 else
                              f"Enter the reading in inches (at most {GAUGE_MAX_INCHES:g} in for 24 hours).")
    # Stored in SI units, shown in inches (SPEC *Weather*).
    return units.in_to_mm(inches)


def _apply_gauge(inspection: Inspection, gauge_mm_value: float | None) -> None:
    """Spec *Weather*: the inspector's on-site gauge reading overrides the station's 24-hour total."""
    if gauge_mm_value == inspection.gauge_precip_mm:
        return
    inspection.gauge_precip_mm = gauge_mm_value
    if gauge_mm_value is not None:
        inspection.weather_status = "gauge"
    elif inspection.weather_status == "gauge":  # reading taken back: the station's total stands again
        inspection.weather_status = ("pending" if inspection.weather_fetched_at is None else
                                     "complete" if (inspection.precip_hours or 0) >= MIN_PRECIP_HOURS
                                     else "incomplete")




# -- signature --------------------------------------------------------------------------------------

def signature_png(data_url: str) -> bytes:
    """The PNG bytes of a drawn signature posted as a data URL; InspectionError if it is not one."""
    try:
        return signatures.from_data_url(data_url)
    except signatures.SignatureRefused as refused:
        raise InspectionError("signature", str(refused)) from None


def signature_from_blob(sha: str) -> bytes:
    """The PNG bytes of a signature already uploaded as a blob (sync), checked like one from the pad."""
    store = files.blob_store()
    try:
        size = store.size(sha)
    except FileNotFoundError:
        raise InspectionError("signature", "The signature image has not been uploaded.") from None
    if size > signatures.MAX_BYTES:
        raise InspectionError("signature", signatures.TOO_LARGE)
    try:
        return signatures.checked(store.read(sha))
    except signatures.SignatureRefused as refused:
        raise InspectionError("signature", str(refused)) from None
    except AlteredBlob:
        raise InspectionError("signature", "The stored signature image is damaged: sign again.") from None


def _store_signature(png: bytes) -> str:
    return files.store_file(png, "image/png")


def _store_signatures(inspection: Inspection, data: ReportInput) -> None:
    """Keep the drawn signatures (the inspector's, and the permittee's signatory's where asked for)."""
    if data.signature_png:
        inspection.signature_sha256 = _store_signature(data.signature_png)
    if data.permittee_signature_png:
        inspection.permittee_signature_sha256 = _store_signature(data.permittee_signature_png)


# -- the 24-hour notice -----------------------------------------------------------------------------

def give_notice(actor, permit: Permit, inspection_type: str, planned_for: dt.datetime,
                note: str | None = None, now: dt.datetime | None = None,
                notice_id: str | None = None) -> InspectionNotice:
    """Record the notice to the authority before an inspection and send it (Longmeadow §380-16 C(3); the town's
    own clause, or its policy, in the mail)."""
    now = now or utcnow()
    if inspection_type not in INSPECTION_TYPES:
        raise InspectionError("inspection_type", "Choose the type of inspection.")
    if not profile_of(permit).offers(inspection_type):
        raise InspectionError("inspection_type", not_offered(permit, inspection_type))
    if planned_for <= now:
        raise InspectionError("planned_for", "The planned time must be in the future.")
    profile = profile_of(permit)
    recipients = authority_addresses(permit)
    # A device made offline may bring its own id (sync), so a replay names the same notice.
    notice = InspectionNotice(**({"id": notice_id} if notice_id else {}),
                              permit_id=permit.id, inspection_type=inspection_type, planned_for=planned_for,
                              given_at=now, given_by_id=getattr(actor, "id", None), note=note or None,
                              sent_to=", ".join(recipients)[:254] or None)
    db.session.add(notice)
    audit.record(actor, "inspection.notice", notice)
    name = profile.inspection_type(inspection_type).name
    hours = notice.hours_ahead
    rule = profile.advance_notice.cited(short_citation(profile.advance_notice.citation))
    body = (f"Notice of inspection ({rule}).\n\nPermit {permit.number}, {permit.site_address}\n"
            f"Inspection: {name}\nPlanned for: {local_time(planned_for)}\n"
            f"Notice given: {local_time(now)} ({hours:.0f} hours ahead; at least "
            f"{profile.advance_notice.hours} are required)\nBy: {getattr(actor, 'name', '—')}\n")
    if note:
        body += f"\nNote: {note}\n"
    mail.send(recipients, f"Inspection notice: permit {permit.number}, {name}, {local_time(planned_for)}",
              body, permit_id=permit.id)
    return notice


# -- starting, editing, submitting, amending --------------------------------------------------------

def start_inspection(actor, permit: Permit, inspection_type: str, latitude: float | None = None,
                     longitude: float | None = None, now: dt.datetime | None = None,
                     inspection_id: str | None = None, fetch_weather: bool = True) -> Inspection:
    """Open a draft report pre-filled with what the app knows: time, place, inspector, notice."""
    refused = not_offered(permit, inspection_type)
    if refused:
        raise InspectionError("type", refused)
    now = now or utcnow()
    device = latitude is not None and longitude is not None
    rule = profile_of(permit).discharges
    if rule is not None and rule.asked_on(inspection_type):
        last_at, discharge_points = _last_report_and_points(permit, now)
    else:
        last_at, discharge_points = last_inspection_before(permit, now), None
    inspection = Inspection(
        **({"id": inspection_id} if inspection_id else {}),  # made on a device offline (sync)
        permit=permit, type=inspection_type, status="draft", performed_at=now,
        latitude=latitude if device else permit.latitude, longitude=longitude if device else permit.longitude,
        location_source="device" if device else "permit",
        inspector_id=actor.id, inspector_name=actor.name, inspector_credentials=actor.credentials,
        inspector_title=getattr(actor, "title", None), inspector_organization=getattr(actor, "organization", None),
        inspector_contact=inspector_contact(actor),
        last_inspection_at=last_at,
        weather_status="pending", under_stop_work=permit.status == "stop_work",
        signer_name=actor.name, signer_credentials=actor.credentials,
        details=_initial_details(permit, inspection_type, discharge_points), created_by_id=actor.id,
        blank=True,  # until its author keeps something (a device's first save does at once)
    )
    # Sync stores first and fetches after answering, outside its write transaction; here the lookup
    # comes before the first write (see _look_up_weather).
    looked_up = _look_up_weather(inspection) if fetch_weather else None
    db.session.add(inspection)
    # The report is written once, whole, by the audit entry's flush: the queries below read other rows only,
    # and each would otherwise write it and then update it again.
    with db.session.no_autoflush:
        notice, in_time = matching_notice(permit, inspection_type, now)
        inspection.notice_id, inspection.notice_given = (notice.id if notice else None), in_time
        if profile_of(permit).inspection_type(inspection_type).states_occasion:
            _start_occasion(inspection, now)
    if not fetch_weather:
        audit.record(actor, "inspection.start", inspection)
        return inspection
    # The start's entry and the weather's are written together, in this order, in one statement: the report is
    # stored first (the start's snapshot is what is stored), its weather is then set and written with the commit.
    db.session.flush()
    audit.record_flushed(actor, "inspection.start", inspection)
    session = db.session()
    deferring = session.info.get(audit.DEFER_FLUSH)
    session.info[audit.DEFER_FLUSH] = True
    try:
        _fill_weather(inspection, looked_up)
    finally:
        session.info[audit.DEFER_FLUSH] = deferring
        if deferring is None:
            session.info.pop(audit.DEFER_FLUSH)
    audit.write_recorded()  # now, so no entry the caller records next can come before them
    return inspection


# A Start tapped again soon after the last (Back, a second tap, the page opened again) opens the blank draft that
# Start made: its time, place and weather still describe this visit. Later, Start makes a new draft; the old
# blank one owes nothing and stays its author's to open or discard.
RESUME_BLANK_WITHIN = dt.timedelta(hours=2)


def blank_draft(actor, permit: Permit, inspection_type: str, now: dt.datetime | None = None) -> Inspection | None:
    """`actor`'s newest blank draft (`Inspection.blank`) of this type on the permit, started within
    RESUME_BLANK_WITHIN of `now`: what their Start opens again rather than making another."""
    since = (now or utcnow()) - RESUME_BLANK_WITHIN
    return db.session.scalar(
        select(Inspection)
        .where(Inspection.permit_id == permit.id, Inspection.type == inspection_type,
               Inspection.status == "draft", Inspection.blank.is_(True), Inspection.amends_id.is_(None),
               Inspection.created_by_id == actor.id, Inspection.created_at >= since)
        .order_by(Inspection.created_at.desc()).limit(1))


def inspector_contact(actor) -> str | None:
    """How to reach the inspector, as the report prints it: phone and email from the account."""
    parts = [getattr(actor, "phone", None), getattr(actor, "email", None)]
    return ", ".join(p for p in parts if p) or None


def _start_occasion(inspection: Inspection, now: dt.datetime) -> None:
    """Why the inspection is made, from the schedule (the inspector may say otherwise): an erosion-control
    inspection started while the schedule has a storm's inspection open answers that storm (CGP 2022 Part
    4.2; only an erosion-control inspection does, rules/engine.py), else it is routine. Other types start
    with no trigger: the inspector gives it."""
    if inspection_types.spec(inspection.type).answers_storms:
        storm = storm_to_answer(inspection.permit, now)
        inspection.trigger, inspection.storm_event_id = ("storm_event", storm.id) if storm else ("routine", None)
    _apply_occasion(inspection)


def _apply_occasion(inspection: Inspection) -> None:
    """The schedule in force and the storms since the last report, as they stand at the inspection's time."""
    inspection.schedule_in_force = schedule_in_force(inspection.permit, inspection.performed_at)
    inspection.storms = storms_of(inspection)


def _look_up_weather(inspection: Inspection):
    """Weather at the time and the last 24 h of rain, bounded in time, looked up before this request
    writes anything: SQLite's write lock is then never held while meteostat answers."""
    return weather.look_up_inspection_weather(inspection)


def _fill_weather(inspection: Inspection, looked_up) -> None:
    """The report's weather from the earlier lookup (again if its time changed); offline it stays pending."""
    weather.apply_looked_up(looked_up, inspection)


def _initial_details(permit: Permit, inspection_type: str, discharge_points: list | None) -> dict[str, Any]:
    """`discharge_points`: those of the last report that named any, where the town asks for them on this type."""
    if discharge_points is not None:
        # The points of discharge named on the last report stay the site's points (inspections/checks.py).
        return {"discharge_points": discharge_points}
    part = inspection_types.spec(inspection_type).part
    if part == "structures":
        done = _structures_with_submitted_pre_bury(permit)
        return {"structures": {s.id: {"covered": s.id not in done} for s in underground_structures(permit)}}
    if part == "system_acceptance":
        # The town's own words and clause (Longmeadow §380-16 C(4)(e)[3]; Southborough §9.6), never another town's.
        return {"certification": {"certified": False,
                                  "text": profile_of(permit).completion.final_inspection_certification}}
    return {}


def _last_report_and_points(permit: Permit, at: dt.datetime) -> tuple[dt.datetime | None, list[dict[str, str]]]:
    """(d) The time of the permit's latest submitted inspection before `at` (`last_inspection_before`), and
    the points of discharge named on the latest submitted report that named any: one read of the submitted
    reports, newest first, that stops once both are known."""
    query = (select(Inspection.performed_at, Inspection.details)
             .where(Inspection.permit_id == permit.id, Inspection.status == "submitted")
             .order_by(Inspection.performed_at.desc()))
    last: dt.datetime | None = None
    points: list[dict[str, str]] | None = None
    for performed_at, details in db.session.execute(query):
        if last is None and performed_at is not None and performed_at < at:
            last = performed_at
        if points is None and (details or {}).get("discharge_points"):
            points = details["discharge_points"]
        if last is not None and points is not None:
            break
    return last, points or []


def _structures_with_submitted_pre_bury(permit: Permit) -> set[str]:
    query = select(Inspection.details).where(Inspection.permit_id == permit.id,
                                             Inspection.type.in_(inspection_types.keys_where(covers="structure")),
                                             Inspection.status == "submitted")
    return {sid for details in db.session.scalars(query)
            for sid, part in (details or {}).get("structures", {}).items() if part.get("covered")}


def ensure_draft(inspection: Inspection) -> None:
    """Refuse any change to a submitted report (it is the legal record)."""
    if inspection.is_submitted:
        raise ReportLocked(inspection)


def save_draft(actor, inspection: Inspection, data: ReportInput) -> Inspection:
    """Keep what the inspector entered so far; completeness is checked only on submit."""
    ensure_draft(inspection)
    before = audit.snapshot(inspection)
    _retime_actions(actor, inspection, data)
    _apply(inspection, data)
    _sign_as(inspection, actor)
    _store_signatures(inspection, data)
    inspection.blank = False
    audit.record(actor, "inspection.update", inspection, before)
    return inspection


def _sign_as(inspection: Inspection, actor) -> None:
    """SPEC *Signatures*: the signer is the person signed in, with the credentials stored on their account;
    never a name typed into the form or sent by a device (an amendment by someone else says so: `queries`)."""
    inspection.signer_name, inspection.signer_credentials = actor.name, actor.credentials


def _retime_actions(actor, inspection: Inspection, data: ReportInput) -> None:
    """CGP 2022 Part 5.2: a corrective action's clock runs from discovery, the inspection that recorded the
    condition. When the inspection's time is corrected, the actions opened on its findings at its time are
    discovered at the corrected time, with their deadlines counted again; one first observed on an earlier day
    keeps that day, unless the corrected inspection is earlier still."""
    old, new = inspection.performed_at, data.performed_at
    if new is None or as_shown(new, old):
        return  # the time is not changed (`_apply` keeps the stored seconds)
    profile = profile_of(inspection.permit)
    for finding in inspection.findings:
        for action in finding.actions:
            if action.discovered_at != old and action.discovered_at <= new:
                continue
            before = audit.snapshot(action)
            action.discovered_at = new
            action.due_at = corrective_action_due(action.kind, new, profile)
            action.revision += 1
            audit.record(actor, "action.retime", action, before)


def as_shown(posted: dt.datetime, stored: dt.datetime) -> bool:
    """Whether a time posted back from a form is the stored one as the form showed it: to the minute, on the town's
    wall clock. Compared in UTC, the second 1:30 of the night the clocks go back, shown and posted back "01:30",
    read as the first, would move an untouched report an hour earlier."""
    shown = stored.astimezone(LOCAL_TZ).replace(second=0, microsecond=0, tzinfo=None)
    return posted == stored or posted.astimezone(LOCAL_TZ).replace(tzinfo=None) == shown


def _apply(inspection: Inspection, data: ReportInput) -> None:
    """Copy the form's values onto the draft (in the session; nothing is stored until commit)."""
    # The form shows minutes; keep the stored seconds unless the inspector changed the time.
    if data.performed_at is not None and not as_shown(data.performed_at, inspection.performed_at):
        inspection.performed_at = data.performed_at
    for name in ("evaluation", "corrective_steps", "notes", "observed_weather"):
        setattr(inspection, name, getattr(data, name))
    inspection.details = json.loads(json.dumps(data.details, default=str))
    existing = {(a.item_key, a.subject_id): a for a in inspection.answers}
    for key, row in existing.items():
        if data.answers.get(key, (None, None))[0] is None:
            inspection.answers.remove(row)
    for (item_key, subject_id), (answer, note) in data.answers.items():
        if answer is None:
            continue
        row = existing.get((item_key, subject_id))
        if row is None:
            inspection.answers.append(ChecklistAnswer(item_key=item_key, subject_id=subject_id,
                                                      answer=answer, note=note))
        else:
            row.answer, row.note = answer, note
    if inspection_types.spec(inspection.type).part == "system_acceptance":
        _apply_videos(inspection, data.videos)
    _apply_gauge(inspection, data.gauge_precip_mm)
    if data.signature_png:
        inspection.signature_sha256 = hashlib.sha256(data.signature_png).hexdigest()
    if type_of(inspection).permittee_signs:
        inspection.permittee_signer_name = data.permittee_signer_name
        inspection.permittee_signer_title = data.permittee_signer_title
        if data.permittee_signature_png:
            inspection.permittee_signature_sha256 = hashlib.sha256(data.permittee_signature_png).hexdigest()
    if inspection.amends_id is None:
        notice, in_time = matching_notice(inspection.permit, inspection.type, inspection.performed_at, inspection.id)
        inspection.notice_id, inspection.notice_given = (notice.id if notice else None), in_time
        inspection.last_inspection_at = last_inspection_before(inspection.permit, inspection.performed_at,
                                                               inspection.id)
    if not (data.ended_at and inspection.ended_at and as_shown(data.ended_at, inspection.ended_at)):
        inspection.ended_at = data.ended_at
    inspection.construction_phase = data.construction_phase
    if type_of(inspection).states_occasion:
        inspection.trigger = data.trigger or inspection.trigger
        if inspection.trigger != "storm_event":
            inspection.storm_event_id = None
        elif data.storm_event_id is not None:
            inspection.storm_event_id = data.storm_event_id
        _apply_occasion(inspection)


def _apply_videos(inspection: Inspection, videos: dict[str, dict[str, Any]]) -> None:
    stored = videos_of(inspection)
    for structure in pipe_runs(inspection.permit):
        posted = videos.get(structure.id) or {}
        video = stored.get(structure.id)
        if not posted.get("recorded_on"):
            if video is not None:
                db.session.delete(video)
            continue
        if video is None:
            video = PipeVideo(inspection_id=inspection.id, structure_id=structure.id,
                              recorded_on=posted["recorded_on"])
            db.session.add(video)
        elif (video.recorded_on, video.reference, video.blob_sha256) != (
                posted["recorded_on"], posted.get("reference"), posted.get("blob_sha256")):
            video.revision += 1
        video.recorded_on = posted["recorded_on"]
        video.reference, video.blob_sha256 = posted.get("reference"), posted.get("blob_sha256")
    db.session.flush()


@implements("§380-16 C(4)(f)[1]")
def submission_problems(inspection: Inspection, data: ReportInput, *, observed_weather_asked: bool = True
                        ) -> dict[str, str]:
    """Every field the report still needs before it can be submitted, with what is missing (the observed
    weather only where the form that made the report asked for it: `submit`)."""
    problems: dict[str, str] = {}
    profile = profile_of(inspection.permit)
    if inspection.performed_at > utcnow() + dt.timedelta(minutes=5):
        problems["performed_at"] = "The inspection date and time cannot be in the future."
    elif _before_the_permit(inspection):
        problems["performed_at"] = (
            f"The inspection cannot be before the permit was issued ({inspection.permit.issued_on:%b %-d, %Y}): "
            "check the date, and the device's clock.")
    if inspection.evaluation not in EVALUATIONS:
        problems["evaluation"] = "(g) Evaluation is required: in compliance, or violations."
    elif inspection.evaluation == "violations" and not (inspection.corrective_steps or "").strip():
        problems["corrective_steps"] = "(h) Give the steps to be taken to correct the violations."
    elif inspection.evaluation == "compliant":
        problem = _compliance_contradiction(inspection, profile) or _answer_contradiction(inspection, data)
        if problem:
            problems["evaluation"] = problem
    for item, found in checklist(inspection, inspection.details):
        for subject in found:
            if data.answers.get((item.key, subject.id), (None, None))[0] not in ANSWERS:
                problems[answer_field(item.key, subject.id)] = unanswered(item.text, subject.name)
    problems |= _type_problems(inspection)
    problems |= _occasion_problems(inspection)
    if observed_weather_asked:
        problems |= _weather_problems(inspection)
    problems |= checks.problems(inspection, data.answers, inspection.details)
    if not data.signature_png and not _signature_stored(inspection):
        problems["signature"] = "Sign the report on the signature pad."
    if type_of(inspection).permittee_signs:
        problems |= _permittee_signature_problems(inspection, data)
    return problems


@implements("§380-16 C(4)(a)")
def _before_the_permit(inspection: Inspection) -> bool:
    """Whether the report is dated before its permit was issued, on the town's calendar: no inspection under a
    permit is made before it exists (a tablet whose clock went back to 1970 dated its reports so), but the
    initial site inspection, which §380-16 C(4)(a) puts "prior to approval of any plan" (`before_approval`)."""
    issued = inspection.permit.issued_on
    if issued is None or inspection_types.spec(inspection.type).before_approval:
        return False
    if inspection.amends is not None and inspection.amends.performed_at == inspection.performed_at:
        return False  # a correction keeps the time of the report it corrects, whatever was taken then
    return calendar.local_date(inspection.performed_at, calendar.zone(profile_of(inspection.permit).timezone)) < issued


def _permittee_signature_problems(inspection: Inspection, data: ReportInput) -> dict[str, str]:
    """The town names the permittee's authorized signatory as a signer too (profile `permittee_signs`)."""
    problems = {}
    if not (inspection.permittee_signer_name or "").strip():
        problems["permittee_signer_name"] = "Type the name of the permittee's authorized signatory."
    if not (inspection.permittee_signer_title or "").strip():
        problems["permittee_signer_title"] = "Give the signatory's title (for example: President, Owner)."
    stored = inspection.permittee_signature_sha256 and db.session.get(Blob, inspection.permittee_signature_sha256)
    if not data.permittee_signature_png and not stored:
        problems["permittee_signature"] = "The permittee's authorized signatory signs on the second pad."
    return problems


def _weather_problems(inspection: Inspection) -> dict[str, str]:
    """§380-16 C(4)(f)[1][e] "Weather at time of inspection": a report is never signed with only "Pending".
    While the station has not reported (the lookup made as the report is signed included), the inspector's own
    observation is the weather the report gives; the station's values, when they come, are kept beside it
    (issues 31, 32)."""
    if weather_pending(inspection) and not (inspection.observed_weather or "").strip():
        return {"observed_weather": "(e) The weather station has not reported yet: write the weather you "
                                    "observed on site (conditions, temperature, wind)."}
    return {}


def _occasion_problems(inspection: Inspection) -> dict[str, str]:
    """When it ended and, for a storm inspection, which storm (CGP 2022 Part 4.7.1; issue 20)."""
    problems = {}
    if inspection.ended_at is not None and inspection.ended_at < inspection.performed_at:
        problems["ended_at"] = "The inspection cannot end before it started."
    elif inspection.ended_at is not None and inspection.ended_at > utcnow() + dt.timedelta(minutes=5):
        problems["ended_at"] = "The end of the inspection cannot be in the future."
    gauge_storm = any(s["source"] == "gauge" and s.get("inspection_id") == inspection.id
                      for s in (inspection.storms or {}).get("since_last", []))
    if inspection.trigger == "storm_event" and inspection.storm_event_id is None and not gauge_storm:
        problems["storm_event_id"] = ("Choose the storm this inspection answers, or give the on-site rain-gauge "
                                      "reading of the storm.")
    return problems


def unanswered(item_text: str, subject_name: str, limit: int = 60) -> str:
    """The words for a checklist item left unanswered, naming the subject and the item (its text shortened at a
    word), so a list of them says which is which: `Silt fence SF-1 — This control is installed as designed:
    answer yes, no or n/a.`"""
    text = item_text if len(item_text) <= limit else item_text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return f"{subject_name} — {text}: answer yes, no or n/a."


def answer_field(item_key: str, subject_id: str) -> str:
    """The form field name of one checklist answer."""
    return f"answer-{item_key}-{subject_id or 'site'}"


def _signature_stored(inspection: Inspection) -> bool:
    return bool(inspection.signature_sha256) and db.session.get(Blob, inspection.signature_sha256) is not None


def _compliance_contradiction(inspection: Inspection, profile: Profile) -> str | None:
    """Why "in compliance" cannot be the evaluation, if a violation is on the record."""
    if any(f.is_violation for f in inspection.findings):
        return "A violation is recorded among the findings: the evaluation must be “violations”."
    if inspection_types.spec(inspection.type).finds_overdue_stabilization:
        late = [c for c in area_clocks(inspection.permit, profile, inspection.performed_at) if c.overdue]
        if late:
            return (f"Past a stabilization deadline: {', '.join(c.area.name for c in late)} "
                    f"({_stabilization_citation(profile, late[0])}). The evaluation must be “violations”.")
    return None


@implements("§380-16 C(4)(e)[1]", "§380-16 C(4)(e)[2]", "§380-16 C(4)(e)[4]")
def _answer_contradiction(inspection: Inspection, data: ReportInput) -> str | None:
    """A "no" to an item the profile marks as a violation by itself (§380-16 C(4)(e)[1]-[2] on the final
    inspection: all work complete, each pipe's video, the system effective in a storm, and [4] no operational
    failure to correct) contradicts "in compliance"."""
    noes = []
    for item, found in checklist(inspection, inspection.details):
        if not item.no_is_violation:
            continue
        for subject in found:
            if data.answers.get((item.key, subject.id), (None, None))[0] == "no":
                noes.append(item.text if subject.id == "" else f"{item.text} ({subject.name})")
    if noes:
        return (f"Answered “no”: {'; '.join(noes)} ({short_citation(type_of(inspection).citation)}). "
                "The evaluation must be “violations”.")
    return None


def _type_problems(inspection: Inspection) -> dict[str, str]:
    """What the type's own part of the report still needs (inspection_types: `part`), by field."""
    check = PART_PROBLEMS.get(inspection_types.spec(inspection.type).part)
    return check(inspection) if check else {}


def _structures_problems(inspection: Inspection) -> dict[str, str]:
    """A pre-bury report covers at least one underground structure, each said to be as designed or not."""
    details, problems = inspection.details, {}
    covered = covered_structures(inspection.permit, details)
    if not covered:
        problems["structures"] = "Choose at least one underground structure this pre-bury inspection covers."
    for structure in covered:
        if details["structures"][structure.id].get("as_designed") not in ("yes", "no"):
            problems[f"pb-{structure.id}-as_designed"] = f"Say whether {structure.name} is as designed."
    return problems


def _acceptance_problems(inspection: Inspection) -> dict[str, str]:
    """§380-16 C(4)(e): the final report resolves the punch list, gives each pipe's video, the storm in which
    the system was seen to work, and the engineer's certification."""
    details, problems = inspection.details, {}
    resolutions = details.get("punch_resolutions", {})
    for item in open_punch_items(inspection.permit):
        if not (resolutions.get(item.id) or "").strip():
            problems[f"punch-{item.id}"] = "Say how this punch-list item was resolved."
    stored = videos_of(inspection)
    for structure in pipe_runs(inspection.permit):
        video = stored.get(structure.id)
        if video is None or not (video.reference or video.blob_sha256):
            clause = profile_of(inspection.permit).cite("pipe_video")
            problems[f"video-{structure.id}"] = (f"Give the date and the video (reference or uploaded file) "
                                                 f"of {structure.name}{f' ({clause})' if clause else ''}.")
    storm = details.get("storm") or {}
    if not storm.get("date"):
        problems["storm_date"] = "Give the date of the storm in which the system was seen to work."
    if not storm.get("depth_mm"):
        problems["storm_depth_in"] = "Give the depth of that storm (inches)."
    certification = details.get("certification") or {}
    # §380-16 C(4)(e)[3]: the engineer certifies only a system found properly installed and functioning.
    if inspection.evaluation == "compliant" and not (certification.get("certified") and
                                                     (certification.get("text") or "").strip()):
        problems["certification"] = "Give the engineer's certification (tick the box and keep its text)."
    return problems


PART_PROBLEMS = {"structures": _structures_problems, "system_acceptance": _acceptance_problems}


# An assignment's capacity, as the permit page's assignment form names it (permits/forms.py).
CAPACITY_WORDS = {"design_engineer": "project design engineer", "erosion_control_inspector": "erosion-control inspector"}


@implements("§380-16 C(3)", "§380-16 C(4)(c)", "§380-16 C(4)(e)", "§380-16 C(4)(f)",
            "§5.0 (Environmental Site Monitor)", "§7.5 (Entry)")
def signer_refusal(actor, kind: InspectionType, permit=None) -> str | None:
    """Why `actor` may not sign a report of this type on `permit`, if they may not: the town's profile says which
    roles sign it, which of them must be a registered professional engineer (a PE number on the account) and in
    which capacity an inspector must be assigned to the permit. §380-16 C(3): "All other inspections shall be
    conducted by the project design engineer", a registered PE (not the erosion-control inspector of C(2));
    C(4)(f): periodic ones by the engineer's designated PE representative, or the DPW Director's own."""
    signer = kind.signer(getattr(actor, "role", ""))
    if signer is None:
        qualified = " or ".join(s.who for s in kind.signers)
        return (f"A {kind.name.lower()} is signed by {qualified} "
                f"({short_citation(kind.signers[0].citation or kind.citation)}); your account does not qualify.")
    if signer.pe and not (getattr(actor, "pe_number", None) or "").strip():
        return (f"A {kind.name.lower()} must be signed by a registered professional engineer ({signer.who}), "
                f"and your account has no PE number ({short_citation(signer.citation or kind.citation)}). "
                "Ask an administrator to record it, or have the project's PE sign.")
    if signer.capacity and permit is not None and not any(
            a.user_id == actor.id and a.capacity == signer.capacity for a in permit.assignments):
        return (f"A {kind.name.lower()} is conducted by {signer.who} "
                f"({short_citation(signer.citation or kind.citation)}), and you are not assigned to this permit as "
                f"its {CAPACITY_WORDS[signer.capacity]}. Ask the town's agent to assign you, or have the project's "
                f"{CAPACITY_WORDS[signer.capacity]} sign.")
    return None


def submit(actor, inspection: Inspection, data: ReportInput, fetch_weather: bool = True,
           observed_weather_asked: bool = True) -> Inspection:
    """Sign and submit the report: it becomes the immutable record. Call it through the one submit service,
    `reporting.submission.submit_report`, never alone: after this, in the same transaction, that service issues
    a failed final inspection's stop-work order (§380-16 C(4)(e)[5]) and sends the report to the applicant and
    the authority (§380-16 C(4)(f)).

    `observed_weather_asked=False` only for a report signed on a previous release's form, which had no field
    for the observed weather (the legacy sync kind): refusing it would strand a signed report on a device that
    cannot give what is asked; its (e) stays "Pending" until the station reports, as it always did.

    ReportIncomplete (with every missing field) if anything required is missing; the caller rolls back.
    """
    ensure_draft(inspection)
    looked_up = _look_up_weather(inspection) if fetch_weather else None  # before anything is written
    before = audit.snapshot(inspection)
    _retime_actions(actor, inspection, data)
    _apply(inspection, data)
    _sign_as(inspection, actor)
    if fetch_weather:
        # Filled before the checks: whether (e) is still pending as the report is signed decides whether the
        # inspector's observed weather is required (`_weather_problems`). A refusal rolls it all back.
        _fill_weather(inspection, looked_up)  # looked up again if the draft's time changed
    problems = submission_problems(inspection, data, observed_weather_asked=observed_weather_asked)
    refusal = signer_refusal(actor, type_of(inspection), inspection.permit)
    if refusal:
        problems["signer"] = refusal
    corrected = _corrected_meanwhile(inspection)
    if corrected:
        problems["amends"] = corrected
    if problems:
        raise ReportIncomplete(problems)
    _store_signatures(inspection, data)
    # Everything the report made so far is written first: its corrective actions' creation times then come before
    # its submission (`canonical.in_report`: what was opened after it is follow-up, not the report).
    db.session.flush()
    profile, now = profile_of(inspection.permit), utcnow()
    declared = inspection_types.spec(inspection.type)
    if declared.finds_overdue_stabilization:
        _stabilization_findings(actor, inspection, profile)
    if declared.finds_missed_pre_bury:
        _missed_pre_bury_findings(actor, inspection, profile)
    if declared.resolves_punch_list:
        _resolve_punch_items(actor, inspection, now)
    inspection.status, inspection.submitted_at, inspection.signed_at = "submitted", now, now
    inspection.blank = False
    inspection.certification_statement = certification_statement(profile, type_of(inspection))
    db.session.flush()
    seal(inspection)
    audit.record(actor, "inspection.submit", inspection, before)
    return inspection






def _corrected_meanwhile(amendment: Inspection) -> str | None:
    """Why `amendment` cannot be signed: the report it corrects was corrected by someone else meanwhile
    (docs/record-integrity.md: "a new version amends the one before"; two corrections of one report, each
    signed, would be two versions of it).

    The check holds until the transaction ends: the report it corrects is locked first (PostgreSQL: FOR NO KEY
    UPDATE, which the rows referring to it do not wait for; SQLite: the database's write lock), so of two
    corrections signed at once the second waits, then sees the first."""
    if amendment.amends_id is None:
        return None
    correction = correction_of(hold(Inspection, amendment.amends_id))
    if correction is None or correction.id == amendment.id:
        return None
    return (f"{correction_words(correction, latest_version(correction))}. This draft stays as it is: discard it, "
            "then amend the latest version.")


def _stabilization_findings(actor, inspection: Inspection, profile: Profile) -> list[Finding]:
    """An area past its stabilization deadline is a violation by itself (§380-11 C(3)(a))."""
    made = []
    for clock in area_clocks(inspection.permit, profile, inspection.performed_at):
        if not clock.overdue or _open_automatic_finding(clock.area):
            continue
        finding = Finding(
            inspection=inspection, permit_id=inspection.permit_id, area_id=clock.area.id, is_automatic=True,
            is_violation=True, severity="major", location=clock.area.name,
            citation=_stabilization_citation(profile, clock)[:CITATION_LENGTH],
            description=(f"{clock.area.name}: construction activity ceased on {local_time(clock.ceased_at)}; "
                         + (f"stabilization had to be started by {local_time(clock.initiate_by)}, and has not."
                            if clock.breach == "initiate" else
                            f"the area had to be stabilized by {local_time(clock.complete_by)}, and is not.")),
        )
        db.session.add(finding)
        audit.record(actor, "finding.automatic", finding)
        made.append(finding)
    return made


@implements("§380-16 C(4)(c)")
def _missed_pre_bury_findings(actor, inspection: Inspection, profile: Profile) -> list[Finding]:
    """§380-16 C(4)(c): a pre-bury inspection "prior to backfilling of any underground drainage or stormwater
    conveyance or infiltration structures". A structure recorded as backfilled before any submitted pre-bury
    inspection covered it is a violation by itself: found once, on the next report of the whole site, unless the
    authority waived its inspection (§380-8). It stays open until its corrective action is verified."""
    (kind,) = inspection_types.keys_where(covers="structure")  # the pre-bury inspection
    if not profile.program.enabled or not profile.offers(kind):
        # A town whose inspection program is a policy it switched off, or that has no pre-bury inspection,
        # requires none.
        return []
    citation = profile.program.cited(short_citation(profile.inspection_type(kind).citation))
    made, first_inspected = [], None
    for structure in underground_structures(inspection.permit):
        backfilled = structure.backfilled_at
        if backfilled is None or backfilled > inspection.performed_at or _missed_pre_bury_recorded(structure):
            continue
        if first_inspected is None:  # read once, for the first structure that needs it
            first_inspected = _pre_bury_inspected_at(inspection.permit)
        inspected = first_inspected.get(structure.id)
        if (inspected is not None and inspected <= backfilled) or _waived(structure, inspection_types.spec(kind).meets):
            continue
        finding = Finding(
            inspection=inspection, permit_id=inspection.permit_id, structure_id=structure.id, is_automatic=True,
            is_violation=True, severity="major", location=structure.name,
            citation=citation[:CITATION_LENGTH],
            description=(f"{structure.name} was backfilled on {local_time(backfilled)} without its pre-bury "
                         "inspection." + ("" if inspected is None else
                                          f" It was inspected only after, on {local_time(inspected)}.")),
        )
        db.session.add(finding)
        audit.record(actor, "finding.automatic", finding)
        made.append(finding)
    return made


def _missed_pre_bury_recorded(structure) -> bool:
    """Whether the backfill without inspection is on the record already (found once: it cannot happen again)."""
    query = select(Finding.id).where(Finding.structure_id == structure.id, Finding.is_automatic.is_(True))
    return db.session.scalar(query.limit(1)) is not None


def _pre_bury_inspected_at(permit: Permit) -> dict[str, dt.datetime]:
    """By structure id: when the first submitted inspection of structures (the pre-bury one) that covered it was
    made (a structure none covered is not in it)."""
    query = select(Inspection.performed_at, Inspection.details).where(
        Inspection.permit_id == permit.id, Inspection.status == "submitted",
        Inspection.type.in_(inspection_types.keys_where(covers="structure")))
    first: dict[str, dt.datetime] = {}
    for at, details in db.session.execute(query):
        for structure_id, part in ((details or {}).get("structures") or {}).items():
            if (part or {}).get("covered") and (structure_id not in first or at < first[structure_id]):
                first[structure_id] = at
    return first


def _waived(structure, requirements: tuple[str, ...]) -> bool:
    """§380-8: the authority waived one of `requirements` (the pre-bury inspection) for this structure, or for
    every structure of its permit."""
    query = select(Waiver.id).where(Waiver.permit_id == structure.permit_id, Waiver.requirement.in_(requirements),
                                    or_(Waiver.structure_id.is_(None), Waiver.structure_id == structure.id))
    return db.session.scalar(query.limit(1)) is not None


def _stabilization_citation(profile: Profile, clock: AreaClock | None = None) -> str:
    """The clause a late area breaks: CGP 2.2.14.a.i (not initiated), else the completion rule."""
    rule = profile.stabilization
    if clock is not None and clock.breach == "initiate":
        return short_citation(rule.initiate_citation)
    if rule.days is not None and (clock is None or clock.complete_by is None or clock.ceased_at is None
                                  or clock.complete_by <= calendar.days_after(
                                      clock.ceased_at, rule.days, calendar.zone(profile.timezone))):
        return short_citation(rule.citation)
    return short_citation(rule.complete_citation)


def _open_automatic_finding(area: DisturbedArea) -> bool:
    query = select(Finding.id).where(Finding.area_id == area.id, Finding.is_automatic.is_(True),
                                     Finding.status != "corrected")
    return db.session.scalar(query.limit(1)) is not None


def _resolve_punch_items(actor, inspection: Inspection, now: dt.datetime) -> None:
    """§380-16 C(4)(d)-(e): the final inspection resolves the walk-through's punch list, item by item."""
    resolutions = inspection.details.get("punch_resolutions", {})
    for item in open_punch_items(inspection.permit):
        before = audit.snapshot(item)
        item.resolved_in_id, item.resolved_at, item.resolution = inspection.id, now, resolutions[item.id].strip()
        audit.record(actor, "punch.resolve", item, before)


# A draft's own parts, which go with it when it is discarded; a row of any other table that names the draft is
# part of the record (a finding, a photo, an order citing it), and keeps it.
_DRAFT_PARTS = {"checklist_answers", "pipe_videos"}


def named_by(inspection: Inspection) -> list[str]:
    """The tables whose rows name this report, its own parts aside (an empty list: nothing relies on it)."""
    found = []
    for table in db.metadata.sorted_tables:
        for key in table.foreign_keys:
            if key.column.table.name == Inspection.__tablename__ and table.name not in _DRAFT_PARTS:
                named = select(key.parent).where(key.parent == inspection.id).limit(1)
                if db.session.execute(named).first() is not None:
                    found.append(table.name)
    return found


def discard_draft(actor, inspection: Inspection) -> None:
    """Throw away a draft its author started and no longer wants (a Start tapped by mistake, a visit called off):
    it owes nothing and is listed nowhere after. A submitted report is the record and is never discarded; nor is
    a draft anything else names (a finding or photo recorded on it), whose parts must be removed first. The
    audit log keeps that it was started and discarded."""
    if inspection.is_submitted:
        raise InspectionError("discard", "A submitted report is part of the record and cannot be discarded; "
                                         "amend it to correct it.")
    named = named_by(inspection)
    if named:
        listed = ", ".join(table.replace("_", " ") for table in named)
        raise InspectionError("discard", f"This draft already has {listed} recorded on it: remove them first, "
                                         "or submit the report.")
    before = audit.snapshot(inspection)
    for part in (*inspection.answers, *db.session.scalars(select(PipeVideo).where(
            PipeVideo.inspection_id == inspection.id))):
        db.session.delete(part)
    db.session.delete(inspection)
    audit.record(actor, "inspection.delete", inspection, before)


def amend(actor, original: Inspection) -> Inspection:
    """Open a correction of a submitted report: a new draft copying it, pointing at it; or the one `actor` has open
    already (Amend tapped again after Back, or in a second tab, goes on with it: one report is not corrected by two
    drafts of the same person)."""
    if not original.is_submitted:
        raise InspectionError("amends_id", "Only a submitted report can be amended; edit the draft instead.")
    correction = correction_of(original)
    if correction is not None:
        words = correction_words(correction, latest_version(correction))
        raise InspectionError("amends_id", f"{words}: amend the latest version, not this one.")
    open_already = db.session.scalars(
        select(Inspection).where(Inspection.amends_id == original.id, Inspection.status == "draft",
                                 Inspection.created_by_id == actor.id).order_by(Inspection.id).limit(1)).first()
    if open_already is not None:
        return open_already
    copied = {name: getattr(original, name) for name in (
        "permit_id", "type", "performed_at", "latitude", "longitude", "location_source", "inspector_id",
        "inspector_name", "inspector_credentials", "last_inspection_at", "weather_status", "temperature_c",
        "conditions", "wind_kmh", "wind_direction_deg", "precip_24h_mm", "precip_hours", "station_id",
        "station_name", "station_distance_m", "weather_sources", "weather_attribution", "weather_fetched_at",
        "gauge_precip_mm", "observed_weather", "evaluation", "corrective_steps", "notes", "notice_id", "notice_given",
        "under_stop_work", "storm_event_id", "inspector_title", "inspector_organization", "inspector_contact",
        "ended_at", "construction_phase", "trigger", "schedule_in_force", "storms")}
    amendment = Inspection(**copied, status="draft", amends_id=original.id, details=dict(original.details or {}),
                           signer_name=actor.name, signer_credentials=actor.credentials, created_by_id=actor.id)
    amendment.answers = [ChecklistAnswer(item_key=a.item_key, subject_id=a.subject_id, answer=a.answer, note=a.note)
                         for a in original.answers]
    db.session.add(amendment)
    db.session.flush()
    for video in videos_of(original).values():
        db.session.add(PipeVideo(inspection_id=amendment.id, structure_id=video.structure_id, note=video.note,
                                 recorded_on=video.recorded_on, reference=video.reference,
                                 blob_sha256=video.blob_sha256))
    audit.record(actor, "inspection.amend", amendment)
    return amendment
