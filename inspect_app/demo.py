"""Demo data for `make run`: both towns, permits at real street locations, one user per role."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import select

from inspect_app.accounts.models import User
from inspect_app.accounts.services import create_user
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.types import LOCAL_TZ

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

# Real street addresses; coordinates are near each address.
DEMO_PERMITS = [
    {"town": "longmeadow", "number": "SWP-2026-014", "site_address": "535 Bliss Road, Longmeadow, MA",
     "latitude": 42.0431, "longitude": -72.5525, "disturbed_acres": Decimal("2.400"),
     "cgp_schedule": "every_14_days_and_storm", "issued_on": dt.date(2026, 5, 4), "npdes_id": "MAR12A001",
     "construction_started_on": dt.date(2026, 6, 1), "surety_amount": Decimal("25000.00"),
     "areas": [("Lot 1 building pad", "0.600"), ("Access drive", "0.350"), ("Basin 1 footprint", "0.400")],
     "structures": [("Infiltration system IS-1", "infiltration"), ("12-inch HDPE run P-1", "pipe"),
                    ("Detention basin DB-1", "basin")]},
    {"town": "longmeadow", "number": "SWP-2026-021", "site_address": "1085 Longmeadow Street, Longmeadow, MA",
     "latitude": 42.0336, "longitude": -72.5848, "disturbed_acres": Decimal("1.150"),
     "cgp_schedule": "every_7_days", "sensitive_waters": True,
     "sensitive_waters_note": "Discharges toward the Longmeadow Brook (impaired)",
     "issued_on": dt.date(2026, 8, 17), "construction_started_on": dt.date(2026, 9, 8),
     "areas": [("Parking expansion", "0.800")], "structures": [("Catch basin CB-3", "catch_basin")]},
    {"town": "longmeadow", "number": "SWP-2026-030", "site_address": "95 Grassy Gutter Road, Longmeadow, MA",
     "latitude": 42.0502, "longitude": -72.5656, "disturbed_acres": Decimal("3.000"),
     "cgp_schedule": "every_7_days", "issued_on": dt.date(2026, 10, 26), "areas": [], "structures": []},
    {"town": "southborough", "number": "SMP-2026-07", "site_address": "21 Highland Street, Southborough, MA",
     "latitude": 42.3033, "longitude": -71.5178, "disturbed_acres": Decimal("1.750"),
     "cgp_schedule": "every_14_days_and_storm", "issued_on": dt.date(2026, 4, 14),
     "construction_started_on": dt.date(2026, 5, 18),
     "areas": [("House lot A", "0.500"), ("House lot B", "0.500")],
     "structures": [("Rain garden RG-1", "bmp"), ("8-inch PVC run P-2", "pipe")]},
    {"town": "southborough", "number": "SMP-2026-11", "site_address": "53 Parkerville Road, Southborough, MA",
     "latitude": 42.2884, "longitude": -71.5305, "disturbed_acres": Decimal("1.050"),
     "cgp_schedule": "every_7_days", "issued_on": dt.date(2026, 9, 2), "areas": [], "structures": []},
]


def load_demo() -> list[tuple[str, str]]:
    """Add the demo records unless they are there; returns the (email, role) of users it made."""
    if db.session.scalar(select(User).where(User.email == DEMO_USERS[0]["email"])):
        return []
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
        permit = permits.create_permit(
            None, jurisdiction_id=towns[spec.pop("town")].id, owner_id=owner.id, owner_name=owner.name,
            applicant_name=owner.name, applicant_email=owner.email, **spec)
        permits.assign(None, permit, engineer, "design_engineer")
        started = spec.get("construction_started_on")
        for name, acres in areas:
            since = dt.datetime.combine(started, dt.time(8), LOCAL_TZ) if started else None
            permits.add_area(None, permit, name, Decimal(acres), since=since)
        for name, kind in structures:
            permits.add_structure(None, permit, name=name, kind=kind, is_underground=kind != "bmp")
    return [(u.email, u.role) for u in made.values()]
