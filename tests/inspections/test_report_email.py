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
