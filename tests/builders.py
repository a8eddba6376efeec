"""Builders of the files and servers tests need: JPEGs as cameras write them, signatures as the pad draws them,
and a real SMTP server on 127.0.0.1. One of each, for every test directory."""
from __future__ import annotations

import base64
import io
import random
import socket
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Message
from PIL import ExifTags, Image, ImageDraw, TiffImagePlugin

RED = (220, 20, 20)
BLUE = (20, 20, 220)
# 42.05 N, 72.58 W (Longmeadow, Massachusetts) as degrees, minutes, seconds.
SITE_GPS = ("N", (42.0, 3.0, 0.0), "W", (72.0, 34.0, 48.0))
GPS = tuple[str, tuple[float, float, float], str, tuple[float, float, float]]


# -- photos ------------------------------------------------------------------------------------------

def jpeg(shade: int = 0, size: tuple[int, int] = (400, 300), *, noise: bool = False, quality: int | None = None,
         orientation: int | None = None, taken: str | None = None, offset: str | None = None,
         gps: GPS | None = None) -> bytes:
    """A real JPEG: red top half, blue bottom half (so a turn shows), with the EXIF tags asked for.

    Each `shade` gives other bytes; `noise` fills it with random pixels (seeded by `shade`), as large as
    a camera's photo.
    """
    if noise:
        image = Image.frombytes("RGB", size, random.Random(shade).randbytes(size[0] * size[1] * 3))
    else:
        image = Image.new("RGB", size, BLUE)
        image.paste((RED[0] - shade * 7 % 211, RED[1] + shade * 13 % 223, RED[2]), (0, 0, size[0], size[1] // 2))
    exif = Image.Exif()
    if orientation is not None:
        exif[ExifTags.Base.Orientation] = orientation
    if taken is not None:
        exif.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.DateTimeOriginal] = taken
    if offset is not None:
        exif.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.OffsetTimeOriginal] = offset
    if gps is not None:
        lat_ref, lat, lon_ref, lon = gps
        tags = exif.get_ifd(ExifTags.IFD.GPSInfo)
        tags[ExifTags.GPS.GPSLatitudeRef] = lat_ref
        tags[ExifTags.GPS.GPSLatitude] = tuple(TiffImagePlugin.IFDRational(v) for v in lat)
        tags[ExifTags.GPS.GPSLongitudeRef] = lon_ref
        tags[ExifTags.GPS.GPSLongitude] = tuple(TiffImagePlugin.IFDRational(v) for v in lon)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality or (95 if noise else 90), exif=exif)
    return out.getvalue()


def png_declaring(width: int, height: int) -> bytes:
    """A PNG of a few dozen bytes whose header declares width x height pixels (a decompression bomb)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def jpeg_declaring(width: int, height: int) -> bytes:
    """A real JPEG of 16×16 pixels whose frame header (SOF0) is rewritten to declare width x height."""
    out = io.BytesIO()
    Image.new("RGB", (16, 16), RED).save(out, "JPEG", quality=50)
    data = bytearray(out.getvalue())
    sof = data.index(b"\xff\xc0")  # marker, length (2), precision (1), then height and width
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


# -- signatures ----------------------------------------------------------------------------------------

def signature_png(stroke: int = 0, *, size: tuple[int, int] = (400, 150), ink: bool = True) -> bytes:
    """A PNG as the signature pad draws it: transparent, one stroke of ink (`stroke` moves it: other bytes)."""
    image = Image.new("RGBA", size, (0, 0, 0, 0))
    if ink:
        ImageDraw.Draw(image).line([(20, 100), (120, 40 + stroke), (220, 110), (360, 30)],
                                   fill=(17, 17, 17, 255), width=4)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def signature_data_url(stroke: int = 0, *, size: tuple[int, int] = (400, 150), ink: bool = True) -> str:
    """The signature as the pad posts it: a data: URL of the PNG."""
    return "data:image/png;base64," + base64.b64encode(signature_png(stroke, size=size, ink=ink)).decode()


# -- mail --------------------------------------------------------------------------------------------

@contextmanager
def smtp_server() -> Iterator[tuple[int, list]]:
    """A real SMTP server (aiosmtpd) on a free loopback port: (its port, the messages it received)."""
    received = []

    class Keep(Message):
        def handle_message(self, message):
            received.append(message)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    controller = Controller(Keep(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield port, received
    finally:
        controller.stop()
