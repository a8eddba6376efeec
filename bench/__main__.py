"""Run every bench as a module (so no bench file shadows a package) and end with figure vs target.

    python -m bench                   every bench, then the summary
    python -m bench load photos       only those benches
    python -m bench --soak            also the 10-minute soak (bench.load --soak)

Each bench runs in its own interpreter, as `python -m bench.<name>`, from the repository root; what it
prints goes through unchanged, and its `name=value` lines are collected. A bench that fails is reported
as failed in the summary and the exit status is 1; the others still run. The figures are wall times and
memory on this machine, so the summary ends with the load average they were measured under.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHES = ("dashboard", "field", "offline", "pdf", "photos", "sync", "weather", "audit_chain", "signin", "pages",
           "importer", "memory", "load")

# (figure, comparison, target) from the issues; "<=" means at most, ">=" at least.
TARGETS = [
    ("load_errors", "<=", 0),
    ("load_p95_ms", "<=", 250),
    ("worker_rss_mb", "<=", 90),
    ("soak_errors", "<=", 0),
    ("soak_rss_growth_pct", "<=", 10),
    ("push_ops_per_s", ">=", 2000),
    ("replay_ops_per_s", ">=", 10000),
    ("blob_resent_bytes", "<=", 1048576),
    ("renditions_median_s", "<=", 0.10),
    ("pdf_24_photos_median_s", "<=", 1.5),
    ("pdf_24_photos_peak_rss_mb", "<=", 150),
    ("dashboard_5000_permits_median_ms", "<=", 300),
    ("submit_to_saved_median_ms", "<=", 100),
    ("shell_first_load_gzip_bytes", "<=", 153600),
    ("offline_reload_median_ms", "<=", 300),
    ("signin_unknown_to_known_ratio", ">=", 0.8),
    ("fill_stored_median_ms", "<=", 300),
    ("station_files_fetched", "<=", 20),
    ("pdf_24_photos_output_mb", "<=", 5),
    ("import_50000_rows_s", "<=", 60),
    ("import_peak_rss_mb", "<=", 200),
    ("field_typical_taps", "<=", 30),
    ("field_typical_typed_fields", "<=", 8),
    ("field_typical_scroll_px", "<=", 8000),
    ("field_all_compliant_taps", "<=", 12),
    ("agent_lift_taps", "<=", 8),
]


def figures(lines: list[str]) -> dict[str, str]:
    """The `name=value` lines of a bench's output."""
    found = {}
    for line in lines:
        name, sep, value = line.strip().partition("=")
        if sep and name and " " not in name:
            found[name] = value
    return found


def run(name: str, args: list[str]) -> tuple[dict[str, str], bool, float]:
    """Run `python -m bench.<name>`, echo its output, return (figures, succeeded, seconds)."""
    print(f"== bench.{name} {' '.join(args)}".rstrip(), flush=True)
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", f"bench.{name}", *args], cwd=ROOT, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = []
    for line in child.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    return figures(lines), child.wait() == 0, time.monotonic() - started


def summary(found: dict[str, str], failed: list[str]) -> list[str]:
    """One screen: each target, the figure measured, and whether it is met."""
    rows = [f"{'figure':34} {'measured':>12}  target", "-" * 62]
    for name, op, target in TARGETS:
        value = found.get(name)
        if value is None:
            rows.append(f"{name:34} {'-':>12}  {op} {target}   not measured")
            continue
        try:
            met = float(value) <= target if op == "<=" else float(value) >= target
        except ValueError:
            met = False
        rows.append(f"{name:34} {value:>12}  {op} {target}   {'ok' if met else 'MISSED'}")
    for name in ("load_rps", "load_p99_ms", "load_permit_page_p95_ms", "load_rainfall_chart_p95_ms",
                 "load_report_page_p95_ms", "load_start_inspection_p95_ms", "load_dashboard_p95_ms",
                 "load_sync_push_p95_ms", "soak_p95_first_minute_ms", "soak_p95_last_minute_ms",
                 "pdf_24_photos_traced_peak_mb"):
        if name in found:
            rows.append(f"{name:34} {found[name]:>12}  (for reference)")
    if failed:
        rows.append("FAILED: " + ", ".join(failed))
    rows.append(f"load average (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return rows


def main(argv: list[str]) -> int:
    soak = "--soak" in argv
    chosen = [a for a in argv if not a.startswith("--")] or list(BENCHES)
    unknown = set(chosen) - set(BENCHES)
    if unknown:
        print(f"No such bench: {', '.join(sorted(unknown))}. The benches: {', '.join(BENCHES)}.")
        return 2
    found: dict[str, str] = {}
    failed = []
    for name in chosen:
        got, ok, seconds = run(name, [])
        found.update(got)
        print(f"   ({seconds:.0f} s)")
        if not ok:
            failed.append(name)
    if soak:
        got, ok, _ = run("load", ["--soak"])
        found.update(got)
        if not ok:
            failed.append("load --soak")
    print("\n".join(["", "== summary", *summary(found, failed)]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
