"""Photos through the real app with their files in an S3 bucket (BLOB_BACKEND=s3): stored there byte for byte,
served to those who may see the permit after the same check as on disk, streamed (never a bucket's URL), and
nothing on the app server's disk."""
from __future__ import annotations

import hashlib

from sqlalchemy import select
from tests.photos.photo_builders import make_jpeg
from tests.photos.test_upload import fetch, upload
from tests.s3_server import bucket_client, bucket_keys

from inspect_app.extensions import db
from inspect_app.photos.models import Photo


def test_a_photo_kept_in_the_bucket_is_served_to_its_town_only(s3_app, s3_settings, site, login, make):
    inspector = login(site["inspector"])
    data = make_jpeg((1200, 900))
    assert upload(inspector, site["permit"], data, caption="Inlet",
                  inspection_id=site["inspection"].id).status_code == 200
    photo = db.session.scalars(select(Photo)).one()
    shas = {photo.original_sha256, photo.display_sha256, photo.thumb_sha256, photo.print_sha256}
    assert bucket_keys(s3_settings) == sorted(f"{s[:2]}/{s[2:4]}/{s}" for s in shas)

    original = fetch(inspector, f"/photos/{photo.id}/original")
    assert original.status_code == 200 and original.data == data
    assert hashlib.sha256(original.data).hexdigest() == photo.original_sha256
    assert (original.content_type, original.content_length) == ("image/jpeg", len(data))
    assert original.headers["ETag"] == f'"{photo.original_sha256}"'
    assert "private" in original.headers["Cache-Control"]
    assert "Location" not in original.headers and s3_settings["S3_ENDPOINT_URL"] not in original.headers.values()
    again = fetch(inspector.client, f"/photos/{photo.id}/thumb", headers={"If-None-Match": f'"{photo.thumb_sha256}"'})
    assert again.status_code == 304 and again.data == b""
    part = fetch(inspector.client, f"/photos/{photo.id}/original", headers={"Range": "bytes=2-9"})
    assert part.status_code == 206 and part.data == data[2:10]
    # Once the report is submitted, the permit's owner and its town's agent see it too.
    site["inspection"].status, site["inspection"].submitted_at = "submitted", site["inspection"].performed_at
    db.session.commit()
    for reader in (site["owner"], make.user("agent")):
        assert fetch(login(reader), f"/photos/{photo.id}/display").status_code == 200, reader.role

    for stranger in (make.user("agent", town="southborough"), site["other_inspector"], site["other_permittee"]):
        client = login(stranger)
        for kind in ("original", "display", "thumb", "print"):
            assert fetch(client, f"/photos/{photo.id}/{kind}").status_code == 404, (stranger.role, kind)


def test_a_photo_whose_file_is_missing_from_the_bucket_is_not_found(s3_app, s3_settings, site, login):
    inspector = login(site["inspector"])
    upload(inspector, site["permit"], make_jpeg(), inspection_id=site["inspection"].id)
    photo = db.session.scalars(select(Photo)).one()
    bucket_client(s3_settings).delete_object(Bucket=s3_settings["S3_BUCKET"], Key=(
        f"{photo.thumb_sha256[:2]}/{photo.thumb_sha256[2:4]}/{photo.thumb_sha256}"))
    assert fetch(inspector, f"/photos/{photo.id}/thumb").status_code == 404
    assert fetch(inspector, f"/photos/{photo.id}/display").status_code == 200
