"""Uploading photos through the app: stored byte for byte with renditions, refused when bad, private."""
from __future__ import annotations

import datetime as dt
import hashlib
import io

import pytest
from PIL import Image
from sqlalchemy import func, select
from tests.builders import BLUE, RED, jpeg, jpeg_declaring, png_declaring
from tests.photos.photo_builders import (
    blob_files, make_corrective_action, make_finding, make_inspection, make_jpeg,
)

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.blobs.models import Blob
from inspect_app.photos.models import Photo


def picker(**target) -> str:
    """The id of the picker of one record, as the page renders it and htmx sends it (HX-Target)."""
    return "photos-" + "-".join(f"{key.removesuffix('_id')}-{value}" for key, value in target.items())


def upload(as_user, permit, data: bytes, *, caption: str = "", filename: str = "site.jpg", htmx=True,
           **target):
    """POST a photo the way the picker does: the target in the URL, the file and caption in the body."""
    query = "&".join(f"{key}={value}" for key, value in target.items())
    return as_user.post(f"/permits/{permit.id}/photos?{query}", {"photo": (io.BytesIO(data), filename),
                        "caption": caption}, htmx=picker(**target) if htmx else None)


def fetch(as_user, url: str, **kwargs):
    """GET a photo file, read it whole and close it (a sent file stays open until closed)."""
    response = as_user.get(url, **kwargs)
    response.get_data()
    response.close()
    return response


def count(model) -> int:
    return db.session.scalar(select(func.count()).select_from(model))


def photo_audit() -> list[str]:
    """The audit log entries the photo uploads wrote (the fixtures' own are left out)."""
    return list(db.session.scalars(select(AuditEntry.action).where(
        AuditEntry.entity.in_(("photos", "corrective_actions"))).order_by(AuditEntry.seq)))


def image(response) -> Image.Image:
    picture = Image.open(io.BytesIO(response.data))
    picture.load()
    return picture


def near(pixel, colour, tolerance: int = 40) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour))


def test_photo_on_a_draft_inspection_keeps_the_original_and_shows_upright(site, login):
    inspector = login(site["inspector"])
    data = make_jpeg((1200, 900), orientation=6, taken="2026:06:03 09:30:12")

    response = upload(inspector, site["permit"], data, caption="Silt fence at the NE corner",
                      inspection_id=site["inspection"].id)

    assert response.status_code == 200, response.text
    photo = db.session.scalars(select(Photo)).one()
    assert 'class="photo-picker"' in response.text and "Silt fence at the NE corner" in response.text
    assert f"/photos/{photo.id}/thumb" in response.text
    assert "Jun 3, 2026 9:30 AM" in response.text  # EXIF time shown in town time
    assert (photo.inspection_id, photo.caption) == (site["inspection"].id, "Silt fence at the NE corner")
    assert (photo.width, photo.height) == (900, 1200)
    # The camera wrote no zone: 9:30 in Longmeadow in June is 13:30 UTC.
    assert photo.taken_at == dt.datetime(2026, 6, 3, 13, 30, 12, tzinfo=dt.UTC)
    assert photo.latitude == pytest.approx(42.05, abs=1e-4)
    assert photo.longitude == pytest.approx(-72.58, abs=1e-4)

    original = fetch(inspector, f"/photos/{photo.id}/original")
    assert original.status_code == 200
    assert hashlib.sha256(original.data).hexdigest() == hashlib.sha256(data).hexdigest() == photo.original_sha256
    assert original.content_type == "image/jpeg"
    assert original.headers["ETag"] == f'"{photo.original_sha256}"'
    assert {"private", "immutable", "max-age=31536000"} <= {
        part.strip() for part in original.headers["Cache-Control"].split(",")}

    display = image(fetch(inspector, f"/photos/{photo.id}/display"))
    assert display.size == (900, 1200)  # portrait: orientation 6 turned upright, not upscaled
    assert near(display.getpixel((880, 600)), RED) and near(display.getpixel((20, 600)), BLUE)
    thumb = fetch(inspector, f"/photos/{photo.id}/thumb")
    assert thumb.content_type == "image/jpeg"
    assert image(thumb).size == (240, 320)

    blobs = {blob.sha256: blob for blob in db.session.scalars(select(Blob))}
    assert set(blobs) == {photo.original_sha256, photo.display_sha256, photo.thumb_sha256, photo.print_sha256}
    assert blobs[photo.original_sha256].size == len(data)
    assert {blob.content_type for blob in blobs.values()} == {"image/jpeg"}
    entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "photo.create")).one()
    assert (entry.entity_id, entry.actor_id, entry.permit_id) == (photo.id, site["inspector"].id,
                                                                  site["permit"].id)


def test_a_second_get_with_the_etag_is_not_modified(site, login):
    inspector = login(site["inspector"])
    upload(inspector, site["permit"], make_jpeg(), inspection_id=site["inspection"].id)
    photo = db.session.scalars(select(Photo)).one()

    again = fetch(inspector.client, f"/photos/{photo.id}/thumb",
                  headers={"If-None-Match": f'"{photo.thumb_sha256}"'})

    assert again.status_code == 304 and again.data == b""


REFUSED = [
    pytest.param(png_declaring(20_000, 20_000), "bomb.png", "too many pixels", id="decompression-bomb"),
    pytest.param(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n" * 20, "plan.jpg", "not an image",
                 id="non-image"),
    pytest.param(b"", "empty.jpg", "empty", id="empty-file"),
    pytest.param(make_jpeg()[:2000], "cut.jpg", "damaged", id="truncated-jpeg"),
    # Refused from the header, before any pixel is decoded.
    pytest.param(jpeg_declaring(7000, 7000), "forged.jpg", "damaged or forged", id="jpeg-header-lies"),
    pytest.param(png_declaring(1, 49_000_000), "strip.png", "at most 16384 pixels", id="one-pixel-wide"),
    pytest.param(png_declaring(1_000, 13_000), "strip.png", "not a photo", id="too-narrow"),
    pytest.param(png_declaring(17_000, 2_000), "wide.png", "at most 16384 pixels", id="too-wide"),
]


@pytest.mark.parametrize(("data", "filename", "says"), REFUSED)
def test_a_bad_file_is_refused_beside_the_input_and_nothing_is_stored(site, login, app, data,
                                                                       filename, says):
    inspector = login(site["inspector"])
    files_before = blob_files(app)

    response = upload(inspector, site["permit"], data, filename=filename, caption="Should not stay",
                      inspection_id=site["inspection"].id)

    assert response.status_code == 422
    field = response.text.split('class="field has-error', 1)[1].split("</div>", 1)[0]
    assert 'type="file"' in field and says in field.lower()
    assert 'value="Should not stay"' in response.text  # the caption typed is kept for the next try
    assert (count(Photo), count(Blob), photo_audit()) == (0, 0, [])
    assert blob_files(app) == files_before


def test_no_file_chosen_says_so(site, login):
    response = login(site["inspector"]).post(
        f"/permits/{site['permit'].id}/photos?inspection_id={site['inspection'].id}", {"caption": "x"},
        htmx=picker(inspection_id=site["inspection"].id))

    assert response.status_code == 422
    assert "Choose a photo, or take one with the camera." in response.text
    assert count(Photo) == 0


def test_a_submitted_inspection_takes_no_more_photos(site, login, app):
    submitted = make_inspection(site["permit"], site["inspector"], status="submitted")
    files_before = blob_files(app)

    response = upload(login(site["inspector"]), site["permit"], make_jpeg(), inspection_id=submitted.id)

    assert response.status_code == 422
    assert "This inspection report was submitted on Jun 3, 2026 and can no longer change" in response.text
    assert (count(Photo), count(Blob)) == (0, 0)
    assert blob_files(app) == files_before


def test_a_submitted_inspections_findings_take_no_more_photos(site, login):
    finding = make_finding(make_inspection(site["permit"], site["inspector"], status="submitted"))

    response = upload(login(site["inspector"]), site["permit"], make_jpeg(), finding_id=finding.id)

    assert response.status_code == 422 and "can no longer change" in response.text
    assert count(Photo) == 0


@pytest.mark.parametrize("outsider", ["other_inspector", "other_permittee"])
def test_people_who_cannot_see_the_permit_cannot_get_or_add_photos(site, login, outsider):
    upload(login(site["inspector"]), site["permit"], make_jpeg(), inspection_id=site["inspection"].id)
    photo = db.session.scalars(select(Photo)).one()
    stranger = login(site[outsider])

    for kind in ("original", "display", "thumb"):
        assert fetch(stranger, f"/photos/{photo.id}/{kind}").status_code == 404
    assert stranger.get(f"/permits/{site['permit'].id}/photos").status_code == 404
    response = upload(stranger, site["permit"], make_jpeg(shade=30), inspection_id=site["inspection"].id)
    assert response.status_code == 404
    assert count(Photo) == 1


def test_the_owner_sees_the_photos_but_does_not_add_or_caption_an_inspections(site, login):
    upload(login(site["inspector"]), site["permit"], make_jpeg(), inspection_id=site["inspection"].id)
    photo = db.session.scalars(select(Photo)).one()
    owner = login(site["owner"])

    # A draft's photo is its author's alone; the owner sees it once the report is submitted.
    assert fetch(owner, f"/photos/{photo.id}/display").status_code == 404
    response = upload(owner, site["permit"], make_jpeg(shade=30), inspection_id=site["inspection"].id)
    assert response.status_code == 403
    assert owner.post(f"/photos/{photo.id}/caption", {"caption": "Mine now"}, htmx=f"photo-{photo.id}").status_code == 404
    db.session.expire_all()
    assert count(Photo) == 1 and db.session.get(Photo, photo.id).caption is None
    site["inspection"].status, site["inspection"].submitted_at = "submitted", site["inspection"].performed_at
    db.session.commit()
    assert fetch(owner, f"/photos/{photo.id}/display").status_code == 200
    assert owner.post(f"/photos/{photo.id}/caption", {"caption": "Mine now"}, htmx=f"photo-{photo.id}").status_code == 403


def test_the_same_photo_id_sent_twice_makes_one_photo(site, login):
    inspector = login(site["inspector"])
    photo_id = "0b7e1c9e-8f7a-4a57-9d1e-3f0c2b6a9e11"
    data = make_jpeg()
    url = f"/permits/{site['permit'].id}/photos?inspection_id={site['inspection'].id}"

    for _ in range(2):
        response = inspector.post(url, {"photo": (io.BytesIO(data), "a.jpg"), "photo_id": photo_id},
                                  htmx=picker(inspection_id=site["inspection"].id))
        assert response.status_code == 200
    other = inspector.post(url, {"photo": (io.BytesIO(make_jpeg(shade=30)), "b.jpg"), "photo_id": photo_id},
                           htmx=picker(inspection_id=site["inspection"].id))

    assert db.session.scalars(select(Photo.id)).all() == [photo_id]
    assert photo_audit() == ["photo.create"]
    assert other.status_code == 422 and "A different photo already has this photo id." in other.text


def test_a_record_of_another_permit_is_not_found(site, login, make):
    elsewhere = make.permit(inspectors=[site["inspector"]])
    foreign = make_inspection(elsewhere, site["inspector"])

    response = upload(login(site["inspector"]), site["permit"], make_jpeg(), inspection_id=foreign.id)

    assert response.status_code == 404
    assert count(Photo) == 0


def test_a_findings_photos_are_its_own(site, login):
    inspector = login(site["inspector"])
    finding = make_finding(site["inspection"])

    upload(inspector, site["permit"], make_jpeg(), caption="Whole site", inspection_id=site["inspection"].id)
    on_finding = upload(inspector, site["permit"], make_jpeg(shade=30), caption="Fence down",
                        finding_id=finding.id)

    assert "Fence down" in on_finding.text and "Whole site" not in on_finding.text
    photo = db.session.scalars(select(Photo).where(Photo.finding_id == finding.id)).one()
    assert photo.inspection_id == site["inspection"].id  # a finding's photo is part of its report


def test_a_close_out_photo_becomes_the_corrective_actions_evidence(site, login):
    # A close-out follows the report's submission (a draft's action is its author's alone).
    action = make_corrective_action(make_finding(make_inspection(site["permit"], site["inspector"],
                                                                 status="submitted")))
    owner = login(site["owner"])  # the permittee closes out corrective actions

    response = upload(owner, site["permit"], make_jpeg(), caption="Fence re-staked",
                      corrective_action_id=action.id)

    assert response.status_code == 200 and "Fence re-staked" in response.text
    photo = db.session.scalars(select(Photo)).one()
    db.session.refresh(action)
    assert action.evidence_photo_id == photo.id
    assert photo.finding_id is None and photo.inspection_id is None
    assert sorted(photo_audit()) == ["corrective_action.evidence", "photo.create"]


def test_a_verified_close_out_keeps_its_evidence(site, login):
    action = make_corrective_action(make_finding(make_inspection(site["permit"], site["inspector"],
                                                                 status="submitted")), status="verified")

    response = upload(login(site["owner"]), site["permit"], make_jpeg(), corrective_action_id=action.id)

    assert response.status_code == 422 and "verified" in response.text
    assert count(Photo) == 0


def test_captions_change_while_the_report_is_a_draft_only(site, login):
    inspector = login(site["inspector"])
    upload(inspector, site["permit"], make_jpeg(), caption="Frist", inspection_id=site["inspection"].id)
    photo = db.session.scalars(select(Photo)).one()

    edited = inspector.post(f"/photos/{photo.id}/caption", {"caption": "First inlet protection"}, htmx=f"photo-{photo.id}")

    assert edited.status_code == 200 and "First inlet protection" in edited.text
    db.session.expire_all()  # read what the request stored, not what this session loaded before
    assert db.session.get(Photo, photo.id).caption == "First inlet protection"

    site["inspection"].status, site["inspection"].submitted_at = "submitted", dt.datetime.now(dt.UTC)
    db.session.commit()
    refused = inspector.post(f"/photos/{photo.id}/caption", {"caption": "Changed later"}, htmx=f"photo-{photo.id}")

    assert refused.status_code == 422 and "can no longer change" in refused.text
    db.session.expire_all()
    assert db.session.get(Photo, photo.id).caption == "First inlet protection"


def test_an_upload_over_the_request_limit_gets_a_page_in_words(site, login, app):
    inspector = login(site["inspector"])
    app.config["MAX_CONTENT_LENGTH"] = 50_000

    response = upload(inspector, site["permit"], make_jpeg((1600, 1200)) + b"\0" * 60_000,
                      inspection_id=site["inspection"].id, htmx=False)

    assert response.status_code == 413
    assert "The upload is too large" in response.text and "the limit is 48 KB" in response.text
    assert count(Photo) == 0


def test_an_upload_without_htmx_goes_to_the_permits_photos(site, login):
    inspector = login(site["inspector"])

    response = upload(inspector, site["permit"], make_jpeg(), caption="Stockpile covered",
                      inspection_id=site["inspection"].id, htmx=False)

    assert response.status_code == 303
    page = inspector.get(response.headers["Location"])
    assert "Stockpile covered" in page.text and "Erosion control inspection, Jun 3, 2026" in page.text
    refused = upload(inspector, site["permit"], b"not a photo", inspection_id=site["inspection"].id,
                     htmx=False)
    assert refused.status_code == 422 and "<html" in refused.text and "not an image" in refused.text


def test_an_upload_must_say_what_it_is_of(site, login):
    response = upload(login(site["inspector"]), site["permit"], make_jpeg())

    assert response.status_code == 400
    assert "Say what the photo is of" in response.text


@pytest.mark.parametrize("mode", ["RGBA", "P", "LA"])
def test_a_png_with_transparency_or_a_palette_is_stored_with_its_renditions(site, login, mode):
    """A screenshot or a drawn sketch: the original kept byte for byte, the renditions flattened to JPEG (the
    renditions of a PNG that was not plain RGB closed the upload before it was stored: a 500)."""
    inspector = login(site["inspector"])
    out = io.BytesIO()
    Image.new(mode, (64, 48), {"RGBA": (10, 20, 30, 128), "P": 3, "LA": (90, 200)}[mode]).save(out, "PNG")

    response = upload(inspector, site["permit"], out.getvalue(), caption="Sketch of the outfall",
                      filename="sketch.png", inspection_id=site["inspection"].id)

    assert response.status_code == 200, response.text
    photo = db.session.scalars(select(Photo)).one()
    original = fetch(inspector, f"/photos/{photo.id}/original")
    assert original.data == out.getvalue() and original.content_type == "image/png"
    assert image(fetch(inspector, f"/photos/{photo.id}/display")).size == (64, 48)


def test_a_photo_is_served_as_an_image_whatever_type_an_earlier_upload_of_its_bytes_declared(site, login, make):
    """A stored file's row keeps the type of the first upload of its bytes. A town's admin uploading a photo's
    bytes as a permits file declared `text/html`; the same photo uploaded later was then served as an HTML page
    on the app's origin. A photo's file is served as the image it is."""
    data = make_jpeg((640, 480))
    admin = login(make.user("admin"))
    admin.post("/transfer/import/permits", {"permits-file": (io.BytesIO(data), "permits.csv", "text/html")})
    assert db.session.get(Blob, hashlib.sha256(data).hexdigest()).content_type == "text/html"
    inspector = login(site["inspector"])
    assert upload(inspector, site["permit"], data, inspection_id=site["inspection"].id).status_code == 200
    photo = db.session.scalars(select(Photo)).one()
    original = fetch(inspector, f"/photos/{photo.id}/original")
    assert original.status_code == 200 and original.content_type == "image/jpeg"
    assert original.headers["Content-Disposition"].endswith(".jpg")
    assert original.data == data


@pytest.mark.parametrize("taken, offset", [("9999:12:31 23:59:59", None), ("0001:01:01 00:00:00", "+00:00")])
def test_a_camera_clock_never_set_or_gone_wild_keeps_the_photo_without_its_time(site, login, taken, offset):
    """A photo dated 9999 by its camera was a 500; one dated year 1 was stored, then made a 500 of the photo list
    and of the draft holding it, which its inspector could no longer open to take it off."""
    draft, permit = site["inspection"], site["permit"]
    draft.latitude, draft.longitude = permit.latitude, permit.longitude  # as Start places it: on the permit's site
    db.session.commit()
    inspector = login(site["inspector"])
    answer = upload(inspector, site["permit"], jpeg(1, taken=taken, offset=offset), inspection_id=site["inspection"].id)
    assert answer.status_code == 200
    photo = db.session.scalars(select(Photo)).one()
    assert photo.taken_at is None
    assert inspector.get(f"/permits/{site['permit'].id}/photos").status_code == 200
    assert inspector.get(f"/inspections/{site['inspection'].id}").status_code == 200


def test_a_photo_stored_with_a_year_1_camera_time_before_such_times_were_dropped_still_prints(make, site, login):
    """Rows stored before: the draft's page opened, but its PDF (and so its signing) was a 500."""
    draft, permit = site["inspection"], site["permit"]
    draft.latitude, draft.longitude = permit.latitude, permit.longitude
    photo = make.photo(permit, inspection=draft)
    photo.taken_at = dt.datetime(1, 1, 1, tzinfo=dt.UTC)  # as an upload stored it then
    db.session.commit()
    inspector = login(site["inspector"])
    assert inspector.get(f"/inspections/{draft.id}").status_code == 200
    pdf = inspector.get(f"/documents/inspections/{draft.id}.pdf")
    assert pdf.status_code == 200 and pdf.mimetype == "application/pdf"


PHOTO_ID = "0b7e1c9e-8f7a-4a57-9d1e-3f0c2b6a9e11"


def test_a_photo_id_in_upper_case_is_the_same_photo_sent_again(site, login):
    # Stored as sent, the upper-case id made a second photo when the same one came again with it in lower case
    # (as the sync API writes every id).
    inspector = login(site["inspector"])
    url = f"/permits/{site['permit'].id}/photos?inspection_id={site['inspection'].id}"
    data = make_jpeg()
    for photo_id in (PHOTO_ID.upper(), PHOTO_ID):
        answer = inspector.post(url, {"photo": (io.BytesIO(data), "a.jpg"), "photo_id": photo_id},
                                htmx=picker(inspection_id=site["inspection"].id))
        assert answer.status_code == 200, answer.text[:300]
    assert db.session.scalars(select(Photo.id)).all() == [PHOTO_ID]


@pytest.mark.parametrize("photo_id", [PHOTO_ID.replace("-", ""), "0b7e-1c9e8f7a-4a579d1e-3f0c-2b6a9e11"])
def test_a_photo_id_laid_out_otherwise_is_refused_and_nothing_is_stored(site, login, photo_id):
    inspector = login(site["inspector"])
    answer = inspector.post(f"/permits/{site['permit'].id}/photos?inspection_id={site['inspection'].id}",
                            {"photo": (io.BytesIO(make_jpeg()), "a.jpg"), "photo_id": photo_id},
                            htmx=picker(inspection_id=site["inspection"].id))
    assert answer.status_code == 422 and "The photo id is not a UUID." in answer.text
    assert db.session.scalar(select(func.count()).select_from(Photo)) == 0
