"""The columns of the files a town imports and exports: one declaration per column, read by the importer, the
templates, the export and its README, so a column's name and meaning are written once.

Headers are matched loosely (`header_key`): case, spaces, hyphens and a few words a permit tracker uses
("Permit No.", "Lat", "Issue Date") do not matter. Export-only columns (`EXPORT_ONLY`) are written by the
export for the record's sake and ignored when the file is imported again.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One column: its header, what it holds (for the template and the README), whether a row needs it, and
    an example value for the template."""

    name: str
    meaning: str
    required: bool = False
    example: str = ""


def _columns(*columns: Column) -> dict[str, Column]:
    return {column.name: column for column in columns}


PERMIT_COLUMNS = _columns(
    Column("town", "The town's profile key (longmeadow, southborough) or its name. May be left empty when "
                   "the file is imported for one town (a town's admin, or `--town`).", example="longmeadow"),
    Column("permit_number", "The permit's number; a permit already in the town with this number is updated, "
                            "never made twice.", required=True, example="LM-SWM-2024-017"),
    Column("site_address", "The site's street address.", required=True, example="123 Maple Road, Longmeadow, MA"),
    Column("parcel_id", "The assessor's parcel (map and lot).", example="12-34-5"),
    Column("latitude", "The site's latitude in decimal degrees (WGS 84); within Massachusetts.", required=True,
           example="42.0501"),
    Column("longitude", "The site's longitude in decimal degrees (west is negative); within Massachusetts.",
           required=True, example="-72.5823"),
    Column("owner_name", "The owner of record of the site (in Longmeadow the permittee, §380-10 B(1)).", required=True,
           example="Maple Road LLC"),
    Column("owner_email", "The email of the owner's account (a permittee), which then sees the permit. The "
                          "account must exist: import the users first.", example="owner@example.org"),
    Column("applicant_name", "The applicant.", required=True, example="Maple Road LLC"),
    Column("applicant_email", "Where reports are sent after each inspection.", example="applicant@example.org"),
    Column("engineer_email", "The project design engineer(s): the email of an inspector's account, several "
                             "separated by ';'. The account must exist: import the users first.",
           example="engineer@example.org"),
    Column("erosion_control_inspector_email", "The erosion-control inspector(s), as engineer_email.",
           example=""),
    Column("issued_on", "The day the permit was issued: YYYY-MM-DD, M/D/YYYY, or a spreadsheet date.",
           required=True, example="2024-04-01"),
    Column("decision_filed_on", "The day the decision was filed with the Town Clerk (where permits lapse, "
                                "Southborough §9.7, the lapse counts from it).", example=""),
    Column("construction_started_on", "The day construction started; the permit is then active.", example=""),
    Column("construction_started_time", "The time construction started, HH:MM on the town's clock, where it is known "
                                        "(§380-2: the first land-disturbing activity; without it the whole day counts "
                                        "as before construction). Needs the day.", example=""),
    Column("disturbed_acres", "The disturbed area in acres.", required=True, example="2.4"),
    Column("redevelopment", "yes for a redevelopment, no (or empty) for new development.", example="no"),
    Column("cgp_schedule", "The CGP inspection schedule: every_7_days, or every_14_days_and_storm (every 14 days "
                           "and within 24 h of a 0.25 in storm).", required=True, example="every_7_days"),
    Column("sensitive_waters", "yes if the site discharges to sensitive waters (impaired for sediment or "
                               "nutrients, Tier 2/2.5/3, or ORW); no or empty otherwise.", example="no"),
    Column("sensitive_waters_note", "Which water makes the site sensitive, and why (needed with yes).", example=""),
    Column("npdes_id", "The permit's NPDES ID under EPA's Construction General Permit.", example=""),
    Column("surety_amount", "The surety in US dollars.", example=""),
    Column("extension_requested_on", "The day an extension was applied for.", example=""),
    Column("extension_granted_on", "The day the extension was granted.", example=""),
    Column("start_extended_to", "The new start deadline the extension set (Longmeadow §380-10 K).", example=""),
    Column("structures", "The permit's stormwater structures as a list: 'name (kind)' separated by ';', e.g. "
                         "'IS-1 (infiltration); CB-2 (catch basin)'. Or give them in a sheet (or file) of their "
                         "own: see structures.", example="IS-1 (infiltration); CB-2 (catch basin)"),
)

STRUCTURE_COLUMNS = _columns(
    Column("town", "As in the permits file: the permit's town, may be empty for one town.", example="longmeadow"),
    Column("permit_number", "The permit the structure belongs to: in the permits file or already recorded.",
           required=True, example="LM-SWM-2024-017"),
    Column("name", "The structure's name as on the plan; a structure of the permit with this name is updated.",
           required=True, example="IS-1"),
    Column("kind", "bmp, pipe, infiltration, basin, catch_basin, outfall or other.", required=True,
           example="infiltration"),
    Column("underground", "yes (or empty) if it is buried and needs a pre-bury inspection; no otherwise.",
           example="yes"),
    Column("design_size", "Its design size.", example="40 ft x 12 ft"),
    Column("design_invert", "Its design invert.", example="El. 182.5"),
    Column("material", "Its material.", example="HDPE chambers"),
    Column("groundwater_separation_ft", "Separation to groundwater, in feet.", example="2.5"),
    Column("maintenance_task", "The O&M plan's task for it (§380-14 C(2)).", example="Inspect and remove sediment"),
    Column("maintenance_interval_months", "How often the task is done, in months.", example="12"),
    Column("latitude", "Its point on the site map (decimal degrees), with longitude, or neither.", example=""),
    Column("longitude", "Its point's longitude, with latitude, or neither.", example=""),
)

USER_COLUMNS = _columns(
    Column("email", "The person's email: their sign-in, and where the link to set a password is sent. An "
                    "account with this email is updated, never made twice.", required=True,
           example="engineer@example.org"),
    Column("name", "Their name, as printed on reports.", required=True, example="Dana Engineer"),
    Column("role", "inspector, agent, permittee or admin.", required=True, example="inspector"),
    Column("town", "The town an agent or admin works for (profile key or name); empty for inspectors and "
                   "permittees, who belong to no town.", example=""),
    Column("pe_number", "Their Massachusetts PE licence number, printed on reports.", example="51234"),
    Column("certification", "Their erosion-control certification, e.g. CPESC No. 1234.", example="CPESC No. 1234"),
    Column("title", "Their job title, printed on reports.", example="Project Engineer"),
    Column("organization", "Their company, printed on reports.", example="Engineering Co."),
    Column("phone", "Their phone number.", example="413-555-0100"),
)

# Written by the export for the record's sake; an import of the export reads past them.
EXPORT_ONLY = _columns(
    Column("id", "The record's id in the app that exported it."),
    Column("status", "The permit's status when exported (issued, active, stop_work, final_submissions, "
                     "completed, lapsed); an import sets it from the facts, not from this column."),
    Column("enabled", "Whether the account could sign in when exported."),
    Column("created_at", "When the record was made (UTC)."),
)

# Words a permit tracker or a person writes for a column, after `header_key`.
ALIASES = {
    "permit": "permit_number", "permit_no": "permit_number", "permit_num": "permit_number", "number": "permit_number",
    "address": "site_address", "site": "site_address", "parcel": "parcel_id", "map_lot": "parcel_id",
    "lat": "latitude", "lon": "longitude", "lng": "longitude", "long": "longitude",
    "owner": "owner_name", "applicant": "applicant_name", "engineer": "engineer_email",
    "issued": "issued_on", "issue_date": "issued_on", "date_issued": "issued_on",
    "decision_filed": "decision_filed_on", "acres": "disturbed_acres", "schedule": "cgp_schedule",
    "structure": "name", "structure_name": "name", "e_mail": "email", "email_address": "email",
}


def header_key(text: str) -> str:
    """A header as compared: lower case, runs of other characters as one '_' ("Permit No." → "permit_no")."""
    key = re.sub(r"[^a-z0-9]+", "_", text.strip().lower()).strip("_")
    return ALIASES.get(key, key)
