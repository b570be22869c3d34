"""Analysis of results frames: per-run metrics from real simulations, statistics across
replications, the comparison of two result sets (000 §IV-A, 001 §4), and the results commands."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tcplab
from tcplab import analysis
from tcplab.analysis import Frames
from tcplab.cli import main
from tcplab.errors import ResultsError

import fake_store
from results_frames import cbr_sweep, dumbbell_sweep


@pytest.fixture(scope="module")
def sweep() -> Frames:
    return dumbbell_sweep()


@pytest.fixture(scope="module")
def runs_table(sweep: Frames) -> pd.DataFrame:
    return analysis.per_run(sweep)


def test_axes_and_values(sweep: Frames) -> None:
    assert analysis.axes(sweep.runs) == ["topology.rtt", "topology.buffer", "flow1", "flow2"]
    assert analysis.axis_value("100ms") == (100.0, "ms")
    assert analysis.axis_value("0.2bdp") == (0.2, "BDP")
    assert analysis.axis_value("10Mbps") == (10.0, "Mb/s")
    assert analysis.axis_value("cubic") is None
    assert analysis.axis_label(sweep.runs, "topology.rtt") == "RTT (ms)"
    # 300 s runs: 120–300 s; shorter: the last 60 %, as Scenario.measurement_window
    assert analysis.measurement_window(300) == (120.0, 300)
    assert analysis.measurement_window(20) == (8.0, 20)


def test_per_run_jfi_is_eq1_of_the_flows_means(sweep: Frames, runs_table: pd.DataFrame) -> None:
    for row in runs_table.itertuples():
        x = sweep.flows.loc[sweep.flows["run_id"] == row.run_id, "throughput_mbps"].to_numpy()
        assert row.jfi == pytest.approx(x.sum() ** 2 / (len(x) * (x * x).sum()), rel=1e-12)
        assert row.total_mbps == pytest.approx(x.sum())
        assert row.utilisation == pytest.approx(x.sum() / 10.0)  # 10 Mb/s bottleneck (parameters)


def test_per_run_jt_matches_the_result_of_the_same_run(sweep: Frames, runs_table: pd.DataFrame) -> None:
    # Re-run the first cell's first replication: J(t) over the default window (8–20 s) agrees.
    row = runs_table.iloc[0]
    scenario = tcplab.Scenario(
        name="tiny", duration="20s", host_jitter="1ms",
        topology=tcplab.Dumbbell(bottleneck="10Mbps", rtt=row["topology.rtt"], buffer=row["topology.buffer"]),
        flows=[tcplab.TcpFlow(variant="newreno"), tcplab.TcpFlow(variant="reno", start="2s")],
    )
    result = tcplab.simulate(scenario, seed=int(row["seed"]))
    series = result.jain_series()
    assert len(series) == 12
    assert row["jt_mean"] == pytest.approx(series.mean(), rel=1e-12)
    assert row["jt_std"] == pytest.approx(series.std(ddof=0), rel=1e-12)
    assert row["jfi"] == pytest.approx(result.jain(), rel=1e-12)
    drops = result.summary()
    assert row["drop_rate"] == pytest.approx(drops["dropped_pkts"].sum() / drops["sent_pkts"].sum())


def test_aggregate_gives_mean_sample_std_min_max_per_cell(runs_table: pd.DataFrame) -> None:
    cells = analysis.aggregate(runs_table)
    assert list(cells["topology.rtt"]) == ["20ms", "20ms", "80ms", "80ms"]
    assert list(cells["topology.buffer"]) == ["0.2bdp", "1bdp", "0.2bdp", "1bdp"]
    assert (cells["n"] == 2).all()
    for cell in cells.itertuples():
        rows = runs_table[(runs_table["topology.rtt"] == cell[1]) & (runs_table["topology.buffer"] == cell[2])]["jfi"].to_numpy()
        assert cell.jfi_mean == pytest.approx(rows.mean())
        assert cell.jfi_std == pytest.approx(rows.std(ddof=1))
        assert (cell.jfi_min, cell.jfi_max) == (rows.min(), rows.max())
    assert cells.attrs["experiment"] == "tiny"


def test_aggregate_leaves_out_invalid_runs(runs_table: pd.DataFrame) -> None:
    table = runs_table.copy()
    table.loc[0, "valid"] = False
    cells = analysis.aggregate(table)
    assert cells["n"].tolist() == [1, 2, 2, 2]
    assert math.isnan(cells["jfi_std"].iloc[0])


def test_buffer_of_one_bdp_fills_the_link_and_the_queue(runs_table: pd.DataFrame) -> None:
    # Reno-style AIMD keeps a link busy through the halving only with a buffer of about a BDP;
    # 0.2 BDP leaves it partly idle and its queue short.
    cells = analysis.aggregate(runs_table, ["utilisation", "queue_p50_ms"]).set_index(["topology.rtt", "topology.buffer"])
    for rtt in ("20ms", "80ms"):
        assert cells.loc[(rtt, "1bdp"), "utilisation_mean"] > 0.9
        assert cells.loc[(rtt, "1bdp"), "utilisation_mean"] > cells.loc[(rtt, "0.2bdp"), "utilisation_mean"]
        assert cells.loc[(rtt, "1bdp"), "queue_p50_ms_mean"] > cells.loc[(rtt, "0.2bdp"), "queue_p50_ms_mean"]


def test_table_has_rtt_rows_and_mean_std_cells(runs_table: pd.DataFrame) -> None:
    out = analysis.table(analysis.aggregate(runs_table), "jfi")
    assert list(out.index) == ["20ms", "80ms"]
    assert list(out.columns) == ["0.2bdp", "1bdp"]
    assert out.stack().str.fullmatch(r"\d\.\d\d \(\d\.\d\d\)").all()
    with pytest.raises(ResultsError, match="--metric"):
        analysis.table(analysis.aggregate(runs_table), "nonsense")


def _cells(values: dict[str, list[float]]) -> pd.DataFrame:
    rows = [
        {"run_id": f"{rtt}-{i}", "experiment": "x", "replication": i, "seed": i, "backend": "sim", "valid": True, "topology.rtt": rtt, "jfi": v}
        for rtt, vs in values.items()
        for i, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def test_compare_d_c95_w_and_welch_by_hand() -> None:
    s = _cells({"25ms": [0.9, 0.9], "50ms": [0.8, 0.6]})
    t = _cells({"25ms": [0.7, 0.8], "50ms": [0.7, 0.7]})
    c = analysis.compare(s, t).set_index("topology.rtt")
    # 25 ms: T = 0.75, Tσ = sqrt(0.005) = 0.070711, D = 0.15, C95 = 0.141421, W = 0.008579 >= 0
    assert c.loc["25ms", "T"] == pytest.approx(0.75)
    assert c.loc["25ms", "T_std"] == pytest.approx(math.sqrt(0.005))
    assert c.loc["25ms", "D"] == pytest.approx(0.15)
    assert c.loc["25ms", "C95"] == pytest.approx(2 * math.sqrt(0.005))
    assert c.loc["25ms", "W"] == pytest.approx(0.15 - 2 * math.sqrt(0.005))
    assert bool(c.loc["25ms", "significant"])
    # Welch: t = 0.15 / sqrt(0/2 + 0.005/2) = 3.0 with 1 degree of freedom: p = 1 − 2·atan(3)/π
    assert c.loc["25ms", "t"] == pytest.approx(3.0)
    assert c.loc["25ms", "p"] == pytest.approx(1 - 2 * math.atan(3) / math.pi)
    # 50 ms: D = 0, Tσ = 0 → W = 0 but nothing differs; Welch is undefined without variance on T…
    # (S varies, so it is defined: t = 0)
    assert c.loc["50ms", "D"] == pytest.approx(0.0, abs=1e-12)
    assert not bool(c.loc["50ms", "significant"])
    assert c.loc["50ms", "t"] == pytest.approx(0.0, abs=1e-9)


def test_compare_summary_reports_mean_abs_d_like_001() -> None:
    # Differences of 0.04, 0.21 and 0.011: mean |D| 0.087 over a range of 0.04–0.21, as 001 §4.
    s = _cells({"50ms": [0.94, 0.94], "100ms": [0.6, 0.6], "200ms": [0.8, 0.8]})
    t = _cells({"50ms": [0.90, 0.90], "100ms": [0.81, 0.81], "200ms": [0.789, 0.789]})
    summary = analysis.compare_summary(analysis.compare(s, t))
    assert summary["cells"] == 3
    assert summary["mean_abs_d"] == pytest.approx(0.087)
    assert (summary["min_abs_d"], summary["max_abs_d"]) == (pytest.approx(0.011), pytest.approx(0.21))
    assert summary["significant"] == 3  # Tσ = 0: any difference is significant
    assert summary["welch_significant"] == 0  # no variance at all: Welch undefined


def test_compare_of_real_runs(runs_table: pd.DataFrame, sweep: Frames) -> None:
    same = analysis.compare(runs_table, runs_table)
    assert (same["D"] == 0).all() and not same["significant"].any()
    other = analysis.per_run(dumbbell_sweep(seed0=7, backend="testbed", host_jitter="3ms"))
    c = analysis.compare(runs_table, other)
    assert len(c) == 4 and (c["D"] != 0).all()
    assert np.allclose(c["W"], c["D"].abs() - 2 * c["T_std"])


def test_compare_refuses_different_grids(runs_table: pd.DataFrame) -> None:
    with pytest.raises(ResultsError, match="same grid"):
        analysis.compare(runs_table, runs_table[runs_table["topology.rtt"] == "20ms"])
    with pytest.raises(ResultsError, match="same sweep axes"):
        analysis.compare(runs_table, runs_table.drop(columns=["topology.buffer"]))


def test_compare_names_a_cell_whose_runs_are_all_invalid() -> None:
    # A testbed under load: both runs of the 50 ms cell invalid; one of the 25 ms cell is enough.
    s = _cells({"25ms": [0.9, 0.9], "50ms": [0.8, 0.6]})
    t = _cells({"25ms": [0.7, 0.8], "50ms": [0.7, 0.7]})
    t.loc[t["topology.rtt"] == "50ms", "valid"] = False
    with pytest.raises(ResultsError, match=r"compare = \{'topology.rtt': '50ms'\}: expected a valid run in every cell: the 2 runs of this cell in T are all invalid"):
        analysis.compare(s, t)
    t.loc[t["run_id"] == "50ms-0", "valid"] = True
    assert analysis.compare(s, t).set_index("topology.rtt").loc["50ms", "n_T"] == 1


def test_cbr_curve_tcp_loses_to_rising_cbr_rate() -> None:
    # 002 §III-A: as the CBR rate rises toward the 10 Mb/s link, TCP throughput falls and drops rise.
    curve = analysis.cbr_curve(cbr_sweep(), axis="flows[1].rate")
    for variant, rows in curve.groupby("variant"):
        assert list(rows["cbr_mbps"]) == [1.0, 4.0, 7.0, 9.0]
        assert (np.diff(rows["throughput_mbps"]) < 0).all(), variant
        assert rows["drop_rate"].iloc[-1] > rows["drop_rate"].iloc[0]
        assert rows["throughput_mbps"].iloc[0] > 7.5  # 1 Mb/s of CBR leaves TCP most of the link


def test_load_frames_refuses_missing_and_foreign_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ResultsError, match="no such file"):
        analysis.load_frames(tmp_path / "missing.duckdb")
    with pytest.raises(ResultsError, match="not a directory"):
        analysis.load_frames(tmp_path)
    fake_store.install(monkeypatch)
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a store")
    with pytest.raises(ResultsError, match="expected a tcplab results store"):
        analysis.load_frames(junk)


# --- the commands ---------------------------------------------------------------------------


def test_table_command(tmp_path: Path, sweep: Frames, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake_store.install(monkeypatch)
    store = fake_store.write(sweep, tmp_path / "sim.store")
    assert main(["table", str(store)]) == 0
    out = capsys.readouterr().out
    assert "tiny: JFI, eq. (1), mean (std) over 2 replications" in out
    assert "20ms" in out and "80ms" in out and "0.2bdp" in out
    assert main(["table", str(store), "--metric", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--metric = 'nope'" in err


def test_compare_command(tmp_path: Path, sweep: Frames, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake_store.install(monkeypatch)
    s = fake_store.write(sweep, tmp_path / "sim.store")
    t = fake_store.write(dumbbell_sweep(seed0=7, backend="testbed", host_jitter="3ms"), tmp_path / "testbed.store")
    out_dir = tmp_path / "figs"
    assert main(["compare", str(s), str(t), "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    expected = analysis.compare_summary(analysis.compare(analysis.per_run(sweep), analysis.per_run(analysis.load_frames(t))))
    assert f"mean |D| {expected['mean_abs_d']:.3f}" in out
    assert f"{expected['significant']} of 4 cells" in out
    assert (out_dir / "difference.png").stat().st_size > 0 and (out_dir / "difference.svg").exists()
    # a different grid, a missing store: one line, exit 2
    half = fake_store.write(dumbbell_sweep(rtts=("20ms",), replications=2), tmp_path / "half.store")
    assert main(["compare", str(s), str(half)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "same grid" in err
    assert main(["compare", str(s), str(tmp_path / "none.store")]) == 2
    assert "no such file" in capsys.readouterr().err
