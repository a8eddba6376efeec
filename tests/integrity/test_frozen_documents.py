"""Documents are frozen when signed or issued: downloads serve those bytes, later changes make new versions,
and anyone can verify a document at /verify/<document id>."""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import re
import uuid

import pypdf
from sqlalchemy import select

from inspect_app.certifications.models import OMCertification
from inspect_app.documents.models import FrozenDocument
from inspect_app.documents.services import pdf_bytes
from inspect_app.enforcement import services as enforcement
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.inspections.canonical import reseal_record
from inspect_app.mail.models import OutboundEmail
from inspect_app.permits import services as permits
from inspect_app.blobs.models import Blob
from tests.inspections.report_helpers import start, submit


def _text(pdf: bytes) -> str:
    """The PDF's text with line breaks as spaces (where a cell wraps depends on names and dates)."""
    return " ".join(" ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())


def _documents(kind: str) -> list[FrozenDocument]:
    db.session.expire_all()
    return list(db.session.scalars(select(FrozenDocument).where(FrozenDocument.kind == kind)
                                   .order_by(FrozenDocument.frozen_at)))


def _verify_page(client, document_id: str):
    return client.get(f"/verify/{document_id}")


def _without_csrf_tokens(page: str) -> str:
    """The page less its CSRF tokens, which carry the second they were made in."""
    return re.sub(r"[\w-]{20,}\.[\w-]{5,}\.[\w-]{20,}", "TOKEN", page)


def test_a_signed_certification_keeps_the_owner_who_signed_after_the_property_is_sold(
        make, signed_in, completed_permit):
    owner = make.user("permittee", name="Pat Owner")
    permit = completed_permit(owner, owner_name="Pat Owner Holdings LLC")
    browser = signed_in(owner)
    assert browser.post(f"/permits/{permit.id}/om/certify",
                        {"cert-signer_name": "Pat Owner", "cert-agree": "y",
                         "cert-without_entries": "y"}).status_code == 303
    certification = db.session.scalars(select(OMCertification)).one()
    url = f"/documents/om-certifications/{certification.id}.pdf"
    signed = browser.get(url).data
    assert "Pat Owner Holdings LLC" in _text(signed)

    permits.update_permit(None, permit, owner_name="Other Owner")  # the property is sold
    db.session.commit()
    after_sale = browser.get(url).data
    assert after_sale == signed
    assert "Other Owner" not in _text(after_sale) and "Pat Owner Holdings LLC" in _text(after_sale)
    (document,) = _documents("om_certification")
    assert hashlib.sha256(signed).hexdigest() == document.pdf_sha256
    assert db.session.get(Blob, document.pdf_sha256).content_type == "application/pdf"
    assert (document.signed_by, document.subject_id) == ("Pat Owner", certification.id)


def test_the_frozen_pdf_names_itself_and_where_to_verify_it(make, signed_in, completed_permit):
    owner = make.user("permittee")
    permit = completed_permit(owner)
    browser = signed_in(owner)
    browser.post(f"/permits/{permit.id}/om/certify", {"cert-signer_name": "Pat Owner", "cert-agree": "y",
                                                      "cert-without_entries": "y"})
    (document,) = _documents("om_certification")
    pdf = browser.get(f"/documents/om-certifications/{document.subject_id}.pdf").data
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    for page in reader.pages:  # each page names its document and the start of its record hash
        assert f"Document {document.id} · SHA-256 {document.record_sha256[:16]}" in page.extract_text()
        assert f"/verify/{document.id}" in page.extract_text()
    assert f"record-sha256={document.record_sha256}" in reader.metadata["/Keywords"]
    assert f"document-id={document.id}" in reader.metadata["/Keywords"]
    # The QR code is drawn as vector squares in the footer of each page (reportlab's barcode module).
    assert all(page.get_contents().get_data().count(b" re") > 100 for page in reader.pages)


def test_the_mailed_report_is_the_frozen_one_and_an_amendment_makes_a_new_version(app, make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(inspector)
    original = start(browser, permit, "erosion_control")
    assert submit(browser, original, notes="First version").status_code == 303
    (first,) = _documents("inspection_report")
    download = browser.get(f"/documents/inspections/{original.id}.pdf").data
    assert hashlib.sha256(download).hexdigest() == first.pdf_sha256
    mailed = db.session.scalars(select(OutboundEmail).where(OutboundEmail.subject.like("Inspection report%"))).one()
    assert mailed.attachment_names  # the attachment is the frozen document (the same call made it)

    response = browser.post(f"/inspections/{original.id}/amend")
    assert response.status_code == 303, response.text
    amendment = db.session.get(Inspection, response.headers["Location"].rsplit("/", 1)[-1])
    assert submit(browser, amendment, notes="Corrected version").status_code == 303
    first_again, second = _documents("inspection_report")
    assert first_again.id == first.id and second.amends_id == first.id
    assert second.subject_id == amendment.id
    # The old version stays downloadable, byte for byte.
    assert browser.get(f"/documents/frozen/{first.id}.pdf").data == download
    assert "Corrected version" in _text(browser.get(f"/documents/frozen/{second.id}.pdf").data)
    assert f'href="/documents/frozen/{first.id}.pdf"' in browser.get(f"/permits/{permit.id}").text

    # The public page says the first was amended; only a viewer who may see the permit gets the link.
    anonymous = _verify_page(app.test_client(), first.id)  # signed out
    assert anonymous.status_code == 200 and "Yes: a later version" in anonymous.text
    assert f"/documents/frozen/{second.id}.pdf" not in anonymous.text
    assert f"/documents/frozen/{second.id}.pdf" in browser.get(f"/verify/{first.id}").text
    stranger = signed_in(make.user("permittee"))  # no business on this permit
    assert f"/documents/frozen/{second.id}.pdf" not in stranger.get(f"/verify/{first.id}").text
    assert stranger.get(f"/documents/frozen/{first.id}.pdf").status_code == 404


def test_an_order_is_frozen_when_issued_and_again_when_lifted(make, signed_in):
    agent = make.user("agent")
    permit = make.permit(construction_started_on=dt.date(2026, 6, 2))
    order = enforcement.issue_stop_work(agent, permit, "Silt fence down along the brook")
    db.session.commit()
    issued = signed_in(agent).get(f"/documents/stop-work-orders/{order.id}.pdf").data
    enforcement.lift_stop_work(agent, order, "Fence reset and approved on site")
    db.session.commit()
    first, lifted = _documents("stop_work_order")
    assert lifted.amends_id == first.id and lifted.occasion == "lifted"
    assert hashlib.sha256(issued).hexdigest() == first.pdf_sha256
    latest = signed_in(agent).get(f"/documents/stop-work-orders/{order.id}.pdf").data
    assert "Fence reset and approved on site" in _text(latest)
    assert "Fence reset" not in _text(issued)


def test_the_verify_page_is_public_checks_an_upload_and_reveals_nothing_of_other_records(
        app, make, signed_in, completed_permit):
    owner = make.user("permittee", name="Pat Owner")
    permit = completed_permit(owner)
    browser = signed_in(owner)
    browser.post(f"/permits/{permit.id}/om/certify", {"cert-signer_name": "Pat Owner", "cert-agree": "y",
                                                      "cert-without_entries": "y"})
    (document,) = _documents("om_certification")
    pdf = browser.get(f"/documents/om-certifications/{document.subject_id}.pdf").data

    client = app.test_client()  # signed out
    page = _verify_page(client, document.id)
    assert page.status_code == 200
    assert "This is a genuine document" in page.text and "Pat Owner" in page.text
    assert document.pdf_sha256 in page.text and "Amended since</dt>\n    <dd id=\"amended\">No" in page.text
    assert "Forebay" not in page.text and owner.email not in page.text  # nothing else of the record

    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page.text).group(1)
    same = client.post(f"/verify/{document.id}", data={"csrf_token": token, "pdf": (io.BytesIO(pdf), "mine.pdf")})
    assert same.status_code == 200 and "Your file is this document, byte for byte" in same.text
    altered = pdf[:200] + b" " + pdf[201:]  # one byte changed
    other = client.post(f"/verify/{document.id}", data={"csrf_token": token, "pdf": (io.BytesIO(altered), "x.pdf")})
    assert "Your file is not the document that was issued" in other.text
    assert hashlib.sha256(altered).hexdigest() in other.text

    unknown = _verify_page(client, str(uuid.uuid4()))
    not_public = _verify_page(client, document.subject_id)  # a real record's id, not a document's
    garbage = _verify_page(client, "not-an-id")
    assert unknown.status_code == not_public.status_code == garbage.status_code == 404
    assert _without_csrf_tokens(unknown.text) == _without_csrf_tokens(not_public.text) \
        == _without_csrf_tokens(garbage.text)
    assert "No document with this number is in the register" in unknown.text


def test_the_permit_history_is_made_on_demand_and_says_when(make, signed_in):
    agent = make.user("agent")
    permit = make.permit()
    pdf = signed_in(agent).post(f"/documents/permits/{permit.id}/history", follow_redirects=True).data
    assert re.search(r"Generated \w{3} \d+, \d{4}", _text(pdf))
    # Frozen as it is downloaded, so a copy can be verified (issue 32); nothing else is frozen by it.
    assert [d.kind for d in db.session.scalars(select(FrozenDocument))] == ["permit_history"]


def test_weather_filled_in_after_signing_makes_a_new_version_and_keeps_the_signed_one(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(inspector)
    draft = start(browser, permit, "erosion_control")
    assert submit(browser, draft).status_code == 303
    report = db.session.get(Inspection, draft.id)
    db.session.refresh(report)
    assert report.weather_status == "pending"
    (signed,) = _documents("inspection_report")
    # What the weather backfill does (the database allows exactly these fields on a submitted report).
    report.weather_status, report.temperature_c, report.precip_24h_mm, report.precip_hours = "complete", 18.5, 3.3, 24
    reseal_record(None, report)
    db.session.commit()
    first, filled = _documents("inspection_report")
    assert first.id == signed.id and filled.amends_id == signed.id
    assert (filled.occasion, filled.signed_by) == ("pending weather filled in", "the server (weather filled in)")
    assert filled.record_sha256 == report.record_sha256 != signed.record_sha256
    assert browser.get(f"/documents/frozen/{signed.id}.pdf").status_code == 200


def _pages_lines(pdf: bytes) -> list[list[str]]:
    """The lines of each page (the header is drawn last, so it is not the first)."""
    return [page.extract_text().splitlines() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages]


def test_who_made_each_document_and_whose_record_keeps_it(app, make, signed_in, completed_permit):
    """An engineer's report and an owner's certification are not "issued by the Town": the header, the PDF's
    author and /verify name their maker and the town whose record keeps them; an order is the town's own."""
    engineer = make.user("inspector", name="Dana Whitfield", organization="Whitfield Civil Engineering")
    permit = make.permit(inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(engineer)
    report = start(browser, permit, "erosion_control")
    assert submit(browser, report).status_code == 303
    owner = make.user("permittee", name="Pat Owner")
    done = completed_permit(owner)
    assert signed_in(owner).post(f"/permits/{done.id}/om/certify",
                                 {"cert-signer_name": "Pat Owner", "cert-agree": "y",
                                  "cert-without_entries": "y"}).status_code == 303
    enforcement.issue_stop_work(make.user("agent"), permit, "Silt fence down along the brook")
    db.session.commit()

    record = "Town of Longmeadow, Department of Public Works"
    expected = {"inspection_report": "Dana Whitfield, Whitfield Civil Engineering",
                "om_certification": "Pat Owner, responsible party", "stop_work_order": None}
    client = app.test_client()  # signed out, as anyone who checks a document
    for kind, maker in expected.items():
        (document,) = _documents(kind)
        pdf = pdf_bytes(document)
        info = pypdf.PdfReader(io.BytesIO(pdf)).metadata
        page = " ".join(_verify_page(client, document.id).text.split())
        header = f"Made by {maker}" if maker else f"Issued by the {record}"
        for lines in _pages_lines(pdf):  # every page: who made it, whose record keeps it
            assert any(line.startswith(header) for line in lines), (header, lines)
            assert f"Record of the {record}" in lines
        if maker is None:  # the town's own
            assert info.author == record
            assert f"This is a genuine document, issued by the {record} from its record." in page
        else:
            assert info.author == maker
            assert "Issued by" not in _text(pdf)
            assert f"This is a genuine document, made by {maker} and kept in the record of the {record}." in page
            assert "issued by" not in page.lower()


def test_a_report_corrected_twice_is_one_line_of_versions_each_naming_the_next(app, make, signed_in):
    """The same report amended a second time: the second amendment's document amended the original's again, so the
    check page of the first amendment said it was never amended, and the original's named only the first."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(inspector)
    original = start(browser, permit, "erosion_control")
    assert submit(browser, original, notes="First version").status_code == 303
    latest = original
    for notes in ("Corrected once", "Corrected twice"):  # each correction amends the latest version
        response = browser.post(f"/inspections/{latest.id}/amend")
        latest = db.session.get(Inspection, response.headers["Location"].rsplit("/", 1)[-1])
        assert submit(browser, latest, notes=notes).status_code == 303
    first, second, third = _documents("inspection_report")
    assert (second.amends_id, third.amends_id) == (first.id, second.id)
    assert f"/documents/frozen/{second.id}.pdf" in browser.get(f"/verify/{first.id}").text
    assert f"/documents/frozen/{third.id}.pdf" in browser.get(f"/verify/{second.id}").text
    assert "Yes: a later version" in _verify_page(app.test_client(), second.id).text
    assert "Yes: a later version" not in _verify_page(app.test_client(), third.id).text


def test_an_original_whose_weather_is_filled_in_after_it_was_amended_leaves_the_line_of_corrections_whole(
        app, make, signed_in):
    """The original's weather filled in after its first amendment made a version of the original that a second
    amendment then amended: two versions each said no later one was made. The corrections stay one line, and the
    original's weather version stands beside it (the corrections remain the report's latest word)."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(inspector)
    original = start(browser, permit, "erosion_control")
    assert submit(browser, original, notes="First version").status_code == 303

    def amend(notes: str, of: Inspection = original) -> Inspection:
        response = browser.post(f"/inspections/{of.id}/amend")
        amendment = db.session.get(Inspection, response.headers["Location"].rsplit("/", 1)[-1])
        assert submit(browser, amendment, notes=notes).status_code == 303
        return amendment

    once = amend("Corrected once")
    report = db.session.get(Inspection, original.id)
    db.session.refresh(report)
    report.weather_status, report.temperature_c, report.precip_24h_mm, report.precip_hours = "complete", 18.5, 3.3, 24
    reseal_record(None, report)  # what the weather backfill does
    db.session.commit()
    twice = amend("Corrected twice", of=once)  # a correction amends the latest version
    signed, first_fix, weather, second_fix = _documents("inspection_report")
    assert (first_fix.subject_id, weather.subject_id, second_fix.subject_id) == (once.id, original.id, twice.id)
    assert (first_fix.amends_id, weather.amends_id, second_fix.amends_id) == (signed.id, signed.id, first_fix.id)
    assert f"/documents/frozen/{first_fix.id}.pdf" in browser.get(f"/verify/{signed.id}").text
    assert f"/documents/frozen/{second_fix.id}.pdf" in browser.get(f"/verify/{first_fix.id}").text
