"""``tcplab table | compare | report``: the commands that read results stores.

Bad input (a missing store, a file that is not one, two stores on different grids, an unknown
metric or axis) is a :class:`~tcplab.errors.ResultsError`: one line, exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from . import analysis
from .errors import ResultsError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["run", "PAPER_001_MEAN_ABS_DJFI"]

#: Paper 001, §4: mean |ΔJFI| between ns-2 and its Linux testbed over the grid.
PAPER_001_MEAN_ABS_DJFI = 0.087
#: The fidelity goal for each flow's mean throughput (docs/validation.md).
FLOW_TOLERANCE = 0.10


def run(args: argparse.Namespace) -> int:
    if args.command == "table":
        return _table(args)
    if args.command == "compare":
        return _compare(args)
    return _report(args)


def _table(args: argparse.Namespace) -> int:
    frames = analysis.load_frames(args.store)
    print(analysis.summary_table(frames, args.metric, rows=args.rows))
    return 0


def _compare(args: argparse.Namespace) -> int:
    s_frames = analysis.load_frames(args.s_store)
    t_frames = analysis.load_frames(args.t_store)
    out = Path(args.out) if args.out else None
    if out is not None and out.exists() and not out.is_dir():
        raise ResultsError("--out", args.out, "expected a directory for the figures")
    s_table = _pooled(analysis.per_run(s_frames), args.more_s, "--more-s")
    t_table = _pooled(analysis.per_run(t_frames), args.more_t, "--more-t", new_cells=args.partial)
    left_out = None
    if args.partial:
        s_table, t_table, *left_out = analysis.common_cells(s_table, t_table)
    allowed = [m for m in analysis.metric_columns(s_table) if m in t_table.columns]
    if args.metric not in allowed:
        raise ResultsError("--metric", args.metric, f"expected one of {', '.join(allowed)}")
    comparison = analysis.compare(s_table, t_table, metric=args.metric)
    summary = analysis.compare_summary(comparison)
    names = (Path(args.s_store).stem, Path(args.t_store).stem)
    s_name = " + ".join([args.s_store, *args.more_s])
    t_name = " + ".join([args.t_store, *args.more_t])
    print(f"S = {s_name}, T = {t_name}: {args.metric}, D = S − T over {summary['cells']} cells")
    if left_out is not None:
        print(f"--partial: the cells both have; left out {left_out[0]} of S's cells and {left_out[1]} of T's")
    for side, table in (("S", s_table), ("T", t_table)):
        if table.attrs.get("repeated"):
            print(f"{side}: {table.attrs['repeated']} runs found in more than one of its stores counted once")
    print(f"mean |D| {summary['mean_abs_d']:.3f}  (range {summary['min_abs_d']:.3f}–{summary['max_abs_d']:.3f})")
    if args.metric == "jfi":
        # 001 §4: the JFI of ns-2 and of the authors' testbed differ by 0.04–0.21, 0.087 on average.
        print(f"mean |ΔJFI| {summary['mean_abs_d']:.3f} here; paper 001 reports {PAPER_001_MEAN_ABS_DJFI} for ns-2 against its testbed")
    print(f"significant (W = |D| − 2·Tσ ≥ 0): {summary['significant']} of {summary['cells']} cells")
    print(f"Welch's t-test p < 0.05: {summary['welch_significant']} of {summary['cells']} cells")
    errors = None
    if args.metric == "jfi":
        errors = analysis.flow_errors(s_table, t_table)
        fs = analysis.flow_error_summary(errors, FLOW_TOLERANCE)
        print(
            f"per-flow mean throughput, error (S − T)/T: mean |error| {fs['mean_abs_error']:.1%}, max {fs['max_abs_error']:.1%}; "
            f"within {FLOW_TOLERANCE:.0%}: {fs['flows_within']} of {fs['flows']} flows, every flow in {fs['cells_within']} of {fs['cells']} cells"
        )
        off = fs["flows"] - fs["flows_within"]
        if off:
            print(f"of the {off} flows outside {FLOW_TOLERANCE:.0%}, {fs['flows_off_significant']} differ beyond the replications' spread (Welch's t-test p < 0.05)")
    if out is not None:
        from . import plots

        out.mkdir(parents=True, exist_ok=True)
        comparison.to_csv(out / "difference.csv", index=False)
        if errors is not None:
            errors.to_csv(out / "throughput.csv", index=False)
        written = []
        if {"topology.rtt", "topology.buffer"} <= set(comparison.columns):
            written = plots.save(plots.difference_figure(comparison, names=names), out, "difference")
        tables = [out / "difference.csv"] + ([out / "throughput.csv"] if errors is not None else [])
        print("wrote " + ", ".join(str(p) for p in [*tables, *written]))
    return 0


def _pooled(table: pd.DataFrame, stores: list[str], option: str, new_cells: bool = False) -> pd.DataFrame:
    """``table`` with the runs of ``stores`` (``--more-s`` / ``--more-t``) added to its cells (and
    with ``new_cells``, their cells to its own)."""
    if not stores:
        return table
    more = []
    for store in stores:
        try:
            more.append((f"{option} {store}", analysis.per_run(analysis.load_frames(store))))
        except ResultsError as e:
            raise ResultsError(option, store, e.allowed) from None
    return analysis.pool(table, more, new_cells=new_cells)


def _report(args: argparse.Namespace) -> int:
    from . import report

    frames = analysis.load_frames(args.store)
    out = Path(args.out) if args.out else None
    if out is not None and not out.is_dir() and not out.parent.is_dir():
        raise ResultsError("--out", args.out, f"expected a file in an existing directory ({out.parent} does not exist)")
    for name in analysis.experiments(frames):  # a store holds one experiment
        target = out / f"{name}.html" if out is not None and out.is_dir() else out or Path(f"{name}.html")
        report.write_report(frames, target, name)
        print(f"wrote {target}")
        if args.figures:
            written = _static_figures(analysis.select(frames, name), Path(args.figures), name)
            print(f"wrote {len(written)} figures to {args.figures}")
    return 0


def _static_figures(frames: analysis.Frames, directory: Path, name: str) -> list[Path]:
    from . import plots

    runs = analysis.per_run(frames)
    cells = analysis.aggregate(runs)
    written: list[Path] = []
    axes = set(cells.columns)
    if {"topology.rtt", "topology.buffer"} <= axes and cells["topology.rtt"].nunique() > 1 and cells["topology.buffer"].nunique() > 1:
        written += plots.save(plots.jfi_surface_figure(cells), directory, f"{name}-jfi-surface")
        written += plots.save(plots.jfi_heatmap_figure(cells), directory, f"{name}-jfi-heatmap")
    if "topology.rtt" in axes:
        written += plots.save(plots.jfi_vs_rtt_figure(cells), directory, f"{name}-jfi-vs-rtt")
    if len(plots.flow_columns(cells)) >= 3:
        written += plots.save(plots.flow_shares_figure(cells), directory, f"{name}-flow-shares")
    first = runs["run_id"].iloc[0]
    written += plots.save(plots.throughput_figure(frames, first), directory, f"{name}-throughput")
    iv = frames.intervals[frames.intervals["run_id"] == first]
    if "cwnd_bytes" in iv.columns and iv["cwnd_bytes"].notna().any():
        written += plots.save(plots.window_figure(frames, first), directory, f"{name}-window")
    written += plots.save(plots.jt_figure(frames, [first]), directory, f"{name}-jt")
    return written
