"""Time and memory for making a photo's display, print and thumbnail renditions from a 12 MP JPEG.

Prints, one per line:
  photo_input_mb                  size of the generated 4000x3000 JPEG (noise over gradients, like a photo)
  inspect_median_s                median wall time of inspect_photo() (headers, EXIF, SHA-256)
  renditions_median_s             median wall time of make_renditions() (one JPEG draft-mode decode, all three)
  renditions_cpu_median_s         the same in CPU time (the figure a busy machine disturbs least)
  renditions_naive_median_s       median wall time of a full decode: Image.open + load + resize, three times
  renditions_speedup_ratio        naive / draft
  renditions_peak_rss_mb          peak resident set of a process doing only make_renditions()
  renditions_naive_peak_rss_mb    peak resident set of a process doing only the naive renditions
  (each peak includes the interpreter, the app's imports and the input bytes; the two are measured in
  separate child processes, because a peak is a high-water mark that never goes down)

Run from the repository root: python -m bench.photos [runs]
"""

from __future__ import annotations

import io
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, however it is run

from PIL import ExifTags, Image, ImageOps  # noqa: E402

from inspect_app.photos.processing import (  # noqa: E402
    DISPLAY_LONG_EDGE,
    DISPLAY_QUALITY,
    PRINT_LONG_EDGE,
    PRINT_QUALITY,
    THUMB_LONG_EDGE,
    THUMB_QUALITY,
    inspect_photo,
    make_renditions,
)

PHOTO_SIZE = (4000, 3000)  # 12 MP, a common tablet and phone camera
RUNS = 7


def noisy_jpeg() -> bytes:
    """A 12 MP photo-like JPEG: colour gradients under Gaussian noise, so it compresses like a photo."""
    width, height = PHOTO_SIZE
    gradient = Image.linear_gradient("L").resize((width, height))
    channels = [
        Image.blend(gradient.rotate(90 * band).resize((width, height)),
                    Image.effect_noise((width, height), 40 + 10 * band), 0.35)
        for band in range(3)
    ]
    exif = Image.Exif()
    exif[ExifTags.Base.Orientation] = 6  # held in portrait, like most site photos of a structure
    out = io.BytesIO()
    Image.merge("RGB", channels).save(out, "JPEG", quality=90, exif=exif)
    return out.getvalue()


def naive_renditions(data: bytes) -> tuple[bytes, ...]:
    """The obvious way: decode every pixel, then scale the full image down three times."""
    with Image.open(io.BytesIO(data)) as im:
        im.load()
        upright = ImageOps.exif_transpose(im)
    renditions = []
    for long_edge, quality in ((DISPLAY_LONG_EDGE, DISPLAY_QUALITY), (PRINT_LONG_EDGE, PRINT_QUALITY),
                               (THUMB_LONG_EDGE, THUMB_QUALITY)):
        scale = long_edge / max(upright.size)
        size = (round(upright.width * scale), round(upright.height * scale))
        out = io.BytesIO()
        upright.resize(size, Image.Resampling.LANCZOS).save(out, "JPEG", quality=quality)
        renditions.append(out.getvalue())
    return tuple(renditions)


def median_seconds(work: Callable[[], object], runs: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Median time of ``work`` on ``clock`` (wall by default) over ``runs`` runs, after one warm-up."""
    work()
    times = []
    for _ in range(runs):
        start = clock()
        work()
        times.append(clock() - start)
    return statistics.median(times)


def worker(mode: str, photo: Path, runs: int) -> None:
    """In a child process: time one way of making renditions and report its peak memory."""
    data = photo.read_bytes()
    make = make_renditions if mode == "draft" else naive_renditions
    median = median_seconds(lambda: make(data), runs)
    cpu = median_seconds(lambda: make(data), runs, time.process_time)
    print(f"{median} {cpu} {peak_rss_mb()}")


def peak_rss_mb() -> float:
    """This process's peak resident set in MB.

    VmHWM belongs to this program alone; ru_maxrss would be no good here, as Linux carries it over
    from the parent through fork and exec.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure_in_child(mode: str, photo: Path, runs: int) -> tuple[float, float, float]:
    """Run ``worker`` in a fresh interpreter, so each way's peak memory is its own."""
    result = subprocess.run(
        [sys.executable, "-m", "bench.photos", "--worker", mode, str(photo), str(runs)],
        capture_output=True, text=True, check=True,
    )
    median, cpu, peak_mb = result.stdout.split()
    return float(median), float(cpu), float(peak_mb)


def main(runs: int) -> None:
    """Generate the photo, measure both ways, print name=value lines."""
    data = noisy_jpeg()
    renditions = make_renditions(data)
    assert max(Image.open(io.BytesIO(renditions.display)).size) <= DISPLAY_LONG_EDGE
    assert max(Image.open(io.BytesIO(renditions.print)).size) == PRINT_LONG_EDGE
    assert max(Image.open(io.BytesIO(renditions.thumb)).size) == THUMB_LONG_EDGE
    with tempfile.TemporaryDirectory() as tmp:
        photo = Path(tmp) / "photo.jpg"
        photo.write_bytes(data)
        draft_s, draft_cpu, draft_peak = measure_in_child("draft", photo, runs)
        naive_s, _, naive_peak = measure_in_child("naive", photo, runs)
    print(f"photo_input_mb={len(data) / 1e6:.2f}")
    print(f"inspect_median_s={median_seconds(lambda: inspect_photo(data), runs):.4f}")
    print(f"renditions_median_s={draft_s:.3f}")
    print(f"renditions_cpu_median_s={draft_cpu:.3f}")
    print(f"renditions_naive_median_s={naive_s:.3f}")
    print(f"renditions_speedup_ratio={naive_s / draft_s:.2f}")
    print(f"renditions_peak_rss_mb={draft_peak:.0f}")
    print(f"renditions_naive_peak_rss_mb={naive_peak:.0f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS)
