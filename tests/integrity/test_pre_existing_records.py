"""Records signed before documents were frozen: until frozen, a download says it is rendered from the record
as it stands, not what was signed; `flask documents freeze-existing` freezes each once, saying so."""
from __future__ import annotations

import datetime as dt
import hashlib
import io

import pypdf
from sqlalchemy import select

from inspect_app.certifications.models import OMCertification
from inspect_app.documents.models import FrozenDocument
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db


def _text(pdf: bytes) -> str:
    return " ".join(" ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())


def test_records_signed_before_freezing_are_frozen_once_and_say_so(app, make, signed_in, runner):
    agent, owner = make.user("agent"), make.user("permittee", name="Pat Owner")
    permit = make.permit(owner=owner, construction_started_on=dt.date(2026, 6, 2))
    # Rows as the app wrote them before documents were frozen: signed, with no document.
    report = make.inspection(permit)
    draft = make.inspection(permit, status="draft")
    order = StopWorkOrder(permit_id=permit.id, reason="Silt fence down", issued_by_id=agent.id)
    certification = OMCertification(permit_id=permit.id, period_start=dt.date(2025, 1, 1),
                                    period_end=dt.date(2025, 12, 31), signer_name="Pat Owner",
                                    statement="I certify the maintenance was done.")
    db.session.add_all([order, certification])
    db.session.commit()
    browser = signed_in(agent)
    urls = {report.id: f"/documents/inspections/{report.id}.pdf",
            order.id: f"/documents/stop-work-orders/{order.id}.pdf",
            certification.id: f"/documents/om-certifications/{certification.id}.pdf"}
    for url in urls.values():
        live = _text(browser.get(url).data)
        assert "from the record as it stands now; not frozen at signing" in live, url
        assert "Verify at" not in live

    result = runner.invoke(args=["documents", "freeze-existing"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("3 documents frozen")
    db.session.expire_all()
    documents = {d.subject_id: d for d in db.session.scalars(select(FrozenDocument))}
    assert set(documents) == set(urls)  # not the draft
    assert draft.id not in documents
    for subject_id, url in urls.items():
        document = documents[subject_id]
        assert document.occasion.endswith("from the record, not at signing")
        download = browser.get(url).data
        assert hashlib.sha256(download).hexdigest() == document.pdf_sha256
        text = _text(download)
        assert "from the record as it then stood, not at signing" in text
        assert f"/verify/{document.id}" in text
        page = app.test_client().get(f"/verify/{document.id}")
        assert "This is a genuine document" in page.text and "not at signing" in page.text
    # The owner changes after: the frozen bytes do not. And a second run freezes nothing more.
    owner.name = "Other Owner"
    db.session.commit()
    assert hashlib.sha256(browser.get(urls[certification.id]).data).hexdigest() == \
        documents[certification.id].pdf_sha256
    again = runner.invoke(args=["documents", "freeze-existing"])
    assert again.exit_code == 0 and again.output.startswith("0 documents frozen")
    assert len(db.session.scalars(select(FrozenDocument)).all()) == 3
