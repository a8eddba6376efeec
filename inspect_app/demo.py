"""Demo data for `make run`: both towns, permits at real street locations dated back from today, one of them
completed with its O&M certification due, and one user per role."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import select

from inspect_app.blobs import files
from inspect_app.accounts.models import User
from inspect_app.accounts.services import create_user
from inspect_app.audit import services as audit
from inspect_app.certifications.models import MaintenanceLogEntry, OMPlan, ResponsibleParty
from inspect_app.completion.models import CertificateOfCompletion, FinalSubmission
from inspect_app.extensions import db
from inspect_app.inspections import canonical, queries
from inspect_app.inspections.models import ChecklistAnswer, Inspection
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.rules.calendar import add_months
from inspect_app.schedule import missed
from inspect_app.types import LOCAL_TZ, utcnow

DEMO_PASSWORD = "demo-password"

DEMO_USERS = [
    {"email": "engineer@example.org", "name": "Dana Whitfield", "role": "inspector",
     "pe_number": "48213", "certification": "CPESC No. 7702", "title": "Project engineer",
     "organization": "Whitfield Civil Engineering", "phone": "413-555-0187"},
    {"email": "agent@longmeadow.example.org", "name": "Sam Okafor", "role": "agent", "town": "longmeadow"},
    {"email": "agent@southborough.example.org", "name": "Rita Chen", "role": "agent", "town": "southborough"},
    {"email": "owner@example.org", "name": "Maple Ridge Homes LLC", "role": "permittee"},
    {"email": "admin@example.org", "name": "Town Administrator", "role": "admin"},
]

# Real street addresses; coordinates are near each address. Dates are days before the day the demo is loaded
# (`issued`, `started`), so its permits are always current: work under way, storms to inspect after, a permit
# not started yet. The numbers are labels, the same whenever it is loaded.
DEMO_PERMITS = [
    {"town": "longmeadow", "number": "SWP-2026-014", "site_address": "535 Bliss Road, Longmeadow, MA",
     "latitude": 42.0431, "longitude": -72.5525, "disturbed_acres": Decimal("2.400"),
     "cgp_schedule": "every_14_days_and_storm", "issued": 60, "npdes_id": "MAR12A001",
     "started": 45, "surety_amount": Decimal("25000.00"),
     "areas": [("Lot 1 building pad", "0.600"), ("Access drive", "0.350"), ("Basin 1 footprint", "0.400")],
     "structures": [("Infiltration system IS-1", "infiltration"), ("12-inch HDPE run P-1", "pipe"),
                    ("Detention basin DB-1", "basin")]},
    {"town": "longmeadow", "number": "SWP-2026-021", "site_address": "1085 Longmeadow Street, Longmeadow, MA",
     "latitude": 42.0336, "longitude": -72.5848, "disturbed_acres": Decimal("1.150"),
     "cgp_schedule": "every_7_days", "sensitive_waters": True,
     "sensitive_waters_note": "Discharges toward the Longmeadow Brook (impaired)",
     "issued": 40, "started": 20,
     "areas": [("Parking expansion", "0.800")], "structures": [("Catch basin CB-3", "catch_basin")]},
    {"town": "longmeadow", "number": "SWP-2026-030", "site_address": "95 Grassy Gutter Road, Longmeadow, MA",
     "latitude": 42.0502, "longitude": -72.5656, "disturbed_acres": Decimal("3.000"),
     "cgp_schedule": "every_7_days", "issued": 5, "areas": [], "structures": []},
    {"town": "southborough", "number": "SMP-2026-07", "site_address": "21 Highland Street, Southborough, MA",
     "latitude": 42.3033, "longitude": -71.5178, "disturbed_acres": Decimal("1.750"),
     "cgp_schedule": "every_14_days_and_storm", "issued": 80, "started": 60,
     "areas": [("House lot A", "0.500"), ("House lot B", "0.500")],
     "structures": [("Rain garden RG-1", "bmp"), ("8-inch PVC run P-2", "pipe")]},
    {"town": "southborough", "number": "SMP-2026-11", "site_address": "53 Parkerville Road, Southborough, MA",
     "latitude": 42.2884, "longitude": -71.5305, "disturbed_acres": Decimal("1.050"),
     "cgp_schedule": "every_7_days", "issued": 15, "areas": [], "structures": []},
]

# A permit completed a year and three weeks ago: its first annual O&M certification (§380-14 C(2)(l)) is due, so
# the permittee can try it. Its record is whole: every required inspection, the final submissions, the certificate.
COMPLETED_PERMIT = {
    "town": "longmeadow", "number": "SWP-2025-009", "site_address": "360 Williams Street, Longmeadow, MA",
    "latitude": 42.0489, "longitude": -72.5791, "disturbed_acres": Decimal("1.200"),
    "cgp_schedule": "every_14_days_and_storm", "registry_reference": "Book 24876, Page 201",
    "areas": [("Parking lot", "0.900")],
    # (name, kind, underground, maintenance task, every N months)
    "structures": [("Detention basin DB-7", "basin", False, "Remove sediment from the forebay", 6),
                   ("Catch basin CB-1", "catch_basin", True, "Clean out the sump", 12)],
}
# The smallest PDF a reader opens: what the demo files as its final O&M plan and as-built drawings.
DEMO_PDF = (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
            b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
            b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> endobj\n"
            b"trailer << /Root 1 0 R >>\n%%EOF\n")


def load_demo(today: dt.date | None = None) -> list[tuple[str, str]]:
    """Add the demo records unless they are there, dated back from `today` (default: today in the towns);
    returns the (email, role) of users it made."""
    if db.session.scalar(select(User).where(User.email == DEMO_USERS[0]["email"])):
        return []
    today = today or utcnow().astimezone(LOCAL_TZ).date()
    towns = {j.profile_key: j for j in permits.ensure_jurisdictions()}
    made: dict[str, User] = {}
    for spec in DEMO_USERS:
        spec = dict(spec)
        town = spec.pop("town", None)
        made[spec["email"]] = create_user(password=DEMO_PASSWORD, jurisdiction=towns.get(town), **spec)
    engineer, owner = made["engineer@example.org"], made["owner@example.org"]
    for spec in DEMO_PERMITS:
        spec = dict(spec)
        areas, structures = spec.pop("areas"), spec.pop("structures")
        issued, started = spec.pop("issued"), spec.pop("started", None)
        started = today - dt.timedelta(days=started) if started is not None else None
        permit = permits.create_permit(
            None, jurisdiction_id=towns[spec.pop("town")].id, owner_id=owner.id, owner_name=owner.name,
            applicant_name=owner.name, applicant_email=owner.email, issued_on=today - dt.timedelta(days=issued),
            construction_started_on=started, **spec)
        permits.assign(None, permit, engineer, "design_engineer")
        for name, acres in areas:
            since = dt.datetime.combine(started, dt.time(8), LOCAL_TZ) if started else None
            permits.add_area(None, permit, name, Decimal(acres), since=since)
        for name, kind in structures:
            permits.add_structure(None, permit, name=name, kind=kind, is_underground=kind != "bmp")
    _completed_permit(towns["longmeadow"], engineer, owner, made["agent@longmeadow.example.org"], today)
    return [(u.email, u.role) for u in made.values()]


def _completed_permit(town, engineer: User, owner: User, agent: User, today: dt.date) -> Permit:
    """COMPLETED_PERMIT with its whole record, each step audited as the app records it: the initial site
    inspection, the controls before construction and every 12 days after, the pre-bury inspection of its catch
    basin, the walk-through and the final; the three final submissions accepted; the certificate of completion
    issued 12 months and 21 days ago; the O&M plan recorded, the owner bound to it, the maintenance log kept."""
    spec = COMPLETED_PERMIT
    completed = add_months(today, -12) - dt.timedelta(days=21)
    started = completed - dt.timedelta(days=60)

    def at(day: dt.date, hour: int = 10) -> dt.datetime:
        return dt.datetime.combine(day, dt.time(hour), LOCAL_TZ).astimezone(dt.UTC)

    permit = permits.create_permit(
        None, jurisdiction_id=town.id, number=spec["number"], site_address=spec["site_address"],
        latitude=spec["latitude"], longitude=spec["longitude"], disturbed_acres=spec["disturbed_acres"],
        cgp_schedule=spec["cgp_schedule"], owner_id=owner.id, owner_name=owner.name, applicant_name=owner.name,
        applicant_email=owner.email, issued_on=started - dt.timedelta(days=45), construction_started_on=started)
    permits.assign(None, permit, engineer, "design_engineer")
    for name, acres in spec["areas"]:
        area = permits.add_area(None, permit, name, Decimal(acres), since=at(started, 8))
        permits.change_area_status(None, area, "stabilized", at(completed - dt.timedelta(days=14)))
    structures = {}
    for name, kind, underground, task, months in spec["structures"]:
        structures[name] = permits.add_structure(None, permit, name=name, kind=kind, is_underground=underground,
                                                 maintenance_task=task, maintenance_interval_months=months)
    db.session.flush()
    profile = permits.profile_of(permit)
    catch_basin = structures["Catch basin CB-1"]
    made = [("initial", started - dt.timedelta(days=50), {}),
            ("erosion_control", started - dt.timedelta(days=1), {}),
            *(("erosion_control", started + dt.timedelta(days=days), {}) for days in (12, 24, 36, 48, 58)),
            ("pre_bury", started + dt.timedelta(days=20),
             {"structures": {catch_basin.id: {"covered": True, "as_designed": "yes", "size": "4 ft precast, 6 ft deep",
                                              "invert": "El. 181.4", "material": "Precast concrete"}}}),
            ("walk_through", completed - dt.timedelta(days=12), {}),
            ("final", completed - dt.timedelta(days=6),
             {"storm": {"date": (completed - dt.timedelta(days=9)).isoformat(), "depth_mm": 21.6},
              "certification": {"certified": True, "text": "I find the stormwater management system properly "
                                "installed and functioning (§380-16 C(4)(e)[3])."}})]
    reports = {}
    for kind, day, details in sorted(made, key=lambda report: report[1]):  # in time, each naming the one before
        # §380-16 C(4)(c): the catch basin counts as inspected before backfill once the pre-bury report answers it.
        answers = [ChecklistAnswer(item_key=item.key, subject_id=catch_basin.id, answer="yes")
                   for item in profile.inspection_type(kind).checklist if item.per == "structure"]
        reports[kind] = _submitted_report(permit, profile, engineer, kind, at(day), details,
                                          answers if kind == "pre_bury" else [])
    for kind, fields in (("om_plan", {"registry_reference": spec["registry_reference"]}),
                         ("as_built", {"pe_certified": True}), ("final_report", {"inspection_id": reports["final"].id})):
        if kind != "final_report":
            fields["blob_sha256"] = files.store_file(DEMO_PDF, "application/pdf")
        submission = FinalSubmission(permit_id=permit.id, kind=kind, submitted_by_id=engineer.id,
                                     submitted_at=at(completed - dt.timedelta(days=4)), status="pending", **fields)
        db.session.add(submission)
        audit.record(engineer, "final_submission.submit", submission)
        before = audit.snapshot(submission)
        submission.status, submission.reviewed_by_id = "accepted", agent.id
        submission.reviewed_at = at(completed - dt.timedelta(days=2), 14)
        audit.record(agent, "final_submission.review", submission, before)
    plan = OMPlan(permit_id=permit.id, registry_reference=spec["registry_reference"],
                  recorded_on=completed - dt.timedelta(days=3))
    db.session.add(plan)
    audit.record(agent, "om_plan.update", plan)
    permits.change_status(agent, permit, "final_submissions")
    permits.change_status(agent, permit, "completed", by_its_act=True)  # its certificate follows
    before = audit.snapshot(permit)
    permit.completed_on = completed
    audit.record(agent, "permit.complete", permit, before)
    issued = at(completed, 15)
    certificate = CertificateOfCompletion(
        permit_id=permit.id, issued_by_id=agent.id, issued_at=issued,
        contents={"waived": [], "missed": [m.as_record() for m in missed.missed_inspections(permit, issued)]})
    db.session.add(certificate)
    audit.record(agent, "certificate.issue", certificate)
    party = ResponsibleParty(permit_id=permit.id, user_id=owner.id, name=owner.name, role="owner", email=owner.email,
                             address=spec["site_address"], starts_on=completed)
    db.session.add(party)
    audit.record(agent, "responsible_party.create", party)
    for days, structure, kind, description in (
            (40, "Catch basin CB-1", "inspection", "Sump about one-third full; outlet clear"),
            (95, "Detention basin DB-7", "disposal", "Removed the sediment from the forebay"),
            (200, None, "repair", "Reseeded the eroded slope by the parking lot")):
        entry = MaintenanceLogEntry(permit_id=permit.id, structure_id=structures[structure].id if structure else None,
                                    kind=kind, performed_on=completed + dt.timedelta(days=days), description=description,
                                    performed_by=owner.name, created_by_id=owner.id,
                                    **({"material_type": "Sediment, 1 cubic yard",
                                        "disposal_location": "Longmeadow DPW yard, Dwight Road"}
                                       if kind == "disposal" else {}))
        db.session.add(entry)
        audit.record(owner, "maintenance_log.create", entry)
    return permit


def _submitted_report(permit: Permit, profile, engineer: User, kind: str, performed: dt.datetime,
                      details: dict, answers: list[ChecklistAnswer]) -> Inspection:
    """A report of `kind` the engineer signed and submitted an hour after the inspection, sealed as submit does."""
    inspection = Inspection(
        permit_id=permit.id, type=kind, status="submitted", performed_at=performed,
        last_inspection_at=queries.last_inspection_before(permit, performed),  # (d), of the reports made before
        ended_at=performed + dt.timedelta(minutes=45), inspector_id=engineer.id, inspector_name=engineer.name,
        inspector_credentials=engineer.credentials, inspector_title=engineer.title,
        inspector_organization=engineer.organization, latitude=permit.latitude, longitude=permit.longitude,
        location_source="permit", weather_status="complete", conditions="Fair", temperature_c=17.0,
        precip_24h_mm=0.0, precip_hours=24, evaluation="compliant", notice_given=True, details=details,
        signer_name=engineer.name, signer_credentials=engineer.credentials, created_by_id=engineer.id,
        submitted_at=performed + dt.timedelta(hours=1), signed_at=performed + dt.timedelta(hours=1),
        certification_statement=canonical.certification_statement(profile, profile.inspection_type(kind)))
    db.session.add(inspection)
    db.session.flush()
    # Every item of its checklist answered, as a report is submitted: "yes" unless given (a correction of it then
    # starts from a whole report, not an empty checklist).
    given = {(a.item_key, a.subject_id) for a in answers}
    inspection.answers = answers + [ChecklistAnswer(item_key=item.key, subject_id=subject.id, answer="yes")
                                    for item, found in queries.checklist(inspection, details) for subject in found
                                    if (item.key, subject.id) not in given]
    db.session.flush()
    canonical.seal(inspection)
    audit.record(engineer, "inspection.submit", inspection)
    return inspection
