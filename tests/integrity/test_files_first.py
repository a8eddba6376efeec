"""Every file kept with a record is stored (bytes and `blobs` row) before the record that points at it.

Each place that keeps an uploaded file is tried with two different files, one after the other, as a user
would: the second file used to fail with a foreign-key error (a 500) when the record's row was inserted
before its blob row.
"""
from __future__ import annotations

import datetime as dt
import io

from sqlalchemy import select

from inspect_app.certifications.models import OMCertification
from inspect_app.completion.models import FinalSubmission
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.blobs.models import Blob
from inspect_app.photos.models import Photo
from tests.inspections.report_helpers import start, submit
from tests.builders import signature_data_url
from tests.photos.photo_builders import make_inspection, make_jpeg

PDF_A = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
PDF_B = b"%PDF-1.7\n% the as-built drawings\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def _blob_named(sha: str | None) -> Blob | None:
    return db.session.get(Blob, sha) if sha else None


def test_as_built_drawings_filed_after_the_om_plan_with_another_pdf(make, signed_in):
    owner = make.user("permittee")
    permit = make.permit(owner=owner, construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(owner)
    base = f"/permits/{permit.id}/completion/submit"
    first = browser.post(f"{base}/om_plan", {"om_plan-pdf": (io.BytesIO(PDF_A), "om-plan.pdf"),
                                             "om_plan-registry_reference": "Book 25120, Page 311"})
    second = browser.post(f"{base}/as_built", {"as_built-pdf": (io.BytesIO(PDF_B), "as-built.pdf"),
                                               "as_built-pe_certified": "y"})
    assert (first.status_code, second.status_code) == (303, 303), second.text
    submissions = {s.kind: s for s in db.session.scalars(select(FinalSubmission))}
    assert submissions["om_plan"].blob_sha256 != submissions["as_built"].blob_sha256
    for submission in submissions.values():
        assert _blob_named(submission.blob_sha256).content_type == "application/pdf"


def test_two_reports_signed_with_two_different_signatures(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(inspector)
    for stroke in (0, 30):
        draft = start(browser, permit, "erosion_control")
        response = submit(browser, draft, signature=signature_data_url(stroke))
        assert response.status_code == 303, response.text
    db.session.expire_all()
    signatures = {i.signature_sha256 for i in db.session.scalars(select(Inspection))}
    assert len(signatures) == 2 and all(_blob_named(sha).content_type == "image/png" for sha in signatures)


def test_two_om_certifications_signed_with_two_different_signatures(make, signed_in, completed_permit):
    owner = make.user("permittee")
    browser = signed_in(owner)
    for stroke in (0, 30):
        permit = completed_permit(owner)
        response = browser.post(f"/permits/{permit.id}/om/certify", {
            "cert-signer_name": "Pat Owner", "cert-agree": "y", "cert-without_entries": "y",
            "cert-signature": signature_data_url(stroke)})
        assert response.status_code == 303, response.text
    signatures = {c.signature_sha256 for c in db.session.scalars(select(OMCertification))}
    assert len(signatures) == 2 and all(_blob_named(sha).content_type == "image/png" for sha in signatures)


def test_two_different_photos_uploaded_one_after_the_other(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    draft = make_inspection(permit, inspector)
    browser = signed_in(inspector)
    for shade in (0, 60):
        response = browser.post(f"/permits/{permit.id}/photos?inspection_id={draft.id}",
                                {"photo": (io.BytesIO(make_jpeg(shade=shade)), "site.jpg"), "caption": "Outlet"})
        assert response.status_code == 303, response.text
    photos = db.session.scalars(select(Photo)).all()
    assert len({p.original_sha256 for p in photos}) == 2
    for photo in photos:
        assert all(_blob_named(sha) for sha in (photo.original_sha256, photo.display_sha256, photo.thumb_sha256))
