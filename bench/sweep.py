#!/usr/bin/env python3
"""Benchmark of a sweep: an experiment file run by `tcplab run`'s runner into a fresh store.

    python bench/sweep.py [FILE] [--jobs N ...] [--executor local|dask]

FILE defaults to bench/sweep.toml (experiments/paper000-quick.toml's grid with NewReno against
NewReno and SACK: 48 runs of 100 s at 100 Mb/s). For each --jobs value (default: all cores) it
runs the whole grid into a new temporary store and prints the wall time, runs per second, runs per
second per worker, the summed time of the runs themselves, and the parallel efficiency
(summed run time / (wall time × workers)). With --executor dask the workers are a
distributed.LocalCluster of N single-threaded worker processes. It also prints the load average
before each sweep: the numbers are only as quiet as the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sweep(path: Path, jobs: int, executor: str) -> dict[str, float]:
    from tcplab.experiment import load_experiment
    from tcplab.runner import run_experiment
    from tcplab.store import Store

    exp = load_experiment(path)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "bench.duckdb"
        cluster = None
        scheduler = None
        if executor == "dask":
            from distributed import LocalCluster

            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
            scheduler = cluster.scheduler_address
        try:
            started = time.perf_counter()
            report = run_experiment(exp, store, jobs=jobs, executor=executor, scheduler=scheduler, progress=False)
            wall = time.perf_counter() - started
        finally:
            if cluster is not None:
                cluster.close()
        with Store(store) as db:
            run_s = float(db.sql("SELECT sum(wall_s) AS s FROM runs")["s"].iloc[0])
    return {"runs": report.ran, "invalid": report.invalid, "wall_s": wall, "run_s": run_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", default=str(HERE / "sweep.toml"), help="experiment file (default bench/sweep.toml)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[os.cpu_count() or 1], help="worker counts to measure (default: all cores)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local")
    args = parser.parse_args()
    print(f"{args.file}: {os.cpu_count()} cores, executor {args.executor}")
    print(f"{'jobs':>4} {'runs':>5} {'wall s':>8} {'runs/s':>8} {'runs/s/worker':>14} {'sum of runs s':>14} {'efficiency':>10} {'load avg':>9}")
    for jobs in args.jobs:
        load = os.getloadavg()[0]
        m = sweep(Path(args.file), jobs, args.executor)
        rate = m["runs"] / m["wall_s"]
        print(
            f"{jobs:>4} {m['runs']:>5} {m['wall_s']:>8.2f} {rate:>8.2f} {rate / jobs:>14.2f} {m['run_s']:>14.2f}"
            f" {m['run_s'] / (m['wall_s'] * jobs):>10.0%} {load:>9.2f}",
            flush=True,
        )
        if m["invalid"]:
            print(f"     {m['invalid']} runs invalid", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
