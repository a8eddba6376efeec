"""Builders for photo tests: JPEGs made here with EXIF orientation, GPS and time, and the records they go to."""
from __future__ import annotations

import datetime as dt
import io
import struct
import zlib
from pathlib import Path

from PIL import ExifTags, Image, TiffImagePlugin

from inspect_app.extensions import db
from inspect_app.findings.models import CorrectiveAction, Finding
from inspect_app.inspections.models import Inspection

RED = (220, 20, 20)
BLUE = (20, 20, 220)
# 42.05 N, 72.58 W (Longmeadow, Massachusetts) as degrees, minutes, seconds.
SITE_GPS = ("N", (42.0, 3.0, 0.0), "W", (72.0, 34.0, 48.0))


def make_jpeg(size: tuple[int, int] = (1200, 900), *, orientation: int | None = 6,
              taken: str | None = "2026:06:03 09:30:12", gps=SITE_GPS, shade: int = 0) -> bytes:
    """A JPEG with a red top half and blue bottom half, and the EXIF tags a tablet camera writes."""
    image = Image.new("RGB", size, BLUE)
    image.paste((RED[0] - shade, RED[1], RED[2]), (0, 0, size[0], size[1] // 2))
    exif = Image.Exif()
    if orientation is not None:
        exif[ExifTags.Base.Orientation] = orientation
    if taken is not None:
        exif.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.DateTimeOriginal] = taken
    if gps is not None:
        lat_ref, lat, lon_ref, lon = gps
        tags = exif.get_ifd(ExifTags.IFD.GPSInfo)
        tags[ExifTags.GPS.GPSLatitudeRef] = lat_ref
        tags[ExifTags.GPS.GPSLatitude] = tuple(TiffImagePlugin.IFDRational(v) for v in lat)
        tags[ExifTags.GPS.GPSLongitudeRef] = lon_ref
        tags[ExifTags.GPS.GPSLongitude] = tuple(TiffImagePlugin.IFDRational(v) for v in lon)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90, exif=exif)
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


def blob_files(app) -> set[Path]:
    """Every file under the blob folder, temporary and partial ones included."""
    root = Path(app.config["BLOB_ROOT"])
    return {path for path in root.rglob("*") if path.is_file()} if root.exists() else set()


def make_inspection(permit, inspector, *, status: str = "draft", type: str = "erosion_control") -> Inspection:
    """An inspection row made directly (the inspections UI is built elsewhere)."""
    now = dt.datetime(2026, 6, 3, 13, 0, tzinfo=dt.UTC)
    inspection = Inspection(
        permit_id=permit.id, type=type, status=status, performed_at=now, inspector_id=inspector.id,
        inspector_name=inspector.name, inspector_credentials=inspector.credentials,
        submitted_at=now if status == "submitted" else None,
    )
    db.session.add(inspection)
    db.session.commit()
    return inspection


def make_finding(inspection: Inspection) -> Finding:
    finding = Finding(inspection_id=inspection.id, permit_id=inspection.permit_id,
                      description="Silt fence down along the north edge", severity="major")
    db.session.add(finding)
    db.session.commit()
    return finding


def make_corrective_action(finding: Finding, status: str = "open") -> CorrectiveAction:
    now = dt.datetime(2026, 6, 3, 13, 0, tzinfo=dt.UTC)
    action = CorrectiveAction(finding_id=finding.id, permit_id=finding.permit_id, kind="significant_repair",
                              description="Re-trench and re-stake the silt fence", owner_name="Site contractor",
                              discovered_at=now, due_at=now + dt.timedelta(days=7), status=status)
    db.session.add(action)
    db.session.commit()
    return action
