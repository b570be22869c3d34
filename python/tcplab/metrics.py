"""Fairness metrics: Jain's fairness index over mean throughputs and per interval.

Jain's fairness index (Chiu and Jain 1989), as used by the papers tcplab reproduces:

    (1)  J    = (Σₙ rₙ)² / (N · Σₙ rₙ²)          rₙ: mean throughput of flow n over the window
    (2)  J(t) = (Σₙ rₙ(t))² / (N · Σₙ rₙ(t)²)    rₙ(t): throughput of flow n in interval t

1/N ≤ J ≤ 1; J = 1 when all flows get the same. The papers report (1) over 120–300 s of a 300 s
run, and the mean of (2) over 1 s intervals.

All-zero input (no flow delivered anything) makes (1) 0/0: :func:`jain` returns **NaN** for it,
and for empty input, rather than a number that would claim a fairness nobody measured. Means
over J(t) therefore skip idle intervals (pandas skips NaN), see :func:`mean_jain`.
"""

from __future__ import annotations

from typing import overload

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = ["jain", "jain_series", "mean_jain", "throughput_matrix"]


def jain(x: ArrayLike) -> float:
    """Jain's fairness index of the values ``x``, eq. (1): (Σx)² / (N·Σx²).

    ``jain([5, 5]) == 1.0``; ``jain([1, 0]) == 0.5``; all zeros (or no values) give NaN.
    Negative values are refused (throughput cannot be negative); NaN in ``x`` gives NaN.
    """
    values = np.asarray(x, dtype=float).ravel()
    if values.size == 0:
        return float("nan")
    if np.any(values < 0):
        raise ValueError("jain: throughputs must be non-negative")
    top = values.max()
    if not top > 0:  # all zero (or NaN)
        return float("nan")
    values = values / top  # J is scale-free; scaling keeps x² from underflowing
    return float(np.sum(values) ** 2 / (values.size * np.sum(values * values)))


def _rows_jain(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """Eq. (2) for every row of a (T, N) matrix; NaN for all-zero rows."""
    if matrix.ndim != 2:
        raise ValueError(f"jain_series: expected a 2-D (intervals × flows) matrix, got {matrix.ndim}-D")
    if np.any(matrix < 0):
        raise ValueError("jain_series: throughputs must be non-negative")
    n = matrix.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = matrix / matrix.max(axis=1, keepdims=True)  # scale-free; keeps x² from underflowing
        sums = scaled.sum(axis=1)
        out = sums * sums / (n * (scaled * scaled).sum(axis=1))
    return out


def throughput_matrix(intervals: pd.DataFrame, value: str = "goodput_bytes") -> pd.DataFrame:
    """Long per-interval rows (``flow``, ``t_ns``, ``value``) → wide: one row per interval, one column per flow.

    Flows are columns in ``flow`` order (labelled by ``name`` when present); a flow without a row
    for an interval counts 0 there.
    """
    column = "name" if "name" in intervals.columns else "flow"
    wide = intervals.pivot_table(index="t_ns", columns=column, values=value, aggfunc="sum", fill_value=0, observed=False)
    wide.columns.name = "flow"
    return wide


@overload
def jain_series(data: pd.DataFrame) -> pd.Series: ...
@overload
def jain_series(data: ArrayLike) -> NDArray[np.float64]: ...


def jain_series(data: pd.DataFrame | ArrayLike) -> pd.Series | NDArray[np.float64]:
    """J(t), eq. (2): Jain's index in each interval over the flows' throughputs in that interval.

    ``data`` is either a (T, N) matrix (rows = intervals, columns = flows), giving an array of T
    values, or a DataFrame: wide (one column per flow, as :func:`throughput_matrix` makes) giving a
    Series on its index, or long per-interval rows with ``flow``, ``t_ns`` and ``goodput_bytes``
    (like ``Result.intervals``), giving a Series indexed by ``t_ns``. An interval where no flow
    delivered anything gives NaN.
    """
    if isinstance(data, pd.DataFrame):
        if {"flow", "t_ns", "goodput_bytes"} <= set(data.columns):
            data = throughput_matrix(data)
        values = _rows_jain(data.to_numpy(dtype=float))
        return pd.Series(values, index=data.index, name="jain")
    return _rows_jain(np.asarray(data, dtype=float))


def mean_jain(data: pd.DataFrame | ArrayLike) -> float:
    """The mean of J(t) over the intervals (the "J" of the DCCP study), skipping idle intervals."""
    series = jain_series(data)
    values = np.asarray(series, dtype=float)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")
