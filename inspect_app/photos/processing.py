"""Check uploaded photos, read their EXIF time and place, and make display and thumbnail renditions.

Pure Pillow: no Flask, no database. The original is never modified; the SHA-256 of its bytes is its
identity, and the renditions are derived copies made only for viewing.
"""
from __future__ import annotations

import hashlib
import io
import math
import struct
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO, NamedTuple

from PIL import ExifTags, Image, ImageDraw, ImageFile, ImageFont, UnidentifiedImageError

from inspect_app.fields import FIRST_YEAR, LAST_YEAR
from inspect_app.photos.markup import Shape

MAX_BYTES = 25 * 1024 * 1024
MAX_PIXELS = 50_000_000
# Beyond any camera (a 50 MP phone is 8160 px long) or panorama (about 4:1): refused from the header.
MAX_EDGE = 16_384
MAX_ASPECT = 12
# A JPEG spends at least one bit on every 8×8 block, even of a blank picture: 512 pixels per byte.
JPEG_MAX_PIXELS_PER_BYTE = 512
DISPLAY_LONG_EDGE = 2048
# JPEG draft mode decodes at 1/2, 1/4 or 1/8 scale. A 12 MP photo (4000 px) decoded at half scale is
# 2000 px: close enough to 2048 for viewing, at a quarter of the decoding work, so draft may stop here.
DISPLAY_MIN_DECODED_EDGE = 1920
THUMB_LONG_EDGE = 320
DISPLAY_QUALITY = 85
THUMB_QUALITY = 80
# A report's photo grid prints a photo about 3.3 in wide: 1,200 px is about 300 dpi there (and on a
# full-width 4 in print), at a fraction of the display rendition's size, so a report of 24 photos mails.
PRINT_LONG_EDGE = 1200
PRINT_QUALITY = 80
# The encoding is chosen by size: a report of 24 photos must stay within 5 MB to be mailed, and the photos are
# nearly all of it. An ordinary 12 MP phone photo (sensor noise, gravel, grass: detail at every scale, which
# scaling down does not average away) is about 240 KB at quality 80, so 24 of them made a 5.4 MB report. Each
# print rendition is encoded at the first of these qualities that keeps it within PRINT_MAX_BYTES (24 of them
# and the report's text stay under 5 MB); a smooth photo stays at quality 80, a noisy one steps down, where
# the loss is in the noise. One still too large at the last quality is kept at that quality.
PRINT_MAX_BYTES = 190 * 1024
PRINT_QUALITIES = (PRINT_QUALITY, 75, 70, 65, 60, 55, 50)
# The print copy is scaled from the display-sized picture by 5/3, no whole factor, so one resampling pass
# does all of it, and it is the largest part of the work after decoding. Bilinear (a triangle filter as wide
# as the scale, so no aliasing) does it in about 3/5 of bicubic's time and 2/5 of Lanczos's. Against a Lanczos
# scaling of the fully decoded photo, bench/photos.py's 12 MP photo: bilinear 44.1, Lanczos 44.6, bicubic
# 45.0 dB PSNR; a zone plate: 27.0, 30.0, 29.1 dB, no moiré. The difference is in detail finer than 1/300 in,
# which a printed page does not show. Box (and Hamming) show moiré on fine patterns (silt fence mesh, a sign).
PRINT_RESAMPLING = Image.Resampling.BILINEAR
# The thumbnail (about 1/4 of the print copy) is first averaged down by a whole factor, leaving at least
# 1.5 times its size for Lanczos: cheap, and closer to a full Lanczos pass than the display-sized picture
# reduced with Pillow's default gap of 2.
THUMB_REDUCING_GAP = 1.5

ACCEPTED_FORMATS = ("JPEG", "PNG", "WEBP")
CONTENT_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
_ACCEPTED_SIGNATURES = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n")  # JPEG, PNG; WebP is RIFF....WEBP
# ISO-BMFF brands of HEIF/HEIC files (iPhone default); Pillow here has no HEIF decoder.
_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}
# What Pillow raises on damaged or hostile files once a decoder is running.
_DECODER_ERRORS = (OSError, SyntaxError, EOFError, ValueError, struct.error)
# What Pillow raises on a malformed EXIF block (not OSError: that is a damaged PNG being decoded).
_METADATA_ERRORS = (SyntaxError, EOFError, ValueError, struct.error, KeyError, IndexError, TypeError)
_TRANSPOSE = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}

PhotoData = bytes | bytearray | memoryview | BinaryIO


class Renditions(NamedTuple):
    """The JPEGs made for viewing a photo: upright, without EXIF."""

    display: bytes  # pages: at most DISPLAY_LONG_EDGE px long
    thumb: bytes  # grids: at most THUMB_LONG_EDGE px long
    print: bytes  # PDFs: at most PRINT_LONG_EDGE px long


class PhotoRejected(ValueError):
    """The upload is not a photo we accept; the message says why, in words for the inspector."""


@dataclass(frozen=True)
class PhotoInfo:
    """Facts about an accepted original photo."""

    sha256: str
    byte_size: int
    format: str  # "JPEG", "PNG" or "WEBP"
    width: int  # as shown, after the EXIF orientation is applied
    height: int
    orientation: int  # EXIF Orientation 1-8; 1 when absent
    taken_at: datetime | None  # EXIF DateTimeOriginal; tz-aware only if OffsetTimeOriginal is present
    latitude: float | None  # decimal degrees, south negative
    longitude: float | None  # decimal degrees, west negative

    @property
    def content_type(self) -> str:
        """The MIME type of the original."""
        return CONTENT_TYPES[self.format]


@dataclass(frozen=True)
class _ExifFacts:
    """What the EXIF block says about a photo."""

    orientation: int
    taken_at: datetime | None
    latitude: float | None
    longitude: float | None


def inspect_photo(
    data: PhotoData, *, max_bytes: int = MAX_BYTES, max_pixels: int = MAX_PIXELS
) -> PhotoInfo:
    """Check that ``data`` is an acceptable photo and read its metadata; raise PhotoRejected if not.

    Nothing is decoded but the headers (and a PNG whose EXIF follows its pixels); a JPEG damaged past
    its headers is refused by make_renditions, so call both before storing anything.
    """
    stream, byte_size = _seekable(data, max_bytes)
    if byte_size == 0:
        raise PhotoRejected("The photo file is empty.")
    if byte_size > max_bytes:
        raise PhotoRejected(
            f"The photo is too large: {_megabytes(byte_size)} MB;"
            f" the limit is {max_bytes / (1024 * 1024):g} MB."
        )
    with _open_photo(stream, max_pixels) as im:
        im.verify()  # checks chunk CRCs etc. without decoding; the image must be reopened after
    with _open_photo(stream, max_pixels) as im:
        # MPO is what Pillow calls a JPEG carrying extra frames (some phones' depth or preview images).
        image_format = "JPEG" if im.format == "MPO" else str(im.format)
        width, height = im.size
        exif = _read_exif(im)
    if exif.orientation in (5, 6, 7, 8):  # these orientations turn the picture a quarter turn
        width, height = height, width
    return PhotoInfo(
        sha256=_sha256(stream),
        byte_size=byte_size,
        format=image_format,
        width=width,
        height=height,
        orientation=exif.orientation,
        taken_at=exif.taken_at,
        latitude=exif.latitude,
        longitude=exif.longitude,
    )


def make_renditions(data: PhotoData, *, max_pixels: int = MAX_PIXELS) -> Renditions:
    """Make the display, thumbnail and print JPEGs: upright, at most 2048, 320 and 1200 px long, no EXIF.

    Decoding is most of the work, so the photo is decoded once, at the smallest scale the display
    rendition allows (JPEG draft mode): it is turned (or used as it is, when upright) while the file is
    open, and the smaller renditions are scaled from it.
    """
    stream, _ = _seekable(data, MAX_BYTES)
    with _open_photo(stream, max_pixels) as im:
        # Draft mode lets libjpeg decode at a reduced scale (DCT scaling: 1/2, 1/4 or 1/8), so a 12 MP
        # photo is never fully decoded; other formats ignore it.
        im.draft("RGB", _draft_size(im.size, DISPLAY_MIN_DECODED_EDGE))
        icc_profile = im.info.get("icc_profile") if im.mode in ("RGB", "L") else None
        im.load()  # decoding errors surface here, where _open_photo turns them into PhotoRejected
        # Renditions carry no EXIF: the pixels are already upright (an Orientation tag would turn them
        # twice), and they are shown and shared more widely than the original, so they drop the GPS too.
        # The original keeps every tag, byte for byte.
        picture = _rgb(_upright(im, _read_exif(im).orientation))
        if picture is not im:
            # Free the decoded pixels before scaling: the smaller renditions then reuse their memory instead
            # of asking the system for more (a 12 MP photo: a fifth less CPU time, 12 MB lower peak). The
            # pixels only: ImageFile.close would also close the caller's stream, which a PNG still holds as its
            # file, and the caller stores the original from it next.
            Image.Image.close(im)
        return _scaled_renditions(picture, icc_profile)


def _scaled_renditions(picture: Image.Image, icc_profile: bytes | None) -> Renditions:
    """Display, print and thumbnail JPEGs of an upright picture, each scaled from the next larger one.

    Each step makes a new picture (no copy of the large one), and the thumbnail is scaled from the print
    copy, the smallest picture it can come from.
    """
    display = _fit(picture, DISPLAY_LONG_EDGE, Image.Resampling.LANCZOS)
    printed = _fit(display, PRINT_LONG_EDGE, PRINT_RESAMPLING)
    thumb = _fit(printed, THUMB_LONG_EDGE, Image.Resampling.LANCZOS, reducing_gap=THUMB_REDUCING_GAP)
    return Renditions(display=_jpeg(display, DISPLAY_QUALITY, icc_profile),
                      thumb=_jpeg(thumb, THUMB_QUALITY, icc_profile),
                      print=_print_jpeg(printed, icc_profile))


def _fit(picture: Image.Image, long_edge: int, resampling: Image.Resampling,
         reducing_gap: float = 2.0) -> Image.Image:
    """The picture scaled down to at most ``long_edge`` px long, keeping its shape; itself if it fits.

    As Image.thumbnail, a picture more than ``2 * reducing_gap`` times too large (a huge PNG or WebP, which
    has no draft decode) is first averaged down by a whole factor, leaving at least ``reducing_gap`` times
    the size for the filter.
    """
    width, height = picture.size
    scale = long_edge / max(width, height)
    if scale >= 1:
        return picture
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return picture.resize(size, resampling, reducing_gap=reducing_gap)


def _seekable(data: PhotoData, max_bytes: int) -> tuple[BinaryIO, int]:
    """A seekable binary stream over ``data`` and its size (capped at max_bytes + 1 if unseekable)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return io.BytesIO(data), len(data)
    if data.seekable():
        size = data.seek(0, io.SEEK_END)
        data.seek(0)
        return data, size
    head = data.read(max_bytes + 1)  # enough to tell the file is too large, without reading it all
    return io.BytesIO(head), len(head)


@contextmanager
def _open_photo(stream: BinaryIO, max_pixels: int) -> Iterator[ImageFile.ImageFile]:
    """Open an accepted image, refuse it before decoding if it has too many pixels.

    Decoder errors inside the ``with`` block become PhotoRejected.
    """
    stream.seek(0)
    try:
        im = _pillow_open(stream, ACCEPTED_FORMATS)
    except Image.DecompressionBombError:
        raise PhotoRejected(
            f"The image has too many pixels: far more than the limit of {_megapixels(max_pixels)} MP."
        ) from None
    except UnidentifiedImageError:
        raise PhotoRejected(_unaccepted_message(stream)) from None
    except _DECODER_ERRORS as exc:
        raise PhotoRejected(f"The photo is damaged and cannot be read ({exc}).") from None
    with im:
        width, height = im.size
        # Checked on the size the header declares, before any pixel is decoded: a small file can
        # declare a huge image (a decompression bomb).
        if width * height > max_pixels:
            raise PhotoRejected(
                f"The image has too many pixels: {width}×{height} is {_megapixels(width * height)} MP;"
                f" the limit is {_megapixels(max_pixels)} MP."
            )
        _check_dimensions(im, width, height, stream)
        try:
            yield im
        except _DECODER_ERRORS as exc:
            raise PhotoRejected(f"The photo is damaged and cannot be read ({exc}).") from None


def _check_dimensions(im: ImageFile.ImageFile, width: int, height: int, stream: BinaryIO) -> None:
    """Refuse, from the header alone, sizes no photo has and headers the file's bytes cannot back."""
    if width < 1 or height < 1 or max(width, height) > MAX_EDGE:
        raise PhotoRejected(f"The image is {width}×{height} pixels; each side may be at most {MAX_EDGE} pixels.")
    if max(width, height) > MAX_ASPECT * min(width, height):
        raise PhotoRejected(f"The image is {width}×{height} pixels: longer than {MAX_ASPECT} times its width is "
                            "not a photo.")
    if im.format in ("JPEG", "MPO"):
        position = stream.tell()
        byte_size = stream.seek(0, io.SEEK_END)
        stream.seek(position)
        if width * height > byte_size * JPEG_MAX_PIXELS_PER_BYTE:
            raise PhotoRejected(f"The photo's header says {width}×{height} pixels, far more than its {byte_size} "
                                "bytes can hold: the file is damaged or forged.")


def _pillow_open(stream: BinaryIO, formats: tuple[str, ...] | None) -> ImageFile.ImageFile:
    """Image.open (header only) without Pillow's warnings; the caller checks the pixel count itself."""
    with _quiet_pillow():
        return Image.open(stream, formats=formats)


@contextmanager
def _quiet_pillow() -> Iterator[None]:
    """Silence the warnings Pillow gives on hostile or sloppy files, which we handle ourselves.

    A warning must neither escape (tests run with warnings as errors) nor decide anything: Pillow warns
    of a decompression bomb only between its own limit and twice it, and _open_photo checks max_pixels;
    it warns of corrupt EXIF, which costs the photo its metadata, not its acceptance.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        warnings.filterwarnings("ignore", category=UserWarning, module=r"PIL\.")
        yield


def _unaccepted_message(stream: BinaryIO) -> str:
    """Why a file that is no readable JPEG, PNG or WebP is refused: HEIC, damaged, other, or no image."""
    stream.seek(0)
    head = stream.read(12)
    if head[4:8] == b"ftyp" and head[8:12] in _HEIF_BRANDS:
        return (
            "HEIC photos are not supported. Set the camera to take JPEG photos "
            "(on an iPhone: Settings, Camera, Formats, Most Compatible) or export the photo as JPEG."
        )
    if head.startswith(_ACCEPTED_SIGNATURES) or (head[:4], head[8:12]) == (b"RIFF", b"WEBP"):
        return "The photo is damaged and cannot be read."  # a JPEG or PNG or WebP start, then garbage
    try:
        with _pillow_open(stream, None) as im:  # header only, to name the format
            image_format = im.format
    except (UnidentifiedImageError, Image.DecompressionBombError, *_DECODER_ERRORS):
        return "The file is not an image. Send a JPEG, PNG or WebP photo."
    return f"{image_format} images are not accepted. Send a JPEG, PNG or WebP photo."


def _read_exif(im: Image.Image) -> _ExifFacts:
    """Orientation, time taken and GPS position from the EXIF block; defaults where missing or broken."""
    with _quiet_pillow():
        try:
            exif = im.getexif()  # for a PNG whose eXIf chunk follows the pixels this decodes them
            base = dict(exif)
            details = dict(exif.get_ifd(ExifTags.IFD.Exif))
            gps = dict(exif.get_ifd(ExifTags.IFD.GPSInfo))
        except _METADATA_ERRORS:
            return _ExifFacts(orientation=1, taken_at=None, latitude=None, longitude=None)
    orientation = base.get(ExifTags.Base.Orientation, 1)
    latitude, longitude = _gps_position(gps)
    return _ExifFacts(
        orientation=orientation if isinstance(orientation, int) and 1 <= orientation <= 8 else 1,
        taken_at=_taken_at(details),
        latitude=latitude,
        longitude=longitude,
    )


def _taken_at(details: dict[int, object]) -> datetime | None:
    """EXIF DateTimeOriginal, with OffsetTimeOriginal when the camera wrote one; None if absent or blank."""
    taken = _text(details.get(ExifTags.Base.DateTimeOriginal))
    offset = _text(details.get(ExifTags.Base.OffsetTimeOriginal))
    if taken is None:
        return None
    try:
        if offset is not None:
            found = datetime.strptime(f"{taken} {offset}", "%Y:%m:%d %H:%M:%S %z")
        else:
            found = datetime.strptime(taken, "%Y:%m:%d %H:%M:%S")
    except ValueError:  # blank "0000:00:00 00:00:00", or a camera's own format
        return None
    # A camera clock never set (year 1) or gone wild (9999) names no moment the record can hold, in any zone: the
    # time is not recorded, as for none (the years the app takes, fields.in_calendar).
    if not FIRST_YEAR <= found.year <= LAST_YEAR:
        return None
    return found


def _gps_position(gps: dict[int, object]) -> tuple[float | None, float | None]:
    """(latitude, longitude) in decimal degrees from the GPS IFD, or (None, None) if missing or invalid."""
    latitude = _degrees(gps.get(ExifTags.GPS.GPSLatitude), gps.get(ExifTags.GPS.GPSLatitudeRef), "N", "S")
    longitude = _degrees(gps.get(ExifTags.GPS.GPSLongitude), gps.get(ExifTags.GPS.GPSLongitudeRef), "E", "W")
    if latitude is None or longitude is None or abs(latitude) > 90 or abs(longitude) > 180:
        return None, None
    return latitude, longitude


def _degrees(dms: object, ref: object, positive: str, negative: str) -> float | None:
    """Degrees, minutes, seconds and a hemisphere letter as signed decimal degrees."""
    hemisphere = _text(ref)
    # Without its reference letter a coordinate could be on the wrong side of the world; drop it.
    if hemisphere not in (positive, negative) or not isinstance(dms, tuple) or not 1 <= len(dms) <= 3:
        return None
    try:
        parts = [float(part) for part in dms]
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    degrees = sum(part / 60**i for i, part in enumerate(parts))
    if not math.isfinite(degrees):  # a rational with a zero denominator reads as NaN
        return None
    return -degrees if hemisphere == negative else degrees


def _text(value: object) -> str | None:
    """An EXIF ASCII value as a stripped string, or None."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if not isinstance(value, str):
        return None
    return value.strip("\x00 ") or None


def _draft_size(size: tuple[int, int], min_long_edge: int) -> tuple[int, int]:
    """The size to ask draft() for, so the reduced decode keeps a long edge of at least min_long_edge."""
    width, height = size
    ratio = min(1.0, min_long_edge / max(width, height))
    return max(1, math.ceil(width * ratio)), max(1, math.ceil(height * ratio))


def _upright(im: Image.Image, orientation: int) -> Image.Image:
    """The picture turned and flipped as EXIF Orientation says (ImageOps.exif_transpose semantics);
    `im` itself when it is upright already (use it while its file is open)."""
    method = _TRANSPOSE.get(orientation)
    return im.transpose(method) if method is not None else im


def _rgb(im: Image.Image) -> Image.Image:
    """The image in a mode JPEG can store; transparency is laid on white, as a page would show it."""
    if im.mode in ("RGB", "L"):
        return im
    if im.has_transparency_data:
        white = Image.new("RGBA", im.size, "white")
        return Image.alpha_composite(white, im.convert("RGBA")).convert("RGB")
    return im.convert("RGB")


def _print_jpeg(im: Image.Image, icc_profile: bytes | None) -> bytes:
    """The print rendition's JPEG at the best quality within PRINT_MAX_BYTES (PRINT_QUALITIES, in order)."""
    for quality in PRINT_QUALITIES:
        data = _jpeg(im, quality, icc_profile)
        if len(data) <= PRINT_MAX_BYTES:
            break
    return data


def _jpeg(im: Image.Image, quality: int, icc_profile: bytes | None) -> bytes:
    """Encode ``im`` as a JPEG, keeping the colour profile so colours stay true and nothing else: no EXIF, and
    not the original's JPEG comment, which Pillow would copy and where some cameras write the place."""
    out = io.BytesIO()
    im.save(out, "JPEG", quality=quality, icc_profile=icc_profile, comment=b"")
    return out.getvalue()


def _sha256(stream: BinaryIO) -> str:
    """SHA-256 hex of the whole stream, read in chunks."""
    stream.seek(0)
    digest = hashlib.sha256()
    while chunk := stream.read(1024 * 1024):
        digest.update(chunk)
    return digest.hexdigest()


def _megabytes(n: int) -> str:
    """Bytes as megabytes for a message, rounded up so a file just over the limit never reads as equal."""
    return f"{math.ceil(n * 10 / (1024 * 1024)) / 10:g}"


def _megapixels(n: int) -> str:
    """Pixels as megapixels for a message."""
    return f"{n / 1_000_000:.3g}"


# -- the print rendition (PDFs) ---------------------------------------------------------------------

def make_print_rendition(display_jpeg: bytes) -> bytes:
    """The JPEG a PDF embeds, made from the display rendition (upright, no EXIF): at most 1,200 px long."""
    with Image.open(io.BytesIO(display_jpeg), formats=["JPEG"]) as im:
        im.load()
        printed = _fit(_rgb(im), PRINT_LONG_EDGE, PRINT_RESAMPLING)
        return _print_jpeg(printed, im.info.get("icc_profile"))


# -- the marked-up renditions (markup.py) -------------------------------------------------------------
# Drawn in a red that shows on soil, grass and concrete, each stroke over a white halo so it shows on red.
MARK_COLOUR = (230, 20, 20)
HALO_COLOUR = (255, 255, 255)


def make_marked_renditions(display_jpeg: bytes, shapes: list[Shape]) -> Renditions:
    """The renditions of a photo with its markup drawn on, made from its display rendition.

    The display rendition is already upright and without EXIF, so relative coordinates are the page's.
    """
    with Image.open(io.BytesIO(display_jpeg), formats=["JPEG"]) as im:
        im.load()
        icc_profile = im.info.get("icc_profile")
        picture = im.convert("RGB")  # a copy to draw on
    _draw(picture, shapes)
    return _scaled_renditions(picture, icc_profile)


def _draw(picture: Image.Image, shapes: list[Shape]) -> None:
    """Draw the shapes on the picture, in place: lines about 1/100 of its shorter side, labels 1/20."""
    width, height = picture.size
    side = min(width, height)
    line = max(2, round(side / 100))
    draw = ImageDraw.Draw(picture)
    font = ImageFont.load_default(size=max(12, round(side / 20)))
    for shape in shapes:
        points = [(x * width, y * height) for x, y in shape.points]
        for colour, stroke in ((HALO_COLOUR, line + 2 * max(1, line // 3)), (MARK_COLOUR, line)):
            if shape.kind == "arrow":
                draw.line(points, fill=colour, width=stroke)
                draw.polygon(_arrow_head(points[0], points[1], line * 6), fill=colour,
                             outline=colour, width=stroke - line + 1)
            elif shape.kind == "circle":
                # Pillow draws an outline inside its box: widen the box by half the stroke to centre it.
                (x, y), r = points[0], (shape.r or 0) * side + stroke / 2
                draw.ellipse((x - r, y - r, x + r, y + r), outline=colour, width=stroke)
        if shape.kind == "label":
            draw.text(points[0], shape.text or "", fill=MARK_COLOUR, font=font, anchor="lm",
                      stroke_width=line, stroke_fill=HALO_COLOUR)


def _arrow_head(start: tuple[float, float], end: tuple[float, float], length: float) -> list[tuple[float, float]]:
    """The triangle of an arrow's head at `end`, `length` long, its sides 25° either side of the shaft."""
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    return [end] + [(end[0] - length * math.cos(angle + turn), end[1] - length * math.sin(angle + turn))
                    for turn in (math.radians(25), -math.radians(25))]
