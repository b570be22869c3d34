"""When each flow of each run starts losing, from results stores: per run of the chosen cells, each
flow's mean throughput over the experiment's window and the seconds at which it starts a loss
episode (an interval with retransmissions more than --gap seconds after the last), with the segments
it retransmitted in the episode. Which flow loses at each overflow, run by run, in the simulator's
and the testbed's stores side by side (docs/validation.md, "Who loses at CUBIC's first overflow"):

    python scripts/loss_onsets.py docs/data/validation-testbed.duckdb docs/data/validation-long-testbed.duckdb \\
        results/validation-sim.duckdb --cell flow2=cubic --cell topology.rtt=200ms --cell topology.buffer=1.0bdp

prints, for each run, lines like

    validation-testbed  r1  flow1  14.7 Mb/s  2 (3332)  41 (2)  65 (3)  88 (1)  110 (2)
                            flow2  81.8 Mb/s  41 (75)  65 (73)  88 (45)  110 (29)

(seconds from the run's start: where the episode's first interval begins).

A testbed's per-second retransmissions are iperf3's, placed from each client's launch
(docs/testbed.md). Invalid runs are listed as such, with no figures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from tcplab import analysis
from tcplab.errors import ResultsError


def onsets(retrans: pd.Series, gap_s: float) -> list[tuple[float, int]]:
    """(start, segments retransmitted) of each loss episode in a flow's retransmissions per
    interval, indexed by each interval's start in seconds: an episode starts at an interval with
    retransmissions more than ``gap_s`` after the last such interval."""
    episodes: list[list[float]] = []
    last = None
    for t, n in retrans.items():
        if not n > 0:  # none, or NaN where the store has no figure
            continue
        if last is None or t - last > gap_s:
            episodes.append([t, 0.0])
        episodes[-1][1] += n
        last = t
    return [(t, int(round(n))) for t, n in episodes]


def cell_runs(frames: analysis.Frames, cell: dict[str, str], store: str) -> pd.DataFrame:
    runs = frames.runs
    for key, value in cell.items():
        if key not in runs.columns:
            raise ResultsError("--cell", f"{key}={value}", f"expected one of the axes of {store}: {', '.join(analysis.axes(runs))}")
        runs = runs[runs[key].astype(str) == value]
    return runs.sort_values("replication")


def report(path: str, cell: dict[str, str], gap_s: float, width: int) -> list[str]:
    frames = analysis.load_frames(path)
    runs = cell_runs(frames, cell, path)
    table = analysis.per_run(frames).set_index("run_id")
    name = Path(path).stem
    lines = []
    for run in runs.itertuples(index=False):
        head = f"{name:{width}s}  r{run.replication:<3d}"
        if not run.valid:
            lines.append(f"{head}  invalid")
            continue
        iv = frames.intervals[frames.intervals["run_id"] == run.run_id]
        for flow, rows in iv.groupby("flow", sort=True):
            rows = rows.sort_values("t_s")
            mbps = table.loc[run.run_id, f"flow{flow + 1}_mbps"]
            starts = rows["t_start_ns"] / 1e9
            episodes = "  ".join(f"{t:g} ({n})" for t, n in onsets(rows.set_index(starts)["retrans_pkts"], gap_s))
            lines.append(f"{head if flow == 0 else ' ' * len(head)}  flow{flow + 1} {mbps:6.1f} Mb/s  {episodes}")
    return lines


def _cell(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
        raise argparse.ArgumentTypeError(f"{text!r}: expected AXIS=VALUE, e.g. topology.rtt=200ms")
    return key, value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stores", nargs="+", metavar="STORE", help="results stores (simulator or testbed)")
    p.add_argument("--cell", type=_cell, action="append", default=[], metavar="AXIS=VALUE",
                   help="keep the runs whose AXIS has VALUE (repeatable), e.g. --cell topology.rtt=200ms")
    p.add_argument("--gap", type=float, default=2.0, metavar="SECONDS",
                   help="seconds without retransmissions that end an episode (default 2)")
    a = p.parse_args(argv)
    if a.gap <= 0:
        p.error(f"--gap: {a.gap} must be a positive number of seconds")
    cell = dict(a.cell)
    try:
        width = max(len(Path(store).stem) for store in a.stores)
        lines = [line for store in a.stores for line in report(store, cell, a.gap, width)]
    except ResultsError as e:
        print(f"loss_onsets: error: {e}", file=sys.stderr)
        return 2
    if not lines:
        print(f"loss_onsets: error: no run of {cell} in {', '.join(a.stores)}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
