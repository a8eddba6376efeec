"""One function per document: the stored record in, a `builder.Document` out (nothing reads the clock).

Times print in the town's local time with the zone; measurements in inches and °F with SI beside them
(SPEC *Weather*: store SI, show inches and °F). The town, its authority and its registry come from the
town profile.
"""
from __future__ import annotations

import datetime as dt
import io
from typing import Any
from zoneinfo import ZoneInfo

from PIL import Image, UnidentifiedImageError
from sqlalchemy import select

from inspect_app import inspection_types
from inspect_app.blobs import files
from inspect_app.blobs.store import BlobError
from inspect_app.documents import records
from inspect_app.documents.builder import (
    Document, Fields, Heading, Paragraphs, Photo, PhotoGrid, SignatureBlock, Table,
)
from inspect_app.accounts.models import User
from inspect_app.enforcement.models import NoticeOfViolation, StopWorkOrder, citation_purpose
from inspect_app.enforcement.services import is_town_agent, lifting_clause
from inspect_app.extensions import db
from inspect_app.inspections.models import Finding, Inspection, PipeVideo, PunchListItem
from inspect_app.inspections import canonical, checks, queries, wording
from inspect_app.labels import label
from inspect_app.permits.models import Permit, StormwaterStructure
from inspect_app.permits.services import profile_of
from inspect_app.photos.models import Photo as PhotoRecord
from inspect_app.photos.processing import make_print_rendition
from inspect_app.profiles.schema import Profile
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.units import compass_point, fahrenheit, inches, inches_and_mm, kilometres, miles, mph

# -- shared formatting --------------------------------------------------------------------------------

def _when(value: dt.datetime | None, tz: ZoneInfo, missing: str = "—") -> str:
    """A stored UTC time in the town's local time, with its zone: `May 3, 2026 10:15 AM EDT`."""
    if not value:
        return missing
    try:
        return value.astimezone(tz).strftime("%b %-d, %Y %-I:%M %p %Z")
    except OverflowError:  # a photo's camera time of year 1, stored before such times were dropped: as stored
        return f"{value:%Y-%m-%d %H:%M} UTC"


def _day(value: dt.date | dt.datetime | None, tz: ZoneInfo | None = None, missing: str = "—") -> str:
    if value is None:
        return missing
    if isinstance(value, dt.datetime):
        value = value.astimezone(tz).date() if tz else value.date()
    return value.strftime("%b %-d, %Y")


def town_of(profile: Profile) -> str:
    """The town as its documents name it: "Town of Longmeadow"."""
    return f"Town of {profile.town}"


def _document(title: str, permit: Permit | dict, profile: Profile, sha: str, blocks: list,
              made_by: str | None = None) -> Document:
    """A document kept in the town's record; `made_by` names its maker where the town did not issue it."""
    number = permit["number"] if isinstance(permit, dict) else permit.number
    return Document(title=title, town=town_of(profile), authority=profile.authority_body, permit_number=number,
                    record_sha256=sha, blocks=tuple(blocks), made_by=made_by)


def report_maker(inspection: Inspection, profile: Profile) -> str:
    """Who made a report: its signer, with the engineer's organization; the town's agent, for the authority.

    An engineer's report is the engineer's, not the town's: the town keeps it in its record."""
    name = inspection.signer_name or inspection.inspector_name
    inspector = inspection.inspector
    if inspector is not None and inspector.role in ("agent", "admin") and name == inspector.name:
        return f"{name}, for the {profile.authority_title}"
    if inspection.inspector_organization and name == inspection.inspector_name:
        return f"{name}, {inspection.inspector_organization}"
    return name


def certification_maker(signer_name: str) -> str:
    """Who made an O&M certification: the responsible party who signed it (§380-14 C(2)(l))."""
    return f"{signer_name}, responsible party"


def _blob(sha: str | None) -> bytes | None:
    """A stored file's bytes, or None if it is not (or no longer) in the blob store, or was changed there since it
    was stored (the PDF then shows a blank line to sign, never a signature swapped in the store)."""
    if not sha:
        return None
    try:
        return files.blob_store().read(sha)
    except (FileNotFoundError, ValueError, BlobError):
        return None


def _signature_png(sha: str | None) -> bytes | None:
    """The drawn signature if it is a readable PNG; the block then shows a blank line to sign instead."""
    data = _blob(sha)
    if data is None:
        return None
    try:
        with Image.open(io.BytesIO(data)) as image:
            return data if image.format == "PNG" else None
    except (UnidentifiedImageError, OSError):
        return None


def _photo_blocks(photos: list[PhotoRecord], tz: ZoneInfo, first_number: int, of: str = "") -> list:
    """The photos' print renditions in a grid, each with its caption and EXIF time.

    `of` names what they show (e.g. "finding 2") in each caption, so a photo a page break separates from
    its finding still says whose it is.
    """
    shown, missing = [], []
    for number, photo in enumerate(photos, first_number):
        caption = f"Photo {number}{f' ({of})' if of else ''}: {photo.caption or 'no caption'}"
        if photo.marked_up_note:
            caption = f"{caption}. {photo.marked_up_note}"
        jpeg = _print_jpeg(photo)
        taken = f"{_when(photo.taken_at, tz)} (EXIF)" if photo.taken_at else ""
        if jpeg is None:
            missing.append(f"{caption} (display rendition {photo.display_sha256} is not in the file store)")
        else:
            shown.append(Photo(jpeg, caption, taken))
    blocks: list = [PhotoGrid(tuple(shown))] if shown else []
    if missing:
        blocks.append(Paragraphs("\n".join(missing)))
    return blocks


def _print_jpeg(photo: PhotoRecord) -> bytes | None:
    """The print rendition (marked up, when the photo is); for a photo stored before there was one, made
    now from its display rendition."""
    stored = _blob(photo.shown_sha256("print"))
    if stored is not None:
        return stored
    display = _blob(photo.display_sha256)
    return make_print_rendition(display) if display is not None else None


# -- 1. inspection report (§380-16 C(4)(f)[1]) --------------------------------------------------------

def inspection_report(inspection: Inspection) -> Document:
    """The inspection report: (a)-(h), notice, checklist, findings with photos, actions, punch list, signature."""
    permit = db.session.get(Permit, inspection.permit_id)
    profile = profile_of(permit)
    tz = ZoneInfo(profile.timezone)
    kind = profile.inspection_type(inspection.type)
    title = f"{kind.name} report" + (" (amendment)" if inspection.amends_id else "")
    if not inspection.is_submitted:
        title = f"DRAFT {title}"
    findings = sorted(inspection.findings, key=lambda f: (f.created_at, f.id))
    photos = list(db.session.scalars(select(PhotoRecord).where(PhotoRecord.inspection_id == inspection.id)))
    photos.sort(key=lambda p: (p.taken_at or p.created_at, p.created_at, p.id))

    blocks: list = []
    if not inspection.is_submitted:
        blocks.append(Paragraphs("DRAFT: this report has not been signed and submitted; it is not part of the "
                                 "record and may still change."))
    if inspection.amends_id:
        blocks.append(Paragraphs(_amendment_note(inspection, tz)))
    blocks += [
        Heading("Permit and site"),
        Fields((
            ("Permit", f"{permit.number}, {profile.regulation}"),
            ("Site", permit.site_address),
            ("Owner (permittee)", permit.owner_name),
            ("Applicant", permit.applicant_name),
        )),
        Heading(_cited("Report", profile.citations.get("report_contents"))),
        Fields((
            ("(a) Date and location", _date_and_location(inspection, permit, tz)),
            ("(b) Inspector's name and credentials", f"{inspection.inspector_name}, {inspection.inspector_credentials}"),
            ("(c) Type of inspection", f"{kind.name} ({kind.citation})"),
            ("(d) Date of last inspection", _when(inspection.last_inspection_at, tz, "None before this one")),
            ("(e) Weather at the time", _weather(inspection, tz)),
            ("(f) Precipitation, previous 24 hours", _precipitation(inspection)),
            ("(g) Evaluation", _evaluation(inspection, findings)),
            ("(h) Steps to correct violations", _corrective_steps(inspection)),
            (f"{profile.advance_notice.hours}-hour advance notice", _notice(inspection, profile, tz)),
            ("Stop-work order", "In effect when this inspection was made" if inspection.under_stop_work
             else "None in effect"),
        )),
    ]
    if kind.states_occasion:
        blocks += _occasion(inspection, permit, tz)
    if inspection.notes:
        blocks += [Heading("Notes", 2), Paragraphs(inspection.notes)]
    blocks += _type_details(inspection, permit, tz)
    blocks += _discharges(inspection, permit, profile)
    blocks += [Heading("Checklist"), _checklist(inspection, permit, profile)]
    item_blocks, under_items = _item_photo_blocks(inspection, tz)
    blocks += item_blocks
    blocks += _fixes(inspection, tz)
    blocks += _findings_blocks(inspection, findings, photos, tz, len(under_items) + 1)
    shown = {photo.id for photo in under_items}
    general = [p for p in photos if p.finding_id is None and p.id not in shown]
    if general:
        numbered = len(under_items) + sum(1 for p in photos if p.finding_id is not None)
        blocks += [Heading("Photos"), *_photo_blocks(general, tz, numbered + 1)]
    blocks += _punch_list(inspection, tz)
    blocks += _pipe_videos(inspection)
    # No heading of its own: a heading could be left at the foot of a page the signature block moves off.
    blocks.append(_inspection_signature(inspection, tz))
    if kind.permittee_signs:
        blocks.append(_permittee_signature(inspection, tz))
    return _document(title, permit, profile, records.inspection_sha256(inspection), blocks,
                     report_maker(inspection, profile))


def _occasion(inspection: Inspection, permit: Permit, tz: ZoneInfo) -> list:
    """Why, when and who (CGP 2022 Part 4.7.1; issue 20), in the words of the report page."""
    return [
        Heading("Why, when and who"),
        Fields((
            ("Permit's NPDES ID", permit.npdes_id or "Not recorded on the permit"),
            ("Inspector", wording.inspector_words(inspection.inspector_name, inspection.inspector_credentials,
                                                  inspection.inspector_title, inspection.inspector_organization,
                                                  inspection.inspector_contact)),
            ("Start and end of the inspection", wording.when_words(inspection.performed_at, inspection.ended_at, tz)),
            ("Phase of construction", inspection.construction_phase or "—"),
            ("Schedule in force", wording.schedule_words(inspection.schedule_in_force)),
            ("Why this inspection", wording.why_words(inspection.trigger, inspection.storms, tz)),
            ("Storms since the previous report", "\n".join(wording.storms_since_words(inspection.storms, tz))),
        )),
    ]


def _amendment_note(inspection: Inspection, tz: ZoneInfo) -> str:
    original = db.session.get(Inspection, inspection.amends_id)
    if original is None:
        return f"Amendment: this report corrects report {inspection.amends_id}."
    sealed = f" (record SHA-256 {original.record_sha256})" if original.record_sha256 else ""
    another = queries.amended_by_another(inspection)
    return (f"Amendment: this report corrects the report of the inspection made {_when(original.performed_at, tz)}, "
            f"submitted {_when(original.submitted_at, tz)}{sealed}. The original stays in the record unchanged."
            + (f" This is an {another}." if another else ""))


def _date_and_location(inspection: Inspection, permit: Permit, tz: ZoneInfo) -> str:
    place = permit.site_address
    if inspection.latitude is not None and inspection.longitude is not None:
        source = "device GPS" if inspection.location_source == "device" else "permit location"
        place += f" ({inspection.latitude:.5f}, {inspection.longitude:.5f}, {source})"
    return f"{_when(inspection.performed_at, tz)}\n{place}"


def _weather(inspection: Inspection, tz: ZoneInfo) -> str:
    """(e): the inspector's observation, if written, then the station's values beside it (issues 31, 32), with the
    station, its distance, the data source and its licence attribution (SPEC *Weather*)."""
    i = inspection
    pending = i.weather_status == "pending" or (i.station_id is None and i.temperature_c is None and not i.conditions)
    if not i.observed_weather:
        return ("Pending: the weather station had not reported for this time when the report was made." if pending
                else _station_weather(i, tz))
    station = "Station: pending, added beside this when the station reports." if pending else (
        f"Station{f' ({i.station_name})' if i.station_name else ''}: {_station_weather(i, tz)}")
    return f"Observed by the inspector: {i.observed_weather}\n{station}"


def _station_weather(inspection: Inspection, tz: ZoneInfo) -> str:
    i = inspection
    values = []
    if i.conditions:
        values.append(i.conditions)
    if i.temperature_c is not None:
        values.append(f"{fahrenheit(i.temperature_c)} ({i.temperature_c:.1f} °C)")
    if i.wind_kmh is not None:
        wind = f"wind {mph(i.wind_kmh)} ({i.wind_kmh:.0f} km/h)"
        if i.wind_direction_deg is not None:
            wind += f" from {compass_point(i.wind_direction_deg, points=16)}"
        values.append(wind)
    lines = [", ".join(values) or "No observations reported"]
    if i.station_name or i.station_id:
        station = f"Station: {i.station_name or i.station_id}" + (f" ({i.station_id})" if i.station_name else "")
        if i.station_distance_m is not None:
            station += f", {miles(i.station_distance_m)} ({kilometres(i.station_distance_m)}) from the site"
        lines.append(station)
    if i.weather_sources:
        lines.append(f"Source: {i.weather_sources}")
    if i.weather_attribution:
        lines.append(f"Attribution: {i.weather_attribution}")
    if i.weather_fetched_at:
        lines.append(f"Retrieved {_when(i.weather_fetched_at, tz)}")
    return "\n".join(lines)


def _precipitation(inspection: Inspection) -> str:
    """(f) in inches, with the hours the station reported; an on-site gauge reading wins and says so."""
    i = inspection
    station = None
    if i.precip_24h_mm is not None:
        hours = f", {i.precip_hours} of 24 hours reported" if i.precip_hours is not None else ""
        station = f"{inches_and_mm(i.precip_24h_mm)} at the weather station{hours}"
    if i.gauge_precip_mm is not None:
        text = f"{inches_and_mm(i.gauge_precip_mm)}: on-site rain gauge reading (overrides the station)"
        return text + (f"\nStation: {station}" if station else "")
    if station:
        return station + (" (incomplete)" if i.weather_status == "incomplete" else "")
    return "Pending: no station or gauge reading yet."


def _evaluation(inspection: Inspection, findings: list[Finding]) -> str:
    if inspection.evaluation == "compliant":
        return "In compliance"
    if inspection.evaluation == "violations":
        violations = [f"Finding {n}: {f.description}" for n, f in enumerate(findings, 1) if f.is_violation]
        return "\n".join(["Violations:", *violations]) if violations else "Violations (see the findings below)"
    return "Not yet evaluated"


def _corrective_steps(inspection: Inspection) -> str:
    if inspection.corrective_steps:
        return inspection.corrective_steps
    return "None needed" if inspection.evaluation == "compliant" else "—"


def _cited(label: str, citation: str | None) -> str:
    """`label (clause)` with the town's own clause, or the label alone where the town cites none: a
    document names only its own town's sections."""
    short = (citation or "").split(": ", 1)[0].strip()
    return f"{label} ({short})" if short else label


def _paren(clause: str) -> str:
    """' (§380-19)', or nothing where the town cites no clause."""
    return f" ({clause})" if clause else ""


def _of(clause: str) -> str:
    """'§380-18 of the ' or 'the ': the clause of the regulation that follows, where the town cites one."""
    return f"{clause} of the " if clause else "the "


def _under(profile: Profile, *purposes: str) -> str:
    """'Under §380-16 C(4)(f)[2] and §380-19 of the <regulation>', or 'Under the <regulation>'."""
    clauses = [c for c in (profile.cite(p) for p in purposes) if c]
    return f"Under {_of(' and '.join(clauses))}{profile.regulation}"


def _type_citation(permit: Permit, key: str) -> str:
    """The town's clause of the inspection type `key`, or "" where the town does not offer the type."""
    profile = profile_of(permit)
    return profile.inspection_type(key).citation if profile.offers(key) else ""


def _notice(inspection: Inspection, profile: Profile, tz: ZoneInfo) -> str:
    """§380-16 C(3): notice at least 24 hours before; an inspection without it is flagged."""
    notice = inspection.notice
    notice_rule = profile.advance_notice
    hours, rule = notice_rule.hours, notice_rule.cited(notice_rule.citation.split(":")[0])
    if inspection.by_authority:
        return f"Not owed: the authority's own inspection ({rule})"
    if not profile.advance_notice.required_for(inspection.type):
        return f"Not required for this type of inspection ({rule})"
    if inspection.notice_given and notice is not None:
        return (f"Given {_when(notice.given_at, tz)} for {_when(notice.planned_for, tz)} "
                f"({notice.hours_ahead:.0f} hours ahead; {rule})")
    if inspection.notice_given:
        return "Given"
    late = f" A notice was given {_when(notice.given_at, tz)}, less than {hours} hours ahead." if notice else ""
    return f"FLAG: NOT GIVEN at least {hours} hours before the inspection ({rule}).{late}"


def _subject_names(inspection: Inspection, permit: Permit) -> dict[str, str]:
    names = {"": "Site"}
    names.update({s.id: s.name for s in db.session.scalars(
        select(StormwaterStructure).where(StormwaterStructure.permit_id == permit.id))})
    names.update({a.id: a.name for a in db.session.scalars(
        select(DisturbedArea).where(DisturbedArea.permit_id == permit.id))})
    names.update({c.get("id", ""): c.get("name", "") for c in (inspection.details or {}).get("controls", [])})
    return names


def _checklist(inspection: Inspection, permit: Permit, profile: Profile) -> Table:
    """The type's checklist from the town profile: item, citation, what it is about, answer, note."""
    items = profile.inspection_type(inspection.type).checklist
    order = {item.key: n for n, item in enumerate(items)}
    texts = {item.key: item for item in items}
    names = _subject_names(inspection, permit)
    answers = sorted(inspection.answers, key=lambda a: (order.get(a.item_key, len(order)), a.item_key,
                                                        names.get(a.subject_id, a.subject_id), a.subject_id))
    rows = []
    for a in answers:
        item = texts.get(a.item_key)
        rows.append((item.text if item else a.item_key, item.citation if item else "",
                     names.get(a.subject_id, a.subject_id or "Site"), label(a.answer, "answer"), a.note or ""))
    answered = {a.item_key for a in answers}
    # A site-wide item with no answer still shows, so a reader sees it was not answered.
    rows += [(item.text, item.citation, "Site", "Not answered", "") for item in items
             if item.per == "site" and item.key not in answered]
    return Table(("Item", "Citation", "Applies to", "Answer", "Note"), tuple(rows), (3.6, 1.4, 1.3, 1.5, 2.3))


def _item_photo_blocks(inspection: Inspection, tz: ZoneInfo) -> tuple[list, list[PhotoRecord]]:
    """The photos taken on checklist items, under each item and subject in the order of the checklist, numbered
    from 1; and those photos (shown here, not again under "Photos")."""
    details = inspection.details or {}
    by_key = checks.item_photos(inspection, details)
    blocks: list = []
    shown: list[PhotoRecord] = []
    for item, found in queries.checklist(inspection, details):
        for subject in found:
            mine = [p for p in by_key.get(checks.fix_key(item.key, subject.id), []) if p not in shown]
            if mine:
                of = f"{item.text}: {subject.name}"
                blocks += [Heading(f"Photos: {item.text} ({subject.name})", 2),
                           *_photo_blocks(mine, tz, len(shown) + 1, of)]
                shown += mine
    return blocks, shown


def _discharges(inspection: Inspection, permit: Permit, profile: Profile) -> list:
    """The discharges seen at each point of discharge (inspections/checks.py), where the town asks for them."""
    if not checks.discharges_asked(inspection):
        return []
    details = inspection.details or {}
    seen_all = details.get("discharges", {})
    rows = []
    for point in checks.discharge_points(permit, details):
        seen = seen_all.get(point.id) or {}
        signs = ", ".join(label(s, "discharge_sign") for s in seen.get("signs", [])) or "None seen"
        photos = len(seen.get("photos", []))
        rows.append((point.name, label(seen.get("now"), "discharging"), label(seen.get("since_last"), "discharging"),
                     signs, (seen.get("description") or "—") + (f" ({photos} photo(s))" if photos else "")))
    return [Heading(_cited("Discharges at each point of discharge", profile.discharges.citation), 2),
            Table(("Point of discharge", "At the time", "Since the last inspection", "Seen", "Description"),
                  tuple(rows) or (("No point of discharge recorded", "", "", "", ""),), (2, 1.4, 1.6, 2, 3))]


def _fixes(inspection: Inspection, tz: ZoneInfo) -> list:
    """Each condition requiring corrective action the report records, tied to its fix (CGP 2022 Part 5.1)."""
    recorded = checks.recorded_fixes(inspection)
    if not recorded:
        return []
    profile = profile_of(inspection.permit)
    filed = [profile.filed_under(need.condition, action.kind if action else fix.get("kind"))
             for need, fix, action in recorded]
    rows = tuple((f"{need.subject}: {need.what}", f"{condition.text} ({condition.citation})",
                  fix.get("repair") or "—", _day(dt.date.fromisoformat(fix["first_observed"]))
                  if fix.get("first_observed") else "—",
                  f"{action.description} ({label(action.kind, 'action_kind')}), {action.owner_name}; "
                  f"due {_when(action.due_at, tz)}" if action else "None")
                 for (need, fix, action), condition in zip(recorded, filed))
    return [Heading("Conditions requiring corrective action", 2),
            Table(("Found", "Condition", "Repair needed", "First observed", "Corrective action"), rows,
                  (2.2, 2.2, 1.8, 1.2, 2.6))]


def _type_details(inspection: Inspection, permit: Permit, tz: ZoneInfo) -> list:
    """The inspection type's own part (SPEC *Inspections*: what the form captures beyond the common fields),
    by the part the registry names (inspection_types: `part`)."""
    section = PART_SECTIONS.get(inspection_types.spec(inspection.type).part)
    return section(inspection, permit) if section else []


def _site_conditions(inspection: Inspection, permit: Permit) -> list:
    details = inspection.details or {}
    parts = (("Existing conditions vs. the submitted plan", details.get("existing_conditions")),
             ("Resource areas", details.get("resource_areas")), ("Test pits", details.get("test_pits")))
    return [Heading(_cited("Initial site inspection", _type_citation(permit, inspection.type)), 2),
            Fields(tuple((label, value or "—") for label, value in parts))]


def _system_acceptance(inspection: Inspection, permit: Permit) -> list:
    details = inspection.details or {}
    storm = details.get("storm") or {}
    depth = storm.get("depth_mm")
    certification = details.get("certification") or {}
    certified = certification.get("certified")
    profile = profile_of(permit)
    return [Heading(_cited("Final inspection", _type_citation(permit, inspection.type)), 2), Fields((
        (_cited("Storm the system was seen in", profile.citations.get("final_storm")),
         f"{_day(dt.date.fromisoformat(storm['date'])) if storm.get('date') else 'Date not given'}, "
         f"{inches_and_mm(float(depth)) if depth else 'depth not given'}"),
        (_cited("Engineer's certification", profile.citations.get("final_certification")),
         (certification.get("text") or "") if certified else "Not certified"),
    ))]


def _om_facilities(inspection: Inspection, permit: Permit) -> list:
    """§380-14 A(3): the completed project's facilities inspected (each answered in the checklist), the certificate
    they follow, and the notice a violation brings (§380-14 E)."""
    profile = profile_of(permit)
    structures = db.session.scalars(select(StormwaterStructure.name).where(StormwaterStructure.permit_id == permit.id)
                                    .order_by(StormwaterStructure.name)).all()
    return [Heading(_cited("Stormwater facilities after completion", _type_citation(permit, inspection.type)), 2),
            Fields((("Certificate of completion", _day(permit.completed_on)),
                    ("Facilities inspected", ", ".join(structures) or "None recorded"),
                    (_cited("A violation found", profile.cite("notice_to_correct")),
                     f"corrected within {profile.cure_period.days} days of the notice to correct")))]


def _structures(inspection: Inspection, permit: Permit) -> list:
    return _pre_bury(inspection.details or {}, permit, inspection.type)


def _pre_bury(details: dict[str, Any], permit: Permit, inspection_type: str) -> list:
    structures = {s.id: s for s in db.session.scalars(
        select(StormwaterStructure).where(StormwaterStructure.permit_id == permit.id))}
    rows = []
    for sid, part in sorted((details.get("structures") or {}).items(),
                            key=lambda kv: (structures[kv[0]].name if kv[0] in structures else kv[0], kv[0])):
        if not part.get("covered"):
            continue
        s = structures.get(sid)
        design = (lambda name: f" (design: {getattr(s, name)})" if s is not None and getattr(s, name) else "")
        separation = part.get("groundwater_separation_ft")
        rows.append((s.name if s else sid, label(part.get("as_designed"), "answer"),
                     f"{part.get('size') or '—'}{design('design_size')}",
                     f"{part.get('invert') or '—'}{design('design_invert')}",
                     f"{part.get('material') or '—'}{design('material')}",
                     (f"{separation} ft" if separation is not None else "—") + design("groundwater_separation_ft")))
    return [Heading(_cited("Structures before backfill", _type_citation(permit, inspection_type)), 2),
            Table(("Structure", "As designed", "Size", "Invert", "Material", "Separation to groundwater"),
                  tuple(rows) or (("None chosen", "", "", "", "", ""),), (2, 1, 1.6, 1.6, 1.6, 1.6))]


def _findings_blocks(inspection: Inspection, findings: list[Finding], photos: list[PhotoRecord],
                     tz: ZoneInfo, number: int = 1) -> list:
    """Each finding with its corrective actions (as of submission) and its photos, numbered from `number`."""
    blocks: list = [Heading("Findings and corrective actions")]
    if not findings:
        return blocks + [Paragraphs("No findings.")]
    cutoff = inspection.submitted_at
    # Who recorded the findings: the report's author (a finding is added to a draft by its author alone).
    author = records.user_name(inspection.author_id) or inspection.inspector_name
    for n, finding in enumerate(findings, 1):
        blocks += [Heading(f"Finding {n}" + (": violation" if finding.is_violation else ""), 2), Fields((
            ("Description", finding.description),
            ("Location", finding.location or "—"),
            ("Severity", label(finding.severity, "severity")),
            ("Citation", finding.citation or "—"),
            ("Recorded by", "The app (a deadline had passed)" if finding.is_automatic else author),
        ))]
        # Only what the report said: actions opened after it was submitted are follow-up, not the report.
        actions = sorted((a for a in finding.actions if canonical.in_report(a, cutoff)), key=lambda a: (a.due_at, a.id))
        if actions:
            blocks.append(Table(("Corrective action", "Kind", "Owner", "Discovered", "Deadline"), tuple(
                (a.description, label(a.kind, "action_kind"), a.owner_name, _when(a.discovered_at, tz),
                 _when(a.due_at, tz)) for a in actions), (3.2, 2.2, 1.6, 1.5, 1.5)))
        mine = [p for p in photos if p.finding_id == finding.id]
        blocks += _photo_blocks(mine, tz, number, f"finding {n}")
        number += len(mine)
    return blocks


def _punch_list(inspection: Inspection, tz: ZoneInfo) -> list:
    """Walk-through: the items remaining (§380-16 C(4)(d)); final: how each was resolved."""
    declared = inspection_types.spec(inspection.type)
    [walk_through] = inspection_types.keys_where(makes_punch_list=True)
    if declared.makes_punch_list:
        items = db.session.scalars(select(PunchListItem).where(PunchListItem.walk_through_id == inspection.id)
                                   .order_by(PunchListItem.description, PunchListItem.id)).all()
        return [Heading(_cited("Punch list", _type_citation(inspection.permit, walk_through))),
                Table(("#", "Item of work remaining"), tuple((str(n), p.description) for n, p in enumerate(items, 1))
                      or (("", "No items remaining"),), (0.4, 9))]
    if not declared.resolves_punch_list:
        return []
    if inspection.is_submitted:
        items = db.session.scalars(select(PunchListItem).where(PunchListItem.resolved_in_id == inspection.id)
                                   .order_by(PunchListItem.description, PunchListItem.id)).all()
        rows = [(p.description, p.resolution or "—") for p in items]
    else:
        resolutions = (inspection.details or {}).get("punch_resolutions", {})
        rows = [(p.description, resolutions.get(p.id) or "Not yet resolved")
                for p in queries.open_punch_items(inspection.permit)]
    return [Heading(_cited("Walk-through punch list, resolved", _type_citation(inspection.permit, walk_through))),
            Table(("Item", "Resolution"), tuple(rows) or (("No items", ""),), (1, 1))]


def _pipe_videos(inspection: Inspection) -> list:
    """Final: a dated video inspection of every stormwater pipe installed (§380-16 C(4)(e)[1])."""
    if inspection_types.spec(inspection.type).part != "system_acceptance":
        return []
    videos = db.session.scalars(select(PipeVideo).where(PipeVideo.inspection_id == inspection.id)).all()
    names = {v.structure_id: (db.session.get(StormwaterStructure, v.structure_id).name) for v in videos}
    rows = sorted(((names[v.structure_id], _day(v.recorded_on), v.reference or "—",
                    f"SHA-256 {v.blob_sha256}" if v.blob_sha256 else "—") for v in videos))
    return [Heading(_cited("Pipe videos", profile_of(inspection.permit).citations.get("pipe_video"))),
            Table(("Pipe run", "Recorded on", "Reference", "Video file"), tuple(rows) or (("None", "", "", ""),),
                  (2, 1.2, 2.2, 3))]


def _inspection_signature(inspection: Inspection, tz: ZoneInfo) -> SignatureBlock:
    return SignatureBlock(
        name=inspection.signer_name or inspection.inspector_name,
        credentials=inspection.signer_credentials or inspection.inspector_credentials,
        statement=_statement(inspection),
        signed_at_text=_when(inspection.signed_at, tz, "Not yet signed"),
        signature_png=_signature_png(inspection.signature_sha256),
    )


def _statement(inspection: Inspection) -> str:
    """What the signers certify: as sealed with the report, or (a draft) what they will certify."""
    return (inspection.certification_statement
            or canonical.certification_statement(profile_of(inspection.permit), queries.type_of(inspection)))


def _permittee_signature(inspection: Inspection, tz: ZoneInfo) -> SignatureBlock:
    """The permittee's authorized signatory, where the town asks for a second signature (`permittee_signs`)."""
    return SignatureBlock(
        name=inspection.permittee_signer_name or "—",
        credentials=f"{inspection.permittee_signer_title or '—'}, for the permittee",
        statement=_statement(inspection),
        signed_at_text=_when(inspection.signed_at, tz, "Not yet signed"),
        signature_png=_signature_png(inspection.permittee_signature_sha256),
    )


# -- 2. notice of violation and stop-work order (§380-16 C(4)(e)[5], §380-19) -------------------------

def stop_work_order(record: dict[str, Any], permit: Permit, sha: str) -> Document:
    """The stop-work order with its notices of violation: reasons, findings, who issued it, how to lift it."""
    profile = profile_of(permit)
    tz = ZoneInfo(profile.timezone)
    authority = profile.authority_title
    found_by = _inspection(record["inspection_id"])
    # The order rests on the town's clause for it: after the final inspection §380-16 C(4)(e)[5], after any
    # other (or none) §380-16 C(4)(f)[2] (Southborough §6.0).
    rests_on = citation_purpose(found_by.type if found_by is not None else None)
    lifted = record["lifted_at"] is not None
    status = (f"Lifted {_when(record['lifted_at'], tz)} by {record['lifted_by'] or '—'}: {record['lift_reason'] or ''}"
              if lifted else "In effect")
    order = db.session.get(StopWorkOrder, record["id"])
    by_authority = order is None or _for_the_authority(order.issued_by_id, found_by, permit)
    issued_by = (f"{record['issued_by'] or '—'}, for the {authority}" if by_authority else
                 f"{record['issued_by'] or '—'}, on the final inspection that found the system not complying"
                 f"{_paren(profile.cite(rests_on))}")
    issuers = dict(db.session.execute(select(NoticeOfViolation.id, NoticeOfViolation.issued_by_id)
                                      .where(NoticeOfViolation.stop_work_order_id == record["id"])).all())
    blocks: list = [
        Fields((
            ("Permit", record["permit"]["number"]),
            ("Site", record["permit"]["site_address"]),
            ("Owner (permittee)", record["permit"]["owner_name"]),
            ("Applicant", record["permit"]["applicant_name"]),
            ("Issued by", issued_by),
            ("Issued at", _when(record["issued_at"], tz)),
            ("Inspection", _inspection_line(record["inspection_id"], profile, tz)),
            ("Status of the order", status),
            ("Received by the permittee", f"{record['acknowledged_by']}, {_when(record['acknowledged_at'], tz)}"
             if record["acknowledged_at"] else "Not yet acknowledged"),
        )),
        Heading("Stop-work order"),
        Paragraphs(f"{_under(profile, rests_on, 'violation')}, the {authority} orders that "
                   f"all construction and land-disturbing activity at {record['permit']['site_address']} stop, "
                   "except the work needed to correct the violations below and to keep erosion and sediment "
                   "controls working, until the order is lifted in writing."),
        Heading("Reasons", 2),
        Paragraphs(record["reason"]),
        Heading("Findings", 2),
        Table(("Found", "Finding", "Location", "Severity", "Citation"), tuple(
            (_day(f["created_at"], tz), f["description"], f["location"] or "—",
             label(f["severity"], "severity"), f["citation"] or "—") for f in record["findings"]) or (("", "No findings linked", "", "", ""),),
            (1.2, 4, 1.8, 1, 1.6)),
    ]
    for n, notice in enumerate(record["notices"], 1):
        blocks += [Heading(f"Notice of violation {n}" if len(record["notices"]) > 1 else "Notice of violation"),
                   Fields((("Issued by", f"{notice['issued_by'] or '—'}" + (
                       f", for the {authority}" if _for_the_authority(
                           issuers.get(notice["id"]), _inspection(notice["inspection_id"]), permit) else "")),
                           ("Issued at", _when(notice["issued_at"], tz)),
                           ("Inspection", _inspection_line(notice["inspection_id"], profile, tz)))),
                   Paragraphs(notice["text"])]
    blocks += [
        Heading("How to have the order lifted"),
        # Both the corrections and the approval (enforcement/services.lift_stop_work), of every open violation of the
        # permit, cited above or not (`uncorrected`); cited as the clause that says when it is lifted
        # (enforcement.services.lifting_clause: C(4)(f)[2] says nothing of lifting).
        Paragraphs(f"The order stands until every violation on the permit (those above, and any other still open) "
                   f"is corrected and all work previously completed has been approved by the {authority}"
                   f"{_paren(profile.cite(lifting_clause(rests_on)))}. Correct each finding, record the corrective "
                   f"actions, and ask the {authority} for a re-inspection. The order is lifted in writing once the corrections "
                   f"are verified and the work is approved; until then any further work on the site is a violation"
                   f"{_paren(profile.cite('violation'))}."),
        SignatureBlock(name=record["issued_by"] or "—", credentials=f"For the {authority}, {town_of(profile)}",
                       statement=f"Issued by the {authority} under the {profile.regulation}.",
                       signed_at_text=_when(record["issued_at"], tz)) if by_authority else
        SignatureBlock(name=record["issued_by"] or "—", credentials="Who made the final inspection",
                       statement=f"Issued on the final inspection's finding, as the {profile.regulation} requires"
                                 f"{_paren(profile.cite(rests_on))}; the {authority} lifts it.",
                       signed_at_text=_when(record["issued_at"], tz)),
    ]
    return _document("Notice of Violation and Stop-Work Order", record["permit"], profile, sha, blocks)


def _inspection(inspection_id: str | None) -> Inspection | None:
    return db.session.get(Inspection, inspection_id) if inspection_id else None


def _for_the_authority(issuer_id: str | None, inspection: Inspection | None, permit: Permit) -> bool:
    """Whether an order (or notice) was issued for the authority, as its document says. Every one is, but the one a
    failed final inspection issues at once (reporting/submission.py) by whoever made that inspection, often the
    applicant's engineer: its document says it follows from their inspection, never that they signed for the
    authority (unless they are an agent of the town). Told by the order's own facts: its inspection is the final,
    and its issuer that inspection's author."""
    automatic = (inspection is not None and citation_purpose(inspection.type) == "stop_work_final"
                 and issuer_id is not None and issuer_id == inspection.author_id)
    if not automatic:
        return True
    return is_town_agent(db.session.get(User, issuer_id) if issuer_id else None, permit)


def _inspection_line(inspection_id: str | None, profile: Profile, tz: ZoneInfo) -> str:
    inspection = db.session.get(Inspection, inspection_id) if inspection_id else None
    if inspection is None:
        return "—"
    return f"{profile.inspection_type(inspection.type).name}, {_when(inspection.performed_at, tz)}"


# -- 3. certificate of completion (§380-18) -----------------------------------------------------------

def certificate_of_completion(record: dict[str, Any], permit: Permit, sha: str) -> Document:
    """The letter certifying completion, with the accepted final submissions it rests on."""
    profile = profile_of(permit)
    tz = ZoneInfo(profile.timezone)
    authority = record["authority_title"]
    p = record["permit"]
    rows = []
    for s in record["submissions"]:
        rows.append((label(s["kind"], "submission_kind"), profile.cite(f"{s['kind']}_submission") or "—", _submission_detail(s, record, tz, profile), _day(s["submitted_at"], tz),
                     _day(s["reviewed_at"], tz)))
    blocks: list = [
        Paragraphs(f"{_day(record['issued_at'], tz)}\n\n{p['owner_name']}\n{p['site_address']}\n\n"
                   f"Re: Permit {p['number']}, {p['site_address']}"),
        Paragraphs(f"The {authority} certifies that " + profile.completion.certificate_statement.format(
                   number=p["number"], site=p["site_address"], regulation=record["regulation"])
                   + f", upon receipt and approval of the final submissions it requires"
                   f"{_paren(profile.cite('completion'))}, listed below."),
        Heading(profile.cited("Final submissions accepted", "completion")),
        Table(("Submission", "Citation", "Details", "Submitted", "Accepted"), tuple(rows)
              or (("None accepted", "", "", "", ""),), (2, 1.5, 3.8, 1.2, 1.2)),
    ]
    if record["easements"]:
        blocks += _easements_blocks(record["easements"], record["registry_of_deeds"], profile)
    if record.get("inspections") is not None:
        blocks += _inspections_owed(record["inspections"], record["issued_by"], authority, profile, tz)
    if record["note"]:
        blocks += [Heading("Note", 2), Paragraphs(record["note"])]
    months = record["om_certification_months"]
    blocks += [
        Heading("Continuing obligations"),
        Paragraphs(f"The operation and maintenance plan binds the owner and every later owner of the site. The "
                   f"responsible party keeps the maintenance log and submits to the {authority} a certification of "
                   f"the work done to operate and maintain the stormwater control measures every {months} months"
                   f"{_paren(profile.cite('om_certification'))}."),
        Fields((("Permit", p["number"]), ("Site", p["site_address"]), ("Owner", p["owner_name"]),
                ("Completed on", _day(p["completed_on"])), ("Certificate issued", _when(record["issued_at"], tz)))),
        SignatureBlock(name=record["issued_by"] or "—", credentials=f"For the {authority}, {town_of(profile)}",
                       statement=f"Issued by the {authority} under {_of(profile.cite('completion'))}{record['regulation']}.",
                       signed_at_text=_when(record["issued_at"], tz)),
    ]
    return _document("Certificate of Completion", p, profile, sha, blocks)


def _inspections_owed(inspections: dict[str, Any], issued_by: str | None, authority: str, profile: Profile,
                      tz: ZoneInfo) -> list:
    """The required inspections never made, each waived with its reason, and the inspections missed (made late
    or never): the certificate does not hide them (schedule/missed.py)."""
    waived, late = inspections.get("waived", []), inspections.get("missed", [])
    return [
        Heading(profile.cited("Required inspections waived", "completion_waiver")),
        Table(("Inspection", "Required by", "Reason for the waiver"), tuple(
            (w["inspection"], w["citation"], w["reason"]) for w in waived)
            or (("None: every required inspection was made", "", ""),), (3, 2.2, 4.6)),
        *([Paragraphs(f"Waived by {issued_by or '—'}, for the {authority}, in issuing this certificate.")]
          if waived else []),
        Heading("Inspections missed"),
        Table(("Inspection", "Required by", "Due by", "Made"), tuple(
            (m["inspection"], m["citation"], _when(_parsed(m["due_at"]), tz),
             _when(_parsed(m["made_at"]), tz, "Never made")) for m in late)
            or (("None missed", "", "", ""),), (3, 2, 2.2, 2.2)),
    ]


def _parsed(moment: str | None) -> dt.datetime | None:
    """A time a record keeps as ISO 8601 text."""
    return dt.datetime.fromisoformat(moment) if moment else None


def _easements_blocks(easements: list[dict[str, Any]], registry: str, profile: Profile) -> list:
    """The stormwater management easements with the purpose, location and recording of each (§380-14 C(2)(d),
    D(2), D(4))."""
    return [Heading(profile.cited("Stormwater management easements", "easements")),
            Table(("Purpose", "Location", "Grantor", f"Recorded at the {registry}"), tuple(
                (e["purpose"], " ".join(filter(None, (e["location"] or "not given", _point(e.get("point"))))),
                 e["grantor"] or "—",
                 f"{e['registry_reference']}, {_day(e['recorded_on'])}" if e["recorded_on"] else "Not recorded")
                for e in easements) or (("None listed", "", "", ""),), (3, 2.2, 1.6, 2.2))]


def _point(point: list[float] | None) -> str | None:
    """Where a point of the site map is, as its record keeps it (latitude, longitude; none before it had one)."""
    return f"({point[0]:.6f}, {point[1]:.6f})" if point else None


def _submission_detail(submission: dict[str, Any], record: dict[str, Any], tz: ZoneInfo, profile: Profile) -> str:
    if submission["kind"] == "om_plan":
        # The recording every document reads (certifications.plan_recording), not the submission's own copy.
        reference = (record["om_plan"] or {}).get("registry_reference")
        recorded = (record["om_plan"] or {}).get("recorded_on")
        text = (f"Recorded at the {record['registry_of_deeds']}, {reference}" if reference
                else f"Registry reference at the {record['registry_of_deeds']} not given")
        return text + (f", on {_day(recorded)}" if recorded else "")
    if submission["kind"] == "as_built":
        return profile.completion.as_built_certification if submission["pe_certified"] else "Not marked PE-certified"
    final = submission["inspection"]
    if final is None:
        return "Final inspection report (uploaded file)"
    sealed = f"; record SHA-256 {final['record_sha256']}" if final["record_sha256"] else ""
    return f"Final inspection of {_when(final['performed_at'], tz)}{sealed}"


# -- 4. annual O&M certification (§380-14 C(2)(l)) ----------------------------------------------------

def om_certification(record: dict[str, Any], permit: Permit, sha: str) -> Document:
    """The annual certification: period, the last 12 months' log, missing scheduled tasks, signer, review."""
    profile = profile_of(permit)
    tz = ZoneInfo(profile.timezone)
    p, plan, period = record["permit"], record["plan"] or {}, record["period"]
    review = label(record["status"], "certification_status")
    if record["reviewed_at"]:
        review += f", {_when(record['reviewed_at'], tz)} by {record['reviewed_by'] or '—'}"
        if record["review_note"]:
            review += f": {record['review_note']}"
    blocks: list = [
        Fields((
            ("Permit", p["number"]), ("Site", p["site_address"]), ("Owner", p["owner_name"]),
            ("Completed on", _day(p["completed_on"])),
            ("O&M plan", (f"Recorded at the {record['registry_of_deeds']}, {plan['registry_reference']}"
                          if plan.get("registry_reference") else f"Not yet recorded at the {record['registry_of_deeds']}")
             + (f", on {_day(plan['recorded_on'])}" if plan.get("recorded_on") else "")),
            ("Period certified", f"{_day(period['start'])} to {_day(period['end'])}"
             + (f" (log as of {_day(period['as_of'])})" if period.get("as_of") not in (None, period["end"]) else "")),
            ("Status and review", review),
        )),
        *_easements_blocks(record["easements"], record["registry_of_deeds"], profile),
        Heading(profile.cited("Responsible parties", "om_parties")),
        Table(("Role", "Name", "Address", "Since"), tuple(
            (label(r["role"], "party_role"), r["name"], r["address"] or r["email"] or "—", _day(r["starts_on"]))
            for r in record["parties"]) or (("", "None recorded", "", ""),), (1.6, 2, 3, 1.2)),
        Heading(profile.cited("Maintenance log, this period", "om_log")),
        Table(("Date", "Type", "Structure", "Description", "Disposal material", "Disposal location", "By"), tuple(
            (_day(e["performed_on"]), label(e["kind"], "log_kind"), e["structure"] or "Site", e["description"],
             e["material_type"] or "—", e["disposal_location"] or "—", e["performed_by"]) for e in record["entries"])
            or (("", "", "", "No log entries in this period", "", "", ""),), (1.1, 1.3, 1.4, 2.8, 1.4, 1.5, 1.2)),
        Heading(profile.cited("Scheduled tasks with no log entry", "om_schedule")),
        Table(("Structure", "Task", "Every", "Due within"), tuple(
            (m["structure"], m["task"], f"{m['interval_months']} months",
             f"{_day(m['window_start'])} to {_day(m['window_end'])}") for m in record["missing"])
            or (("None", "Every scheduled task has a log entry", "", ""),), (1.8, 3.5, 1, 2.2)),
    ]
    notice = record.get("notice")
    if notice:
        cured = f"; corrected {_when(notice['cured_at'], tz)}" if notice["cured_at"] else ""
        blocks += [Heading(profile.cited("Notice to correct", "notice_to_correct")),
                   Fields((("Issued", _when(notice["issued_at"], tz)),
                           ("Corrections due", _when(notice["cure_due_at"], tz) + cured))),
                   Paragraphs(notice["text"])]
    blocks += [
        SignatureBlock(name=record["signer_name"], credentials=profile.cited("Responsible party", "om_certification"),
                       statement=record["statement"], signed_at_text=_when(record["submitted_at"], tz),
                       signature_png=_signature_png(record["signature_sha256"])),
    ]
    return _document("Annual Operation and Maintenance Certification", p, profile, sha, blocks,
                     certification_maker(record["signer_name"]))


# -- 5. a permit's inspection history -----------------------------------------------------------------

def permit_history(record: dict[str, Any], permit: Permit, sha: str) -> Document:
    """One row per inspection, then the findings and corrective actions still open."""
    profile = profile_of(permit)
    tz = ZoneInfo(profile.timezone)
    p = record["permit"]
    names = {k.key: k.name for k in profile.inspection_types}
    rows = []
    for i in record["inspections"]:
        evaluation = label(i["evaluation"], "evaluation")
        needed = profile.advance_notice.required_for(i["type"], i.get("by_authority", False))
        flags = [] if i["notice_given"] or not needed else [f"no {profile.advance_notice.hours}-hour notice"]
        if i["amends_id"]:
            flags.append(i.get("amended_by_another") or "amendment")  # a history made before named no signer
        status = "Submitted" if i["status"] == "submitted" else "Draft"
        rows.append((_when(i["performed_at"], tz), names.get(i["type"], i["type"]),
                     f"{i['inspector_name']}, {i['inspector_credentials']}", evaluation,
                     status + (f" ({', '.join(flags)})" if flags else ""), _history_weather(i)))
    findings = {f["id"]: n for n, f in enumerate(record["open_findings"], 1)}
    blocks: list = [
        Fields((("Permit", p["number"]), ("Site", p["site_address"]), ("Owner (permittee)", p["owner_name"]),
                ("Status", p["status"].replace("_", " ").replace("stop work", "stop-work").capitalize()),
                ("Issued", _day(p["issued_on"])), ("Construction started", _day(p["construction_started_on"])),
                ("Completed", _day(p["completed_on"])))),
        Heading(f"Inspections ({len(rows)})"),
        Table(("Date", "Type", "Inspector", "Evaluation", "Status", "Weather / 24-h precipitation"), tuple(rows)
              or (("", "No inspections yet", "", "", "", ""),), (1.4, 1.4, 1.9, 1.5, 1.4, 1.9)),
        Heading(f"Open findings ({len(findings)})"),
        Table(("#", "Found", "Finding", "Location", "Severity", "Status"), tuple(
            (str(findings[f["id"]]), _day(f["created_at"], tz), ("Violation: " if f["is_violation"] else "")
             + f["description"], f["location"] or "—", label(f["severity"], "severity"),
             f["status"].capitalize()) for f in record["open_findings"]) or (("", "", "None", "", "", ""),),
            (0.4, 1.1, 4, 1.7, 1, 1)),
        Heading(f"Open corrective actions ({len(record['open_actions'])})"),
        Table(("Corrective action", "Kind", "Owner", "Deadline", "Status"), tuple(
            (a["description"], label(a["kind"], "action_kind"), a["owner_name"], _when(a["due_at"], tz),
             a["status"].capitalize()) for a in record["open_actions"]) or (("None", "", "", "", ""),),
            (3.4, 2.2, 1.6, 1.5, 1)),
        *_history_orders(record["orders"], profile, tz),
        *_history_missed(record["missed"], tz),
    ]
    return _document("Inspection History", p, profile, sha, blocks)


def _history_orders(orders: list[dict[str, Any]], profile: Profile, tz: ZoneInfo) -> list:
    """Every stop-work order of the permit, standing or lifted, with the clause it rests on."""
    rows = []
    for o in orders:
        clause = profile.cite(citation_purpose(o["inspection_type"]))
        status = (f"Lifted {_when(o['lifted_at'], tz)} by {o['lifted_by'] or '—'}: {o['lift_reason'] or ''}"
                  if o["lifted_at"] else "In effect" + ("" if o["acknowledged_at"] else ", not yet acknowledged"))
        rows.append((_when(o["issued_at"], tz), o["issued_by"] or "—", o["reason"]
                     + (f" ({o['findings']} finding(s) cited; {o['notices']} notice(s) of violation)"
                        if o["findings"] or o["notices"] else ""), clause or "—", status))
    return [Heading(f"Stop-work orders ({len(orders)})"),
            Table(("Issued", "By", "Reasons", "Under", "Status"), tuple(rows) or (("None", "", "", "", ""),),
                  (1.4, 1.3, 3.6, 1.3, 2.2))]


def _history_missed(late: list[dict[str, Any]], tz: ZoneInfo) -> list:
    """Every inspection the record owed and did not get on time (schedule/missed.py), made late or never."""
    if late and "problem" in late[0]:
        return [Heading("Inspections missed"), Paragraphs(f"Not worked out: {late[0]['problem']}")]
    return [Heading(f"Inspections missed ({len(late)})"),
            Table(("Inspection", "Required by", "Due by", "Made"), tuple(
                (m["inspection"], m["citation"], _when(_parsed(m["due_at"]), tz),
                 _when(_parsed(m["made_at"]), tz, "Never made")) for m in late) or (("None missed", "", "", ""),),
                  (3, 2, 2.2, 2.2))]


def _history_weather(i: dict[str, Any]) -> str:
    # The inspector's observation first, the station's values beside it (issues 31, 32); a record frozen before
    # the field existed has no such key.
    observed = f"Observed: {i['observed_weather']}; station: " if i.get("observed_weather") else ""
    return observed + _history_station_weather(i)


def _history_station_weather(i: dict[str, Any]) -> str:
    if i["weather_status"] == "pending" and i["gauge_precip_mm"] is None:
        return "Pending"
    parts = [i["conditions"]] if i["conditions"] else []
    if i["temperature_c"] is not None:
        parts.append(fahrenheit(i['temperature_c']))
    if i["gauge_precip_mm"] is not None:
        parts.append(f"{inches(i['gauge_precip_mm'])} (gauge)")
    elif i["precip_24h_mm"] is not None:
        parts.append(f"{inches(i['precip_24h_mm'])} ({i['precip_hours']} h)")
    return ", ".join(parts) or "—"


# The PDF section of each part of a report the registry names (inspection_types.Part); the controls and the punch
# list have sections of their own (the checklist's rows, `_punch_list`).
PART_SECTIONS = {"site_conditions": _site_conditions, "structures": _structures, "system_acceptance": _system_acceptance,
                 "om_facilities": _om_facilities}
