"""The result of one run: the engine's columns as pandas data frames, and summaries over a window.

The engine hands back three tables of equal-length numpy arrays (``docs/engine-spec.md``,
"Result"); they become data frames column by column, with no Python object per sample. Flow and
node names are added as categoricals (codes = the engine's indices).

``summary(window)`` computes per-flow mean throughput from the per-interval goodput rows whose
interval lies inside the window, as the papers average iperf's 1 s reports over 120–300 s, and
``jain(window)`` is Jain's index (eq. (1), :mod:`tcplab.metrics`) over those means.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from . import metrics
from .config import Scenario
from .errors import EngineError, ScenarioError
from .units import Time, UnitError, Window

__all__ = ["Result", "WindowLike", "write_tables", "intervals_path"]

#: A window as ``"120s:300s"``, a :class:`~tcplab.units.Window`, or ``(start_s, stop_s)`` in seconds.
WindowLike = Window | str | tuple[float | str, float | str] | None

_REQUIRED = {
    "flows": ("flow", "sent_pkts", "retrans_pkts", "dropped_pkts", "goodput_bytes"),
    "intervals": ("flow", "t_ns", "goodput_bytes", "retrans_pkts", "sent_pkts", "dropped_pkts"),
    "queues": ("link", "from", "to"),
}


def _frame(columns: Mapping[str, Any], table: str) -> pd.DataFrame:
    """A data frame from the engine's dict of equal-length numpy arrays (no copy per sample)."""
    frame = pd.DataFrame({name: np.asarray(values) for name, values in columns.items()})
    missing = [c for c in _REQUIRED[table] if c not in frame.columns]
    if missing:
        raise EngineError(f"the engine's '{table}' table lacks the columns {missing} (docs/engine-spec.md)")
    return frame


def _names(codes: pd.Series, names: Sequence[str]) -> pd.Categorical:
    return pd.Categorical.from_codes(codes.to_numpy(dtype=np.int64), categories=list(names))


@dataclass(frozen=True)
class Result:
    """One run's measurements.

    Attributes:
        scenario: the scenario that was run.
        flows: one row per flow: ``name``, ``variant``, then the engine's per-flow counters
            (``sent_pkts``, ``retrans_pkts``, ``dropped_pkts``, ``goodput_bytes``, ``owd_*_ns`` …).
        intervals: one row per flow per interval: ``name``, ``t_ns`` (interval end), ``t_s``,
            ``goodput_bytes``, ``throughput_mbps``, ``cwnd_bytes``, ``srtt_ns``, ``retrans_pkts`` …
        queues: one row per link: ``link``, ``from``/``to`` (node indices), ``from_name``/``to_name``,
            ``enqueued_pkts``, ``dropped_pkts``, sojourn times …
        meta: the engine's ``meta`` (``transmissions``, ``events``, ``end_ns``, ``node_names``) plus
            ``scenario``, ``seed``, ``engine_version``, ``flow_names`` and ``variants``.
        capture: with a capture in the engine spec, one row per recorded link crossing of the
            captured flow's packets (``t_ns``, ``arrive_ns``, ``link``, ``kind``, ``seq``, ``ack``,
            SACK blocks, ``ts_val_ns``, ``ts_ecr_ns``, ``size_bytes``, ``retrans``, ``lost``); else ``None``.
    """

    scenario: Scenario
    flows: pd.DataFrame
    intervals: pd.DataFrame
    queues: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)
    capture: pd.DataFrame | None = None

    @classmethod
    def from_engine(cls, scenario: Scenario, raw: Mapping[str, Any], engine_version: str | None = None) -> Result:
        """Wrap the dict ``tcplab._core.simulate`` returned for ``scenario``."""
        names, kinds = scenario.flow_names, scenario.flow_variants
        flows = _frame(raw["flows"], "flows")
        flows.insert(0, "name", _names(flows["flow"], names))
        flows.insert(1, "variant", np.asarray(kinds, dtype=object)[flows["flow"].to_numpy(dtype=np.int64)])

        intervals = _frame(raw["intervals"], "intervals")
        interval_ns = scenario.interval.ns
        t_ns = intervals["t_ns"].to_numpy(dtype=np.int64)
        # Interval k covers ((k-1)·interval, k·interval]; the last one ends at the end of the run.
        t_start = (t_ns - 1) // interval_ns * interval_ns
        intervals.insert(0, "name", _names(intervals["flow"], names))
        intervals.insert(intervals.columns.get_loc("t_ns") + 1, "t_s", t_ns / 1e9)
        intervals["t_start_ns"] = t_start
        span_s = np.maximum(t_ns - t_start, 1) / 1e9
        intervals["throughput_mbps"] = intervals["goodput_bytes"].to_numpy(dtype=float) * 8 / span_s / 1e6

        queues = _frame(raw["queues"], "queues")
        meta = dict(raw.get("meta", {}))
        nodes = list(meta.get("node_names", []))
        if nodes:
            queues.insert(3, "from_name", _names(queues["from"], nodes))
            queues.insert(4, "to_name", _names(queues["to"], nodes))
        meta.update(
            scenario=scenario.name,
            seed=scenario.seed,
            engine_version=engine_version,
            flow_names=names,
            variants=kinds,
        )
        capture = pd.DataFrame({k: np.asarray(v) for k, v in raw["capture"].items()}) if "capture" in raw else None
        return cls(scenario, flows, intervals, queues, meta, capture)

    # --- windows ---

    def window(self, window: WindowLike = None) -> tuple[Time, Time]:
        """``(start, stop)`` of ``window``; ``None`` is the scenario's measurement window."""
        duration = self.scenario.duration
        if window is None:
            return self.scenario.measurement_window
        try:
            if isinstance(window, tuple) and all(isinstance(v, (int, float)) for v in window):
                start_s, stop_s = window
                parsed = Window(Time(round(float(start_s) * 1e9)), Time(round(float(stop_s) * 1e9)))
                if not 0 <= parsed.start.ns < parsed.stop.ns:  # type: ignore[union-attr]
                    raise UnitError(window, "a window (start_s, stop_s) with 0 <= start_s < stop_s")
            else:
                parsed = Window.coerce(window)
        except UnitError as e:
            raise ScenarioError("window", window, f"expected {e.allowed}") from None
        start, stop = parsed.bounds(duration)
        if start >= duration or stop > duration:
            raise ScenarioError("window", str(parsed), f"expected a window inside the run (duration = {duration})")
        return start, stop

    def _inside(self, window: WindowLike) -> pd.DataFrame:
        start, stop = self.window(window)
        iv = self.intervals
        rows = iv[(iv["t_start_ns"] >= start.ns) & (iv["t_ns"] <= stop.ns)]
        if rows.empty:
            raise ScenarioError("window", f"{start}:{stop}", f"expected a window holding at least one whole interval ({self.scenario.interval})")
        return rows

    # --- tables and metrics ---

    def throughput(self, window: WindowLike = None) -> pd.DataFrame:
        """Per-interval throughput in Mb/s: one row per interval inside ``window`` (index ``t_s``,
        the interval's end), one column per flow."""
        rows = self._inside(window)
        wide = rows.pivot_table(index="t_s", columns="name", values="throughput_mbps", aggfunc="sum", fill_value=0.0, observed=False)
        wide.columns.name = "flow"
        return wide

    def summary(self, window: WindowLike = None) -> pd.DataFrame:
        """Per flow, in flow order.

        Over the window: ``throughput_mbps`` (mean of the per-interval throughputs, i.e. goodput
        bytes · 8 / window time covered by whole intervals), ``throughput_std_mbps`` (their
        standard deviation), ``share`` (of the flows' total), ``goodput_bytes``, ``retrans_pkts``,
        ``sent_pkts``, ``dropped_pkts``, ``drop_rate`` (dropped / sent), and with an engine that
        counts them per interval ``marked_pkts`` (data that arrived CE-marked; the testbed's:
        marked by its router) and ``mark_rate`` (marked / sent).
        Over the whole run: ``rto_count``, ``loss_undos``, ``recoveries``, ``owd_mean_ms``, ``owd_p99_ms``
        (one-way delay).

        ``attrs`` holds ``window`` (start_s, stop_s) and ``jain`` (eq. (1) over ``throughput_mbps``).
        """
        rows = self._inside(window)
        start, stop = self.window(window)
        spans = rows.drop_duplicates("t_ns")
        covered_s = float((spans["t_ns"] - spans["t_start_ns"]).sum()) / 1e9
        wide = self.throughput(window)
        by_flow = rows.groupby("flow", observed=True)
        flow_ids = self.flows["flow"].to_numpy()
        goodput = by_flow["goodput_bytes"].sum().reindex(flow_ids, fill_value=0)
        retrans = by_flow["retrans_pkts"].sum().reindex(flow_ids, fill_value=0)
        sent = by_flow["sent_pkts"].sum().reindex(flow_ids, fill_value=0).to_numpy()
        dropped = by_flow["dropped_pkts"].sum().reindex(flow_ids, fill_value=0).to_numpy()
        mean = goodput.to_numpy(dtype=float) * 8 / covered_s / 1e6
        total = mean.sum()
        f = self.flows
        out = pd.DataFrame(
            {
                "flow": f["name"].astype(str).to_numpy(),
                "variant": f["variant"].to_numpy(),
                "throughput_mbps": mean,
                "throughput_std_mbps": wide.std(ddof=0).reindex(f["name"].astype(str)).to_numpy(),
                "share": mean / total if total > 0 else np.full(len(mean), np.nan),
                "goodput_bytes": goodput.to_numpy(),
                "retrans_pkts": retrans.to_numpy(),
                "sent_pkts": sent,
                "dropped_pkts": dropped,
                "drop_rate": dropped.astype(float) / np.maximum(sent.astype(float), 1),
            }
        )
        if "marked_pkts" in rows.columns:
            marked = by_flow["marked_pkts"].sum().reindex(flow_ids, fill_value=0).to_numpy()
            out["marked_pkts"] = marked
            out["mark_rate"] = marked.astype(float) / np.maximum(sent.astype(float), 1)
        for column, name in (("rto_count", "rto_count"), ("loss_undos", "loss_undos"), ("recoveries", "recoveries")):
            if column in f.columns:
                out[name] = f[column].to_numpy()
        for column, name in (("owd_mean_ns", "owd_mean_ms"), ("owd_p99_ns", "owd_p99_ms")):
            if column in f.columns:
                out[name] = f[column].to_numpy(dtype=float) / 1e6
        out.attrs["window"] = (start.seconds, stop.seconds)
        out.attrs["jain"] = metrics.jain(mean)
        return out

    def jain(self, window: WindowLike = None, flows: Sequence[str] | None = None) -> float:
        """Jain's fairness index, eq. (1), over the flows' mean throughputs in ``window``
        (``flows`` limits it to the flows so named)."""
        table = self.summary(window)
        if flows is not None:
            table = table[table["flow"].isin(list(flows))]
        return metrics.jain(table["throughput_mbps"].to_numpy())

    def jain_series(self, window: WindowLike = None) -> pd.Series:
        """J(t), eq. (2), for every interval inside ``window`` (index ``t_s``)."""
        return metrics.jain_series(self.throughput(window))

    # --- files ---

    def write(self, path: str | os.PathLike[str], fmt: Literal["csv", "parquet"], window: WindowLike = None) -> list[Path]:
        """Write the summary to ``path`` and the per-interval series to ``<stem>.intervals.<ext>``
        beside it, each atomically (temporary file, then rename). Returns both paths."""
        summary = self.summary(window)
        series = self.intervals.assign(name=self.intervals["name"].astype(str))
        target = Path(path)
        return write_tables({target: summary, intervals_path(target): series}, fmt)


def intervals_path(path: Path) -> Path:
    """``run.csv`` → ``run.intervals.csv``: where the per-interval series goes beside a summary."""
    return path.with_name(f"{path.stem}.intervals{path.suffix or ''}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_tables(tables: Mapping[Path, pd.DataFrame], fmt: Literal["csv", "parquet"]) -> list[Path]:
    """Write every frame to a temporary file beside its target, then rename them all into place;
    nothing is left behind if any write fails."""
    staged: list[tuple[Path, Path]] = []
    try:
        for target, frame in tables.items():
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
            os.close(fd)
            staged.append((Path(tmp), target))
            if fmt == "csv":
                frame.to_csv(tmp, index=False)
            else:
                frame.to_parquet(tmp, index=False)
        for tmp, target in staged:
            os.replace(tmp, target)
    finally:
        for tmp, _ in staged:
            if tmp.exists():
                tmp.unlink()
    return [target for _, target in staged]
