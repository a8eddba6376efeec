"""Time and memory for `flask import permits FILE --apply` of a 50,000-row permits file.

The file is a CSV as a permit tracker exports it (every column of the template; one row in five lists a
structure), written row by row to a temporary folder; the import runs in this process against a temporary
SQLite database (or the empty database named by BENCH_DATABASE_URL: its tables are made and dropped), as the
command runs it: read, checked by the permit form, written a batch at a time, committed once (the schedule of
every new permit stored and the audit entries sealed at that commit).

Prints, one per line:
  import_rows                   rows in the file
  import_50000_rows_s           wall time of the applied import, scaled to 50,000 rows (target <= 60 s)
  import_50000_rows_cpu_s       CPU time this process spent on the applied import, scaled the same way: the
                                figure to compare on a machine other work also loads (a database server's own
                                time, for PostgreSQL, is not in it)
  import_peak_rss_mb            this process's peak resident set (ru_maxrss), interpreter, app and import
                                included (target <= 200 MB)
  import_rss_before_mb          the same high-water mark with the app loaded, before the import
  import_dry_run_s              wall time of the dry run of the same file, before it is applied
  import_dry_run_cpu_s          CPU time of that dry run
  import_rows_per_s             rows applied per second

Run from the repository root: python -m bench.importer [rows]
"""
from __future__ import annotations

import csv
import os
import resource
import sys
import tempfile
import time
from pathlib import Path


def _app(url: str, blobs: str):
    os.environ.setdefault("SECRET_KEY", "bench-only")
    from inspect_app import create_app

    return create_app({"SQLALCHEMY_DATABASE_URI": url, "BLOB_ROOT": blobs})


def write_file(path: Path, rows: int) -> None:
    """A permits CSV of `rows` rows across Longmeadow's map, every column filled as a tracker would."""
    from inspect_app.transfer.columns import PERMIT_COLUMNS

    header = list(PERMIT_COLUMNS)
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        for n in range(rows):
            row = {"town": "longmeadow", "permit_number": f"LM-SWM-{n:06d}",
                   "site_address": f"{n % 900 + 1} Williams Street, Longmeadow, MA", "parcel_id": f"{n % 97}-{n % 13}",
                   "latitude": f"{42.03 + (n % 400) * 0.0001:.4f}", "longitude": f"{-72.60 + (n % 300) * 0.0001:.4f}",
                   "owner_name": f"Owner {n} LLC", "applicant_name": f"Applicant {n}",
                   "applicant_email": f"applicant{n}@example.org", "issued_on": f"{n % 12 + 1}/{n % 28 + 1}/2024",
                   "disturbed_acres": f"{1 + n % 50 / 10:.1f}",
                   "cgp_schedule": "every_7_days" if n % 2 else "every_14_days_and_storm",
                   "sensitive_waters": "no", "npdes_id": f"MAR10{n:06d}", "surety_amount": "25000",
                   "structures": "IS-1 (infiltration)" if n % 5 == 0 else ""}
            writer.writerow([row.get(name, "") for name in header])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    with tempfile.TemporaryDirectory() as root:
        url = os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{root}/bench.sqlite3"
        path = Path(root) / "permits.csv"
        from inspect_app.extensions import db
        from inspect_app.permits.services import ensure_jurisdictions
        from inspect_app.transfer.rows import Tally
        from inspect_app.transfer.services import conclude, run_import

        with _app(url, f"{root}/blobs").app_context():
            db.create_all()
            try:
                ensure_jurisdictions()
                db.session.commit()
                write_file(path, rows)
                before = peak_rss_mb()
                timings, cpu = {}, {}
                for apply in (False, True):
                    tally = Tally()
                    begin, begin_cpu = time.perf_counter(), time.process_time()
                    for event in run_import("permits", path, path.name, None, apply=apply):
                        tally.add(event)
                    if not conclude(tally, apply) and apply:
                        raise SystemExit(f"the import was not applied: {tally.problems[:5]}")
                    timings[apply] = time.perf_counter() - begin
                    cpu[apply] = time.process_time() - begin_cpu
                    db.session.remove()
                    if tally.counts["create"] != rows:
                        raise SystemExit(f"expected {rows} permits to create, got {tally.counts}")
                peak = peak_rss_mb()
            finally:
                db.session.remove()
                db.drop_all()
    print(f"import_rows={rows}")
    print(f"import_50000_rows_s={timings[True] * 50_000 / rows:.1f}")
    print(f"import_50000_rows_cpu_s={cpu[True] * 50_000 / rows:.1f}")
    print(f"import_peak_rss_mb={peak:.0f}")
    print(f"import_rss_before_mb={before:.0f}")
    print(f"import_dry_run_s={timings[False]:.1f}")
    print(f"import_dry_run_cpu_s={cpu[False]:.1f}")
    print(f"import_rows_per_s={rows / timings[True]:.0f}")


if __name__ == "__main__":
    main()
