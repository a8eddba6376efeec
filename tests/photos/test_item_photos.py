"""Photos where they belong (issue 31): a photo taken on a checklist item is recorded as that item's, and the
submitted report's page and PDF show it under the item; a caption typed before the photo was sent
(`photos_caption`, by the SHA-256 of the original) is stored with it, and one too long is refused with a message
and nothing kept."""
from __future__ import annotations

import io
import json
import re
import uuid

import pytest
from pypdf import PdfReader
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.permits.services import profile_of
from inspect_app.photos.captions import CAPTION_MAX
from inspect_app.photos.models import Photo
from tests.builders import jpeg
from tests.inspections.report_helpers import error_beside, filled, report_form
from tests.offline.offline_helpers import sha256
from tests.photos.test_blobs_by_hash import _upload

ITEM_PHOTOS = re.compile(r"^item-([a-z_0-9]+)-site-photos$")


@pytest.fixture(autouse=True)
def _weather_kept_offline(weather_offline):
    """The weather service is unreachable: reports keep their weather pending."""


def _new_report(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    browser = signed_in(inspector)
    page = browser.client.get(f"/permits/{permit.id}/inspections/new/erosion_control").text
    return browser, permit, page


def _site_item(permit, page: str) -> tuple[str, str]:
    """The form field of a site-wide checklist item's photos, and the item's words."""
    key = next(m.group(1) for m in map(ITEM_PHOTOS.match, report_form(page)[1]) if m)
    [item] = [i for i in profile_of(permit).inspection_type("erosion_control").checklist if i.key == key]
    return f"item-{key}-site-photos", item.text


def _photos(permit) -> list[Photo]:
    db.session.expire_all()
    return db.session.scalars(select(Photo).where(Photo.permit_id == permit.id)).all()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_every_checklist_item_of_the_form_has_a_photo_input(make, signed_in):
    browser, permit, page = _new_report(make, signed_in)
    names = report_form(page)[1]
    answers = [n.removeprefix("answer-") for n in names if n.startswith("answer-")]
    assert answers and all(f"item-{a}-photos" in names for a in answers)
    assert 'accept="image/*" capture="environment"' in page


def test_a_photo_taken_on_an_item_is_shown_under_that_item_on_the_report_and_in_its_pdf(make, signed_in):
    browser, permit, page = _new_report(make, signed_in)
    field, item_text = _site_item(permit, page)
    on_item, of_site = jpeg(11), jpeg(12)
    made = str(uuid.uuid4())
    answer = browser.post(f"/inspections/{made}/submit", {
        **filled(page, performed_at="2026-06-02T09:30"),
        field: (io.BytesIO(on_item), "fence.jpg"), "photos": (io.BytesIO(of_site), "site.jpg"),
        "photos_caption": json.dumps({sha256(on_item): "Silt fence sagging at the NE corner",
                                      sha256(of_site): "Stockpile by the gate"})},
        content_type="multipart/form-data")
    assert answer.status_code == 303, answer.text

    by_original = {p.original_sha256: p for p in _photos(permit)}
    assert by_original[sha256(on_item)].caption == "Silt fence sagging at the NE corner"
    assert by_original[sha256(of_site)].caption == "Stockpile by the gate"
    report = db.session.get(Inspection, made)
    key = field.removeprefix("item-").removesuffix("-photos")
    assert report.details["item_photos"] == {key: [sha256(on_item)]}

    shown = browser.client.get(f"/inspections/{made}").text
    # Under the item's own answer, before the next item, with its caption; the site's photo is not there.
    start = shown.index(f'id="answer-{key}"')
    under = shown[start:shown.index('class="checklist-item"', start)]
    assert f'id="photos-{key}"' in under and "Silt fence sagging at the NE corner" in under
    assert by_original[sha256(of_site)].id not in under
    # The site's photo, with its caption, under the report's Photos.
    others = shown[shown.index('id="report-photos"'):]
    assert by_original[sha256(of_site)].id in others and "Stockpile by the gate" in others
    assert by_original[sha256(on_item)].id not in others

    pdf = browser.client.get(f"/documents/inspections/{made}.pdf")
    assert pdf.status_code == 200 and pdf.mimetype == "application/pdf"
    text = _one_line(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.data)).pages))
    assert _one_line(f"Photos: {item_text} (Site)") in text
    assert _one_line(f"Photo 1 ({item_text}: Site): Silt fence sagging at the NE corner") in text
    # The site's photo is under "Photos", after the item's.
    assert "Photo 2: Stockpile by the gate" in text


def test_an_item_photo_uploaded_first_from_the_outbox_is_the_items_and_takes_its_caption(make, signed_in):
    browser, permit, page = _new_report(make, signed_in)
    field, _ = _site_item(permit, page)
    photo = jpeg(13)
    digest = _upload(browser, photo)  # as the outbox does: the file first, then the form naming it
    made = str(uuid.uuid4())
    answer = browser.post(f"/inspections/{made}", {
        **report_form(page)[0], f"{field}_sha256": digest, "photos_caption": json.dumps({digest: "Inlet clean"})})
    assert answer.status_code == 303, answer.text
    [stored] = _photos(permit)
    assert (stored.original_sha256, stored.caption) == (digest, "Inlet clean")
    key = field.removeprefix("item-").removesuffix("-photos")
    # Saved again (the draft page posts only new photos): the item keeps its photo.
    again = browser.client.get(f"/inspections/{made}").text
    assert browser.post(f"/inspections/{made}", report_form(again)[0]).status_code == 303
    db.session.expire_all()
    assert db.session.get(Inspection, made).details["item_photos"] == {key: [digest]}


@pytest.mark.parametrize("caption, words", [
    ("x" * (CAPTION_MAX + 1), f"at most {CAPTION_MAX:,} characters"),
    ("not json", "not readable"),
], ids=["too long", "unreadable"])
def test_a_caption_too_long_or_unreadable_is_refused_with_its_reason_and_nothing_is_kept(
        make, signed_in, caption, words):
    browser, permit, page = _new_report(make, signed_in)
    field, _ = _site_item(permit, page)
    photo = jpeg(14)
    captions = json.dumps({sha256(photo): caption}) if caption.startswith("x") else caption
    made = str(uuid.uuid4())
    answer = browser.post(f"/inspections/{made}/submit", {
        **filled(page, performed_at="2026-06-02T09:30"), field: (io.BytesIO(photo), "fence.jpg"),
        "photos_caption": captions}, content_type="multipart/form-data")
    assert answer.status_code == 422
    message = error_beside(answer.text, "new-parts")
    assert "The caption of a photo was refused" in message and words in message
    assert _photos(permit) == []
    assert db.session.scalar(select(func.count()).select_from(Inspection).where(Inspection.permit_id == permit.id)) == 0


def test_a_refused_report_keeps_the_item_photos_already_uploaded_and_their_captions(make, signed_in):
    browser, permit, page = _new_report(make, signed_in)
    field, _ = _site_item(permit, page)
    digest = _upload(browser, jpeg(15))  # sent from the outbox: uploaded first
    captions = json.dumps({digest: "Inlet protection torn"})
    made = str(uuid.uuid4())
    refused = browser.post(f"/inspections/{made}/submit", {
        **filled(page, performed_at="2026-06-02T09:30", evaluation=None, signature=None),
        f"{field}_sha256": digest, "photos_caption": captions})
    assert refused.status_code == 422
    assert _photos(permit) == []
    # The form comes back with the photo kept, not asked for again, and its caption.
    again = report_form(refused.text)[0]
    assert again[f"{field}_sha256"] == digest and json.loads(again["photos_caption"]) == json.loads(captions)
    answer = browser.post(f"/inspections/{made}/submit", {
        **filled(refused.text, performed_at="2026-06-02T09:30")})
    assert answer.status_code == 303, answer.text
    [stored] = _photos(permit)
    assert (stored.original_sha256, stored.caption) == (digest, "Inlet protection torn")
    key = field.removeprefix("item-").removesuffix("-photos")
    assert db.session.get(Inspection, made).details["item_photos"] == {key: [digest]}


def test_a_photo_on_an_item_of_a_control_added_on_the_device_is_that_controls(make, signed_in):
    browser, permit, page = _new_report(make, signed_in)
    control = str(uuid.uuid4())  # the id the device made as it added the control's row
    photo = jpeg(16)
    made = str(uuid.uuid4())
    answer = browser.post(f"/inspections/{made}", {
        **report_form(page)[0], f"control-new-{control}": "Wattle W-2",
        f"answer-control_installed-{control}": "yes",
        f"item-control_installed-{control}-photos": (io.BytesIO(photo), "wattle.jpg")},
        content_type="multipart/form-data")
    assert answer.status_code == 303, answer.text
    [stored] = _photos(permit)
    assert stored.caption and "Wattle W-2" in stored.caption  # what it was taken for, when no caption was typed
    report = db.session.get(Inspection, made)
    assert report.details["item_photos"] == {f"control_installed-{control}": [sha256(photo)]}
    assert f'id="photo-{stored.id}"' in browser.client.get(f"/inspections/{made}").text  # shown on the draft
