"""Photo checks, EXIF reading and renditions, on images made here with Pillow."""
from __future__ import annotations

import hashlib
import io
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from PIL import ExifTags, Image

from inspect_app.blobs.store import DiskStore
from inspect_app.photos.processing import (
    MAX_BYTES,
    PhotoRejected,
    inspect_photo,
    make_print_rendition,
    make_renditions,
)
from tests.builders import BLUE, RED, jpeg, png_declaring

def encode(image: Image.Image, image_format: str) -> bytes:
    out = io.BytesIO()
    image.save(out, image_format)
    return out.getvalue()


def opened(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


# 42.05 N, 72.58 W (western Massachusetts) as degrees, minutes, seconds.
AMHERST_GPS = ("N", (42.0, 3.0, 0.0), "W", (72.0, 34.0, 48.0))


def test_orientation_6_photo_is_shown_upright() -> None:
    data = jpeg(size=(400, 300), orientation=6)

    info = inspect_photo(data)
    display, thumb, _ = make_renditions(data)

    assert (info.width, info.height, info.orientation) == (300, 400, 6)
    display_image, thumb_image = opened(display), opened(thumb)
    assert display_image.format == "JPEG"
    assert display_image.size == (300, 400)  # portrait, not upscaled
    assert thumb_image.size == (240, 320)
    # Orientation 6 means "turn 90 degrees clockwise to view": the red top edge ends up on the right.
    assert _near(display_image.getpixel((280, 200)), RED)
    assert _near(display_image.getpixel((20, 200)), BLUE)
    assert _near(thumb_image.getpixel((230, 160)), RED)


def test_exif_time_and_gps_are_read() -> None:
    data = jpeg(taken="2024:05:14 09:30:12", offset="-04:00", gps=AMHERST_GPS)

    info = inspect_photo(data)

    assert info.taken_at == datetime(2024, 5, 14, 9, 30, 12, tzinfo=timezone(timedelta(hours=-4)))
    assert info.latitude == pytest.approx(42.05, abs=1e-4)
    assert info.longitude == pytest.approx(-72.58, abs=1e-4)


def test_south_and_east_give_the_signs_and_time_without_offset_stays_local() -> None:
    sydney = ("S", (33.0, 52.0, 7.68), "E", (151.0, 12.0, 33.48))
    data = jpeg(taken="2023:12:01 16:05:00", gps=sydney)

    info = inspect_photo(data)

    assert info.taken_at == datetime(2023, 12, 1, 16, 5, 0)  # naive: the camera said no zone
    assert info.latitude == pytest.approx(-33.8688, abs=1e-4)
    assert info.longitude == pytest.approx(151.2093, abs=1e-4)


def test_photo_without_exif_has_no_time_or_place() -> None:
    info = inspect_photo(jpeg())

    assert (info.orientation, info.taken_at, info.latitude, info.longitude) == (1, None, None, None)
    assert (info.width, info.height, info.format, info.content_type) == (400, 300, "JPEG", "image/jpeg")


def test_blank_time_and_gps_without_hemisphere_are_dropped() -> None:
    data = jpeg(taken="0000:00:00 00:00:00", gps=("", (42.0, 3.0, 0.0), "", (72.0, 34.0, 48.0)))

    info = inspect_photo(data)

    assert (info.taken_at, info.latitude, info.longitude) == (None, None, None)


def test_broken_exif_costs_the_metadata_not_the_photo() -> None:
    # An IFD that claims 255 entries but holds one: Pillow warns "Corrupt EXIF data".
    broken = b"Exif\x00\x00II*\x00\x08\x00\x00\x00\xff\x00\x12\x01\x03\x00\x01\x00\x00\x00\x06\x00"
    out = io.BytesIO()
    Image.new("RGB", (40, 30), RED).save(out, "JPEG", exif=broken)

    info = inspect_photo(out.getvalue())
    display, *_ = make_renditions(out.getvalue())

    assert (info.orientation, info.taken_at, info.latitude) == (1, None, None)
    assert opened(display).size == (40, 30)


def test_original_is_untouched_and_its_sha256_is_its_identity(tmp_path: Path) -> None:
    original = jpeg(orientation=6, taken="2024:05:14 09:30:12", gps=AMHERST_GPS)
    photo_file = tmp_path / "IMG_0001.jpg"
    photo_file.write_bytes(original)

    with photo_file.open("rb") as stream:
        info = inspect_photo(stream)
        make_renditions(stream)
    stored_sha = DiskStore(tmp_path / "blobs").put_file(photo_file)

    assert photo_file.read_bytes() == original
    assert info.sha256 == hashlib.sha256(original).hexdigest() == stored_sha
    assert info.byte_size == len(original)
    # The stored original keeps its EXIF, GPS included, byte for byte.
    assert (tmp_path / "blobs" / stored_sha[:2] / stored_sha[2:4] / stored_sha).read_bytes() == original


def test_renditions_carry_no_exif_and_no_gps() -> None:
    renditions = make_renditions(jpeg(orientation=6, taken="2024:05:14 09:30:12", gps=AMHERST_GPS))

    for rendition in renditions:  # display, thumbnail and the print copy PDFs embed
        exif = opened(rendition).getexif()
        assert dict(exif) == {}
        assert exif.get_ifd(ExifTags.IFD.GPSInfo) == {}


def test_renditions_do_not_keep_a_comment_where_a_camera_wrote_the_place() -> None:
    # Some GPS-stamp camera apps write the place in the JPEG's comment (COM), not only in EXIF.
    out = io.BytesIO()
    opened(jpeg(size=(1600, 1200))).save(out, "JPEG", comment=b"GPS 42.0172N 72.0511W Lot 7")
    assert opened(out.getvalue()).info["comment"] == b"GPS 42.0172N 72.0511W Lot 7"

    for rendition in [*make_renditions(out.getvalue()), make_print_rendition(out.getvalue())]:
        assert b"42.0172N" not in rendition and "comment" not in opened(rendition).info


def test_12_megapixel_jpeg_is_decoded_at_half_scale_and_turned_upright() -> None:
    display, thumb, printed = make_renditions(jpeg(size=(4000, 3000), orientation=6))

    # Draft mode decodes 4000x3000 at 1/2 scale: 2000 px, "about 2048", without a full decode.
    display_image = opened(display)
    assert display_image.size == (1500, 2000)
    assert _near(display_image.getpixel((1400, 1000)), RED)  # the top edge, turned to the right
    assert opened(thumb).size == (240, 320)
    # The print rendition comes from the same decode: upright, 1,200 px long, no EXIF.
    print_image = opened(printed)
    assert print_image.size == (900, 1200) and _near(print_image.getpixel((880, 600)), RED)
    assert not print_image.getexif()


def test_display_long_edge_is_at_most_2048() -> None:
    # 2400 px halves to 1200, too small, so this one is decoded fully and scaled down.
    display, thumb, _ = make_renditions(jpeg(size=(1800, 2400)))

    assert opened(display).size == (1536, 2048)
    assert opened(thumb).size == (240, 320)


def test_png_with_transparency_becomes_a_jpeg_on_white() -> None:
    image = Image.new("RGBA", (64, 48), (0, 0, 0, 0))
    image.paste((20, 20, 220, 255), (0, 0, 32, 48))
    data = encode(image, "PNG")

    info = inspect_photo(data)
    display, *_ = make_renditions(data)

    assert (info.format, info.content_type) == ("PNG", "image/png")
    shown = opened(display)
    assert shown.format == "JPEG" and shown.mode == "RGB"
    assert _near(shown.getpixel((10, 24)), BLUE)
    assert _near(shown.getpixel((54, 24)), (255, 255, 255))


def test_webp_is_accepted() -> None:
    data = encode(Image.new("RGB", (120, 90), RED), "WEBP")

    info = inspect_photo(data)
    display, *_ = make_renditions(data)

    assert (info.format, info.width, info.height) == ("WEBP", 120, 90)
    assert opened(display).size == (120, 90)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        pytest.param(b"", "is empty", id="empty"),
        pytest.param(b"Silt fence down at the east swale.\n", "not an image", id="text"),
        pytest.param(encode(Image.new("RGB", (10, 10)), "GIF"), "GIF images are not accepted", id="gif"),
        pytest.param(
            b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 100, "HEIC", id="heic"
        ),
        # Over our 50 MP, under Pillow's own limit: only our check stands in the way.
        pytest.param(png_declaring(8000, 8000), "too many pixels: 8000×8000 is 64 MP", id="bomb-64mp"),
        # Between Pillow's limit and twice it: Pillow only warns, which must not leak.
        pytest.param(png_declaring(10000, 10000), "too many pixels: 10000×10000", id="bomb-100mp"),
        # Beyond twice Pillow's limit: Pillow raises DecompressionBombError.
        pytest.param(png_declaring(100000, 100000), "too many pixels", id="bomb-10gp"),
    ],
)
def test_unacceptable_files_are_refused_with_a_clear_message(data: bytes, says: str) -> None:
    with pytest.raises(PhotoRejected, match=says):
        inspect_photo(data)


@pytest.mark.parametrize("declared", [(8000, 8000), (10000, 10000), (100000, 100000)])
def test_renditions_refuse_decompression_bombs_too(declared: tuple[int, int]) -> None:
    with pytest.raises(PhotoRejected, match="too many pixels"):
        make_renditions(png_declaring(*declared))


def test_photo_over_the_pixel_limit_is_refused() -> None:
    with pytest.raises(PhotoRejected, match=r"400×300 is 0.12 MP; the limit is 0.1 MP"):
        inspect_photo(jpeg(size=(400, 300)), max_pixels=100_000)


def test_oversize_file_is_refused() -> None:
    data = jpeg()

    with pytest.raises(PhotoRejected, match="too large"):
        inspect_photo(data, max_bytes=len(data) - 1)
    assert inspect_photo(data, max_bytes=len(data)).byte_size == len(data)


def test_file_over_25_mb_is_refused_by_default() -> None:
    data = jpeg() + b"\x00" * MAX_BYTES  # a JPEG padded past the limit

    with pytest.raises(PhotoRejected, match="the limit is 25 MB"):
        inspect_photo(data)


def test_truncated_jpeg_is_refused_when_decoded() -> None:
    noisy = Image.merge("RGB", [Image.effect_noise((256, 256), 60) for _ in range(3)])
    data = encode(noisy, "JPEG")

    with pytest.raises(PhotoRejected, match="damaged"):
        make_renditions(data[: len(data) // 2])


@pytest.mark.parametrize("position", [40, 45], ids=["chunk-type", "pixel-data"])
def test_damaged_png_is_refused(position: int) -> None:
    data = bytearray(encode(Image.new("RGB", (64, 64), RED), "PNG"))
    data[position] ^= 0xFF  # in the IDAT chunk's name or its compressed pixels: the CRC no longer matches

    with pytest.raises(PhotoRejected, match="damaged"):
        inspect_photo(bytes(data))


def _near(pixel: object, colour: tuple[int, int, int], tolerance: int = 40) -> bool:
    """True if an RGB pixel is within ``tolerance`` of ``colour`` on every channel (JPEG is lossy)."""
    assert isinstance(pixel, tuple)
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=True))
