"""The results store: schema, frames() shape, one transaction per run, refusing foreign files, export."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import tcplab
from tcplab.cli import main
from tcplab.experiment import load_experiment, parse_experiment
from tcplab.runner import execute, run_experiment
from tcplab.store import Store, StoreError

DATA = Path(__file__).resolve().parent / "data"


def tiny() -> tcplab.experiment.Experiment:
    """2 runs (2 RTTs) of a 10 Mb/s, 6 s dumbbell."""
    exp = load_experiment(DATA / "small.toml")
    data = dict(exp.definition)
    data.update(name="tiny", replications=1, window="3s:6s", pairs={"flow1": "newreno", "flow2": "sack"})
    data["scenario"] = {**data["scenario"], "duration": "6s"}
    data["scenario"]["flows"] = [{"variant": "newreno"}, {"variant": "newreno", "start": "1s"}]
    data["sweep"] = {"topology.rtt": ["20ms", "40ms"]}
    return parse_experiment(data)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tcplab.experiment.Experiment]:
    exp = tiny()
    path = tmp_path_factory.mktemp("store") / "tiny.duckdb"
    report = run_experiment(exp, path, jobs=1, progress=False)
    assert (report.total, report.ran, report.invalid) == (2, 2, 0)
    return path, exp


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_tables_and_meta(stored) -> None:
    path, exp = stored
    with Store(path) as db:
        assert db.meta["format"] == "tcplab-store" and db.meta["experiment"] == "tiny"
        assert db.meta["definition_hash"] == exp.definition_hash
        runs = db.sql("SELECT * FROM runs")
        assert list(runs.columns)[:11] == [
            "run_id", "experiment", "point", "scenario", "seed", "backend", "versions",
            "wall_s", "finished_at", "valid", "invalid_reason",
        ]  # fmt: skip
        types = dict(db.sql("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'runs'").values)
        assert types["seed"] == "UBIGINT" and types["point"] == "JSON" and types["finished_at"] == "TIMESTAMP"
        flows = db.sql("SELECT * FROM flows")
        for column in ("run_id", "flow", "name", "variant", "throughput_mbps", "share", "retrans_pkts", "sent_pkts",
                       "dropped_pkts", "drop_rate", "rto_count", "recoveries", "owd_mean_ms", "owd_p99_ms",
                       "total_sent_pkts", "total_goodput_bytes"):  # fmt: skip
            assert column in flows.columns, column
        intervals = db.sql("SELECT * FROM intervals")
        for column in ("run_id", "flow", "t_s", "goodput_bytes", "throughput_mbps", "cwnd_bytes", "srtt_ns", "retrans_pkts"):
            assert column in intervals.columns, column
        assert len(intervals) == 2 * 2 * 6  # runs × flows × 1 s intervals
        assert set(db.sql("SELECT * FROM queues").columns) >= {"run_id", "link", "dropped_pkts", "from_name"}


def test_stored_values_are_the_results(stored) -> None:
    path, exp = stored
    run = exp.runs()[1]
    expected = tcplab.simulate(run.scenario, seed=run.seed)
    with Store(path) as db:
        row = db.sql("SELECT * FROM runs WHERE run_id = ?", [run.run_id]).iloc[0]
        flows = db.sql("SELECT * FROM flows WHERE run_id = ? ORDER BY flow", [run.run_id])
    assert row["jfi"] == pytest.approx(expected.jain(), abs=0) and row["valid"]
    assert int(row["seed"]) == run.seed
    assert tcplab.Scenario.model_validate_json(row["scenario"]) == run.scenario
    summary = expected.summary()
    assert flows["throughput_mbps"].tolist() == summary["throughput_mbps"].tolist()
    assert flows["total_sent_pkts"].tolist() == expected.flows["sent_pkts"].tolist()
    assert flows["name"].tolist() == ["flow1", "flow2"] and flows["variant"].tolist() == ["newreno", "sack"]


def test_frames_shape(stored) -> None:
    path, exp = stored
    with Store(path) as db:
        runs, flows, intervals = db.frames()
        grid_runs, _, _ = db.frames(exp)
    assert list(runs.columns) == ["flow1", "flow2", "topology.rtt", "run_id", "experiment", "replication", "seed", "backend", "valid"]
    assert sorted(runs["topology.rtt"]) == ["20ms", "40ms"] and set(runs["flow2"]) == {"sack"}
    assert runs["replication"].tolist() == [1, 1] and runs["valid"].dtype == bool
    assert str(runs["seed"].dtype) == "uint64"
    assert list(grid_runs["run_id"]) == [r.run_id for r in exp.runs()]  # grid order
    assert set(flows["run_id"]) == set(runs["run_id"]) and len(flows) == 4
    assert len(intervals) == 24 and {"t_s", "throughput_mbps"} <= set(intervals.columns)


def test_a_run_is_written_in_one_transaction(tmp_path: Path) -> None:
    exp = tiny()
    path = tmp_path / "t.duckdb"
    run = exp.runs()[0]
    payload = execute("sim", run.scenario, run.seed)
    from tcplab.runner import _record

    record = _record(exp, run, payload)
    record.intervals = record.intervals.drop(columns=["t_s"])  # t_s is NOT NULL: the insert fails
    with Store.for_experiment(path, exp) as db:
        with pytest.raises(duckdb.Error):
            db.write(record)
        assert db.finished() == set()
        assert db.sql("SELECT count(*) AS n FROM flows")["n"].iloc[0] == 0
        db.write(_record(exp, run, payload))
        assert db.finished() == {run.run_id}
        with pytest.raises(duckdb.ConstraintException):  # the same run twice: refused by the key
            db.write(_record(exp, run, payload))
        assert db.sql("SELECT count(*) AS n FROM flows")["n"].iloc[0] == 2


def test_refuses_a_file_that_is_not_a_store(tmp_path: Path, capsys) -> None:
    text = tmp_path / "notes.duckdb"
    text.write_text("not a database\n" * 10)
    before = digest(text)
    assert main(["run", str(DATA / "small.toml"), "--store", str(text), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected a tcplab results store" in err and str(text) in err
    assert digest(text) == before

    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE meta (key VARCHAR, value VARCHAR); INSERT INTO meta VALUES ('format', 'something else')")
    con.close()
    before = digest(other)
    assert main(["run", str(DATA / "small.toml"), "--store", str(other), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not one (no tcplab meta table)" in err
    assert digest(other) == before
    with pytest.raises(StoreError):
        Store(other)


def test_refuses_another_experiments_store(stored, tmp_path: Path, capsys) -> None:
    path, _ = stored
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(path.read_bytes())
    before = digest(copy)
    assert main(["run", str(DATA / "small.toml"), "--store", str(copy), "-q"]) == 2
    err = capsys.readouterr().err
    assert err == f"tcplab: error: --store = '{copy}': expected the store of experiment 'small'; it holds experiment 'tiny' and was left untouched\n"
    assert digest(copy) == before


def test_export(stored, tmp_path: Path, capsys) -> None:
    path, _ = stored
    assert main(["export", str(path), "--parquet", str(tmp_path / "pq")]) == 0
    assert main(["export", str(path), "--csv", str(tmp_path / "csv")]) == 0
    capsys.readouterr()
    for table, rows in (("runs", 2), ("flows", 4), ("intervals", 24), ("meta", 6), ("definitions", 1)):
        assert len(pd.read_parquet(tmp_path / "pq" / f"{table}.parquet")) == rows
        assert len(pd.read_csv(tmp_path / "csv" / f"{table}.csv")) == rows
    assert (tmp_path / "pq" / "queues.parquet").exists()
    assert main(["export", str(tmp_path / "missing.duckdb"), "--csv", str(tmp_path / "x")]) == 2
    assert "expected an existing tcplab store" in capsys.readouterr().err


def test_a_store_whose_creation_was_interrupted_is_set_up_again(tmp_path: Path) -> None:
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()  # a DuckDB file with no table: killed before the schema committed
    with Store.for_experiment(path, tiny()) as db:
        assert db.meta["experiment"] == "tiny" and db.finished() == set()
