"""One self-contained HTML report per experiment.

The file opens offline and makes no network request: plotly.js is inlined once (no CDN, no
MathJax), the figures are plotly's, the styles are in the page. It holds the experiment's
parameters, the across-replication tables (mean (std), as 003's Tables III–IV) and the figures of
:mod:`tcplab.plots` that the experiment's axes allow.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from . import analysis, plots
from .analysis import Frames

__all__ = ["render", "write_report", "figures"]

_STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #111; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th { background: #eee; } td.key, th.key { text-align: left; }
.figure { margin: 1em 0; } .note { color: #555; font-size: 0.9em; }
"""


def figures(frames: Frames, cells: pd.DataFrame, runs_table: pd.DataFrame, experiment: str) -> list[tuple[str, Any]]:
    """The report's plotly figures, as (caption, figure): those the experiment's axes allow."""
    out: list[tuple[str, Any]] = []
    has_rtt = "topology.rtt" in cells.columns and cells["topology.rtt"].nunique() > 1
    has_buffer = "topology.buffer" in cells.columns and cells["topology.buffer"].nunique() > 1
    if has_rtt and has_buffer:
        out.append(("JFI (eq. (1)) over RTT × router buffer: mean ± standard deviation of the replications.", plots.jfi_heatmap_plotly(cells, experiment=experiment)))
        out.append(("The same as a surface (000 Fig. 4).", plots.jfi_surface_plotly(cells, experiment=experiment)))
    if has_rtt:
        out.append(("Mean JFI against RTT; bars from the smallest to the largest replication (001 Fig. 4).", plots.jfi_vs_rtt_plotly(cells, experiment=experiment)))
        out.append(("Mean J(t) (eq. (2)) against RTT; bars min–max.", plots.jfi_vs_rtt_plotly(cells, metric="jt_mean", experiment=experiment)))
    valid = runs_table[runs_table["valid"].astype(bool)] if "valid" in runs_table.columns else runs_table
    first = valid.sort_values("replication") if "replication" in valid.columns else valid
    if not first.empty:
        run_id = first["run_id"].iloc[0]
        out.append((f"Throughput of each flow per interval in run {run_id}.", plots.throughput_plotly(frames, run_id, experiment=experiment)))
        iv = frames.intervals[frames.intervals["run_id"] == run_id]
        if "cwnd_bytes" in iv.columns and iv["cwnd_bytes"].notna().any():
            caption = f"Congestion window and smoothed RTT of each flow in run {run_id}, sampled at each interval's end"
            caption += " (with DCTCP's α)." if len(plots.window_panels(iv)) > 2 else "."
            out.append((caption, plots.window_plotly(frames, run_id, experiment=experiment)))
        examples = _examples(first)
        out.append(("J(t) per interval, one example run per RTT (003 Figs. 4–7).", plots.jt_plotly(frames, examples, experiment=experiment)))
    if len(plots.flow_columns(cells)) >= 3:
        out.append(("Mean throughput of each flow, one line per cell (004 Fig. 3).", plots.flow_shares_plotly(cells, experiment=experiment)))
    rate_axes = [a for a in analysis.axes(frames.runs) if a.endswith(".rate")]
    if rate_axes or (frames.flows["variant"] == "cbr").any():
        try:
            curve = analysis.cbr_curve(frames, axis=rate_axes[0] if rate_axes else None)
            # A CBR rate that never varies (004's unresponsive flow) gives one point, no curve.
            if curve["cbr_mbps"].nunique() > 1:
                out.append(("TCP throughput, drop rate and latency against the CBR rate (002 Figs. 3–5).", plots.cbr_plotly(curve, experiment=experiment)))
        except analysis.ResultsError:
            pass
    return out


def _examples(runs_table: pd.DataFrame, limit: int = 4) -> list[Any]:
    """One run per RTT (the first replication, the largest buffer), at most ``limit``."""
    table = runs_table
    if "topology.buffer" in table.columns:
        largest = analysis._order(table["topology.buffer"].tolist())[-1]
        table = table[table["topology.buffer"] == largest]
    if "topology.rtt" in table.columns:
        ids = [rows["run_id"].iloc[0] for _, rows in table.groupby("topology.rtt", sort=False)]
        order = analysis._order(table.drop_duplicates("topology.rtt")["topology.rtt"].tolist())
        by_rtt = dict(zip(table.drop_duplicates("topology.rtt")["topology.rtt"], ids))
        ids = [by_rtt[r] for r in order]
        if len(ids) > limit:
            ids = [ids[round(i * (len(ids) - 1) / (limit - 1))] for i in range(limit)]
        return ids
    return table["run_id"].iloc[:limit].tolist()


def _table_html(frame: pd.DataFrame, index: bool = True) -> str:
    return frame.to_html(index=index, border=0, na_rep="-", escape=True)


def _params_html(frames: Frames, experiment: str) -> str:
    runs = frames.runs
    rows: list[tuple[str, str]] = [("experiment", experiment)]
    rows += [(str(k), str(v)) for k, v in frames.params.items() if k not in ("name", "experiment")]
    given = {k for k, _ in rows}
    for key, value in (
        ("backend", ", ".join(sorted(map(str, runs["backend"].unique())))),
        ("runs", f"{len(runs)} ({int((~runs['valid'].astype(bool)).sum())} invalid)"),
        ("replications", str(runs["replication"].nunique())),
    ):
        if key not in given:
            rows.append((key, value))
    for axis in analysis.axes(runs):
        values = analysis._order(runs[axis].tolist())
        rows.append((f"axis {axis}", ", ".join(map(str, values))))
    body = "".join(f"<tr><th class='key'>{html.escape(k)}</th><td class='key'>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def render(frames: Frames, experiment: str | None = None, params: Mapping[str, Any] | None = None) -> str:
    """The report of one experiment in ``frames`` as an HTML document (a string)."""
    import plotly.offline

    frames = analysis.check_frames(frames)
    names = analysis.experiments(frames)
    experiment = experiment or names[0]
    frames = analysis.select(frames, experiment)
    if params is not None:
        frames = Frames(frames.runs, frames.flows, frames.intervals, dict(params))
    runs_table = analysis.per_run(frames)
    cells = analysis.aggregate(runs_table)
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>tcplab report: {html.escape(experiment)}</title><style>{_STYLE}</style>",
        f"<script type='text/javascript'>{plotly.offline.get_plotlyjs()}</script></head><body>",
        f"<h1>tcplab report: {html.escape(experiment)}</h1>",
        f"<p class='note'>Written {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. JFI is Jain's index of the flows' mean throughputs "
        "over the measurement window (eq. (1)); J(t) is Jain's index per interval (eq. (2)). Cells give the mean over the "
        "replications with the sample standard deviation in brackets.</p>",
        "<h2>Parameters</h2>",
        _params_html(frames, experiment),
        "<h2>Summary tables</h2>",
    ]
    for metric, caption in (("jfi", "JFI, eq. (1)"), ("jt_mean", "mean J(t), eq. (2)"), ("utilisation", "link utilisation (the flows' throughput / the bottleneck's rate)"), ("queue_mean_ms", "mean queueing delay at the bottleneck (ms): its packets' sojourn time over the run"), ("drop_rate", "drop rate (dropped / sent packets)"), ("mark_rate", "ECN mark rate (packets that arrived CE-marked / packets sent, over the window)")):
        if f"{metric}_mean" in cells.columns and cells[f"{metric}_mean"].notna().any():
            if metric == "mark_rate" and not (cells["mark_rate_mean"] > 0).any():
                continue  # an experiment without ECN
            digits = 4 if metric in ("drop_rate", "mark_rate") else 2
            parts += [f"<h3>{caption}</h3>", _table_html(analysis.table(cells, metric, digits=digits))]
    keys = [c for c in cells.columns if c == "n" or not c.endswith(("_mean", "_std", "_min", "_max"))]
    flow_cols = [c for c in cells.columns if c.startswith("flow") and c.endswith("_mbps_mean")]
    per_flow = cells[keys + flow_cols + ["total_mbps_mean"]].rename(columns=lambda c: c.replace("_mbps_mean", " (Mb/s)"))
    parts += ["<h3>Mean throughput per flow (Mb/s, mean over replications)</h3>", _table_html(per_flow.round(3), index=False)]
    parts.append("<h2>Figures</h2>")
    for i, (caption, fig) in enumerate(figures(frames, cells, runs_table, experiment)):
        div = fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"figure-{i}", config={"displaylogo": False, "responsive": True})
        parts.append(f"<div class='figure'>{div}<p class='note'>{html.escape(caption)}</p></div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(frames: Frames, out: str | os.PathLike[str], experiment: str | None = None) -> Path:
    """Write the report of ``experiment`` (default: the first in ``frames``) to ``out``."""
    target = Path(out)
    text = render(frames, experiment)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return target
