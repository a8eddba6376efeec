"""§380-16 C(4)(f): after each inspection the report goes to the applicant and the authority, as a PDF."""
from __future__ import annotations

import io

from pypdf import PdfReader

from inspect_app.extensions import db
from tests.inspections.report_helpers import start, submit


def test_submitted_report_is_mailed_with_its_pdf(app, make, signed_in, smtp_server):
    received = smtp_server
    inspector = make.user("inspector")
    make.user("agent")  # the town's agent receives it for the authority
    permit = make.permit(inspectors=[inspector], areas=["Pad"])
    browser = signed_in(inspector)

    inspection = start(browser, permit, "erosion_control")
    assert submit(browser, inspection).status_code == 303

    db.session.expire_all()
    inspection = db.session.get(type(inspection), inspection.id)
    (message,) = [m for m in received if m["Subject"].startswith("Inspection report")]
    assert "applicant@example.org" in message["To"]
    (attachment,) = [part for part in message.walk() if part.get_filename()]
    assert attachment.get_content_type() == "application/pdf"
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(attachment.get_payload(decode=True))).pages)
    assert permit.number in text
    assert inspection.record_sha256 in text.replace("\n", "")


def test_the_mailed_report_is_named_for_the_towns_day(app, make, smtp_server):
    # An evening inspection (9:30 PM, Jun 10, EDT) is 01:30 UTC on Jun 11: its file was named for the 11th, while
    # the subject and the download say the 10th.
    import datetime as dt

    from inspect_app.reporting import notification

    permit = make.permit(construction_started_on=dt.date(2026, 6, 2))
    evening = dt.datetime(2026, 6, 11, 1, 30, tzinfo=dt.UTC)
    inspection = make.inspection(permit, performed_at=evening, latitude=42.05, longitude=-72.58,
                                 location_source="device")
    notification.send_report(inspection)
    db.session.commit()
    (message,) = smtp_server
    assert "Jun 10, 2026" in " ".join(message["Subject"].split())
    assert [part.get_filename() for part in message.walk() if part.get_filename()] == [
        f"inspection-{permit.number}-20260610.pdf"]
