"""The QR code on a frozen PDF, read as a phone would read it from the page, and the public page it opens:
it names the document's /verify address and its whole record SHA-256; the page is rate-limited per address."""
from __future__ import annotations

import datetime as dt
import subprocess

import zxingcpp
from PIL import Image
from sqlalchemy import select

from inspect_app.documents.models import FrozenDocument
from inspect_app.enforcement import services as enforcement
from inspect_app.extensions import db


def _issued_order(make) -> tuple[object, FrozenDocument]:
    agent = make.user("agent")
    permit = make.permit(construction_started_on=dt.date(2026, 6, 2))
    order = enforcement.issue_stop_work(agent, permit, "Silt fence down along the brook")
    db.session.commit()
    document = db.session.scalars(select(FrozenDocument).where(FrozenDocument.subject_id == order.id)).one()
    return agent, document


def _qr_codes(pdf: bytes, tmp_path) -> list[str]:
    """The QR codes on the PDF's first page, rendered at 300 dpi with poppler and read with zxing-cpp."""
    (tmp_path / "doc.pdf").write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", "300", "-f", "1", "-l", "1", "-png", "-singlefile", str(tmp_path / "doc.pdf"),
                    str(tmp_path / "page")], check=True, timeout=60)
    with Image.open(tmp_path / "page.png") as page:
        return [code.text for code in zxingcpp.read_barcodes(page, formats=zxingcpp.BarcodeFormat.QRCode)]


def test_the_qr_code_on_the_pdf_opens_its_verify_page_with_the_whole_record_hash(app, make, signed_in, tmp_path):
    app.config["PUBLIC_URL"] = "https://permits.longmeadow.example"
    agent, document = _issued_order(make)
    pdf = signed_in(agent).get(f"/documents/frozen/{document.id}.pdf").data
    (code,) = _qr_codes(pdf, tmp_path)
    assert code == f"https://permits.longmeadow.example/verify/{document.id}?sha256={document.record_sha256}"
    assert len(document.record_sha256) == 64
    # What the phone opens: the document, and the hash on the copy is the register's.
    page = app.test_client().get(code.removeprefix("https://permits.longmeadow.example"))
    assert page.status_code == 200 and "This is a genuine document" in page.text
    assert "The record SHA-256 of the copy you scanned is the register's." in page.text
    forged = app.test_client().get(f"/verify/{document.id}?sha256={'0' * 64}")
    assert "is not the register's: the copy is not this document" in forged.text


def test_the_verify_page_answers_each_address_a_bounded_number_of_times(app, make):
    app.config["VERIFY_LIMIT"] = "3 per minute"
    _, document = _issued_order(make)
    client = app.test_client()
    answers = [client.get(f"/verify/{document.id}").status_code for _ in range(3)]
    assert answers == [200, 200, 200]
    refused = client.get("/verify/00000000-0000-0000-0000-000000000000")  # unknown ids count too
    assert refused.status_code == 429
    assert "Too many verifications from this address. Try again in 1 minute." in refused.text
    assert "This is a genuine document" not in refused.text
    # Another address is not held back by this one.
    other = app.test_client().get(f"/verify/{document.id}", environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert other.status_code == 200
