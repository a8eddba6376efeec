"""Marking up a photo: arrows, circles and labels stored as data beside it, a marked-up copy on pages and
in the report PDF, the original untouched, bad markup refused, others kept out, frozen once submitted."""
from __future__ import annotations

import datetime as dt
import hashlib
import html
import io
import json

import pypdf
import pytest
from PIL import Image, ImageChops
from sqlalchemy import select
from tests.photos.photo_builders import make_finding, make_jpeg
from tests.photos.test_upload import fetch, upload

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.photos.markup import LABEL_MAX_CHARS, MAX_SHAPES
from inspect_app.photos.models import Photo

ARROW = {"kind": "arrow", "from": [0.1, 0.1], "to": [0.5, 0.5]}
CIRCLE = {"kind": "circle", "at": [0.5, 0.5], "r": 0.2}
LABEL = {"kind": "label", "at": [0.1, 0.8], "text": "Silt fence down"}


@pytest.fixture
def photo(site, login):
    """A photo the inspector took for the draft report, uploaded through the app."""
    response = upload(login(site["inspector"]), site["permit"], make_jpeg(), caption="North silt fence",
                      inspection_id=site["inspection"].id)
    assert response.status_code == 200, response.text
    return db.session.scalars(select(Photo)).one()


def mark_up(as_user, photo, shapes, **extra):
    return as_user.post(f"/photos/{photo.id}/markup", {"markup": json.dumps(shapes), **extra})


def pdf_text(as_user, inspection) -> str:
    response = as_user.get(f"/documents/inspections/{inspection.id}.pdf")
    assert response.status_code == 200
    return " ".join(" ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(response.data)).pages).split())


def pdf_images(as_user, inspection) -> list[bytes]:
    reader = pypdf.PdfReader(io.BytesIO(as_user.get(f"/documents/inspections/{inspection.id}.pdf").data))
    return [image.data for page in reader.pages for image in page.images]


def reddest(data: bytes) -> int:
    """How many pixels of a JPEG are the markup's red (the photo itself is blue and white)."""
    red, green, blue = Image.open(io.BytesIO(data)).convert("RGB").split()
    mask = ImageChops.multiply(ImageChops.multiply(red.point(lambda v: 255 if v > 180 else 0),
                                                   green.point(lambda v: 255 if v < 80 else 0)),
                               blue.point(lambda v: 255 if v < 80 else 0))
    return mask.histogram()[255]


def test_markup_is_saved_shown_and_drawn_on_a_copy_while_the_original_never_changes(site, login, photo):
    inspector = login(site["inspector"])
    original = fetch(inspector, f"/photos/{photo.id}/original").data
    plain = fetch(inspector, f"/photos/{photo.id}/display").data
    sha = photo.original_sha256

    response = mark_up(inspector, photo, [ARROW, CIRCLE, LABEL])
    assert response.status_code == 303 and response.location.endswith(f"/photos/{photo.id}/markup")

    page = inspector.get(response.location).text
    assert "Marked up: the arrows, circles and labels are drawn on a copy" in page
    assert '"text": "Silt fence down"' in html.unescape(page)  # the shapes, in the form to draw on again
    db.session.expire_all()
    stored = db.session.get(Photo, photo.id)
    assert stored.markup == [ARROW, CIRCLE, LABEL]
    marked = fetch(inspector, f"/photos/{photo.id}/display").data
    assert marked != plain and reddest(marked) > reddest(plain) + 500
    assert fetch(inspector, f"/photos/{photo.id}/plain").data == plain  # what the canvas draws over
    assert fetch(inspector, f"/photos/{photo.id}/original").data == original
    assert stored.original_sha256 == sha == hashlib.sha256(original).hexdigest()
    tile = inspector.get(f"/permits/{site['permit'].id}/photos/add?inspection_id={site['inspection'].id}").text
    assert f"/photos/{photo.id}/thumb?v={stored.marked_thumb_sha256[:16]}" in tile and "Marked up:" in tile
    assert "Mark up</a>" in tile


def test_the_report_pdf_says_the_photo_was_marked_up_and_shows_the_marked_copy(site, login, photo):
    inspector = login(site["inspector"])
    assert "Marked up" not in pdf_text(inspector, site["inspection"])
    [plain_image] = [data for data in pdf_images(inspector, site["inspection"]) if len(data) > 2000]

    assert mark_up(inspector, photo, [ARROW, CIRCLE]).status_code == 303
    text = pdf_text(inspector, site["inspection"])
    assert "Photo 1: North silt fence. Marked up: the arrows, circles and labels are drawn on a copy" in text
    [marked_image] = [data for data in pdf_images(inspector, site["inspection"]) if len(data) > 2000]
    assert reddest(marked_image) > reddest(plain_image) + 300


def test_an_empty_list_removes_the_markup_and_the_plain_copy_shows_again(site, login, photo):
    inspector = login(site["inspector"])
    plain = fetch(inspector, f"/photos/{photo.id}/display").data
    assert mark_up(inspector, photo, [CIRCLE]).status_code == 303
    assert mark_up(inspector, photo, []).status_code == 303
    db.session.expire_all()
    assert db.session.get(Photo, photo.id).markup is None
    assert fetch(inspector, f"/photos/{photo.id}/display").data == plain
    assert "Marked up:" not in inspector.get(f"/photos/{photo.id}/markup").text


@pytest.mark.parametrize("markup, message", [
    ("not json", "The markup is not readable"),
    (json.dumps({"kind": "arrow"}), "The markup must be a list of shapes."),
    (json.dumps([{"kind": "star", "at": [0.5, 0.5]}]), "Shape 1 is not an arrow, a circle or a label."),
    (json.dumps([CIRCLE, {"kind": "arrow", "from": [0.1, 0.1], "to": [1.5, 0.5]}]),
     "Shape 2 (arrow): a point must be two numbers from 0 to 1"),
    (json.dumps([{"kind": "arrow", "from": ["0.1", 0.1], "to": [0.5, 0.5]}]), "a point must be two numbers"),
    (json.dumps([{"kind": "circle", "at": [0.5, 0.5], "r": 0}]), "the radius must be a number above 0"),
    (json.dumps([{"kind": "circle", "at": [0.5, 0.5], "r": True}]), "the radius must be a number above 0"),
    (json.dumps([{"kind": "arrow", "from": [0.2, 0.2], "to": [0.2, 0.2]}]), "starts where it ends"),
    (json.dumps([{**LABEL, "text": "x" * (LABEL_MAX_CHARS + 1)}]), f"1 to {LABEL_MAX_CHARS} characters"),
    (json.dumps([{**LABEL, "text": "two\nlines"}]), "on one line"),
    (json.dumps([{**CIRCLE, "colour": "blue"}]), "has a field it cannot have: colour"),
    (json.dumps([{"kind": "circle", "at": [0.5, 0.5]}]), "is missing its “r”"),
    (json.dumps([CIRCLE] * (MAX_SHAPES + 1)), f"at most {MAX_SHAPES} shapes; this markup has {MAX_SHAPES + 1}"),
    ('[{"kind": "circle", "at": [0.5, 0.5], "r": NaN}]', "The markup is not readable"),
    ("[" * 5000 + "]" * 5000, "The markup is too long"),
    ("", "Send the markup"),
])
def test_bad_markup_is_refused_with_a_clear_message_and_nothing_changes(site, login, photo, markup, message):
    inspector = login(site["inspector"])
    assert mark_up(inspector, photo, [ARROW]).status_code == 303
    before = db.session.scalar(select(AuditEntry.seq).order_by(AuditEntry.seq.desc()).limit(1))

    response = inspector.post(f"/photos/{photo.id}/markup", {"markup": markup})
    assert response.status_code == 422
    assert message in response.text
    db.session.expire_all()
    assert db.session.get(Photo, photo.id).markup == [ARROW]
    assert db.session.scalar(select(AuditEntry.seq).order_by(AuditEntry.seq.desc()).limit(1)) == before


def test_others_cannot_mark_up_a_photo(site, login, photo, make):
    # Someone else's draft report does not exist for another inspector; a stranger sees no permit.
    for outsider in (site["other_inspector"], make.user("inspector"), site["other_permittee"]):
        assert mark_up(login(outsider), photo, [ARROW]).status_code == 404
        assert login(outsider).get(f"/photos/{photo.id}/markup").status_code == 404
    db.session.expire_all()
    assert db.session.get(Photo, photo.id).markup is None


def test_the_owner_sees_a_submitted_photo_but_may_not_draw_on_an_inspection(site, login, photo):
    finding = make_finding(site["inspection"])  # noqa: F841  (a report with a finding, as usual)
    site["inspection"].status, site["inspection"].submitted_at = "submitted", dt.datetime(2026, 6, 3, 17, tzinfo=dt.UTC)
    db.session.commit()
    owner = login(site["owner"])
    assert owner.get(f"/photos/{photo.id}/markup").status_code == 200
    assert "Save markup" not in owner.get(f"/photos/{photo.id}/markup").text
    assert mark_up(owner, photo, [ARROW]).status_code == 403  # inspection photos are the inspector's


def test_a_submitted_reports_photos_are_frozen_with_their_markup(site, login, photo):
    inspector = login(site["inspector"])
    assert mark_up(inspector, photo, [CIRCLE, LABEL]).status_code == 303
    site["inspection"].status, site["inspection"].submitted_at = "submitted", dt.datetime(2026, 6, 3, 17, tzinfo=dt.UTC)
    db.session.commit()
    frozen = inspector.get(f"/documents/inspections/{site['inspection'].id}.pdf").data
    assert "Marked up" in pdf_text(inspector, site["inspection"])

    response = mark_up(inspector, photo, [ARROW])
    assert response.status_code == 422
    assert "This inspection report was submitted on Jun 3, 2026 and can no longer change." in response.text
    db.session.expire_all()
    assert db.session.get(Photo, photo.id).markup == [CIRCLE, LABEL]
    assert inspector.get(f"/documents/inspections/{site['inspection'].id}.pdf").data == frozen
    page = inspector.get(f"/photos/{photo.id}/markup").text
    assert "Save markup" not in page and "can no longer change" in page


def test_a_device_pulls_the_markup_as_a_change_of_the_photo(site, login, photo, client):
    from sync.services import create_device

    assert mark_up(login(site["inspector"]), photo, [ARROW]).status_code == 303
    _device, token = create_device(None, site["inspector"], "tablet")
    db.session.commit()
    changes = client.get("/sync/changes?cursor=0&limit=1000", headers={"Authorization": f"Bearer {token}"}).json
    [change] = [c for c in changes["changes"] if c["action"] == "photo.markup"]
    assert change["entity_id"] == photo.id and change["after"]["markup"] == [ARROW]
    assert change["after"]["original_sha256"] == photo.original_sha256
