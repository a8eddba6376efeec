"""Photos get a print rendition (<= 1,200 px, JPEG quality ~80) made once with the others; PDFs embed it."""
from __future__ import annotations

import io

import pypdf
from PIL import Image

from bench.pdf import noisy_jpeg
from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.blobs.files import blob_store
from inspect_app.blobs.models import Blob
from inspect_app.photos.processing import PRINT_MAX_BYTES
from inspect_app.photos.services import store_photo
from tests.photos.photo_builders import make_jpeg


def _size(sha: str) -> tuple[int, int]:
    with Image.open(blob_store().path(sha)) as image:
        assert image.format == "JPEG"
        return image.size


def test_a_photo_is_stored_with_its_print_rendition_and_the_report_embeds_it(make):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    draft = make.inspection(permit, status="draft", inspector=inspector)
    photo = make.photo(permit, inspection=draft, size=(4000, 3000))
    assert max(_size(photo.display_sha256)) > 1200
    assert _size(photo.print_sha256) == (1200, 900)
    assert db.session.get(Blob, photo.print_sha256).content_type == "image/jpeg"
    assert blob_store().size(photo.print_sha256) < blob_store().size(photo.display_sha256)

    rendered = documents.rendered_report_pdf(draft)
    embedded = [image for page in pypdf.PdfReader(io.BytesIO(rendered)).pages for image in page.images]
    assert [image.image.size for image in embedded] == [(1200, 900)]
    assert blob_store().path(photo.print_sha256).read_bytes() in rendered  # embedded as stored, not re-encoded


def test_a_photo_stored_before_print_renditions_gets_one_made_for_its_pdf(make):
    permit = make.permit()
    draft = make.inspection(permit, status="draft")
    photo = make.photo(permit, inspection=draft, size=(3000, 2000))
    db.session.execute(db.text("UPDATE photos SET print_sha256 = NULL"))  # as stored before this rendition
    db.session.commit()
    db.session.expire_all()
    pdf = pypdf.PdfReader(io.BytesIO(documents.rendered_report_pdf(draft)))
    assert [image.image.size for page in pdf.pages for image in page.images] == [(1200, 800)]
    assert photo.print_sha256 is None


def test_the_print_rendition_of_a_photo_taken_upright_stays_upright(make):
    permit = make.permit()
    draft = make.inspection(permit, status="draft")
    # EXIF orientation 6: the tablet was held upright; the stored pixels lie on their side.
    photo = store_photo(None, permit, io.BytesIO(make_jpeg((1600, 1200), orientation=6)), inspection=draft)
    db.session.commit()
    assert _size(photo.print_sha256) == (900, 1200)
    with Image.open(blob_store().path(photo.print_sha256)) as printed:
        right, left = printed.getpixel((850, 600)), printed.getpixel((50, 600))
    # The stored pixels' red top half is, turned upright, the right half (as on the display rendition).
    assert right[0] > 150 > right[2] and left[2] > 150 > left[0]


def test_a_report_of_24_photos_is_small_enough_to_mail(make):
    """24 ordinary 12 MP phone photos (noisy: detail that scaling down does not average away, see bench/pdf.py)
    made a 5.4 MB report at quality 80; the print renditions' encoding is chosen by size: at most 5 MB."""
    permit = make.permit()
    draft = make.inspection(permit, status="draft")
    for seed in range(24):
        store_photo(None, permit, io.BytesIO(noisy_jpeg(seed)), inspection=draft, caption=f"Photo {seed + 1}")
    db.session.commit()
    pdf = documents.rendered_report_pdf(draft)
    assert sum(len(page.images) for page in pypdf.PdfReader(io.BytesIO(pdf)).pages) == 24
    assert len(pdf) <= 5 * 1024 * 1024, f"{len(pdf) / 2**20:.2f} MB"


def test_the_print_rendition_keeps_quality_80_unless_its_size_asks_for_less(make):
    """A smooth photo prints at quality 80 as before; a noisy 12 MP one is encoded at the best quality within the
    print rendition's size, still 1,200 px long."""
    def tables(data: bytes):
        with Image.open(io.BytesIO(data)) as image:
            return image.quantization

    at_80 = io.BytesIO()
    Image.new("RGB", (16, 16), "white").save(at_80, "JPEG", quality=80)
    permit = make.permit()
    smooth = make.photo(permit, size=(4000, 3000))
    assert tables(blob_store().path(smooth.print_sha256).read_bytes()) == tables(at_80.getvalue())
    noisy = store_photo(None, permit, io.BytesIO(noisy_jpeg(3)))
    db.session.commit()
    printed = blob_store().path(noisy.print_sha256).read_bytes()
    assert len(printed) <= PRINT_MAX_BYTES and _size(noisy.print_sha256) == (1200, 900)
    assert tables(printed) != tables(at_80.getvalue())
