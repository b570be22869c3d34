"""The papers' figures, static (matplotlib: PNG and SVG) and interactive (plotly, for the report).

========================  ==============================================  ==========================
figure                    from                                            paper
========================  ==============================================  ==========================
JFI surface (3-D)         :func:`analysis.aggregate` cells, RTT × buffer  000 Fig. 4
JFI heat map              the same                                        000 Fig. 4 (grey-scale)
difference surface        :func:`analysis.compare`: D, W ≥ 0 marked       000 Fig. 5
throughput over time      ``intervals`` of one run, one line per flow     001 Fig. 3, 003 Figs. 8–10
J(t) over time            ``intervals`` of some runs, eq. (2)             003 Figs. 4–7
JFI vs RTT, min–max bars  cells, one line per series                      001 Fig. 4
metrics vs CBR rate       :func:`analysis.cbr_curve`                      002 Figs. 3–5
throughput of each flow   cells, one line per cell (queue discipline)     004 Fig. 3
========================  ==============================================  ==========================

Every figure names the experiment in its title, labels its axes with units and has a legend (or
a colour bar). Lines differ in grey level, marker and dash so that they stay apart when printed
in grey; maps use ``cividis`` (lightness rises monotonically) or greys.

Each ``*_figure`` function returns a matplotlib figure; :func:`save` writes it as PNG and SVG.
Each ``*_plotly`` function returns a plotly figure for the HTML report.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import metrics
from .analysis import _order, axis_label, axis_value
from .errors import ResultsError

__all__ = [
    "STYLES",
    "save",
    "jfi_surface_figure",
    "jfi_heatmap_figure",
    "difference_figure",
    "throughput_figure",
    "window_figure",
    "jt_figure",
    "jfi_vs_rtt_figure",
    "cbr_figure",
    "flow_shares_figure",
    "flow_columns",
    "jfi_heatmap_plotly",
    "jfi_surface_plotly",
    "difference_plotly",
    "throughput_plotly",
    "window_plotly",
    "jt_plotly",
    "jfi_vs_rtt_plotly",
    "cbr_plotly",
    "flow_shares_plotly",
]

#: Line styles: (colour, marker, dash) with distinct grey levels, markers and dashes.
STYLES: list[tuple[str, str, str]] = [
    ("#000000", "o", "-"),
    ("#0072b2", "s", "--"),
    ("#d55e00", "^", ":"),
    ("#7f7f7f", "D", "-."),
    ("#009e73", "v", (0, (5, 1, 1, 1))),  # type: ignore[list-item]
    ("#cc79a7", "x", (0, (1, 1))),  # type: ignore[list-item]
]
_PLOTLY_DASH = ["solid", "dash", "dot", "dashdot", "longdashdot", "longdash"]
_PLOTLY_MARKER = ["circle", "square", "triangle-up", "diamond", "triangle-down", "x"]
_MAP = "cividis"

_LABELS = {
    "jfi": "JFI, eq. (1)",
    "jt_mean": "mean J(t), eq. (2)",
    "jt_std": "std of J(t)",
    "total_mbps": "total throughput (Mb/s)",
    "utilisation": "link utilisation",
    "drop_rate": "drop rate (dropped / sent)",
}


def _label(metric: str) -> str:
    return _LABELS.get(metric, metric)


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, directory: str | os.PathLike[str], name: str) -> list[Path]:
    """Write ``fig`` as ``<name>.png`` (150 dpi) and ``<name>.svg`` in ``directory``; close it."""
    plt = _mpl()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.svg"]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    plt.close(fig)
    return paths


def _title(kind: str, experiment: str | None) -> str:
    return f"{experiment}: {kind}" if experiment else kind


def _experiment(cells: pd.DataFrame, experiment: str | None) -> str | None:
    if experiment is not None:
        return experiment
    if "experiment" in cells.columns and cells["experiment"].nunique() == 1:
        return str(cells["experiment"].iloc[0])
    return cells.attrs.get("experiment")


def _grid(cells: pd.DataFrame, x: str, y: str, value: str) -> tuple[list[Any], list[Any], np.ndarray]:
    """``value`` on the x × y grid: (x values, y values, matrix [y, x]) in axis order."""
    for axis in (x, y):
        if axis not in cells.columns:
            raise ResultsError("axis", axis, f"expected an axis of the grid ({', '.join(c for c in cells.columns if '.' in c)})")
    xs, ys = _order(cells[x].tolist()), _order(cells[y].tolist())
    pivot = cells.pivot_table(index=y, columns=x, values=value, aggfunc="mean")
    return xs, ys, pivot.reindex(index=ys, columns=xs).to_numpy(dtype=float)


def _numbers(values: Sequence[Any]) -> np.ndarray:
    parsed = [axis_value(v) for v in values]
    if any(p is None for p in parsed):
        return np.arange(len(values), dtype=float)
    return np.array([p[0] for p in parsed if p is not None], dtype=float)


def _axis_title(cells: pd.DataFrame, axis: str) -> str:
    return axis_label(cells, axis)


# --- matplotlib ---------------------------------------------------------------------------------


def jfi_surface_figure(cells: pd.DataFrame, x: str = "topology.rtt", y: str = "topology.buffer", metric: str = "jfi", experiment: str | None = None) -> Any:
    """JFI (mean over replications) as a 3-D surface over RTT × buffer (000 Fig. 4)."""
    plt = _mpl()
    xs, ys, z = _grid(cells, x, y, f"{metric}_mean")
    gx, gy = np.meshgrid(_numbers(xs), _numbers(ys))
    fig = plt.figure(figsize=(6.4, 4.8))
    ax = fig.add_subplot(projection="3d")
    surface = ax.plot_surface(gx, gy, z, cmap=_MAP, vmin=0, vmax=1, edgecolor="k", linewidth=0.4)
    ax.scatter(gx.ravel(), gy.ravel(), z.ravel(), color="k", s=8, label=f"{_label(metric)}, mean of replications")
    ax.set_xlabel(_axis_title(cells, x))
    ax.set_ylabel(_axis_title(cells, y))
    ax.set_zlabel(_label(metric))
    ax.set_zlim(0, 1)
    ax.legend(loc="upper left", fontsize="small")
    fig.colorbar(surface, ax=ax, shrink=0.6, pad=0.12, label=_label(metric))
    ax.set_title(_title(f"{_label(metric)} over {_AXIS(x)} × {_AXIS(y)}", _experiment(cells, experiment)))
    return fig


def _AXIS(axis: str) -> str:
    return axis_label(pd.DataFrame(), axis)


def _annotate(ax: Any, z: np.ndarray, text: np.ndarray, dark: np.ndarray) -> None:
    for (i, j), value in np.ndenumerate(z):
        if value == value:
            ax.text(j, i, text[i, j], ha="center", va="center", fontsize=8, color="white" if dark[i, j] else "black")


def jfi_heatmap_figure(cells: pd.DataFrame, x: str = "topology.rtt", y: str = "topology.buffer", metric: str = "jfi", experiment: str | None = None) -> Any:
    """JFI as a heat map over RTT × buffer, each cell labelled "mean ± std"."""
    plt = _mpl()
    xs, ys, z = _grid(cells, x, y, f"{metric}_mean")
    _, _, s = _grid(cells, x, y, f"{metric}_std") if f"{metric}_std" in cells.columns else (None, None, np.full_like(z, np.nan))
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(xs), 1.6 + 0.6 * len(ys)))
    image = ax.imshow(z, cmap=_MAP, vmin=0, vmax=1, origin="lower", aspect="auto")
    text = np.vectorize(lambda m, d: f"{m:.2f}" + (f"\n±{d:.2f}" if d == d else ""))(z, s)
    _annotate(ax, z, text, z < 0.55)
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(_axis_title(cells, x))
    ax.set_ylabel(_axis_title(cells, y))
    fig.colorbar(image, ax=ax, label=f"{_label(metric)} (mean ± std of replications)")
    ax.set_title(_title(_label(metric), _experiment(cells, experiment)))
    return fig


def difference_figure(comparison: pd.DataFrame, x: str = "topology.rtt", y: str = "topology.buffer", experiment: str | None = None, names: tuple[str, str] = ("S", "T")) -> Any:
    """The difference surface (000 §IV-A, Fig. 5): D = S − T on the grid, shaded by |D| (darker =
    greater difference, as 000's grey-scale plots), labelled with D, and the cells where the
    difference is significant (W = |D| − 2·Tσ ≥ 0) hatched and framed."""
    plt = _mpl()
    from matplotlib.patches import Rectangle

    xs, ys, d = _grid(comparison, x, y, "D")
    _, _, w = _grid(comparison, x, y, "W")
    fig, ax = plt.subplots(figsize=(1.6 + 0.9 * len(xs), 1.8 + 0.6 * len(ys)))
    top = max(float(np.nanmax(np.abs(d))) if np.isfinite(d).any() else 0.0, 0.05)
    image = ax.imshow(np.abs(d), cmap="Greys", vmin=0, vmax=top, origin="lower", aspect="auto")
    _annotate(ax, d, np.vectorize(lambda v: f"{v:+.3f}")(d), np.abs(d) > 0.55 * top)
    significant = w >= 0
    for (i, j), flag in np.ndenumerate(significant):
        if flag:
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="#d55e00", linewidth=2))
    ax.add_patch(Rectangle((0, 0), 0, 0, fill=False, hatch="///", edgecolor="#d55e00", linewidth=2, label="significant: W = |D| − 2·Tσ ≥ 0"))
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(_axis_title(comparison, x))
    ax.set_ylabel(_axis_title(comparison, y))
    metric = comparison.attrs.get("metric", "jfi")
    fig.colorbar(image, ax=ax, label=f"|D|, D = {names[0]} − {names[1]} ({_label(metric)})")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize="small", frameon=False)
    ax.set_title(_title(f"difference surface, D = {names[0]} − {names[1]}", experiment or comparison.attrs.get("experiment")))
    return fig


def _run_label(runs: pd.DataFrame, run_id: Any, keys: Sequence[str]) -> str:
    row = runs.loc[runs["run_id"] == run_id]
    if row.empty or not keys:
        return str(run_id)
    return ", ".join(f"{k.split('.')[-1]} {row.iloc[0][k]}" for k in keys)


def _window_span(ax: Any, window: tuple[float, float] | None) -> None:
    if window is not None:
        ax.axvspan(window[0], window[1], color="0.92", zorder=0, label=f"window {window[0]:g}–{window[1]:g} s")


def throughput_figure(frames: Any, run_id: Any, window: tuple[float, float] | None = None, experiment: str | None = None) -> Any:
    """Each flow's throughput per interval (Mb/s) against time in one run (001 Fig. 3)."""
    plt = _mpl()
    iv, names = _run_intervals(frames, run_id)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    _window_span(ax, window)
    for k, (flow, rows) in enumerate(iv.groupby("flow", sort=True)):
        colour, marker, dash = STYLES[k % len(STYLES)]
        ax.plot(rows["t_s"], rows["throughput_mbps"], color=colour, marker=marker, linestyle=dash, markevery=max(1, len(rows) // 12), markersize=4, label=names.get(flow, f"flow{flow + 1}"))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mb/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower right", fontsize="small")
    label = _run_label(frames.runs, run_id, _varying(frames.runs))
    ax.set_title(_title(f"throughput per interval ({label})", experiment or _experiment(frames.runs, None)))
    return fig


def window_panels(iv: pd.DataFrame) -> list[tuple[str, str, float]]:
    """(column, axis title, scale) of the window figure's panels: cwnd and smoothed RTT, and
    DCTCP's α when the run has it."""
    panels = [("cwnd_bytes", "cwnd (kB)", 1e-3), ("srtt_ns", "smoothed RTT (ms)", 1e-6)]
    if "dctcp_alpha" in iv.columns and iv["dctcp_alpha"].notna().any():
        panels.append(("dctcp_alpha", "DCTCP α", 1.0))
    return panels


def window_figure(frames: Any, run_id: Any, window: tuple[float, float] | None = None, experiment: str | None = None) -> Any:
    """Each flow's congestion window (kB) and smoothed RTT (ms) in one run, as sampled at each
    interval's end, one panel each; a third panel with DCTCP's α when the run has it. Flows
    without a window (CBR) are left out."""
    plt = _mpl()
    iv, names = _run_intervals(frames, run_id)
    panels = window_panels(iv)
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.4 * len(panels) + 0.6), sharex=True)
    for ax, (column, title, scale) in zip(axes, panels):
        _window_span(ax, window)
        for k, (flow, rows) in enumerate(iv.groupby("flow", sort=True)):
            if column not in rows.columns or rows[column].isna().all():
                continue
            colour, marker, dash = STYLES[k % len(STYLES)]
            ax.plot(rows["t_s"], rows[column] * scale, color=colour, marker=marker, linestyle=dash, markevery=max(1, len(rows) // 12), markersize=4, label=names.get(flow, f"flow{flow + 1}"))
        ax.set_ylabel(title)
        ax.set_ylim(bottom=0)
    axes[0].legend(loc="upper right", fontsize="small")
    axes[-1].set_xlabel("time (s)")
    label = _run_label(frames.runs, run_id, _varying(frames.runs))
    axes[0].set_title(_title(f"window and round trip at each interval's end ({label})", experiment or _experiment(frames.runs, None)))
    fig.tight_layout()
    return fig


def _varying(runs: pd.DataFrame) -> list[str]:
    from .analysis import axes

    return [a for a in axes(runs) if runs[a].nunique() > 1]


def _run_intervals(frames: Any, run_id: Any) -> tuple[pd.DataFrame, dict[int, str]]:
    iv = frames.intervals[frames.intervals["run_id"] == run_id]
    if iv.empty:
        raise ResultsError("run", run_id, "expected a run with per-interval rows")
    fl = frames.flows[frames.flows["run_id"] == run_id]
    names = {int(r.flow): f"{r.name} ({r.variant})" if "name" in fl.columns else f"flow{int(r.flow) + 1} ({r.variant})" for r in fl.itertuples()}
    return iv.sort_values(["flow", "t_s"]), names


def jt_series(frames: Any, run_id: Any) -> pd.Series:
    """J(t), eq. (2), of one run (index: interval end in s)."""
    iv, _ = _run_intervals(frames, run_id)
    wide = iv.pivot_table(index="t_s", columns="flow", values="throughput_mbps", aggfunc="sum", fill_value=0.0)
    return metrics.jain_series(wide)


def jt_figure(frames: Any, run_ids: Sequence[Any], window: tuple[float, float] | None = None, experiment: str | None = None) -> Any:
    """J(t), eq. (2), against time for some runs, one line each (003 Figs. 4–7: one example run
    per RTT)."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    _window_span(ax, window)
    keys = _varying(frames.runs)
    for k, run_id in enumerate(run_ids):
        series = jt_series(frames, run_id)
        colour, marker, dash = STYLES[k % len(STYLES)]
        ax.plot(series.index, series.to_numpy(), color=colour, marker=marker, linestyle=dash, markevery=max(1, len(series) // 10), markersize=4, label=_run_label(frames.runs, run_id, keys))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("J(t), eq. (2)")
    ax.set_ylim(0.45, 1.02)
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title(_title("Jain's index per interval, J(t)", experiment or _experiment(frames.runs, None)))
    return fig


def _series_keys(cells: pd.DataFrame, x: str) -> list[str]:
    from .analysis import axes

    return [a for a in axes(cells) if a != x and cells[a].nunique() > 1] + [
        c for c in ("pair", "backend") if c in cells.columns and cells[c].nunique() > 1
    ]


def jfi_vs_rtt_figure(cells: pd.DataFrame, x: str = "topology.rtt", metric: str = "jfi", experiment: str | None = None) -> Any:
    """Mean JFI against RTT with min–max error bars, one line per value of the other axes
    (001 Fig. 4)."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    keys = _series_keys(cells, x)
    groups = [("all", cells)] if not keys else list(cells.groupby(keys, sort=False))
    for k, (key, rows) in enumerate(groups):
        rows = rows.set_index(x).loc[_order(rows[x].tolist())]
        xs = _numbers(rows.index.tolist())
        mean = rows[f"{metric}_mean"].to_numpy()
        lo = mean - rows[f"{metric}_min"].to_numpy()
        hi = rows[f"{metric}_max"].to_numpy() - mean
        colour, marker, dash = STYLES[k % len(STYLES)]
        label = ", ".join(f"{n.split('.')[-1]} {v}" for n, v in zip(keys, key if isinstance(key, tuple) else (key,))) if keys else _label(metric)
        ax.errorbar(xs, mean, yerr=[lo, hi], color=colour, marker=marker, linestyle=dash, capsize=3, label=label)
    ax.set_xlabel(_axis_title(cells, x))
    ax.set_ylabel(f"{_label(metric)}, mean (bars: min–max)")
    ax.set_ylim(0.45, 1.02)
    ax.legend(loc="lower left", fontsize="small")
    ax.set_title(_title(f"{_label(metric)} against {_AXIS(x)}", _experiment(cells, experiment)))
    return fig


_CBR_PANELS = (("throughput_mbps", "TCP throughput (Mb/s)"), ("drop_rate", "drop rate (dropped / sent)"), ("latency_ms", "latency (ms)"))


def cbr_figure(curve: pd.DataFrame, experiment: str | None = None) -> Any:
    """TCP throughput, drop rate and latency against the CBR rate, one line per variant
    (002 Figs. 3–5)."""
    plt = _mpl()
    fig, axs = plt.subplots(1, 3, figsize=(12, 3.6))
    for k, (variant, rows) in enumerate(curve.groupby("variant", sort=True)):
        colour, marker, dash = STYLES[k % len(STYLES)]
        for ax, (column, _) in zip(axs, _CBR_PANELS):
            ax.plot(rows["cbr_mbps"], rows[column], color=colour, marker=marker, linestyle=dash, label=variant)
    for ax, (column, label) in zip(axs, _CBR_PANELS):
        label = curve.attrs.get("latency", label) if column == "latency_ms" else label
        ax.set_xlabel("CBR rate (Mb/s)")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
    fig.suptitle(_title("TCP against UDP CBR cross traffic", experiment or curve.attrs.get("experiment")))
    fig.tight_layout()
    return fig


def flow_columns(cells: pd.DataFrame) -> list[tuple[int, str]]:
    """The cells' per-flow mean throughput columns (``flowN_mbps_mean``) as (N, column), by N:
    the flow shares figure is drawn for three or more."""
    return sorted((int(c[4:-len("_mbps_mean")]), c) for c in cells.columns if c.startswith("flow") and c.endswith("_mbps_mean"))


def _flow_shares(cells: pd.DataFrame) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Each cell's mean throughput per flow, as (label, flow numbers, Mb/s), in cell order."""
    flows = flow_columns(cells)
    if not flows:
        raise ResultsError("flows", "none", "cells with per-flow throughput (flowN_mbps_mean)")
    keys = _series_keys(cells, "")
    out = []
    for _, row in cells.iterrows():
        label = ", ".join(f"{k.split('.')[-1]} {row[k]}" for k in keys) if keys else "all runs"
        out.append((label, np.array([n for n, _ in flows]), row[[c for _, c in flows]].to_numpy(dtype=float)))
    return out


def flow_shares_figure(cells: pd.DataFrame, experiment: str | None = None) -> Any:
    """The mean throughput of each flow, one line per cell: how a discipline shares the link
    among many flows (004 Fig. 3)."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for k, (label, xs, ys) in enumerate(_flow_shares(cells)):
        colour, marker, dash = STYLES[k % len(STYLES)]
        ax.plot(xs, ys, color=colour, marker=marker, linestyle=dash, markersize=4, label=label)
    ax.set_xlabel("flow")
    ax.set_ylabel("throughput (Mb/s), mean over replications")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")
    ax.set_title(_title("throughput of each flow", _experiment(cells, experiment)))
    return fig


# --- plotly -------------------------------------------------------------------------------------


def _go():
    import plotly.graph_objects as go

    return go


def _layout(fig: Any, title: str, x: str | None, y: str | None, **extra: Any) -> Any:
    settings: dict[str, Any] = {
        "title": title,
        "xaxis_title": x,
        "yaxis_title": y,
        "template": "simple_white",
        "font": {"family": "sans-serif"},
        "legend": {"title": None},
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
    }
    for key, value in extra.items():
        settings[key] = {**settings[key], **value} if isinstance(settings.get(key), dict) else value
    fig.update_layout(**settings)
    return fig


def jfi_heatmap_plotly(cells: pd.DataFrame, x: str = "topology.rtt", y: str = "topology.buffer", metric: str = "jfi", experiment: str | None = None) -> Any:
    go = _go()
    xs, ys, z = _grid(cells, x, y, f"{metric}_mean")
    s = _grid(cells, x, y, f"{metric}_std")[2] if f"{metric}_std" in cells.columns else np.full_like(z, np.nan)
    text = np.vectorize(lambda m, d: f"{m:.2f}" + (f" ± {d:.2f}" if d == d else ""))(z, s)
    trace = go.Heatmap(
        x=[str(v) for v in xs], y=[str(v) for v in ys], z=z, zmin=0, zmax=1, colorscale="Cividis", text=text, texttemplate="%{text}",
        colorbar={"title": {"text": _label(metric)}}, hovertemplate=f"{x} %{{x}}<br>{y} %{{y}}<br>{metric} %{{text}}<extra></extra>",
    )
    return _layout(go.Figure(trace), _title(f"{_label(metric)} (mean ± std of replications)", _experiment(cells, experiment)), _axis_title(cells, x), _axis_title(cells, y))


def jfi_surface_plotly(cells: pd.DataFrame, x: str = "topology.rtt", y: str = "topology.buffer", metric: str = "jfi", experiment: str | None = None) -> Any:
    go = _go()
    xs, ys, z = _grid(cells, x, y, f"{metric}_mean")
    trace = go.Surface(x=_numbers(xs), y=_numbers(ys), z=z, cmin=0, cmax=1, colorscale="Cividis", colorbar={"title": {"text": _label(metric)}})
    fig = go.Figure(trace)
    fig.update_layout(
        title=_title(f"{_label(metric)} surface", _experiment(cells, experiment)),
        scene={"xaxis_title": _axis_title(cells, x), "yaxis_title": _axis_title(cells, y), "zaxis_title": _label(metric), "zaxis": {"range": [0, 1]}},
        margin={"l": 0, "r": 0, "t": 60, "b": 0},
    )
    return fig


def difference_plotly(comparison: pd.DataFrame, x: str = "topology.rtt", y: str = "topology.buffer", experiment: str | None = None, names: tuple[str, str] = ("S", "T")) -> Any:
    go = _go()
    xs, ys, d = _grid(comparison, x, y, "D")
    w = _grid(comparison, x, y, "W")[2]
    text = np.vectorize(lambda v, s: f"{v:+.3f}" + (" *" if s >= 0 else ""))(d, w)
    fig = go.Figure(
        go.Heatmap(
            x=[str(v) for v in xs], y=[str(v) for v in ys], z=np.abs(d), zmin=0, colorscale="Greys", text=text, texttemplate="%{text}",
            colorbar={"title": {"text": "|D|"}}, name="|D|", hovertemplate="D %{text}<extra></extra>",
        )
    )
    sig = [(str(xs[j]), str(ys[i])) for (i, j), v in np.ndenumerate(w) if v >= 0]
    fig.add_trace(
        go.Scatter(
            x=[p[0] for p in sig], y=[p[1] for p in sig], mode="markers", name="significant: W = |D| − 2·Tσ ≥ 0",
            marker={"symbol": "square-open", "size": 34, "color": "#d55e00", "line": {"width": 3}},
        )
    )
    return _layout(fig, _title(f"difference surface, D = {names[0]} − {names[1]} (* significant)", experiment), _axis_title(comparison, x), _axis_title(comparison, y),
                   legend={"orientation": "h", "y": -0.25})


def _line_style(k: int) -> dict[str, Any]:
    colour = STYLES[k % len(STYLES)][0]
    return {"line": {"color": colour, "dash": _PLOTLY_DASH[k % len(_PLOTLY_DASH)]}, "marker": {"symbol": _PLOTLY_MARKER[k % len(_PLOTLY_MARKER)], "color": colour}}


def throughput_plotly(frames: Any, run_id: Any, experiment: str | None = None) -> Any:
    go = _go()
    iv, names = _run_intervals(frames, run_id)
    fig = go.Figure()
    for k, (flow, rows) in enumerate(iv.groupby("flow", sort=True)):
        fig.add_trace(go.Scatter(x=rows["t_s"], y=rows["throughput_mbps"], mode="lines+markers", name=names.get(flow, f"flow{flow + 1}"), **_line_style(k)))
    label = _run_label(frames.runs, run_id, _varying(frames.runs))
    return _layout(fig, _title(f"throughput per interval ({label})", experiment or _experiment(frames.runs, None)), "time (s)", "throughput (Mb/s)")


def window_plotly(frames: Any, run_id: Any, experiment: str | None = None) -> Any:
    """Each flow's congestion window (kB) and smoothed RTT (ms) in one run, as sampled at each
    interval's end, one panel each; a third panel with DCTCP's α when the run has it. Flows
    without a window (CBR) are left out."""
    go = _go()
    from plotly.subplots import make_subplots

    iv, names = _run_intervals(frames, run_id)
    panels = window_panels(iv)
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.06)
    for k, (flow, rows) in enumerate(iv.groupby("flow", sort=True)):
        for row, (column, _, scale) in enumerate(panels, start=1):
            if column not in rows.columns or rows[column].isna().all():
                continue
            fig.add_trace(
                go.Scatter(x=rows["t_s"], y=rows[column] * scale, mode="lines+markers", name=names.get(flow, f"flow{flow + 1}"),
                           legendgroup=str(flow), showlegend=row == 1, **_line_style(k)),
                row=row, col=1,
            )  # fmt: skip
    label = _run_label(frames.runs, run_id, _varying(frames.runs))
    _layout(fig, _title(f"window and round trip at each interval's end ({label})", experiment or _experiment(frames.runs, None)), None, None,
            height=260 * len(panels) + 80)  # fmt: skip
    for row, (_, title, _) in enumerate(panels, start=1):
        fig.update_yaxes(title_text=title, rangemode="tozero", row=row, col=1)
    fig.update_xaxes(title_text="time (s)", row=len(panels), col=1)
    return fig


def jt_plotly(frames: Any, run_ids: Sequence[Any], experiment: str | None = None) -> Any:
    go = _go()
    fig = go.Figure()
    keys = _varying(frames.runs)
    for k, run_id in enumerate(run_ids):
        series = jt_series(frames, run_id)
        fig.add_trace(go.Scatter(x=series.index, y=series.to_numpy(), mode="lines+markers", name=_run_label(frames.runs, run_id, keys), **_line_style(k)))
    return _layout(fig, _title("Jain's index per interval, J(t)", experiment or _experiment(frames.runs, None)), "time (s)", "J(t), eq. (2)", yaxis={"range": [0.45, 1.02]})


def jfi_vs_rtt_plotly(cells: pd.DataFrame, x: str = "topology.rtt", metric: str = "jfi", experiment: str | None = None) -> Any:
    go = _go()
    fig = go.Figure()
    keys = _series_keys(cells, x)
    groups = [("all", cells)] if not keys else list(cells.groupby(keys, sort=False))
    for k, (key, rows) in enumerate(groups):
        rows = rows.set_index(x).loc[_order(rows[x].tolist())]
        mean = rows[f"{metric}_mean"].to_numpy()
        label = ", ".join(f"{n.split('.')[-1]} {v}" for n, v in zip(keys, key if isinstance(key, tuple) else (key,))) if keys else _label(metric)
        fig.add_trace(
            go.Scatter(
                x=_numbers(rows.index.tolist()), y=mean, mode="lines+markers", name=label,
                error_y={"type": "data", "symmetric": False, "array": rows[f"{metric}_max"].to_numpy() - mean, "arrayminus": mean - rows[f"{metric}_min"].to_numpy()},
                **_line_style(k),
            )
        )
    return _layout(fig, _title(f"{_label(metric)} against {_AXIS(x)} (bars: min–max)", _experiment(cells, experiment)), _axis_title(cells, x), _label(metric), yaxis={"range": [0.45, 1.02]})


def cbr_plotly(curve: pd.DataFrame, experiment: str | None = None) -> Any:
    go = _go()
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=3)
    for k, (variant, rows) in enumerate(curve.groupby("variant", sort=True)):
        for col, (column, _) in enumerate(_CBR_PANELS, start=1):
            fig.add_trace(go.Scatter(x=rows["cbr_mbps"], y=rows[column], mode="lines+markers", name=variant, legendgroup=variant, showlegend=col == 1, **_line_style(k)), row=1, col=col)
    for col, (column, label) in enumerate(_CBR_PANELS, start=1):
        label = curve.attrs.get("latency", label) if column == "latency_ms" else label
        fig.update_xaxes(title_text="CBR rate (Mb/s)", row=1, col=col)
        fig.update_yaxes(title_text=label, rangemode="tozero", row=1, col=col)
    fig.update_layout(title=_title("TCP against UDP CBR cross traffic", experiment), template="simple_white")
    return fig


def flow_shares_plotly(cells: pd.DataFrame, experiment: str | None = None) -> Any:
    go = _go()
    fig = go.Figure()
    for k, (label, xs, ys) in enumerate(_flow_shares(cells)):
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=label, **_line_style(k)))
    return _layout(fig, _title("throughput of each flow (mean over replications)", _experiment(cells, experiment)), "flow", "throughput (Mb/s)", yaxis={"rangemode": "tozero"})
