"""A photo marked up on the report form before it is sent (issue 31, photos where they belong): the shapes go with
the report in `photos_markup`, by the SHA-256 of the original, and the server draws them as it stores the photo,
whether the file is posted with the form or uploaded first from the device's outbox (`photos_sha256`)."""
from __future__ import annotations

import io
import json
import uuid

import pytest
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.photos.models import Photo
from tests.builders import jpeg
from tests.inspections.report_helpers import error_beside, filled
from tests.offline.offline_helpers import sha256
from tests.photos.test_blobs_by_hash import _upload

ARROW = [{"kind": "arrow", "from": [0.2, 0.8], "to": [0.6, 0.3]}]


@pytest.fixture(autouse=True)
def _weather_kept_offline(weather_offline):
    """The weather service is unreachable: reports keep their weather pending."""


def _new_report(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    browser = signed_in(inspector)
    page = browser.client.get(f"/permits/{permit.id}/inspections/new/erosion_control").text
    form = filled(page, evaluation="compliant", performed_at="2026-06-02T09:30")
    return browser, permit, form


def _photos(permit) -> list[Photo]:
    db.session.expire_all()
    return db.session.scalars(select(Photo).where(Photo.permit_id == permit.id)).all()


def test_a_photo_marked_up_before_it_was_sent_is_stored_with_its_markup_and_the_original_unchanged(make, signed_in):
    browser, permit, form = _new_report(make, signed_in)
    site, other = jpeg(1), jpeg(2)
    made = str(uuid.uuid4())
    answer = browser.post(f"/inspections/{made}/submit", {
        **form, "photos": [(io.BytesIO(site), "site.jpg"), (io.BytesIO(other), "other.jpg")],
        "photos_markup": json.dumps({sha256(site): ARROW})}, content_type="multipart/form-data")
    assert answer.status_code == 303, answer.text

    by_original = {p.original_sha256: p for p in _photos(permit)}
    marked, plain = by_original[sha256(site)], by_original[sha256(other)]
    assert marked.markup == ARROW and marked.marked_display_sha256 and marked.marked_print_sha256
    assert plain.markup is None and plain.marked_display_sha256 is None
    # The original is still served byte for byte; the markup is drawn on copies.
    with browser.client.get(f"/photos/{marked.id}/original") as original:
        assert original.data == site
    assert db.session.get(Inspection, made).status == "submitted"


def test_the_outbox_sends_the_upload_first_and_the_markup_finds_it_by_its_hash(make, signed_in):
    browser, permit, form = _new_report(make, signed_in)
    site = jpeg(3)
    digest = _upload(browser, site)  # as the outbox does: the file first, then the form naming it

    made = str(uuid.uuid4())
    answer = browser.post(f"/inspections/{made}", {**form, "photos_sha256": digest,
                                                   "photos_markup": json.dumps({digest: ARROW})})
    assert answer.status_code == 303, answer.text
    [photo] = _photos(permit)
    assert (photo.original_sha256, photo.markup) == (digest, ARROW) and photo.marked_thumb_sha256


@pytest.mark.parametrize("markup, words", [
    ("not json", "not readable"),
    (json.dumps([ARROW]), "SHA-256"),
    (json.dumps({"abc": ARROW}), "SHA-256"),
    (json.dumps({"0" * 64: [{"kind": "star", "at": [0.5, 0.5]}]}), "Shape 1"),
])
def test_a_bad_markup_is_refused_with_its_reason_and_nothing_is_kept(make, signed_in, markup, words):
    browser, permit, form = _new_report(make, signed_in)
    made = str(uuid.uuid4())
    answer = browser.post(f"/inspections/{made}/submit", {
        **form, "photos": (io.BytesIO(jpeg(4)), "site.jpg"), "photos_markup": markup},
        content_type="multipart/form-data")
    assert answer.status_code == 422
    message = error_beside(answer.text, "new-parts")
    assert "The markup drawn on a photo was refused" in message and words in message
    assert _photos(permit) == []
    assert db.session.scalar(select(func.count()).select_from(Inspection).where(Inspection.permit_id == permit.id)) == 0
