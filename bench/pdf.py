"""Time and memory for rendering an inspection report with 24 photos.

Prints, one per line:
  pdf_24_photos_median_s          median wall time of render() over the runs (target <= 1.5 s)
  pdf_24_photos_peak_rss_mb       the whole process's peak resident set (resource.getrusage ru_maxrss),
                                  interpreter, the 24 input JPEGs and every run included (target <= 250 MB)
  pdf_24_photos_peak_rss_before_render_mb  the same high-water mark before the first render (making the photos)
  pdf_24_photos_traced_peak_mb    peak of Python-level allocations during one render (tracemalloc)
  pdf_24_photos_input_mb          total size of the 24 display renditions
  pdf_24_photos_output_mb         size of the PDF
  pdf_24_photos_pages             pages in the PDF

Run from the repository root: python -m bench.pdf [runs]
"""

from __future__ import annotations

import hashlib
import io
import resource
import statistics
import sys
import time
import tracemalloc

from PIL import Image
from pypdf import PdfReader

from inspect_app.documents.builder import (
    Document, Fields, Heading, Paragraphs, Photo, PhotoGrid, SignatureBlock, Table, render,
)

PHOTO_COUNT = 24
PHOTO_SIZE = (2048, 1536)  # the display rendition's size


def noisy_jpeg(seed: int) -> bytes:
    """A 2048x1536 photo-like JPEG: a colour gradient under Gaussian noise, so it compresses like a photo."""
    width, height = PHOTO_SIZE
    gradient = Image.linear_gradient("L")  # 256x256, rotated while square so no edge is cropped
    channels = [
        Image.blend(gradient.rotate(90 * ((seed + band) % 4)).resize((width, height)),
                    Image.effect_noise((width, height), 40 + 10 * band), 0.35)
        for band in range(3)
    ]
    out = io.BytesIO()
    Image.merge("RGB", channels).save(out, "JPEG", quality=85)
    return out.getvalue()


def report(photos: tuple[Photo, ...]) -> Document:
    """A realistic erosion control inspection report, §380-16 C(4)(f)[1] (a)-(h)."""
    findings = tuple(
        (str(n), f"Silt fence undermined at station {n}+50; sediment tracked onto Maple Road.",
         "Re-trench and backfill the silt fence; sweep the road.", f"2024-05-{10 + n:02d}", "Open")
        for n in range(1, 9)
    )
    return Document(
        title="Erosion Control Inspection Report",
        town="Town of Longmeadow",
        authority="Department of Public Works",
        permit_number="LM-SWM-2024-017",
        record_sha256=hashlib.sha256(b"inspection 4711").hexdigest(),
        blocks=(
            Heading("Inspection"),
            Fields((
                ("(a) Date and location", "2024-05-03 10:15, 123 Maple Road, Longmeadow (42.0501, -72.5823)"),
                ("(b) Inspector and credentials", "Sample Inspector, P.E. (MA 51234), CPESC"),
                ("(c) Type of inspection", "Erosion control (every 14 days and within 24 h of a 0.25 in storm)"),
                ("(d) Date of last inspection", "2024-04-19"),
                ("(e) Weather at the time", "61 °F, overcast, wind 8 mph NW; station Westover ARB, 9.8 km"),
                ("(f) Precipitation, previous 24 h", "0.42 in (station); on-site gauge 0.45 in (used)"),
                ("(g) Evaluation", "Violations: see findings 1-8."),
                ("(h) Steps to correct violations", "See corrective actions and deadlines below."),
                ("24-hour advance notice", "Given 2024-05-02 08:03"),
            )),
            Heading("Findings and corrective actions"),
            Table(("#", "Finding", "Corrective action", "Deadline", "Status"), findings, (0.4, 3, 3, 1.2, 0.8)),
            Heading("Notes"),
            Paragraphs("Perimeter controls were inspected along the full frontage. " * 30),
            Heading("Photos"),
            PhotoGrid(photos),
            SignatureBlock("Sample Inspector", "P.E. (MA 51234), CPESC",
                           "I certify that this report is true, accurate and complete.", "2024-05-03 11:02"),
        ),
    )


def main() -> None:
    """Render the report `runs` times and print the figures."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    photos = tuple(Photo(noisy_jpeg(n), f"Photo {n + 1}: silt fence at station {n}+50, looking north",
                         f"2024-05-03 10:{15 + n:02d} (EXIF)") for n in range(PHOTO_COUNT))
    doc = report(photos)
    rss_before_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        pdf_size = len(render(doc))
        timings.append(time.perf_counter() - start)
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
    tracemalloc.start()
    render(doc)
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"pdf_24_photos_median_s={statistics.median(timings):.3f}")
    print(f"pdf_24_photos_peak_rss_mb={peak_rss_mb:.1f}")
    print(f"pdf_24_photos_peak_rss_before_render_mb={rss_before_mb:.1f}")
    print(f"pdf_24_photos_traced_peak_mb={traced_peak / 2**20:.1f}")
    print(f"pdf_24_photos_input_mb={sum(len(p.jpeg) for p in photos) / 2**20:.1f}")
    print(f"pdf_24_photos_output_mb={pdf_size / 2**20:.1f}")
    print(f"pdf_24_photos_pages={len(PdfReader(io.BytesIO(render(doc))).pages)}")


if __name__ == "__main__":
    main()
