"""Time and memory for making the PDF of a stored inspection report with 24 photos.

The report is stored as the app stores it (a temporary SQLite database and blob store; photos through
the photo service, so the PDF embeds their print renditions); each run is what freezing the report at
signing does: `documents.services.rendered_report_pdf`, reading the record and the renditions, then
rendering (a download afterwards only reads the frozen bytes).

Prints, one per line:
  pdf_24_photos_median_s          median wall time of rendered_report_pdf() over the runs (target <= 1.5 s)
  pdf_24_photos_peak_rss_mb       the rendering process's peak resident set (resource.getrusage ru_maxrss),
                                  interpreter, app and every run included (target <= 150 MB); the report is
                                  stored by a child process first, as the app stores it before any download
  pdf_24_photos_peak_rss_before_render_mb  the same high-water mark before the first render (app loaded)
  pdf_24_photos_traced_peak_mb    peak of Python-level allocations during one render (tracemalloc)
  pdf_24_photos_input_mb          total size of the 24 print renditions (<= 1,200 px, the quality their size allows)
  pdf_24_photos_output_mb         size of the PDF in MB of 2**20 bytes (target <= 5 MB: it is mailed)
  pdf_24_photos_output_bytes      the same, in bytes (the limit: 5,242,880)

The photos are ordinary 12 MP phone photos as their compression sees them (`noisy_jpeg`): detail at every scale
and the sensor's grain, which scaling them down to 1,200 px does not average away.
  pdf_24_photos_pages             pages in the PDF

Run from the repository root: python -m bench.pdf [runs]
"""

from __future__ import annotations

import functools
import io
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from decimal import Decimal

from PIL import Image, ImageChops
from pypdf import PdfReader

PHOTO_COUNT = 24
PHOTO_SIZE = (4000, 3000)  # 12 MP, an ordinary phone camera


def noisy_jpeg(seed: int) -> bytes:
    """An ordinary 12 MP phone photo, about 7 MB, as its compression sees it: a scene (a colour gradient) under
    texture a few pixels across (gravel, grass, fabric), which survives scaling down, and the sensor's grain at
    every pixel, saved as a phone saves it (quality 92). At the print rendition's 1,200 px and quality 80 such a
    photo is about 225 KB: 24 of them made a 5.4 MB report. Each seed gives another photo (its noise shifted)."""
    width, height = PHOTO_SIZE
    gradient = Image.linear_gradient("L")  # 256x256, rotated while square so no edge is cropped
    channels = []
    for band, noise in enumerate(_noise()):
        scene = gradient.rotate(90 * ((seed + band) % 4)).resize((width, height))
        channels.append(Image.blend(scene, ImageChops.offset(noise, 97 * seed, 31 * seed), 0.5))
    out = io.BytesIO()
    Image.merge("RGB", channels).save(out, "JPEG", quality=92)
    return out.getvalue()


@functools.cache
def _noise() -> tuple[Image.Image, ...]:
    """Three planes of texture (noise three pixels across) and grain (noise at each pixel), made once."""
    width, height = PHOTO_SIZE
    source = random.Random(12)
    planes = []
    for _ in range(3):
        texture = Image.frombytes("L", (width // 3, height // 3), source.randbytes(width // 3 * height // 3))
        grain = Image.frombytes("L", (width, height), source.randbytes(width * height))
        planes.append(Image.blend(texture.resize((width, height), Image.Resampling.BICUBIC), grain, 0.34))
    return tuple(planes)


def stored_report(photos: list[bytes]):
    """An erosion control report stored as the app stores it: permit, notice, answers, 8 findings, 24 photos."""
    import datetime as dt

    from inspect_app.accounts.services import create_user
    from inspect_app.extensions import db
    from inspect_app.inspections.models import CorrectiveAction, Finding
    from inspect_app.inspections import canonical, queries
    from inspect_app.inspections.models import ChecklistAnswer, Inspection
    from inspect_app.permits import services as permits
    from inspect_app.photos.services import store_photo

    utc = dt.UTC
    town = next(j for j in permits.ensure_jurisdictions() if j.profile_key == "longmeadow")
    engineer = create_user(email="engineer@example.org", name="Sample Inspector", role="inspector", password="x" * 12,
                           pe_number="51234", certification="CPESC")
    permit = permits.create_permit(None, jurisdiction_id=town.id, number="LM-SWM-2024-017",
                                   site_address="123 Maple Road, Longmeadow, MA", latitude=42.0501, longitude=-72.5823,
                                   owner_name="Owner LLC", applicant_name="Owner LLC", disturbed_acres=Decimal("2.4"),
                                   cgp_schedule="every_14_days_and_storm", issued_on=dt.date(2024, 4, 1))
    performed = dt.datetime(2024, 5, 3, 14, 15, tzinfo=utc)
    inspection = Inspection(
        permit_id=permit.id, type="erosion_control", performed_at=performed, inspector_id=engineer.id,
        inspector_name=engineer.name, inspector_credentials=engineer.credentials, weather_status="gauge",
        temperature_c=16.0, conditions="Overcast", wind_kmh=13.0, wind_direction_deg=315.0, precip_24h_mm=10.7,
        precip_hours=24, station_id="72508", station_name="Westover ARB", station_distance_m=15800.0,
        weather_sources="meteostat hourly", weather_attribution="Meteostat, CC BY 4.0", gauge_precip_mm=11.4,
        evaluation="violations", corrective_steps="Re-trench the silt fence; sweep the road. " * 3,
        notes="Perimeter controls were inspected along the full frontage. " * 30, details={},
        signer_name=engineer.name, signer_credentials=engineer.credentials)
    items = [i for i in permits.profile_of(permit).inspection_type("erosion_control").checklist if i.per == "site"]
    inspection.answers = [ChecklistAnswer(item_key=i.key, answer="yes") for i in items]
    db.session.add(inspection)
    db.session.flush()
    findings = []
    for n in range(1, 9):
        finding = Finding(inspection_id=inspection.id, permit_id=permit.id, is_violation=True, created_at=performed,
                          description=f"Silt fence undermined at station {n}+50; sediment tracked onto Maple Road.")
        db.session.add(finding)
        db.session.flush()
        db.session.add(CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="significant_repair",
                                        description="Re-trench and backfill the silt fence; sweep the road.",
                                        owner_name="Site contractor", discovered_at=performed,
                                        due_at=performed + dt.timedelta(days=7), created_at=performed))
        findings.append(finding)
    for n, jpeg in enumerate(photos):
        store_photo(None, permit, io.BytesIO(jpeg), caption=f"Silt fence at station {n}+50, looking north",
                    inspection=inspection, finding=findings[n % 8] if n < 16 else None)
    statement = canonical.certification_statement(permits.profile_of(permit), queries.type_of(inspection))
    inspection.status, inspection.submitted_at, inspection.signed_at = "submitted", performed, performed
    inspection.certification_statement = statement
    db.session.flush()
    inspection.record_sha256 = canonical.record_hash(inspection)
    db.session.commit()
    return inspection


def _app(root: str):
    os.environ.setdefault("SECRET_KEY", "bench-only")
    from inspect_app import create_app

    return create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{root}/bench.sqlite3", "BLOB_ROOT": f"{root}/blobs",
                       "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000"})


def store(root: str) -> None:
    """In a child process, so making the photos and renditions does not count in the render's peak memory."""
    from inspect_app.extensions import db

    with _app(root).app_context():
        db.create_all()
        print(stored_report([noisy_jpeg(n) for n in range(PHOTO_COUNT)]).id)


def main() -> None:
    """Store the report, render it `runs` times from the stored record, and print the figures."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as root:
        child = subprocess.run([sys.executable, "-m", "bench.pdf", "--store", root], check=True,
                               capture_output=True, text=True)
        from inspect_app.documents.services import rendered_report_pdf
        from inspect_app.extensions import db
        from inspect_app.inspections.models import Inspection
        from inspect_app.blobs.models import Blob
        from inspect_app.photos.models import Photo

        with _app(root).app_context():
            inspection = db.session.get(Inspection, child.stdout.split()[-1])
            displays = sum(db.session.scalars(db.select(Blob.size).join(Photo, Photo.print_sha256 == Blob.sha256)))
            rss_before_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
            timings = []
            for _ in range(runs):
                db.session.expire_all()  # each run reads the record from the database, as a download does
                start = time.perf_counter()
                pdf_size = len(rendered_report_pdf(inspection))
                timings.append(time.perf_counter() - start)
            peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            tracemalloc.start()
            pdf = rendered_report_pdf(inspection)
            traced_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    print(f"pdf_24_photos_median_s={statistics.median(timings):.3f}")
    print(f"pdf_24_photos_peak_rss_mb={peak_rss_mb:.1f}")
    print(f"pdf_24_photos_peak_rss_before_render_mb={rss_before_mb:.1f}")
    print(f"pdf_24_photos_traced_peak_mb={traced_peak / 2**20:.1f}")
    print(f"pdf_24_photos_input_mb={displays / 2**20:.1f}")
    print(f"pdf_24_photos_output_mb={pdf_size / 2**20:.2f}")
    print(f"pdf_24_photos_output_bytes={pdf_size}")
    print(f"pdf_24_photos_pages={len(PdfReader(io.BytesIO(pdf)).pages)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--store"]:
        store(sys.argv[2])
    else:
        main()
