"""store_photo called directly, as the sync worker and other domains do."""
from __future__ import annotations

import datetime as dt
import io

import pytest
from sqlalchemy import func, select
from tests.photos.photo_builders import blob_files, make_inspection, make_jpeg

from inspect_app.extensions import db
from inspect_app.photos import services
from inspect_app.blobs.models import Blob
from inspect_app.photos.models import Photo
from inspect_app.photos.processing import PhotoRejected


class OneWayStream(io.RawIOBase):
    """A stream that can only be read forward, like a socket."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, buffer) -> int:
        chunk = self._data.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def count(model) -> int:
    return db.session.scalar(select(func.count()).select_from(model))


def test_a_camera_time_with_its_offset_is_kept_as_that_instant(site):
    data = make_jpeg(taken="2026:01:15 16:05:00", orientation=None, gps=None)
    photo = services.store_photo(site["inspector"], site["permit"], data, inspection=site["inspection"])

    # January: Eastern Standard Time, UTC-5.
    assert photo.taken_at == dt.datetime(2026, 1, 15, 21, 5, tzinfo=dt.UTC)
    assert (photo.latitude, photo.longitude, photo.width, photo.height) == (None, None, 1200, 900)


def test_a_photo_without_exif_time_has_none(site):
    photo = services.store_photo(site["inspector"], site["permit"], make_jpeg(taken=None),
                                 inspection=site["inspection"])

    assert photo.taken_at is None


def test_a_stream_that_cannot_seek_is_stored_whole(site, app):
    data = make_jpeg()

    photo = services.store_photo(site["inspector"], site["permit"], io.BufferedReader(OneWayStream(data)),
                                 inspection=site["inspection"])

    with services.blob_store().open(photo.original_sha256) as stored:
        assert stored.read() == data


def test_the_same_file_on_two_records_shares_its_blobs(site):
    data = make_jpeg()
    other = make_inspection(site["permit"], site["inspector"])

    first = services.store_photo(site["inspector"], site["permit"], data, inspection=site["inspection"])
    second = services.store_photo(site["inspector"], site["permit"], data, inspection=other)
    db.session.commit()

    assert first.id != second.id and first.original_sha256 == second.original_sha256
    assert (count(Photo), count(Blob)) == (2, 4)  # original, display, thumbnail, print


def test_the_same_file_sent_again_to_the_same_record_is_one_photo(site):
    data = make_jpeg()

    first = services.store_photo(site["inspector"], site["permit"], data, inspection=site["inspection"])
    again = services.store_photo(site["inspector"], site["permit"], io.BytesIO(data),
                                 inspection=site["inspection"])

    assert again is first and count(Photo) == 1


def test_a_photo_from_an_uploaded_blob(site, app):
    """The sync protocol uploads the original in resumable chunks, then makes the photo from it."""
    data = make_jpeg()
    store = services.blob_store()
    sha = store.put_bytes(data)

    photo = services.store_photo_from_blob(site["inspector"], site["permit"], sha,
                                           inspection=site["inspection"],
                                           photo_id="5a0f7c52-3a43-4a8e-8a57-2d2f3f0ad6a1")

    assert (photo.id, photo.original_sha256) == ("5a0f7c52-3a43-4a8e-8a57-2d2f3f0ad6a1", sha)
    assert store.exists(photo.display_sha256) and store.exists(photo.thumb_sha256)


def test_a_photo_id_that_is_not_a_uuid_is_refused(site, app):
    before = blob_files(app)

    with pytest.raises(services.PhotoRefused, match="not a UUID"):
        services.store_photo(site["inspector"], site["permit"], make_jpeg(), photo_id="../../etc",
                             inspection=site["inspection"])

    assert blob_files(app) == before and count(Photo) == 0


def test_a_file_damaged_past_its_headers_stores_nothing(site, app):
    before = blob_files(app)
    data = make_jpeg()
    damaged = data[:600] + b"\xff\xd9" + b"\x00" * 4000  # headers intact, scan data gone

    with pytest.raises(PhotoRejected):
        services.store_photo(site["inspector"], site["permit"], damaged, inspection=site["inspection"])

    assert blob_files(app) == before and (count(Photo), count(Blob)) == (0, 0)
