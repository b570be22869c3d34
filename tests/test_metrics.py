"""Jain's fairness index (eqs. (1) and (2)) and the per-flow summaries of a simulated run."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tcplab
from tcplab import ScenarioError
from tcplab.metrics import jain, jain_series, mean_jain, throughput_matrix

rates = st.lists(st.floats(min_value=0, max_value=1e9, allow_nan=False), min_size=1, max_size=20)


def test_equal_shares_are_fair() -> None:
    assert jain([5, 5]) == 1.0
    assert jain([3.2, 3.2, 3.2, 3.2]) == pytest.approx(1.0)


def test_one_flow_starved() -> None:
    assert jain([1, 0]) == 0.5
    assert jain([7, 0, 0, 0]) == 0.25


def test_worked_example() -> None:
    # (1 + 2 + 3)² / (3 · (1 + 4 + 9)) = 36 / 42
    assert jain([1, 2, 3]) == pytest.approx(36 / 42)


def test_all_zero_and_empty_are_nan() -> None:
    # 0/0: nobody delivered anything, so no fairness was measured.
    assert math.isnan(jain([0, 0]))
    assert math.isnan(jain([]))


def test_negative_is_refused() -> None:
    with pytest.raises(ValueError):
        jain([1, -1])


@given(rates)
def test_bounds(x: list[float]) -> None:
    j = jain(x)
    if any(v > 0 for v in x):
        assert 1 / len(x) - 1e-9 <= j <= 1 + 1e-9
    else:
        assert math.isnan(j)


@given(rates, st.floats(min_value=1e-3, max_value=1e3))
def test_scale_invariant(x: list[float], k: float) -> None:
    if sum(x) > 1e-6:
        assert jain([k * v for v in x]) == pytest.approx(jain(x), rel=1e-9)


def test_jain_series_of_a_matrix() -> None:
    m = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 0.0], [2.0, 6.0]])
    j = jain_series(m)
    assert j.shape == (4,)
    assert j[0] == 1.0 and j[1] == 0.5 and math.isnan(j[2])
    assert j[3] == pytest.approx(64 / (2 * 40))
    assert mean_jain(m) == pytest.approx((1.0 + 0.5 + 0.8) / 3)


@given(st.lists(rates.filter(lambda r: len(r) == 3), min_size=1, max_size=10))
def test_jain_series_is_jain_per_row(rows: list[list[float]]) -> None:
    m = np.array(rows)
    j = jain_series(m)
    assert j.shape == (len(rows),)
    for row, value in zip(rows, j):
        expected = jain(row)
        assert (math.isnan(value) and math.isnan(expected)) or value == pytest.approx(expected)


def test_jain_series_of_frames() -> None:
    wide = pd.DataFrame({"flow1": [1.0, 2.0], "flow2": [1.0, 0.0]}, index=pd.Index([1.0, 2.0], name="t_s"))
    j = jain_series(wide)
    assert list(j.index) == [1.0, 2.0] and list(j) == [1.0, 0.5]
    long = pd.DataFrame({"flow": [0, 0, 1, 1], "t_ns": [1, 2, 1, 2], "goodput_bytes": [10, 20, 10, 0]})
    assert throughput_matrix(long).shape == (2, 2)
    assert list(jain_series(long)) == [1.0, 0.5]
    with pytest.raises(ValueError):
        jain_series(np.ones(3))


# --- a simulated run --------------------------------------------------------------------------


@pytest.fixture
def result(short_dumbbell: tcplab.Scenario) -> tcplab.Result:
    return tcplab.simulate(short_dumbbell)


def test_result_tables(result: tcplab.Result) -> None:
    assert list(result.flows["name"]) == ["flow1", "flow2"]
    assert list(result.flows["variant"]) == ["newreno", "newreno"]
    # One row per flow per 1 s interval of the 8 s run.
    assert len(result.intervals) == 2 * 8
    assert sorted(result.intervals["t_ns"].unique()) == [k * 10**9 for k in range(1, 9)]
    assert {"goodput_bytes", "cwnd_bytes", "srtt_ns", "throughput_mbps", "t_s"} <= set(result.intervals.columns)
    # Dumbbell links: 2 bottleneck directions + 4 per pair.
    assert len(result.queues) == 2 + 4 * 2
    assert list(result.queues.loc[:1, "from_name"]) == ["router1", "router2"]
    assert result.meta["flow_names"] == ["flow1", "flow2"]
    assert result.meta["end_ns"] == 8 * 10**9
    # Columns, not Python objects per sample.
    assert result.intervals["goodput_bytes"].dtype.kind in "iuf"
    assert isinstance(result.intervals["name"].dtype, pd.CategoricalDtype)


def test_summary_over_the_window(result: tcplab.Result) -> None:
    summary = result.summary()
    assert list(summary["flow"]) == ["flow1", "flow2"]
    assert summary.attrs["window"] == (4.0, 8.0)
    iv = result.intervals
    inside = iv[(iv["t_ns"] > 4 * 10**9) & (iv["t_ns"] <= 8 * 10**9)]
    for flow, row in zip((0, 1), summary.itertuples()):
        rows = inside[inside["flow"] == flow]
        assert len(rows) == 4
        assert row.throughput_mbps == pytest.approx(rows["goodput_bytes"].sum() * 8 / 4 / 1e6)
        assert row.retrans_pkts == rows["retrans_pkts"].sum()
    assert summary["share"].sum() == pytest.approx(1.0)
    assert (summary["throughput_mbps"] > 0).all()
    # Over the whole run, the flows cannot deliver more than the 10 Mb/s bottleneck carries.
    assert result.flows["goodput_bytes"].sum() * 8 <= 10e6 * 8
    assert result.jain() == pytest.approx(jain(summary["throughput_mbps"]))
    assert summary.attrs["jain"] == result.jain()


def test_windows_in_every_form(result: tcplab.Result) -> None:
    a = result.summary((2, 6))
    assert a.attrs["window"] == (2.0, 6.0)
    assert a.equals(result.summary("2s:6s"))
    assert result.summary("6s:").attrs["window"] == (6.0, 8.0)
    assert result.jain((0, 8)) == pytest.approx(jain(result.summary((0, 8))["throughput_mbps"]))
    assert result.jain(flows=["flow1"]) == 1.0
    with pytest.raises(ScenarioError, match=r"^window = '9s:12s': expected a window inside the run"):
        result.summary("9s:12s")
    with pytest.raises(ScenarioError, match=r"^window"):
        result.summary((5, 3))


def test_jain_series_of_a_run(result: tcplab.Result) -> None:
    j = result.jain_series()
    assert list(j.index) == [5.0, 6.0, 7.0, 8.0]
    wide = result.throughput()
    assert list(wide.columns) == ["flow1", "flow2"]
    assert j.tolist() == pytest.approx(jain_series(wide.to_numpy()).tolist(), nan_ok=True)


def test_same_seed_same_run(short_dumbbell: tcplab.Scenario) -> None:
    a, b = tcplab.simulate(short_dumbbell), tcplab.simulate(short_dumbbell)
    pd.testing.assert_frame_equal(a.intervals, b.intervals)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    c = tcplab.simulate(short_dumbbell, seed=99)
    assert c.meta["seed"] == 99 and c.scenario.seed == 99


def test_simulate_a_file(tmp_path) -> None:
    quick = tcplab.load_scenario(tcplab_root() / "scenarios" / "quick.toml").override({"duration": "6s", "window": "2s:6s", "flows[1].start": "1s"})
    r = tcplab.simulate(quick)
    assert r.summary().attrs["window"] == (2.0, 6.0)
    assert r.meta["scenario"] == "quick"


def tcplab_root():
    from pathlib import Path

    return Path(__file__).resolve().parents[1]
