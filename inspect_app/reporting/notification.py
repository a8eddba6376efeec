"""The submitted report sent to the applicant and the authority (§380-16 C(4)(f)), its PDF attached.

Called by the submit service (`submission.submit_report`, the report form's and a device's) after the report is
filed, in the same transaction, so the message is stored exactly once, with the submission or not at all; and by
the weather backfill (inspections/weather.py) once the weather a report was sent without is filled in.
"""
from __future__ import annotations

from inspect_app import units
from inspect_app.documents.services import FREEZE_ON, inspection_report_pdf
from inspect_app.inspections.models import Inspection
from inspect_app.inspections.weather import weather_filled
from inspect_app.extensions import db
from inspect_app.inspections.queries import amended_by_another, authority_addresses, type_of, weather_pending
from inspect_app.mail import services as mail
from inspect_app.permits.services import profile_of
from inspect_app.profiles.schema import Profile
from inspect_app.rules import short_citation
from inspect_app.rules.trace import implements
from inspect_app.templating import local_time
from inspect_app.types import local


def send_report(inspection: Inspection, completed: bool = False) -> None:
    """§380-16 C(4)(f): the report goes to the applicant and the authority, its PDF attached; again, `completed`,
    once the weather it was sent without is filled in."""
    # Named by the town's day, as the subject and the download are (an evening report had the next day's date).
    # Its version frozen for what made it: the weather the server filled in, not a second signing.
    occasion = FREEZE_ON["inspection.reseal" if completed else "inspection.submit"][1]
    pdf = mail.Attachment(f"inspection-{inspection.permit.number}-{local(inspection.performed_at):%Y%m%d}.pdf",
                          inspection_report_pdf(inspection, occasion))
    mail.send([inspection.permit.applicant_email or ""] + authority_addresses(inspection.permit),
              f"Inspection report{' (weather filled in)' if completed else ''}: permit {inspection.permit.number}, "
              f"{type_of(inspection).name}, {local_time(inspection.performed_at)}",
              (COMPLETED if completed else "") + report_text(inspection), [pdf],
              permit_id=inspection.permit_id)


COMPLETED = ("This report was sent when it was signed, with the weather at the time still to come from the weather "
             "station. Here it is again, the weather filled in by the server; nothing else in it changed.\n\n")


def _place(inspection: Inspection) -> str:
    """Where, as the PDF says it: the site's address, and the point recorded (a report made before points were
    recorded has none)."""
    place = inspection.permit.site_address
    if inspection.latitude is not None and inspection.longitude is not None:
        place += f" ({inspection.latitude:.5f}, {inspection.longitude:.5f}, {inspection.location_source})"
    return place


def _amends(inspection: Inspection) -> str:
    """What an amendment corrects, by the original's times (not its bare id), and who made it where that is not
    the report's inspector (SPEC *Signatures*: "An amendment by another person says so everywhere")."""
    if inspection.amends_id is None:
        return ""
    original = db.session.get(Inspection, inspection.amends_id)
    what = (f"the report of the inspection made {local_time(original.performed_at)}, submitted "
            f"{local_time(original.submitted_at)}" if original is not None else f"report {inspection.amends_id}")
    another = amended_by_another(inspection)
    return (f"This report corrects {what}; the original stays in the record unchanged."
            + (f" It is an {another}." if another else ""))


@weather_filled.connect
def _send_completed(inspection: Inspection, **_) -> None:
    send_report(inspection, completed=True)


def report_text(inspection: Inspection) -> str:
    """The report as plain text for email: every item (a)-(h) of §380-16 C(4)(f)[1], then the rest."""
    permit, kind = inspection.permit, type_of(inspection)
    precip = inspection.precipitation_mm
    weather = ("pending (filled in by the server when the station reports)" if weather_pending(inspection)
               else f"{inspection.conditions or '—'}, {units.fahrenheit(inspection.temperature_c)}")
    if inspection.observed_weather:  # the inspector's observation, the station's values beside it (issues 31, 32)
        weather = f"observed by the inspector: {inspection.observed_weather}; station: {weather}"
    lines = [
        f"Inspection report, permit {permit.number}, {permit.site_address} ({permit.jurisdiction.name})",
        _amends(inspection),
        f"(a) Date and location: {local_time(inspection.performed_at)}; {_place(inspection)}",
        f"(b) Inspector: {inspection.inspector_name}, {inspection.inspector_credentials}",
        f"(c) Type: {kind.name} ({kind.citation})",
        "(d) Date of last inspection: "
        + (local_time(inspection.last_inspection_at) if inspection.last_inspection_at else "none before this one"),
        f"(e) Weather: {weather}",
        "(f) Precipitation in the previous 24 hours: "
        + ("pending" if precip is None else units.inches(precip))
        + (", on-site rain gauge" if inspection.gauge_precip_mm is not None else ""),
        f"(g) Evaluation: {'in compliance' if inspection.evaluation == 'compliant' else 'violations'}",
        f"(h) Steps to correct violations: {inspection.corrective_steps or '—'}",
        "Advance notice: " + _notice_line(inspection, profile_of(permit)),
    ]
    if inspection.findings:
        lines += ["", "Findings:"] + [f"- {'VIOLATION: ' if f.is_violation else ''}{f.description}"
                                      + (f" ({f.location})" if f.location else "") for f in inspection.findings]
    signed = f"Signed: {inspection.signer_name}, {inspection.signer_credentials}, {local_time(inspection.signed_at)}"
    lines += ["", signed,
              inspection.certification_statement or "", "", f"Record SHA-256: {inspection.record_sha256}"]
    return "\n".join(lines)


@implements("§380-16 C(3)")
def _notice_line(inspection: Inspection, profile: Profile) -> str:
    """§380-16 C(3): given, not given, or not required for this type (erosion-control inspections)."""
    rule = profile.advance_notice.cited(short_citation(profile.advance_notice.citation))
    if inspection.by_authority:
        return f"not owed: the authority's own inspection ({rule})"
    if not profile.advance_notice.required_for(inspection.type):
        return f"not required for this type of inspection ({rule})"
    if inspection.notice_given:
        return "given"
    return f"NOT GIVEN at least {profile.advance_notice.hours} hours ahead ({rule})"

