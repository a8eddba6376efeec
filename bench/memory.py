"""A gunicorn worker's memory, as bench/load.py measures it, without the 50-user load.

The same PostgreSQL (its own, fsync on), town, fake meteostat and gunicorn as bench/load.py; then, RUNS
times, one fresh worker (4 threads, forked from a master that made the app: --preload, as a town runs
gunicorn) measured twice:
  memory_worker_start_mb   resident set of the fresh worker once it has answered /healthz
  worker_rss_mb            the same worker after serving 100 pages (permit pages, reports naming their
                           weather sources as stored reports do, the dashboard)
                           but no weather lookup (target <= 90), measured as bench.load measures it
Each is the median over the runs (a fresh worker each time); memory_worker_runs says how many.

Run from the repository root: python -m bench.memory [--runs N]
"""
from __future__ import annotations

import argparse
import signal
import statistics
import sys
from contextlib import ExitStack

from bench.load import THREADS, build_town, gunicorn, migrated_database, pages_without_weather, worker_rss_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so the finally blocks stop every server
    with ExitStack() as stack:
        folder, url, env = migrated_database(stack, "memory-bench")
        town = build_town(url, folder / "blobs")
        start, served = [], []
        for _ in range(args.runs):
            with gunicorn(env, 1, THREADS) as (base, master):
                start.append(max(worker_rss_mb(master)))
                pages_without_weather(base, town)
                served.append(max(worker_rss_mb(master)))
    print(f"memory_worker_runs={args.runs}")
    print(f"memory_worker_start_mb={statistics.median(start):.0f}")
    print(f"worker_rss_mb={statistics.median(served):.0f}")
    print(f"memory_worker_rss_each_mb={','.join(f'{mb:.0f}' for mb in served)}")


if __name__ == "__main__":
    main()
