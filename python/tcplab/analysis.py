"""Analysis of a results store: per-run metrics, statistics across replications, and the comparison
of two result sets on the same grid.

Every function takes a store's frames (:class:`Frames`, from :func:`load_frames` or
:func:`store_frames`, which read :meth:`tcplab.store.Store.frames` and the store's ``queues`` and
``runs.scenario``):

``runs``
    one row per run: one column per sweep axis named by its dotted key, holding the value as
    written (``"topology.rtt" = "100ms"``, ``"topology.buffer" = "0.2bdp"``, ``"flow2" = "cubic"``),
    then ``run_id``, ``experiment``, ``replication``, ``seed``, ``backend`` (``"sim"``/``"testbed"``),
    ``valid``.
``flows``
    one row per run and flow: ``run_id``, ``flow``, ``name``, ``variant``, the summary over the
    measurement window (``throughput_mbps``, ``share``, ``retrans_pkts``, ``sent_pkts``,
    ``dropped_pkts``, ``drop_rate``, ``rto_count``, ``loss_undos``, ``recoveries``, ``owd_mean_ms``, ``owd_p99_ms``)
    and the run's totals (``total_sent_pkts`` …, ``owd_*_ns``).
``intervals``
    one row per run, flow and interval: ``run_id``, ``flow``, ``t_s`` (interval end),
    ``goodput_bytes``, ``throughput_mbps``, ``cwnd_bytes``, ``srtt_ns``, ``retrans_pkts``,
    ``sent_pkts``, ``dropped_pkts``.
``queues`` (optional)
    one row per run and link: ``run_id``, ``link``, ``from_name``, ``to_name``, ``mean_pkts``,
    ``dropped_pkts``, ``sojourn_{mean,p50,p99,max}_ns`` over the whole run.
``scenarios`` (optional)
    each run's resolved scenario (``run_id`` → the JSON of ``runs.scenario``): its measurement
    window, its bottleneck's rate.

The metrics are the papers':

- JFI, eq. (1) of 000: Jain's index of the flows' mean throughputs over the window;
- J(t), eq. (2) of 003: Jain's index per interval, and its mean and standard deviation;
- across the replications of a grid cell: mean, standard deviation (sample, ddof = 1), min and
  max, as in 003's Tables III–IV ("JFI values, standard deviation … mean over 5 runs");
- comparison (000 §IV-A): with S and T the cell means of two result sets and Tσ the standard
  deviation of T's replications, D = S − T, C95 = 2·Tσ, W = |D| − C95; the difference is
  significant (95 %) where W ≥ 0. Welch's t-test per cell is given beside it, and the mean |D| over
  the cells is the number 001 §4 reports (0.087, range 0.04–0.21, for ns-2 against the testbed).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import metrics
from .errors import ResultsError
from .units import Buffer, Rate, Size, Time, UnitError, Window

__all__ = [
    "Frames",
    "RUN_COLUMNS",
    "load_frames",
    "store_frames",
    "check_frames",
    "bottleneck_queues",
    "METRIC_NAMES",
    "summary_table",
    "metric_columns",
    "experiment_metrics",
    "caption",
    "axes",
    "axis_value",
    "axis_label",
    "measurement_window",
    "per_run",
    "aggregate",
    "table",
    "compare",
    "pool",
    "compare_summary",
    "cbr_curve",
    "experiments",
    "select",
]

#: The columns of ``runs`` that are not sweep axes.
RUN_COLUMNS = ("run_id", "experiment", "replication", "seed", "backend", "valid")
_FLOW_COLUMNS = ("run_id", "flow", "variant", "throughput_mbps")
_INTERVAL_COLUMNS = ("run_id", "flow", "t_s", "throughput_mbps")

#: Per-run metrics that :func:`aggregate` summarises by default.
#: The papers' window starts at 120 s in runs of 300 s or more (000, 001).
PAPERS_WINDOW_START_S = 120.0

METRICS = ("jfi", "jt_mean", "jt_std", "total_mbps", "utilisation", "drop_rate", "mark_rate", "queue_mean_ms")

#: The metrics an experiment file lists (``metrics = [...]``, :data:`tcplab.experiment.METRICS`)
#: as columns of :func:`per_run`; ``throughput`` and ``share`` are one column per flow.
METRIC_NAMES = {
    "jfi": "jfi",
    "mean_jt": "jt_mean",
    "throughput": "flow{n}_mbps",
    "share": "flow{n}_share",
    "drop_rate": "drop_rate",
    "mark_rate": "mark_rate",
    "retrans": "retrans_pkts",
    "owd": "owd_mean_ms",
}

_CAPTIONS = {
    "jfi": "JFI, eq. (1)",
    "jt_mean": "mean J(t), eq. (2)",
    "jt_std": "standard deviation of J(t)",
    "utilisation": "bottleneck utilisation",
    "drop_rate": "drop rate (dropped / sent packets)",
    "mark_rate": "mark rate (packets that arrived CE-marked / packets sent)",
    "retrans_pkts": "retransmitted packets",
    "owd_mean_ms": "mean one-way delay (ms)",
    "queue_mean_ms": "mean queueing delay at the bottleneck (ms)",
    "total_mbps": "total throughput (Mb/s)",
}


@dataclass(frozen=True)
class Frames:
    """A results store's frames (see the module's docstring), plus the experiment's parameters
    (its definition, flattened: ``topology.bottleneck``, ``replications`` …)."""

    runs: pd.DataFrame
    flows: pd.DataFrame
    intervals: pd.DataFrame
    params: Mapping[str, Any] = field(default_factory=dict)
    queues: pd.DataFrame | None = None
    scenarios: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def load_frames(path: str | os.PathLike[str], experiment: Any = None, backend: str = "sim") -> Frames:
    """The frames of the results store at ``path`` (every run in it; with ``experiment``, an
    :class:`~tcplab.experiment.Experiment`, only its grid's runs on ``backend``).

    Raises :class:`ResultsError` (one line) for a missing file or one that is not a store.
    """
    from .store import Store, StoreError

    target = Path(path)
    if not target.exists():
        raise ResultsError("STORE", str(path), "expected an existing results store (no such file)")
    if target.is_dir():
        raise ResultsError("STORE", str(path), "expected a results store file, not a directory")
    try:
        with Store(target) as store:
            frames = store_frames(store, experiment, backend)
    except StoreError as e:
        raise ResultsError("STORE", str(path), _reason(e)) from None
    return check_frames(frames, str(path))


def _reason(e: Exception) -> str:
    """The 'expected …' part of a store's one-line error."""
    text = str(e)
    return text[text.index("expected") :] if "expected" in text else text


def store_frames(store: Any, experiment: Any = None, backend: str = "sim") -> Frames:
    """The frames of an open :class:`tcplab.store.Store`: ``Store.frames()`` (runs, flows,
    intervals), the ``queues`` rows of those runs, each run's resolved scenario (``runs.scenario``)
    and the experiment's definition as parameters."""
    runs, flows, intervals = store.frames(experiment, backend)
    ids = runs["run_id"].astype(str).tolist()
    queues = store.rows("queues", ids, "link")
    scenarios = store.rows("runs", ids)[["run_id", "scenario"]]
    digest = store.meta.get("definition_hash")
    definition = store.sql("SELECT definition FROM definitions WHERE definition_hash = ?", [digest]) if digest else pd.DataFrame()
    params = _flat_definition(json.loads(definition["definition"].iloc[0])) if len(definition) else {}
    return Frames(
        runs,
        flows,
        intervals,
        params,
        queues=queues,
        scenarios={str(r): json.loads(text) for r, text in zip(scenarios["run_id"], scenarios["scenario"])},
    )


def _flat_definition(definition: Mapping[str, Any]) -> dict[str, Any]:
    """An experiment definition as report parameters: its top-level keys, the base scenario's
    fields by dotted path (``topology.bottleneck``), the flows, pairs and sweep as text."""
    out: dict[str, Any] = {}

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, Mapping) and node:
            for key, value in node.items():
                walk(f"{prefix}.{key}" if prefix else str(key), value)
        else:
            out[prefix] = node

    for key, value in definition.items():
        if key == "scenario" and isinstance(value, Mapping):
            for k, v in value.items():
                if k == "flows" and isinstance(v, list):
                    out["flows"] = ", ".join(_flow_text(f) for f in v)
                else:
                    walk(str(k), v)
        elif key in ("pairs", "sweep") and isinstance(value, Mapping):
            out[key] = ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
        elif key == "metrics" and isinstance(value, list):
            out[key] = ", ".join(map(str, value))
        else:
            out[key] = value
    return out


def _flow_text(flow: Any) -> str:
    if not isinstance(flow, Mapping):
        return str(flow)
    name = str(flow.get("variant", flow.get("kind", "flow")))
    return f"{name}@{flow['start']}" if flow.get("start") else name


def check_frames(frames: Frames, source: str = "frames") -> Frames:
    """``frames`` if they have the columns analysis needs; else a :class:`ResultsError`."""
    for name, required in (("runs", RUN_COLUMNS), ("flows", _FLOW_COLUMNS), ("intervals", _INTERVAL_COLUMNS)):
        frame = getattr(frames, name)
        if not isinstance(frame, pd.DataFrame):
            raise ResultsError(source, name, "expected a data frame of runs, flows and intervals")
        missing = [c for c in required if c not in frame.columns]
        if missing:
            raise ResultsError(source, name, f"expected the columns {', '.join(required)} (missing {', '.join(missing)})")
    if frames.runs.empty:
        raise ResultsError(source, "runs", "expected at least one run")
    return frames


# --- sweep axes ---------------------------------------------------------------------------------


def axes(runs: pd.DataFrame) -> list[str]:
    """The sweep axes of ``runs``: its text columns other than :data:`RUN_COLUMNS`, in order."""
    out = []
    for column in runs.columns:
        if column in RUN_COLUMNS:
            continue
        if pd.api.types.is_object_dtype(runs[column]) or pd.api.types.is_string_dtype(runs[column]):
            out.append(str(column))
    return out


def _grid_axes(runs: pd.DataFrame) -> list[str]:
    """The axes that name a cell of ``runs``' grid: its sweep axes less the derived ``pair``."""
    return axes(runs.drop(columns=["pair"], errors="ignore"))


def _cell_of(runs: pd.DataFrame, keys: Sequence[str]) -> pd.Series:
    """Each run's cell: the tuple of its ``keys`` as text."""
    return pd.Series(list(map(tuple, runs[list(keys)].astype(str).to_numpy())), index=runs.index, dtype=object)


def axis_value(text: object) -> tuple[float, str] | None:
    """A sweep value as a number with its unit, for sorting and plotting: ``"100ms"`` → (100, "ms"),
    ``"10Mbps"`` → (10, "Mb/s"), ``"0.2bdp"`` → (0.2, "BDP"), ``"64pkt"`` → (64, "pkt"),
    ``"64KB"`` → (65536, "B"); a name (``"cubic"``) → None."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text), ""
    for parse in (_as_time, _as_rate, _as_buffer):
        try:
            return parse(text)
        except UnitError:
            continue
    return None


def _as_time(text: object) -> tuple[float, str]:
    return Time.parse(text).ns / 1e6, "ms"


def _as_rate(text: object) -> tuple[float, str]:
    return Rate.parse(text).bps / 1e6, "Mb/s"


def _as_buffer(text: object) -> tuple[float, str]:
    b = Buffer.parse(text)
    if b.kind == "bdp":
        return float(b.value), "BDP"
    if b.kind == "pkts":
        return float(b.value), "pkt"
    return float(Size(int(b.value)).bytes), "B"


_AXIS_NAMES = {
    "topology.rtt": "RTT",
    "topology.buffer": "router buffer",
    "topology.bottleneck": "bottleneck rate",
    "topology.loss": "loss probability",
}


def axis_label(runs: pd.DataFrame, axis: str) -> str:
    """``"RTT (ms)"``, ``"router buffer (BDP)"``: an axis's name with the unit of its values."""
    name = _AXIS_NAMES.get(axis, axis)
    unit = _axis_unit(runs[axis]) if axis in runs.columns else None
    return f"{name} ({unit})" if unit else name


def _axis_unit(values: pd.Series) -> str | None:
    units = {v[1] for v in (axis_value(x) for x in values.dropna().unique()) if v is not None}
    return units.pop() if len(units) == 1 else None


def _numeric(values: pd.Series) -> pd.Series | None:
    """The axis values as numbers in one unit, or None when they are names or mix units."""
    parsed = [axis_value(x) for x in values]
    if any(p is None for p in parsed) or len({p[1] for p in parsed if p is not None}) > 1:
        return None
    return pd.Series([p[0] for p in parsed if p is not None], index=values.index, dtype=float)


def _order(values: Sequence[Any]) -> list[Any]:
    """Distinct axis values in their natural order (by number when they all have one unit)."""
    distinct = list(dict.fromkeys(values))
    numbers = _numeric(pd.Series(distinct, dtype=object))
    if numbers is None:
        return sorted(distinct, key=str)
    return [distinct[i] for i in np.argsort(numbers.to_numpy(), kind="stable")]


# --- per run ------------------------------------------------------------------------------------


def measurement_window(duration_s: float, interval_s: float = 1.0) -> tuple[float, float]:
    """The default window of a run, as the scenario's (``Scenario.measurement_window``): 120 s to
    the end for runs of at least 300 s, else the last 60 %, the start rounded down to an interval."""
    if duration_s >= 300:
        return PAPERS_WINDOW_START_S, duration_s
    start = math.floor(duration_s * 0.4 / interval_s + 1e-9) * interval_s
    return start, duration_s


def _pair(variants: pd.Series) -> str:
    return "–".join(str(v) for v in variants)


def per_run(frames: Frames, window: tuple[float, float] | None = None, capacity_mbps: float | None = None) -> pd.DataFrame:
    """One row per run with its axes and its metrics.

    Columns: the ``runs`` columns, ``pair`` (the flows' variants in flow order, ``"newreno–cubic"``),
    ``n_flows``, ``jfi`` (eq. (1) over the flows' mean throughputs over the window), ``jt_mean`` /
    ``jt_std`` (mean and population standard deviation of J(t), eq. (2), over the intervals inside
    the window), ``flowN_mbps`` and ``flowN_share`` (each flow's mean throughput and share),
    ``total_mbps``, ``utilisation`` (total / the bottleneck's rate), ``drop_rate`` (dropped / sent
    packets in the window, all flows), ``mark_rate`` (ECN: packets that arrived CE-marked / packets
    sent in the window, all flows; each flow's as ``flowN_mark_rate`` where any run has marks; over
    the whole run for runs stored before marks were counted per interval), ``retrans_pkts`` (in the
    window, all flows),
    ``owd_mean_ms`` and ``owd_p99_ms`` (mean over the flows; each flow's as ``flowN_owd_mean_ms``,
    ``flowN_owd_p99_ms``), for a DCTCP flow ``flowN_dctcp_alpha`` (the mean of its α at the ends of
    the intervals in the window), ``rtt_p50_ms`` / ``rtt_p99_ms``
    (percentiles of the per-interval smoothed RTT inside the window), and the bottleneck queue's
    delay ``queue_mean_ms``, ``queue_p50_ms``, ``queue_p99_ms`` (its sojourn times over the run, from
    ``queues``; without ``queues``, the smoothed-RTT percentiles less a ``topology.rtt`` axis's base
    RTT) with ``queue_mean_pkts`` (its time-average occupancy).

    ``window`` is ``(start_s, stop_s)`` for J(t); by default each run's own, from its scenario
    (``Scenario.measurement_window``), else :func:`measurement_window` of its last interval's end.
    The bottleneck's rate: ``capacity_mbps``, else the run's scenario (a dumbbell's ``bottleneck``,
    a graph's link of :func:`bottleneck_queues`; with a rate schedule, its mean over the window),
    else a ``topology.bottleneck`` axis or parameter.
    """
    check_frames(frames)
    runs = frames.runs.reset_index(drop=True)
    flows = frames.flows.sort_values(["run_id", "flow"])
    intervals = frames.intervals
    out = runs.copy()

    by_run = flows.groupby("run_id", sort=False)
    out["pair"] = out["run_id"].map(by_run["variant"].agg(_pair))
    out["n_flows"] = out["run_id"].map(by_run.size()).fillna(0).astype(int)
    out["jfi"] = out["run_id"].map(by_run["throughput_mbps"].agg(lambda x: metrics.jain(x.to_numpy())))
    wide = flows.pivot_table(index="run_id", columns="flow", values="throughput_mbps", aggfunc="sum")
    for flow in wide.columns:
        out[f"flow{int(flow) + 1}_mbps"] = out["run_id"].map(wide[flow])
    if "share" in flows.columns:
        shares = flows.pivot_table(index="run_id", columns="flow", values="share", aggfunc="sum")
        for flow in shares.columns:
            out[f"flow{int(flow) + 1}_share"] = out["run_id"].map(shares[flow])
    out["total_mbps"] = out["run_id"].map(by_run["throughput_mbps"].sum())
    capacity = _capacity(frames, out, capacity_mbps, window)
    # A window a rate schedule keeps the link down throughout has no utilisation.
    out["utilisation"] = out["total_mbps"] / capacity.where(capacity > 0)
    if {"sent_pkts", "dropped_pkts"} <= set(flows.columns):
        sent = by_run["sent_pkts"].sum()
        out["drop_rate"] = out["run_id"].map(by_run["dropped_pkts"].sum() / sent.where(sent > 0))
    else:
        out["drop_rate"] = np.nan
    if {"marked_pkts", "total_sent_pkts"} <= set(flows.columns):
        # Marks (the receivers' count; the testbed's router's per source) over the window, as
        # drops; a run stored before marks were counted per interval has only the run's total,
        # its `marked_pkts` then, with no `total_marked_pkts`.
        windowed = flows["total_marked_pkts"].notna() if "total_marked_pkts" in flows.columns else pd.Series(False, index=flows.index)
        marks = flows.assign(sent=flows["sent_pkts"].where(windowed, flows["total_sent_pkts"]))
        by_mark_run = marks.groupby("run_id", sort=False)
        sent = by_mark_run["sent"].sum()
        out["mark_rate"] = out["run_id"].map(by_mark_run["marked_pkts"].sum() / sent.where(sent > 0))
        if (marks["marked_pkts"] > 0).any():  # each flow's, where there are marks at all
            marks["rate"] = marks["marked_pkts"] / marks["sent"].where(marks["sent"] > 0)
            own = marks.pivot_table(index="run_id", columns="flow", values="rate", aggfunc="mean", dropna=False)
            for flow in own.columns:
                out[f"flow{int(flow) + 1}_mark_rate"] = out["run_id"].map(own[flow])
    else:
        out["mark_rate"] = np.nan
    out["retrans_pkts"] = out["run_id"].map(by_run["retrans_pkts"].sum()) if "retrans_pkts" in flows.columns else np.nan
    for column in ("owd_mean_ms", "owd_p99_ms"):
        out[column] = out["run_id"].map(by_run[column].mean()) if column in flows.columns else np.nan
        if column in flows.columns:
            # Each flow's own: flows apart by their queues (DualPI2's L4S and classic queues, a
            # fair queue) wait apart.
            own = flows.pivot_table(index="run_id", columns="flow", values=column, aggfunc="mean")
            for flow in own.columns:
                out[f"flow{int(flow) + 1}_{column}"] = out["run_id"].map(own[flow])

    jt_mean, jt_std, rtt50, rtt99 = {}, {}, {}, {}
    alpha: dict[int, dict[Any, float]] = {}  # flow → run → DCTCP's mean α in the window
    for run_id, rows in intervals.groupby("run_id", sort=False):
        span = _interval_s(rows)
        start, stop = window if window is not None else _run_window(frames.scenarios.get(str(run_id)), float(rows["t_s"].max()), span)
        inside = rows[(rows["t_s"] - span >= start - 1e-9) & (rows["t_s"] <= stop + 1e-9)]
        wide_t = inside.pivot_table(index="t_s", columns="flow", values="throughput_mbps", aggfunc="sum", fill_value=0.0)
        series = metrics.jain_series(wide_t) if not wide_t.empty else pd.Series(dtype=float)
        jt_mean[run_id] = float(series.mean()) if series.notna().any() else np.nan
        jt_std[run_id] = float(series.std(ddof=0)) if series.notna().any() else np.nan
        if "srtt_ns" in inside.columns and inside["srtt_ns"].notna().any():
            srtt_ms = inside["srtt_ns"].dropna().to_numpy(dtype=float) / 1e6
            rtt50[run_id], rtt99[run_id] = np.percentile(srtt_ms, [50, 99])
        if "dctcp_alpha" in inside.columns:
            for flow, mean in inside.groupby("flow")["dctcp_alpha"].mean().dropna().items():
                alpha.setdefault(int(flow), {})[run_id] = float(mean)
    out["jt_mean"] = out["run_id"].map(jt_mean)
    out["jt_std"] = out["run_id"].map(jt_std)
    out["rtt_p50_ms"] = out["run_id"].map(rtt50)
    out["rtt_p99_ms"] = out["run_id"].map(rtt99)
    for flow in sorted(alpha):
        out[f"flow{flow + 1}_dctcp_alpha"] = out["run_id"].map(alpha[flow])
    queues = bottleneck_queues(frames)
    if queues is not None:
        by_id = queues.set_index("run_id")
        for name in ("mean", "p50", "p99"):
            out[f"queue_{name}_ms"] = out["run_id"].map(by_id[f"sojourn_{name}_ns"] / 1e6)
        out["queue_mean_pkts"] = out["run_id"].map(by_id["mean_pkts"])
    elif "topology.rtt" in out.columns:
        base = out["topology.rtt"].map(lambda v: Time.parse(v).ns / 1e6)
        out["queue_p50_ms"] = out["rtt_p50_ms"] - base
        out["queue_p99_ms"] = out["rtt_p99_ms"] - base
    return out


def bottleneck_queues(frames: Frames, window: tuple[float, float] | None = None) -> pd.DataFrame | None:
    """Each run's bottleneck queue: its ``queues`` row with ``rate_mbps`` (the link's rate from the
    run's scenario, with a rate schedule its mean over ``window``, by default the run's own; NaN
    where unknown). A
    dumbbell's is the link from ``router1`` to ``router2``; in a graph, the link with the largest
    time-average occupancy (where a standing queue builds), ties broken by drops. None without
    ``queues``."""
    queues = frames.queues
    if queues is None or queues.empty or "sojourn_mean_ns" not in queues.columns:
        return None
    rows = []
    for run_id, links in queues.groupby("run_id", sort=False):
        scenario = frames.scenarios.get(str(run_id)) or {}
        topology = scenario.get("topology") or {}
        rate = np.nan
        chosen = None
        if topology.get("kind", "dumbbell") == "dumbbell" and {"from_name", "to_name"} <= set(links.columns):
            forward = links[(links["from_name"] == "router1") & (links["to_name"] == "router2")]
            if len(forward):
                chosen = forward.iloc[0]
                rate = _link_rate_mbps(topology, "bottleneck", "bottleneck_schedule", window or _own_window(scenario))
        if chosen is None:
            chosen = links.sort_values(["mean_pkts", "dropped_pkts"], ascending=False, kind="stable").iloc[0]
            graph_links = topology.get("links") or []
            link = int(chosen["link"])
            if topology.get("kind") == "graph" and 0 <= link < len(graph_links):
                rate = _link_rate_mbps(graph_links[link], "rate", "rate_schedule", window or _own_window(scenario))
        rows.append({**chosen.to_dict(), "run_id": run_id, "rate_mbps": rate})
    return pd.DataFrame(rows)


def _rate_mbps(text: Any) -> float:
    if text is None:
        return np.nan
    try:
        return Rate.parse(text).bps / 1e6
    except UnitError:
        return np.nan


def _link_rate_mbps(link: Mapping[str, Any], rate_key: str, schedule_key: str, window: tuple[float, float] | None) -> float:
    """A link's rate (Mb/s) in a stored scenario's ``link`` table (a dumbbell's topology, a graph's
    link): ``rate_key``, or with a ``schedule_key`` the time-weighted mean of its rates over
    ``window`` (seconds from the run's start; ``rate_key`` alone without a window)."""
    base = _rate_mbps(link.get(rate_key))
    schedule = link.get(schedule_key)
    if schedule is None or window is None or math.isnan(base) or window[1] <= window[0]:
        return base
    from pydantic import TypeAdapter

    from .config import LinkSchedule, schedule_points

    try:
        points = schedule_points(TypeAdapter(LinkSchedule).validate_python(schedule))
    except ValueError:
        return np.nan
    steps = [(0.0, base)] + [(t / 1e9, r / 1e6) for t, r in points]
    start, stop = window
    ends = [t for t, _ in steps[1:]] + [math.inf]
    area = sum(rate * max(0.0, min(end, stop) - max(t, start)) for (t, rate), end in zip(steps, ends))
    return area / (stop - start)


def _own_window(scenario: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """A stored scenario's measurement window in seconds, None without its duration."""
    if not scenario or "duration" not in scenario:
        return None
    try:
        return _scenario_window(scenario.get("window"), scenario["duration"], scenario.get("interval", "1s"))
    except UnitError:
        return None


def _capacity(frames: Frames, out: pd.DataFrame, capacity_mbps: float | None, window: tuple[float, float] | None = None) -> pd.Series:
    """The bottleneck's rate (Mb/s) per run of ``out`` over ``window`` (default each run's own):
    see :func:`per_run`."""
    if capacity_mbps is not None:
        return pd.Series(float(capacity_mbps), index=out.index)

    def dumbbell_rate(run_id: Any) -> float:
        scenario = frames.scenarios.get(str(run_id)) or {}
        topology = scenario.get("topology") or {}
        if topology.get("kind", "dumbbell") != "dumbbell":
            return np.nan
        return _link_rate_mbps(topology, "bottleneck", "bottleneck_schedule", window or _own_window(scenario))

    rate = out["run_id"].map(dumbbell_rate).astype(float)
    queues = bottleneck_queues(frames, window)
    if queues is not None:
        rate = rate.fillna(out["run_id"].map(queues.set_index("run_id")["rate_mbps"]).astype(float))
    if "topology.bottleneck" in out.columns:
        rate = rate.fillna(out["topology.bottleneck"].map(_rate_mbps))
    fixed = _param(frames.params, "topology.bottleneck")
    if fixed is not None:
        rate = rate.fillna(_rate_mbps(fixed))
    return rate


def _run_window(scenario: Mapping[str, Any] | None, end_s: float, interval_s: float) -> tuple[float, float]:
    """A run's measurement window in seconds: its scenario's (``Scenario.measurement_window``),
    else :func:`measurement_window` of its length."""
    if scenario and "duration" in scenario:
        try:
            return _scenario_window(scenario.get("window"), scenario["duration"], scenario.get("interval", "1s"))
        except UnitError:
            pass
    return measurement_window(end_s, interval_s)


@functools.lru_cache(maxsize=256)
def _scenario_window(window: str | None, duration: str, interval: str) -> tuple[float, float]:
    length = Time.parse(duration)
    if window is not None:
        start, stop = Window.parse(window).bounds(length)
        return start.ns / 1e9, stop.ns / 1e9
    return measurement_window(length.ns / 1e9, Time.parse(interval).ns / 1e9)


def _param(params: Mapping[str, Any], path: str) -> Any:
    """A parameter by dotted path, from flat (``{"topology.rtt": …}``) or nested parameters."""
    if path in params:
        return params[path]
    node: Any = params
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _interval_s(rows: pd.DataFrame) -> float:
    """The measurement interval of one run's rows: the smallest step between interval ends."""
    steps = np.diff(np.unique(rows["t_s"].to_numpy(dtype=float)))
    return float(steps.min()) if steps.size else float(rows["t_s"].max())


# --- across replications ------------------------------------------------------------------------


def _cell_keys(table: pd.DataFrame, runs_axes: Sequence[str]) -> list[str]:
    keys = [a for a in runs_axes if a in table.columns]
    if "pair" in table.columns and "pair" not in keys and not any(a.startswith("flow") for a in keys):
        keys.append("pair")
    for extra in ("experiment", "backend"):
        if extra in table.columns and table[extra].nunique() > 1:
            keys.insert(0, extra)
    return keys


def aggregate(runs_table: pd.DataFrame, metrics_: Sequence[str] | None = None, by: Sequence[str] | None = None, valid_only: bool = True) -> pd.DataFrame:
    """Statistics across the replications of each grid cell, as the papers' tables.

    ``runs_table`` is :func:`per_run`'s table; ``by`` the columns that name a cell (default: the
    sweep axes, plus ``pair`` when the flows' variants are not themselves an axis). One row per
    cell, sorted by axis value, with ``n`` (replications) and for each metric ``<m>_mean``,
    ``<m>_std`` (sample standard deviation, ddof = 1; NaN for one replication), ``<m>_min``,
    ``<m>_max``. Invalid runs (``valid`` false) are left out unless ``valid_only`` is false.
    """
    table = runs_table
    if valid_only and "valid" in table.columns:
        table = table[table["valid"].astype(bool)]
    keys = list(by) if by is not None else _cell_keys(table, _grid_axes(table))
    chosen = [m for m in (metrics_ or METRICS) if m in table.columns]
    chosen += [c for c in table.columns if metrics_ is None and c.startswith("flow") and c.endswith("_mbps")]
    if not keys:
        table = table.assign(cell="all")
        keys = ["cell"]
    grouped = table.groupby(keys, sort=False, dropna=False)
    parts = [grouped.size().rename("n")]
    for m in chosen:
        stats = grouped[m].agg(["mean", "std", "min", "max"])
        stats.columns = [f"{m}_{s}" for s in stats.columns]
        parts.append(stats)
    cells = _sort_cells(pd.concat(parts, axis=1).reset_index(), keys)
    if "experiment" in table.columns and table["experiment"].nunique() == 1:
        cells.attrs["experiment"] = str(table["experiment"].iloc[0])
    return cells


def _sort_cells(cells: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    order = []
    for key in keys:
        ranks = {v: i for i, v in enumerate(_order(cells[key].tolist()))}
        order.append(cells[key].map(ranks))
    if not order:
        return cells
    frame = pd.concat(order, axis=1, keys=range(len(order)))
    return cells.loc[frame.sort_values(list(range(len(order)))).index].reset_index(drop=True)


def table(cells: pd.DataFrame, metric: str = "jfi", rows: str | None = None, digits: int = 2) -> pd.DataFrame:
    """The cells as a printed table, in the layout of 003's Table III: one row per value of ``rows``
    (default: the RTT axis, else the first axis), one column per value of the other cell keys (the
    variant pair, the buffer …), each cell ``"mean (std)"`` of ``metric`` across replications."""
    keys = [c for c in cells.columns if c not in ("n",) and not any(c.startswith(f"{m}_") for m in _metric_names(cells))]
    if rows is None:
        rows = "topology.rtt" if "topology.rtt" in keys else keys[0]
    if rows not in keys:
        raise ResultsError("--rows", rows, f"expected one of the grid's axes: {', '.join(keys)}")
    if f"{metric}_mean" not in cells.columns:
        raise ResultsError("--metric", metric, f"expected one of {', '.join(_metric_names(cells))}")
    others = [k for k in keys if k != rows and cells[k].nunique() > 1]
    if not others:
        others = [k for k in keys if k != rows][:1]
    text = cells.apply(lambda r: _mean_std(r[f"{metric}_mean"], r[f"{metric}_std"], digits), axis=1)
    frame = cells.assign(_cell=text)
    if others:
        frame["_col"] = frame[others].astype(str).agg(", ".join, axis=1)
        out = frame.pivot(index=rows, columns="_col", values="_cell")
        out = out[[c for c in dict.fromkeys(frame["_col"])]]
        out.columns.name = ", ".join(others)
    else:
        out = frame.set_index(rows)[["_cell"]].rename(columns={"_cell": metric})
    out = out.loc[_order(out.index.tolist())]
    return out


def metric_columns(runs_table: pd.DataFrame) -> list[str]:
    """The per-run metrics of a :func:`per_run` table (its numeric columns that are not run keys)."""
    skip = set(RUN_COLUMNS) | {"n_flows"}
    return [c for c in runs_table.columns if c not in skip and pd.api.types.is_numeric_dtype(runs_table[c]) and not pd.api.types.is_bool_dtype(runs_table[c])]


def experiment_metrics(names: Sequence[str], runs_table: pd.DataFrame) -> list[str]:
    """An experiment file's ``metrics`` (:data:`METRIC_NAMES`) as :func:`per_run` columns."""
    out: list[str] = []
    for name in names:
        column = METRIC_NAMES.get(name, name)
        if "{n}" in column:
            out += [c for c in runs_table.columns if re.fullmatch(column.replace("{n}", r"\d+"), c)]
        elif column in runs_table.columns:
            out.append(column)
    return out


def caption(metric: str) -> str:
    """A metric's name in a heading: ``"JFI, eq. (1)"``, ``"flow2 throughput (Mb/s)"``."""
    found = re.fullmatch(r"(flow\d+)_(mbps|share)", metric)
    if found:
        return f"{found[1]} {'throughput (Mb/s)' if found[2] == 'mbps' else 'share'}"
    return _CAPTIONS.get(metric, metric)


def summary_table(frames: Frames, metric: str = "jfi", rows: str | None = None, runs_table: pd.DataFrame | None = None) -> str:
    """The text ``tcplab table`` and ``tcplab run`` print: a heading line, then :func:`table` of
    ``metric`` (a :func:`per_run` column) across the replications of each cell."""
    runs_table = per_run(frames) if runs_table is None else runs_table
    allowed = metric_columns(runs_table)
    if metric not in allowed:
        raise ResultsError("--metric", metric, f"expected one of {', '.join(allowed)}")
    cells = aggregate(runs_table, [metric])
    text = table(cells, metric, rows=rows, digits=4 if metric in ("drop_rate", "mark_rate", "utilisation") or metric.endswith(("_mark_rate", "_dctcp_alpha")) else 2)
    n = cells["n"]
    count = f"{n.min()}" if n.min() == n.max() else f"{n.min()}–{n.max()}"
    names = ", ".join(experiments(frames))
    noun = "replication" if n.max() == 1 else "replications"
    return f"{names}: {caption(metric)}, mean (std) over {count} {noun}\n{text.to_string()}"


def _metric_names(cells: pd.DataFrame) -> list[str]:
    return [c[: -len("_mean")] for c in cells.columns if c.endswith("_mean")]


def _mean_std(mean: float, std: float, digits: int) -> str:
    if mean != mean:
        return "-"
    if std != std:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ({std:.{digits}f})"


# --- two result sets ----------------------------------------------------------------------------


def compare(s_table: pd.DataFrame, t_table: pd.DataFrame, metric: str = "jfi", by: Sequence[str] | None = None) -> pd.DataFrame:
    """Compare two result sets on the same grid, per cell (000 §IV-A).

    ``s_table`` and ``t_table`` are :func:`per_run` tables (S: e.g. the simulation, T: the
    testbed). Per cell: ``S``, ``S_std``, ``T``, ``T_std`` (means and sample standard deviations of
    ``metric`` over the replications), ``n_S``, ``n_T``, ``D = S − T``, ``C95 = 2·T_std``,
    ``W = |D| − C95``, ``significant`` (W ≥ 0), and Welch's t-test: ``t``, ``p`` (NaN where it is
    undefined: fewer than two replications, or no variance on either side).

    Raises :class:`ResultsError` when the two sets are not on the same grid.
    """
    for side, table in (("S", s_table), ("T", t_table)):
        _check_valid_cells(table, metric, by, side)
    s_cells = aggregate(s_table, [metric], by=by)
    t_cells = aggregate(t_table, [metric], by=by)
    s_keys = [c for c in s_cells.columns if c != "n" and not c.startswith(f"{metric}_")]
    t_keys = [c for c in t_cells.columns if c != "n" and not c.startswith(f"{metric}_")]
    if s_keys != t_keys:
        raise ResultsError("compare", f"axes {s_keys} and {t_keys}", "expected two result sets with the same sweep axes")
    keys = [k for k in s_keys if k not in ("experiment", "backend")]
    s_grid = set(map(tuple, s_cells[keys].astype(str).to_numpy()))
    t_grid = set(map(tuple, t_cells[keys].astype(str).to_numpy()))
    if s_grid != t_grid:
        only = sorted(s_grid ^ t_grid)[0]
        raise ResultsError("compare", dict(zip(keys, only)), "expected two result sets on the same grid (this cell is in one only)")
    merged = s_cells[keys + ["n", f"{metric}_mean", f"{metric}_std"]].merge(
        t_cells[keys + ["n", f"{metric}_mean", f"{metric}_std"]], on=keys, suffixes=("_S", "_T")
    )
    out = merged[keys].copy()
    out["S"] = merged[f"{metric}_mean_S"]
    out["S_std"] = merged[f"{metric}_std_S"]
    out["T"] = merged[f"{metric}_mean_T"]
    out["T_std"] = merged[f"{metric}_std_T"]
    out["n_S"] = merged["n_S"]
    out["n_T"] = merged["n_T"]
    out["D"] = out["S"] - out["T"]
    out["C95"] = 2 * out["T_std"]
    out["W"] = out["D"].abs() - out["C95"]
    # 000 §IV-A: significant where W is zero or more; a cell with no difference at all (D = 0,
    # where W = 0 only because T did not vary) is not called a difference.
    out["significant"] = (out["W"] >= 0) & (out["D"].abs() > 1e-12)
    t_stat, p_value = [], []
    s_groups = _samples(s_table, keys, metric)
    t_groups = _samples(t_table, keys, metric)
    for row in out[keys].astype(str).itertuples(index=False):
        t_, p_ = _welch(s_groups.get(tuple(row), []), t_groups.get(tuple(row), []))
        t_stat.append(t_)
        p_value.append(p_)
    out["t"] = t_stat
    out["p"] = p_value
    out = _sort_cells(out, keys)
    out.attrs["metric"] = metric
    out.attrs["experiment"] = s_cells.attrs.get("experiment")
    return out


def _check_valid_cells(table: pd.DataFrame, metric: str, by: Sequence[str] | None, side: str) -> None:
    """A cell whose runs are all invalid (a testbed under load) cannot be compared: say so."""
    every = aggregate(table, [metric], by=by, valid_only=False)
    valid = aggregate(table, [metric], by=by)
    keys = [c for c in every.columns if c != "n" and not c.startswith(f"{metric}_")]
    have = set(map(tuple, valid[keys].astype(str).to_numpy())) if set(keys) <= set(valid.columns) else set()
    for row in every[keys + ["n"]].to_dict("records"):
        if tuple(str(row[k]) for k in keys) not in have:
            cell = {k: row[k] for k in keys if k not in ("experiment", "backend")}
            raise ResultsError("compare", cell, f"expected a valid run in every cell: the {row['n']} runs of this cell in {side} are all invalid (runs.invalid_reason); rerun them with tcplab run --redo-invalid")


def _samples(runs_table: pd.DataFrame, keys: Sequence[str], metric: str) -> dict[tuple[str, ...], list[float]]:
    table = runs_table[runs_table["valid"].astype(bool)] if "valid" in runs_table.columns else runs_table
    return {
        tuple(str(k) for k in (key if isinstance(key, tuple) else (key,))): rows[metric].dropna().tolist()
        for key, rows in table.groupby(list(keys), sort=False)
    }


def _welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Welch's unequal-variance t-test (``scipy.stats.ttest_ind(equal_var=False)``)."""
    if len(a) < 2 or len(b) < 2 or (np.var(a) == 0 and np.var(b) == 0):
        return float("nan"), float("nan")
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_ind(a, b, equal_var=False)
    return float(result.statistic), float(result.pvalue)


def flow_errors(s_table: pd.DataFrame, t_table: pd.DataFrame, by: Sequence[str] | None = None) -> pd.DataFrame:
    """Each flow's mean throughput in S against T, per cell: the other half of the fidelity
    question (two sets can agree on JFI while both flows are off by the same factor).

    One row per cell and flow: the cell's axes, ``flow`` (1-based), ``S`` and ``T`` (the flow's
    mean throughput over the valid replications, Mb/s), ``S_std``, ``T_std``, ``D = S − T``,
    ``error = D / T`` (relative to T) and ``p``, Welch's t-test of the two sets of replications
    (NaN when it is undefined): a large error with a large p is within the runs' own spread.
    Raises :class:`ResultsError` as :func:`compare` does.
    """
    flows = sorted(
        (c for c in s_table.columns if c.startswith("flow") and c.endswith("_mbps") and c in t_table.columns),
        key=lambda c: int(c[len("flow") : -len("_mbps")]),
    )
    parts = []
    for column in flows:
        c = compare(s_table, t_table, metric=column, by=by)
        keys = [k for k in c.columns if k not in _COMPARE_COLUMNS]
        part = c[keys].copy()
        part["flow"] = int(column[len("flow") : -len("_mbps")])
        for name in ("S", "S_std", "T", "T_std", "D"):
            part[name] = c[name]
        part["error"] = c["D"] / c["T"].where(c["T"] > 0)
        part["p"] = c["p"]
        parts.append(part)
    if not parts:
        raise ResultsError("compare", "flows", "expected per-flow throughput (flowN_mbps) in both result sets")
    return pd.concat(parts, ignore_index=True)


def flow_error_summary(errors: pd.DataFrame, tolerance: float = 0.10, alpha: float = 0.05) -> dict[str, float | int]:
    """``cells``, ``cells_within`` (cells where every flow's |error| ≤ ``tolerance``),
    ``flows_within`` of ``flows``, ``mean_abs_error`` and ``max_abs_error`` (relative), and
    ``flows_off_significant``: of the flows outside the tolerance, those whose two sets of
    replications differ by Welch's t-test at ``alpha`` (the others are off by no more than the
    runs' own spread can make them)."""
    keys = [k for k in errors.columns if k not in ("flow", "S", "S_std", "T", "T_std", "D", "error", "p")]
    within = errors["error"].abs() <= tolerance
    per_cell = within.groupby([errors[k].astype(str) for k in keys]).all() if keys else pd.Series([within.all()])
    return {
        "cells": int(len(per_cell)),
        "cells_within": int(per_cell.sum()),
        "flows": int(len(errors)),
        "flows_within": int(within.sum()),
        "flows_off_significant": int((~within & (errors["p"] < alpha)).sum()) if "p" in errors else 0,
        "mean_abs_error": float(errors["error"].abs().mean()),
        "max_abs_error": float(errors["error"].abs().max()),
    }


_COMPARE_COLUMNS = ("S", "S_std", "T", "T_std", "n_S", "n_T", "D", "C95", "W", "significant", "t", "p")


def pool(base: pd.DataFrame, more: Sequence[tuple[str, pd.DataFrame]], new_cells: bool = False) -> pd.DataFrame:
    """``base`` (a :func:`per_run` table) with the runs of other tables of the same grid added as
    more replications: e.g. extra testbed runs of a few cells, made from another experiment file
    with the same settings. Each ``(name, table)`` in ``more`` must have ``base``'s sweep axes and
    only cells that ``base`` has, unless ``new_cells`` (a grid run in parts, from several experiment
    files: each table may add cells); a run already in the pool (the same ``run_id``, as in a copy
    of a store that was then extended) counts once. The pooled runs take ``base``'s experiment
    name, so that :func:`compare` sees one experiment. ``attrs["repeated"]`` is how many runs were
    left out as repeats.

    Raises :class:`ResultsError` naming the table whose axes or cells do not fit.
    """
    keys = _grid_axes(base)
    grid = set(_cell_of(base, keys))
    parts, seen, repeated = [base], set(base["run_id"]), 0
    for name, table in more:
        their_axes = _grid_axes(table)
        if their_axes != keys:
            raise ResultsError(name, f"axes {their_axes}", f"expected the sweep axes of the store it adds to: {keys}")
        cells = set(_cell_of(table, keys))
        if new_cells:
            grid |= cells
        elif not cells <= grid:
            extra = sorted(cells - grid)[0]
            raise ResultsError(name, dict(zip(keys, extra)), "expected only cells of the store it adds to (more replications of them)")
        fresh = ~table["run_id"].isin(seen)
        repeated += int((~fresh).sum())
        seen |= set(table["run_id"])
        parts.append(table[fresh])
    out = pd.concat(parts, ignore_index=True)
    if "experiment" in out.columns and len(base):
        out["experiment"] = base["experiment"].iloc[0]
    out.attrs["repeated"] = repeated
    return out


def common_cells(s_table: pd.DataFrame, t_table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, int, int]:
    """The runs of ``s_table`` and ``t_table`` (:func:`per_run` tables with the same sweep axes)
    in the cells both have, for comparing a set that covers part of the other's grid (a testbed
    grid still running, or a few cells re-run); and how many cells of S and of T were left out.

    Raises :class:`ResultsError` when the two have different axes or no cell in common.
    """
    keys, t_keys = _grid_axes(s_table), _grid_axes(t_table)
    if keys != t_keys:
        raise ResultsError("compare", f"axes {keys} and {t_keys}", "expected two result sets with the same sweep axes")
    s_cells, t_cells = _cell_of(s_table, keys), _cell_of(t_table, keys)
    both = set(s_cells) & set(t_cells)
    if not both:
        raise ResultsError("compare", f"{s_cells.nunique()} and {t_cells.nunique()} cells", "expected two result sets with at least one cell in common")
    return s_table[s_cells.isin(both)], t_table[t_cells.isin(both)], s_cells.nunique() - len(both), t_cells.nunique() - len(both)


def compare_summary(comparison: pd.DataFrame, alpha: float = 0.05) -> dict[str, float | int]:
    """The agreement of two result sets in a few numbers: ``mean_abs_d`` (the mean |D| over the
    cells: 001 §4 reports 0.087 for ns-2 against the testbed), ``min_abs_d``, ``max_abs_d`` (its
    range, 0.04–0.21 there), ``cells``, ``significant`` (cells with W ≥ 0) and ``welch_significant``
    (cells where Welch's p < ``alpha``)."""
    d = comparison["D"].abs()
    return {
        "cells": int(len(comparison)),
        "mean_abs_d": float(d.mean()),
        "min_abs_d": float(d.min()),
        "max_abs_d": float(d.max()),
        "significant": int(comparison["significant"].sum()),
        "welch_significant": int((comparison["p"] < alpha).sum()),
    }


# --- cross traffic ------------------------------------------------------------------------------


def cbr_curve(frames: Frames, axis: str | None = None, packet_bytes: int = 1000) -> pd.DataFrame:
    """TCP throughput, drop rate and latency against the rate of UDP CBR cross traffic, as 002's
    Figures 3–5 (x = the CBR rate in Mb/s, one curve per TCP variant).

    With ``axis`` (a sweep axis holding the CBR rate, e.g. ``"flows[1].rate"`` = ``"5Mbps"``), each
    run is one point: the TCP flows' summaries, averaged over replications. Without it, each run's
    CBR flow steps its rate (a schedule): the intervals are grouped by the CBR flow's offered rate
    in that interval (sent packets × ``packet_bytes`` · 8 / interval, to 0.1 Mb/s), and the TCP
    flows' per-interval throughput, drop rate (dropped / sent) and smoothed RTT are averaged there.

    Columns: ``variant``, ``cbr_mbps``, ``throughput_mbps``, ``drop_rate``, ``latency_ms`` and
    ``n`` (points averaged); ``latency_ms`` is the one-way delay with an axis, the smoothed RTT
    without one.
    """
    check_frames(frames)
    runs, flows, intervals = frames.runs, frames.flows, frames.intervals
    if "valid" in runs.columns:
        runs = runs[runs["valid"].astype(bool)]
    tcp = flows[(flows["variant"] != "cbr") & flows["run_id"].isin(runs["run_id"])]
    if axis is not None:
        if axis not in runs.columns:
            raise ResultsError("--axis", axis, f"expected one of the sweep axes: {', '.join(axes(runs))}")
        rate = runs.set_index("run_id")[axis].map(lambda v: Rate.parse(v).bps / 1e6)
        rows = tcp.assign(cbr_mbps=tcp["run_id"].map(rate))
        latency = "owd_mean_ms" if "owd_mean_ms" in rows.columns else None
        rows = rows.assign(latency_ms=rows[latency] if latency else np.nan)
        out = rows.groupby(["variant", "cbr_mbps"]).agg(
            throughput_mbps=("throughput_mbps", "mean"), drop_rate=("drop_rate", "mean"), latency_ms=("latency_ms", "mean"), n=("run_id", "size")
        )
        out = out.reset_index().sort_values(["variant", "cbr_mbps"]).reset_index(drop=True)
        out.attrs["latency"] = "mean one-way delay (ms)"
        return out
    cbr_flows = flows[flows["variant"] == "cbr"][["run_id", "flow"]]
    if cbr_flows.empty:
        raise ResultsError("cbr", "no CBR flow", "expected runs with a UDP CBR flow, or an axis holding its rate")
    iv = intervals[intervals["run_id"].isin(runs["run_id"])]
    cbr_iv = iv.merge(cbr_flows, on=["run_id", "flow"])
    span = {run: _interval_s(rows) for run, rows in iv.groupby("run_id")}
    offered = cbr_iv.assign(
        cbr_mbps=(cbr_iv["sent_pkts"] * packet_bytes * 8 / cbr_iv["run_id"].map(span) / 1e6).round(1)
    ).groupby(["run_id", "t_s"])["cbr_mbps"].sum()
    tcp_iv = iv.merge(tcp[["run_id", "flow", "variant"]], on=["run_id", "flow"])
    tcp_iv = tcp_iv.join(offered, on=["run_id", "t_s"])
    tcp_iv = tcp_iv.assign(
        drop_rate=tcp_iv["dropped_pkts"] / tcp_iv["sent_pkts"].where(tcp_iv["sent_pkts"] > 0),
        latency_ms=tcp_iv["srtt_ns"] / 1e6 if "srtt_ns" in tcp_iv.columns else np.nan,
    )
    out = tcp_iv.groupby(["variant", "cbr_mbps"]).agg(
        throughput_mbps=("throughput_mbps", "mean"), drop_rate=("drop_rate", "mean"), latency_ms=("latency_ms", "mean"), n=("t_s", "size")
    )
    out = out.reset_index().sort_values(["variant", "cbr_mbps"]).reset_index(drop=True)
    out.attrs["latency"] = "smoothed RTT (ms)"
    return out


# --- selecting ----------------------------------------------------------------------------------


def experiments(frames: Frames) -> list[str]:
    """The experiments in ``frames``, in the order of their first run."""
    return [str(e) for e in dict.fromkeys(frames.runs["experiment"].tolist())]


def select(frames: Frames, experiment: str | None = None, backend: str | None = None) -> Frames:
    """The frames of one experiment (and backend)."""
    runs = frames.runs
    if experiment is not None:
        runs = runs[runs["experiment"] == experiment]
    if backend is not None:
        runs = runs[runs["backend"] == backend]
    ids = set(runs["run_id"])
    unused = [c for c in runs.columns if c not in RUN_COLUMNS and runs[c].isna().all()]  # another experiment's axes
    queues = frames.queues
    return Frames(
        runs.drop(columns=unused).reset_index(drop=True),
        frames.flows[frames.flows["run_id"].isin(ids)].reset_index(drop=True),
        frames.intervals[frames.intervals["run_id"].isin(ids)].reset_index(drop=True),
        frames.params,
        queues=None if queues is None else queues[queues["run_id"].isin(ids)].reset_index(drop=True),
        scenarios={k: v for k, v in frames.scenarios.items() if k in ids},
    )
