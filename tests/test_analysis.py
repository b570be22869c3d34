"""Analysis of results stores written by the runner: per-run metrics, statistics across
replications, the comparison of two result sets (000 §IV-A, 001 §4), and the results commands."""

from __future__ import annotations

import json
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
from tcplab.store import Store

from conftest import DATA, run_store, variant_of


@pytest.fixture(scope="module")
def sweep(tiny_store: Path) -> Frames:
    return analysis.load_frames(tiny_store)


@pytest.fixture(scope="module")
def runs_table(sweep: Frames) -> pd.DataFrame:
    return analysis.per_run(sweep)


def _sql(path: Path, query: str) -> pd.DataFrame:
    with Store(path) as store:
        return store.sql(query)


def test_load_frames_is_the_stores_frames_plus_queues_and_scenarios(tiny_store: Path, sweep: Frames) -> None:
    with Store(tiny_store) as store:
        runs, flows, intervals = store.frames()
        n_queues = int(store.sql("SELECT count(*) AS n FROM queues")["n"].iloc[0])
    pd.testing.assert_frame_equal(sweep.runs, runs)
    pd.testing.assert_frame_equal(sweep.flows, flows)
    pd.testing.assert_frame_equal(sweep.intervals, intervals)
    assert list(runs.columns[:2]) == ["topology.rtt", "topology.buffer"] and len(runs) == 8
    # the flows table: the window summary, and the run's totals prefixed total_ where names clash
    assert {"throughput_mbps", "sent_pkts", "total_sent_pkts", "total_goodput_bytes", "owd_mean_ns"} <= set(flows.columns)
    assert sweep.queues is not None and len(sweep.queues) == n_queues == 8 * 10  # a dumbbell has 10 links
    assert set(sweep.scenarios) == set(runs["run_id"])
    assert {s["topology"]["bottleneck"] for s in sweep.scenarios.values()} == {"10Mbps"}
    assert sweep.params["topology.bottleneck"] == "10Mbps" and sweep.params["replications"] == 2


def test_axes_and_values(sweep: Frames) -> None:
    assert analysis.axes(sweep.runs) == ["topology.rtt", "topology.buffer"]
    assert analysis.axis_value("100ms") == (100.0, "ms")
    assert analysis.axis_value("0.2bdp") == (0.2, "BDP")
    assert analysis.axis_value("10Mbps") == (10.0, "Mb/s")
    assert analysis.axis_value("cubic") is None
    assert analysis.axis_label(sweep.runs, "topology.rtt") == "RTT (ms)"
    # 300 s runs: 120–300 s; shorter: the last 60 %, as Scenario.measurement_window
    assert analysis.measurement_window(300) == (120.0, 300)
    assert analysis.measurement_window(15) == (6.0, 15)


def test_per_run_agrees_with_the_runner(tiny_store: Path, sweep: Frames, runs_table: pd.DataFrame) -> None:
    # The runner stored each run's JFI and mean J(t) from its Result; per_run computes them again
    # from the flows and intervals over the window of the run's scenario.
    stored = _sql(tiny_store, "SELECT run_id, jfi, mean_jt FROM runs").set_index("run_id")
    for row in runs_table.itertuples():
        x = sweep.flows.loc[sweep.flows["run_id"] == row.run_id, "throughput_mbps"].to_numpy()
        assert row.jfi == pytest.approx(x.sum() ** 2 / (len(x) * (x * x).sum()), rel=1e-12)
        assert row.jfi == pytest.approx(stored.loc[row.run_id, "jfi"], rel=1e-12)
        assert row.jt_mean == pytest.approx(stored.loc[row.run_id, "mean_jt"], rel=1e-12)
        assert row.total_mbps == pytest.approx(x.sum())
        assert row.utilisation == pytest.approx(x.sum() / 10.0)  # the scenario's 10 Mb/s bottleneck
        assert row.flow1_share + row.flow2_share == pytest.approx(1.0)


def test_per_run_matches_a_fresh_simulation_of_the_stored_scenario(tiny_store: Path, runs_table: pd.DataFrame) -> None:
    row = runs_table.iloc[0]
    stored = _sql(tiny_store, f"SELECT scenario, seed FROM runs WHERE run_id = '{row['run_id']}'")
    scenario = tcplab.Scenario.model_validate(json.loads(stored["scenario"].iloc[0]))
    result = tcplab.simulate(scenario, seed=int(stored["seed"].iloc[0]))
    series = result.jain_series()
    assert len(series) == 9  # the window of a 15 s run: 6–15 s
    assert row["jt_mean"] == pytest.approx(series.mean(), rel=1e-12)
    assert row["jt_std"] == pytest.approx(series.std(ddof=0), rel=1e-12)
    assert row["jfi"] == pytest.approx(result.jain(), rel=1e-12)
    summary = result.summary()
    assert row["drop_rate"] == pytest.approx(summary["dropped_pkts"].sum() / summary["sent_pkts"].sum())
    assert row["retrans_pkts"] == summary["retrans_pkts"].sum()
    # Each flow's one-way delay, and their mean.
    for column in ("owd_mean_ms", "owd_p99_ms"):
        own = [row[f"flow{i + 1}_{column}"] for i in range(len(summary))]
        assert own == pytest.approx(summary[column].tolist(), rel=1e-12)
        assert row[column] == pytest.approx(np.mean(own), rel=1e-12)


def test_queueing_delay_is_the_bottleneck_queues_sojourn(tiny_store: Path, runs_table: pd.DataFrame) -> None:
    queues = _sql(tiny_store, "SELECT run_id, sojourn_p50_ns, sojourn_max_ns FROM queues WHERE from_name = 'router1' AND to_name = 'router2'").set_index("run_id")
    assert len(queues) == 8
    for row in runs_table.itertuples():
        assert row.queue_p50_ms == pytest.approx(queues.loc[row.run_id, "sojourn_p50_ns"] / 1e6)
        # a packet waits at most the buffer (a fraction of the BDP: that fraction of the RTT) plus
        # the one in service: 1500 B at 10 Mb/s = 1.2 ms
        factor, _ = analysis.axis_value(row[2])
        rtt_ms, _ = analysis.axis_value(row[1])
        assert queues.loc[row.run_id, "sojourn_max_ns"] / 1e6 <= factor * rtt_ms + 1.2 + 1e-6


def test_buffer_of_one_bdp_fills_the_link_and_the_queue(runs_table: pd.DataFrame) -> None:
    # Reno-style AIMD keeps a link busy through the halving only with a buffer of about a BDP;
    # 0.2 BDP leaves it partly idle and its queue short.
    cells = analysis.aggregate(runs_table, ["utilisation", "queue_mean_ms"]).set_index(["topology.rtt", "topology.buffer"])
    for rtt in ("20ms", "80ms"):
        assert cells.loc[(rtt, "1bdp"), "utilisation_mean"] > 0.9
        assert cells.loc[(rtt, "1bdp"), "utilisation_mean"] > cells.loc[(rtt, "0.2bdp"), "utilisation_mean"]
        assert cells.loc[(rtt, "1bdp"), "queue_mean_ms_mean"] > 2 * cells.loc[(rtt, "0.2bdp"), "queue_mean_ms_mean"]


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
    assert (cells["jfi_std"] > 0).all()  # host jitter: the replications differ
    assert cells.attrs["experiment"] == "tiny"


def test_aggregate_leaves_out_invalid_runs(runs_table: pd.DataFrame) -> None:
    table = runs_table.copy()
    first = analysis.aggregate(table).iloc[0]
    table.loc[(table["topology.rtt"] == first["topology.rtt"]) & (table["topology.buffer"] == first["topology.buffer"]) & (table["replication"] == 1), "valid"] = False
    cells = analysis.aggregate(table)
    assert cells["n"].tolist() == [1, 2, 2, 2]
    assert math.isnan(cells["jfi_std"].iloc[0])


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
    # 50 ms: D = 0, Tσ = 0 → W = 0 but nothing differs; S varies, so Welch is defined: t = 0
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


def test_flow_errors_are_relative_to_t_per_flow_and_cell() -> None:
    s = _cells({"25ms": [0.9, 0.9], "50ms": [0.8, 0.6]})
    t = _cells({"25ms": [0.7, 0.8], "50ms": [0.7, 0.7]})
    # flow 1: S 44, 46 vs T 40, 40 (+12.5%); 30, 30 vs 30, 30 (0). flow 2: 50 vs 55, 57 (-10.7%); 60 vs 62, 58 (0)
    s["flow1_mbps"], t["flow1_mbps"] = [44.0, 46.0, 30.0, 30.0], [40.0, 40.0, 30.0, 30.0]
    s["flow2_mbps"], t["flow2_mbps"] = [50.0, 50.0, 60.0, 60.0], [55.0, 57.0, 62.0, 58.0]
    e = analysis.flow_errors(s, t).set_index(["topology.rtt", "flow"])
    assert e.loc[("25ms", 1), "error"] == pytest.approx(5 / 40)
    assert e.loc[("25ms", 2), "error"] == pytest.approx(-6 / 56)
    assert e.loc[("50ms", 1), "error"] == pytest.approx(0.0) and e.loc[("50ms", 2), "error"] == pytest.approx(0.0)
    assert e.loc[("25ms", 2), "T_std"] == pytest.approx(math.sqrt(2))
    summary = analysis.flow_error_summary(analysis.flow_errors(s, t), 0.10)
    assert (summary["cells"], summary["cells_within"], summary["flows"], summary["flows_within"]) == (2, 1, 4, 2)
    assert summary["max_abs_error"] == pytest.approx(0.125)
    # Two replications a side: neither error is beyond the runs' spread.
    assert e.loc[("25ms", 1), "p"] > 0.05 and summary["flows_off_significant"] == 0


def test_an_error_within_the_runs_spread_is_told_from_one_beyond_it() -> None:
    s = _cells({"25ms": [0.9] * 4})
    t = _cells({"25ms": [0.8] * 4})
    # flow 1: +12.5%, both sets tight; flow 2: -13%, both sets spread over 20 Mb/s.
    s["flow1_mbps"], t["flow1_mbps"] = [44.0, 45.0, 46.0, 45.0], [40.0, 41.0, 39.0, 40.0]
    s["flow2_mbps"], t["flow2_mbps"] = [40.0, 60.0, 45.0, 55.0], [65.0, 45.0, 70.0, 50.0]
    e = analysis.flow_errors(s, t).set_index("flow")
    assert e.loc[1, "error"] == pytest.approx(0.125) and e.loc[1, "p"] < 1e-3
    assert e.loc[2, "error"] == pytest.approx(-7.5 / 57.5) and e.loc[2, "p"] > 0.3
    summary = analysis.flow_error_summary(analysis.flow_errors(s, t), 0.10)
    assert (summary["flows_within"], summary["flows_off_significant"]) == (0, 1)


def test_pool_adds_replications_to_the_cells_it_has_and_counts_a_run_once() -> None:
    base = _cells({"25ms": [0.9, 0.8], "50ms": [0.7, 0.6]})
    more = _cells({"25ms": [0.5, 0.6, 0.7]}).assign(experiment="x-more", run_id=lambda t: "more-" + t["run_id"])
    pooled = analysis.pool(base, [("more", more), ("again", more.iloc[:2])])
    assert len(pooled) == 7 and set(pooled["experiment"]) == {"x"} and pooled.attrs["repeated"] == 2
    c = analysis.compare(pooled, base).set_index("topology.rtt")
    assert c.loc["25ms", "n_S"] == 5 and c.loc["25ms", "S"] == pytest.approx(0.7)
    assert c.loc["50ms", "n_S"] == 2 and c.loc["50ms", "S"] == pytest.approx(0.65)
    with pytest.raises(ResultsError, match=r"^more = \{'topology.rtt': '100ms'\}: expected only cells of the store it adds to"):
        analysis.pool(base, [("more", _cells({"100ms": [0.5]}))])
    with pytest.raises(ResultsError, match=r"^more = .*expected the sweep axes of the store it adds to"):
        analysis.pool(base, [("more", more.assign(**{"topology.buffer": "1bdp"}))])


def test_compare_of_real_stores(runs_table: pd.DataFrame, tiny_other_store: Path) -> None:
    same = analysis.compare(runs_table, runs_table)
    assert (same["D"] == 0).all() and not same["significant"].any()
    other = analysis.per_run(analysis.load_frames(tiny_other_store))
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


def test_cbr_curve_tcp_loses_to_rising_cbr_rate(cbr_store: Path) -> None:
    # 002 §III-A: as the CBR rate rises toward the 10 Mb/s link, TCP throughput falls and drops rise.
    frames = analysis.load_frames(cbr_store)
    curve = analysis.cbr_curve(frames, axis="flows[1].rate")
    assert set(curve["variant"]) == {"tahoe", "newreno"}
    for variant, rows in curve.groupby("variant"):
        assert list(rows["cbr_mbps"]) == [1.0, 4.0, 7.0, 9.0]
        assert (np.diff(rows["throughput_mbps"]) < 0).all(), variant
        assert rows["drop_rate"].iloc[-1] > rows["drop_rate"].iloc[0]
        assert rows["throughput_mbps"].iloc[0] > 7.5  # 1 Mb/s of CBR leaves TCP most of the link
    # the bottleneck of the chain is the busiest queue, n2 → n3 (link 2), at 10 Mb/s
    queues = analysis.bottleneck_queues(frames)
    assert set(queues["link"]) == {2} and set(queues["rate_mbps"]) == {10.0}
    runs = analysis.per_run(frames)
    assert (runs["utilisation"] <= 1.0 + 1e-9).all() and (runs["utilisation"] > 0.85).all()


def test_load_frames_refuses_missing_and_foreign_files(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="no such file"):
        analysis.load_frames(tmp_path / "missing.duckdb")
    with pytest.raises(ResultsError, match="not a directory"):
        analysis.load_frames(tmp_path)
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a store")
    with pytest.raises(ResultsError, match="expected a tcplab results store"):
        analysis.load_frames(junk)


# --- the commands ---------------------------------------------------------------------------


def test_table_command(tiny_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["table", str(tiny_store)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "tiny: JFI, eq. (1), mean (std) over 2 replications"
    # each cell: the mean and sample standard deviation of the runner's JFI of the cell's runs
    cells = _sql(
        tiny_store,
        "SELECT point->>'topology.rtt' AS rtt, point->>'topology.buffer' AS buffer, avg(jfi) AS m, stddev_samp(jfi) AS s FROM runs GROUP BY ALL",
    )
    for cell in cells.itertuples():
        row = next(line for line in lines if line.startswith(cell.rtt))
        column = 1 if cell.buffer == "0.2bdp" else 2
        assert row.split("  ")[0] == cell.rtt
        assert f"{cell.m:.2f} ({cell.s:.2f})" == [p.strip() for p in row[len(cell.rtt):].split("  ") if p.strip()][column - 1]
    assert main(["table", str(tiny_store), "--metric", "queue_mean_ms", "--rows", "topology.buffer"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tiny: mean queueing delay at the bottleneck (ms), mean (std) over 2 replications\ntopology.rtt")
    assert main(["table", str(tiny_store), "--metric", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--metric = 'nope'" in err and "queue_p99_ms" in err


def test_compare_command(tiny_store: Path, tiny_other_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "figs"
    assert main(["compare", str(tiny_store), str(tiny_other_store), "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    # mean |D| over the cells, from the two stores' run rows
    query = "SELECT point->>'topology.rtt' AS rtt, point->>'topology.buffer' AS buffer, avg(jfi) AS m, stddev_samp(jfi) AS s FROM runs GROUP BY ALL"
    both = _sql(tiny_store, query).merge(_sql(tiny_other_store, query), on=["rtt", "buffer"], suffixes=("_s", "_t"))
    d = both["m_s"] - both["m_t"]
    assert f"mean |D| {d.abs().mean():.3f}  (range {d.abs().min():.3f}–{d.abs().max():.3f})" in out
    significant = int((d.abs() - 2 * both["s_t"] >= 0).sum())
    # Both kinds of cell are there to tell apart (the fixtures' seeds give some of each).
    assert 0 < significant < 4 and f"significant (W = |D| − 2·Tσ ≥ 0): {significant} of 4 cells" in out
    assert (out_dir / "difference.png").stat().st_size > 0 and (out_dir / "difference.svg").exists()
    written = pd.read_csv(out_dir / "difference.csv")
    assert len(written) == 4 and np.allclose(sorted(written["D"]), sorted(d))
    # each flow's throughput error per cell, from the flows tables of both stores
    flows_q = "SELECT point->>'topology.rtt' AS rtt, point->>'topology.buffer' AS buffer, flow + 1 AS flow, avg(throughput_mbps) AS m FROM runs JOIN flows USING (run_id) GROUP BY ALL"
    per_flow = _sql(tiny_store, flows_q).merge(_sql(tiny_other_store, flows_q), on=["rtt", "buffer", "flow"], suffixes=("_s", "_t"))
    error = (per_flow["m_s"] - per_flow["m_t"]) / per_flow["m_t"]
    assert f"mean |error| {error.abs().mean():.1%}, max {error.abs().max():.1%}" in out
    assert f"within 10%: {int((error.abs() <= 0.10).sum())} of {len(error)} flows" in out
    through = pd.read_csv(out_dir / "throughput.csv")
    assert len(through) == len(error) and np.allclose(sorted(through["error"]), sorted(error))
    # a store of another grid (one RTT), a missing store: one line, exit 2
    half = variant_of(DATA / "tiny.toml", tmp_path, "tiny-half", **{'"topology.rtt" = ["20ms", "80ms"]': '"topology.rtt" = ["20ms"]'})
    half_store = run_store(half, tmp_path / "half.duckdb")
    assert main(["compare", str(tiny_store), str(half_store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "same grid" in err
    assert main(["compare", str(tiny_store), str(tmp_path / "none.duckdb")]) == 2
    assert "no such file" in capsys.readouterr().err
    # --more-t: the other grid's runs (20 ms cells only, another experiment) pooled into T's cells
    assert main(["compare", str(tiny_store), str(tiny_other_store), "--more-t", str(half_store), "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert f"T = {tiny_other_store} + {half_store}: jfi" in out
    pooled = pd.concat([_sql(tiny_other_store, "SELECT point->>'topology.rtt' AS rtt, point->>'topology.buffer' AS buffer, jfi FROM runs"),
                        _sql(half_store, "SELECT point->>'topology.rtt' AS rtt, point->>'topology.buffer' AS buffer, jfi FROM runs")])
    t = pooled.groupby(["rtt", "buffer"])["jfi"].agg(["mean", "count"]).reset_index()
    assert sorted(t["count"]) == [2, 2, 4, 4]
    written = pd.read_csv(out_dir / "difference.csv")
    assert sorted(written["n_T"]) == [2, 2, 4, 4] and np.allclose(sorted(written["T"]), sorted(t["mean"]))
    # a store given twice: its runs count once, and nothing changes
    assert main(["compare", str(tiny_store), str(tiny_other_store), "--more-t", str(tiny_other_store)]) == 0
    again = capsys.readouterr().out
    assert "T: 8 runs found in more than one of its stores counted once" in again
    assert f"mean |D| {d.abs().mean():.3f}  (range {d.abs().min():.3f}–{d.abs().max():.3f})" in again
    # --partial: T covers the 20 ms cells only; then another store adds the 80 ms cells to it
    assert main(["compare", str(tiny_store), str(half_store), "--partial"]) == 0
    out = capsys.readouterr().out
    assert "D = S − T over 2 cells" in out and "left out 2 of S's cells and 0 of T's" in out
    far = variant_of(DATA / "tiny.toml", tmp_path, "tiny-far", **{'"topology.rtt" = ["20ms", "80ms"]': '"topology.rtt" = ["80ms"]'})
    far_store = run_store(far, tmp_path / "far.duckdb")
    assert main(["compare", str(tiny_store), str(half_store), "--more-t", str(far_store), "--partial", "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert "D = S − T over 4 cells" in out and "left out 0 of S's cells and 0 of T's" in out
    parts = pd.concat([_sql(store, query) for store in (half_store, far_store)])
    d = _sql(tiny_store, query).merge(parts, on=["rtt", "buffer"], suffixes=("_s", "_t"))
    d = d["m_s"] - d["m_t"]
    assert f"mean |D| {d.abs().mean():.3f}  (range {d.abs().min():.3f}–{d.abs().max():.3f})" in out
    assert np.allclose(sorted(pd.read_csv(out_dir / "difference.csv")["D"]), sorted(d))
    # without --partial the cells --more-t adds are refused; with it, two sets with no cell in common
    assert main(["compare", str(tiny_store), str(half_store), "--more-t", str(far_store)]) == 2
    assert "only cells of the store it adds to" in capsys.readouterr().err
    assert main(["compare", str(half_store), str(far_store), "--partial"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "at least one cell in common" in err
    # runs of cells T does not have, or a missing store: one line, exit 2
    assert main(["compare", str(half_store), str(half_store), "--more-t", str(tiny_other_store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"tcplab: error: --more-t {tiny_other_store} = ") and "only cells of the store it adds to" in err
    assert main(["compare", str(tiny_store), str(tiny_other_store), "--more-s", str(tmp_path / "none.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--more-s = " in err and "no such file" in err
