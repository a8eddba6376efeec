"""Make one example PDF of each document from the demo data, and PNG renders of their first pages.

Loads the demo (`flask demo load`, dated back from today) into a throw-away database and blob store, adds the
records each document needs, each signed or issued as the app does it, so every example is the frozen document
with its id and QR code: an erosion control report with photos on SWP-2026-014, a failed final inspection with
its notice of violation and stop-work order on SMP-2026-07 (Southborough), the certificate of completion of the
demo's completed permit and its first annual O&M certification, signed and reviewed, and SWP-2026-014's history.
Writes the PDFs beside this script and renders pages with `pdftoppm` (poppler-utils).

Run from the repository root: python docs/examples/make_examples.py
"""
from __future__ import annotations

import base64
import datetime as dt
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

UTC = dt.UTC
# What to render to PNG: (PDF name, pages).
RENDERS = {"inspection-report": (1, 2), "stop-work-order": (1,), "certificate-of-completion": (1,),
           "om-certification": (1,), "inspection-history": (1,)}
# Where the documents' QR codes and check links send a reader: a full address, as a town's server sets it.
PUBLIC_URL = "https://stormwater.example.org"


# The erosion control the example report lists on itself (a device-made id, as the form makes them).
FENCE_ID = "5f0c2b1e-8d4a-4c3e-9b7a-2a6d1e0f4c11"


def at(days_ago: int, time: str) -> dt.datetime:
    """A Longmeadow local time (EDT/EST) `days_ago` days before today, as aware UTC."""
    from inspect_app.types import LOCAL_TZ, utcnow

    day = utcnow().astimezone(LOCAL_TZ).date() - dt.timedelta(days=days_ago)
    return dt.datetime.fromisoformat(f"{day.isoformat()}T{time}").replace(tzinfo=LOCAL_TZ).astimezone(UTC)


def exif_time(moment: dt.datetime) -> str:
    """`moment` as a camera writes DateTimeOriginal: local time, no zone."""
    from inspect_app.types import LOCAL_TZ

    return moment.astimezone(LOCAL_TZ).strftime("%Y:%m:%d %H:%M:%S")


def site_photo(seed: int, taken: str) -> bytes:
    """A photo-like JPEG (sky, ground, a fence line) with EXIF DateTimeOriginal, like a tablet's camera."""
    width, height = 1600, 1200
    image = Image.new("RGB", (width, height), (150 + seed * 7 % 60, 185, 215))
    draw = ImageDraw.Draw(image)
    horizon = 430 + seed * 37 % 160
    draw.rectangle((0, horizon, width, height), fill=(120 + seed * 11 % 40, 98, 70))
    for x in range(0, width, 90):  # fence posts
        draw.rectangle((x + 20, horizon - 60, x + 34, horizon + 140), fill=(90, 70, 50))
    draw.rectangle((0, horizon + 40, width, horizon + 110), fill=(40, 40, 40))  # silt fence fabric
    draw.ellipse((900 - seed * 60, horizon + 250, 1400 - seed * 60, horizon + 520), fill=(95, 82, 60))
    image = image.filter(ImageFilter.GaussianBlur(2))
    exif = Image.Exif()
    exif.get_ifd(0x8769)[0x9003] = taken  # DateTimeOriginal, camera local time
    out = io.BytesIO()
    image.save(out, "JPEG", quality=80, exif=exif)
    return out.getvalue()


def signature() -> bytes:
    image = Image.new("RGBA", (420, 110), (0, 0, 0, 0))
    ImageDraw.Draw(image).line([(12, 80), (60, 22), (95, 88), (150, 30), (205, 84), (260, 40), (400, 52)],
                               fill=(10, 20, 110, 255), width=5, joint="curve")
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def seal(inspection, when: dt.datetime) -> None:
    """Submit a draft the way the inspections domain does: signed, submitted, its record hashed and audited (so
    its document is frozen when the transaction commits)."""
    from inspect_app.audit import services as audit
    from inspect_app.extensions import db
    from inspect_app.inspections import canonical, queries
    from inspect_app.permits.services import profile_of

    statement = canonical.certification_statement(profile_of(inspection.permit), queries.type_of(inspection))
    inspection.status, inspection.submitted_at, inspection.signed_at = "submitted", when, when
    inspection.certification_statement = statement
    db.session.flush()
    inspection.record_sha256 = canonical.record_hash(inspection)
    audit.record(db.session.get(type(inspection.inspector), inspection.inspector_id), "inspection.submit", inspection)


def build_records() -> dict:
    """The demo data plus the records the documents need, each signed or issued as the app does it; returns what
    to print."""
    from sqlalchemy import select

    from inspect_app.accounts.models import User
    from inspect_app.blobs.store import BlobStore
    from inspect_app.certifications import services as certifications
    from inspect_app.enforcement import services as enforcement
    from inspect_app.extensions import db
    from inspect_app.inspections.models import CorrectiveAction, Finding
    from inspect_app.inspections import queries
    from inspect_app.inspections.models import ChecklistAnswer, Inspection, InspectionNotice, PipeVideo
    from inspect_app.inspections.services import inspector_contact
    from inspect_app.weather.models import StormEvent
    from inspect_app.permits.models import Permit, StormwaterStructure
    from inspect_app.permits.services import profile_of
    from inspect_app.photos.services import store_photo
    from inspect_app.rules import corrective_action_due
    from flask import current_app

    def user(email: str) -> User:
        return db.session.scalar(select(User).where(User.email == email))

    def permit(number: str) -> Permit:
        return db.session.scalar(select(Permit).where(Permit.number == number))

    engineer, agent = user("engineer@example.org"), user("agent@longmeadow.example.org")
    store = BlobStore(current_app.config["BLOB_ROOT"])

    def report(p: Permit, kind: str, when: dt.datetime, **fields) -> Inspection:
        made = Inspection(permit_id=p.id, type=kind, status="draft", performed_at=when, latitude=p.latitude,
                          longitude=p.longitude, location_source="permit", inspector_id=engineer.id,
                          inspector_name=engineer.name, inspector_credentials=engineer.credentials,
                          inspector_title=engineer.title, inspector_organization=engineer.organization,
                          inspector_contact=inspector_contact(engineer), signer_name=engineer.name,
                          signer_credentials=engineer.credentials, signature_sha256=store.put_bytes(signature()),
                          details=fields.pop("details", {}), created_by_id=engineer.id, **fields)
        db.session.add(made)
        db.session.flush()
        return made

    # 1. An erosion control report on SWP-2026-014 after a 0.4 in storm two days ago: checklist, findings, photos.
    inspected = at(2, "09:30")
    weather = dict(weather_status="gauge", temperature_c=14.5, conditions="Light rain", wind_kmh=17.0,
                   wind_direction_deg=200.0, precip_24h_mm=9.4, precip_hours=24, station_id="74491",
                   station_name="Westover Air Reserve Base", station_distance_m=21400.0,
                   weather_sources="Meteostat hourly: NOAA ISD Lite observations",
                   weather_attribution="Weather data from Meteostat (meteostat.net), CC BY-NC 4.0",
                   weather_fetched_at=at(2, "11:02"), gauge_precip_mm=10.2)
    bliss = permit("SWP-2026-014")
    profile = profile_of(bliss)
    earlier = report(bliss, "erosion_control", at(9, "09:00"), evaluation="compliant", notice_given=True,
                     **weather | {"gauge_precip_mm": None, "weather_status": "complete", "conditions": "Fair",
                                  "temperature_c": 19.0, "weather_fetched_at": at(9, "10:02")})
    seal(earlier, at(9, "10:10"))
    notice = InspectionNotice(permit_id=bliss.id, inspection_type="erosion_control", planned_for=inspected,
                              given_at=at(3, "07:45"), given_by_id=engineer.id)
    db.session.add(notice)
    # The storm the inspection answers (CGP 2022 Part 4.2), as the station recorded it.
    storm = StormEvent(permit_id=bliss.id, day=at(3, "12:00").date(), depth_mm=10.2, station_id="74491",
                       started_at=at(3, "04:00"), reached_at=at(3, "13:00"), ended_at=at(3, "19:00"))
    db.session.add(storm)
    db.session.flush()
    inspection = report(bliss, "erosion_control", inspected, evaluation="violations", notice=notice,
                        trigger="storm_event", storm_event_id=storm.id, ended_at=at(2, "11:05"),
                        construction_phase="Mass grading and utilities",
                        notice_given=True, last_inspection_at=earlier.performed_at,
                        corrective_steps="Re-trench and backfill the silt fence along the east line within 7 days; "
                                         "sweep Bliss Road at the construction entrance by the close of the next "
                                         "business day; add inlet protection at CB-2.",
                        notes="Storm-event inspection within 24 hours of 0.40 in of rain (CGP 2022 Part 4.2).",
                        details={"controls": [{"id": FENCE_ID, "name": "Silt fence, east line"}]}, **weather)
    inspection.schedule_in_force = queries.schedule_in_force(bliss, inspection.performed_at)
    inspection.storms = queries.storms_of(inspection)
    # The CGP's point of discharge: the permit's outfall (inspections/checks.py).
    outfall = StormwaterStructure(permit_id=bliss.id, name="Outfall OF-1 to Longmeadow Brook", kind="outfall")
    db.session.add(outfall)
    db.session.flush()
    items = profile.inspection_type("erosion_control").checklist
    notes = {"controls_as_filed": ("no", "Silt fence down for 40 ft on the east line."),
             "construction_entrances": ("no", "Sediment tracked 60 ft onto Bliss Road."),
             "inlets_protected": ("no", "CB-2 has no inlet protection."),
             "dewatering_areas": ("na", "No dewatering on site this week."),
             "fueling_maintenance_areas": ("unsafe", "Crane lift over the fueling area during the inspection.")}
    inspection.answers = [ChecklistAnswer(item_key=i.key, subject_id="", answer=notes.get(i.key, ("yes", None))[0],
                                          note=notes.get(i.key, ("yes", None))[1]) for i in items if i.per == "site"]
    inspection.answers += [ChecklistAnswer(item_key="area_stabilization", subject_id=a.id, answer="yes",
                                           note="Disturbed, work ongoing") for a in bliss.areas]
    inspection.answers += [ChecklistAnswer(item_key=key, subject_id=FENCE_ID, answer=answer, note=note) for key, answer, note in (
        ("control_installed", "yes", None), ("control_maintained", "yes", None),
        ("control_effective", "no", "Undermined: sediment has passed the fence."))]
    findings = []
    for description, location, severity, action, kind in (
        ("Silt fence undermined for about 40 ft; sediment has passed the fence toward the abutter.",
         "East property line, station 2+40 to 2+80", "major", "Re-trench and backfill 40 ft of silt fence; "
         "remove the sediment from the abutter's side by hand", "significant_repair"),
        ("Sediment tracked onto Bliss Road from the construction entrance.", "Construction entrance", "minor",
         "Sweep Bliss Road; top-dress the stone entrance", "routine_maintenance"),
    ):
        finding = Finding(inspection_id=inspection.id, permit_id=bliss.id, description=description, location=location,
                          severity=severity, is_violation=True, citation="§380-11 C(3)(d)",
                          created_at=inspection.performed_at)
        db.session.add(finding)
        db.session.flush()
        db.session.add(CorrectiveAction(finding_id=finding.id, permit_id=bliss.id, kind=kind, description=action,
                                        owner_name="Site contractor", discovered_at=inspection.performed_at,
                                        due_at=corrective_action_due(kind, inspection.performed_at, profile)))
        findings.append(finding)
    captions = [("Undermined silt fence, looking north", findings[0]), ("Sediment past the fence at 2+60", findings[0]),
                ("Tracking at the construction entrance", findings[1]), ("Basin 1 footprint, stable", None),
                ("Stockpile covered and ringed with straw wattles", None)]
    for n, (caption, finding) in enumerate(captions):
        store_photo(engineer, bliss, io.BytesIO(site_photo(n, exif_time(inspected + dt.timedelta(minutes=5 + 4 * n)))),
                    caption=caption, inspection=inspection, finding=finding)
    at_outfall = store_photo(engineer, bliss, io.BytesIO(site_photo(7, exif_time(inspected + dt.timedelta(minutes=35)))),
                             caption="Point of discharge: Outfall OF-1 to Longmeadow Brook", inspection=inspection)
    # The discharge seen at the outfall, and the control found not effective tied to its corrective action.
    fence_action = db.session.scalar(select(CorrectiveAction).where(CorrectiveAction.finding_id == findings[0].id))
    inspection.details = inspection.details | {
        "discharge_points": [],
        "discharges": {outfall.id: {"now": "yes", "since_last": "yes", "signs": ["turbidity"],
                                    "description": "Slightly turbid flow at the headwall; no sediment deposits "
                                                   "below it.", "photos": [at_outfall.original_sha256]}},
        "fixes": {f"control_effective-{FENCE_ID}": {
            "repair": "Re-trench and backfill 40 ft of silt fence", "first_observed": inspected.date().isoformat(),
            "action_id": fence_action.id, "kind": None, "owner_name": None}},
    }
    seal(inspection, at(2, "11:05"))

    # 2. A failed final inspection on SMP-2026-07 (Southborough): its notice of violation and stop-work order,
    # issued as a failed final issues them (inspections.services), citing Southborough's own section.
    highland = permit("SMP-2026-07")
    town_agent = user("agent@southborough.example.org")
    final = report(highland, "final", at(3, "10:00"), evaluation="violations", notice_given=True,
                   corrective_steps="Rebuild the rain garden to the approved grades and soil mix; re-test infiltration.",
                   details={"storm": {"date": at(10, "12:00").date().isoformat(), "depth_mm": 19.05},
                            "certification": {"certified": False, "text": ""}}, **weather)
    garden = db.session.scalar(select(StormwaterStructure).where(StormwaterStructure.permit_id == highland.id,
                                                                 StormwaterStructure.kind == "bmp"))
    failed = Finding(inspection_id=final.id, permit_id=highland.id, is_violation=True, severity="critical",
                     description="Rain garden RG-1 still ponded 72 hours after the storm (design: 24 hours).",
                     location="Rain garden RG-1", citation="§9.6", structure_id=garden.id,
                     created_at=final.performed_at)
    db.session.add(failed)
    for pipe in db.session.scalars(select(StormwaterStructure).where(StormwaterStructure.permit_id == highland.id,
                                                                     StormwaterStructure.kind == "pipe")):
        db.session.add(PipeVideo(inspection_id=final.id, structure_id=pipe.id, recorded_on=at(5, "12:00").date(),
                                 reference="CCTV survey report 2026-117"))
    seal(final, at(3, "11:20"))
    clause = profile_of(highland).cite("stop_work_final")
    order = enforcement.issue_stop_work(
        town_agent, highland, "The final inspection found that the stormwater management system does not comply "
        f"with the approved plan ({clause}).", [failed], final,
        notice_text="Rain garden RG-1 does not drain within the design time. Corrective actions required: excavate "
                    "the compacted bed, replace the soil mix as specified on the approved plan, and demonstrate "
                    "drawdown within 24 hours.")

    # 3. The demo's completed permit: its certificate of completion (issued a year ago, frozen then) and its first
    # annual O&M certification, signed by the owner and accepted by the agent as the pages do it.
    done = db.session.scalar(select(Permit).where(Permit.status == "completed"))
    owner = user("owner@example.org")
    certification = certifications.certify(owner, done, without_entries_confirmed=False,
                                           signature_png="data:image/png;base64,"
                                                         + base64.b64encode(signature()).decode())
    certifications.review(agent, certification, decision="accepted", note="Log complete; sump cleaned on schedule.")
    db.session.commit()
    return {"inspection-report": inspection, "stop-work-order": order, "certificate-of-completion": done,
            "om-certification": certification, "inspection-history": bliss}


def main() -> None:
    """Make the examples in a temporary instance; nothing of the real instance is touched."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("SECRET_KEY", "examples-only")
        from inspect_app import create_app
        from inspect_app.documents import services
        from inspect_app.extensions import db

        app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp}/examples.sqlite3",
                          "BLOB_ROOT": f"{tmp}/blobs", "SERVER_NAME": "localhost", "PUBLIC_URL": PUBLIC_URL,
                          "WEATHER_ENDPOINT": "http://127.0.0.1:9"})
        with app.app_context():
            db.create_all()
            result = app.test_cli_runner().invoke(args=["demo", "load"])
            if result.exit_code != 0:
                raise SystemExit(f"flask demo load failed:\n{result.output}")
            made = build_records()
            pdfs = {
                "inspection-report": services.inspection_report_pdf(made["inspection-report"]),
                "stop-work-order": services.stop_work_order_pdf(made["stop-work-order"]),
                "certificate-of-completion": services.certificate_pdf(made["certificate-of-completion"]),
                "om-certification": services.om_certification_pdf(made["om-certification"]),
                "inspection-history": services.history_pdf(made["inspection-history"]),
            }
            db.session.commit()  # the history, frozen as it is made
    pdftoppm = shutil.which("pdftoppm")
    for name, pdf in pdfs.items():
        (HERE / f"{name}.pdf").write_bytes(pdf)
        print(f"{name}.pdf: {len(pdf):,} bytes")
        if pdftoppm is None:
            continue
        for page in RENDERS[name]:
            subprocess.run([pdftoppm, "-png", "-r", "70", "-f", str(page), "-l", str(page), "-singlefile",
                            str(HERE / f"{name}.pdf"), str(HERE / f"{name}-page{page}")], check=True)
    if pdftoppm is None:
        print("pdftoppm (poppler-utils) not found: PDFs written, no PNG renders")


if __name__ == "__main__":
    main()
