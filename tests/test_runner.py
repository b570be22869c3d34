"""The runner: a killed sweep resumes without losing or duplicating a run; changed parameters make
new rows; the Dask executor stores the same values; failing runs are kept as invalid."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tcplab import analysis, backends
from tcplab.cli import main
from tcplab.errors import EngineError
from tcplab.experiment import load_experiment, parse_experiment
from tcplab.runner import run_experiment
from tcplab.store import Store

DATA = Path(__file__).resolve().parent / "data"
SMALL = DATA / "small.toml"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 12 runs of small.toml, uninterrupted, in this process."""
    path = tmp_path_factory.mktemp("ref") / "small.duckdb"
    report = run_experiment(load_experiment(SMALL), path, jobs=1, progress=False)
    assert (report.total, report.ran, report.skipped) == (12, 12, 0)
    return path


def contents(path: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Everything a run stores but its wall time and finish time, in a fixed order."""
    with Store(path) as db:
        runs = db.sql("SELECT run_id, point, scenario, seed, backend, valid, jfi, mean_jt FROM runs ORDER BY run_id")
        flows = db.sql("SELECT * FROM flows ORDER BY run_id, flow")
        intervals = db.sql("SELECT * FROM intervals ORDER BY run_id, flow, t_ns")
    return runs, flows, intervals


def test_killed_sweep_resumes_every_run_exactly_once(reference: Path, tmp_path: Path) -> None:
    store = tmp_path / "killed.duckdb"
    command = [sys.executable, "-m", "tcplab", "run", str(SMALL), "--store", str(store), "--jobs", "2"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    # Off a terminal, the progress is one line per stored run: kill after the fourth.
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("[4/12]"):
            workers = _children_of(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "".join(lines)

    with Store(store) as db:
        stored = len(db.finished())
    assert 4 <= stored < 12  # killed mid-sweep
    # The pool's workers (and multiprocessing's resource tracker) notice that the coordinator is gone and exit.
    assert len(workers) >= 2
    deadline = time.monotonic() + 10
    while workers and time.monotonic() < deadline:
        time.sleep(0.1)
        workers = [p for p in workers if _alive(p)]
    assert workers == []

    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"12 runs: {12 - stored} run now, {stored} already in the store" in done.stdout

    got, want = contents(store), contents(reference)
    assert got[0]["run_id"].is_unique and len(got[0]) == 12
    for a, b in zip(got, want):
        pd.testing.assert_frame_equal(a, b)

    # A third run finds nothing to do.
    again = subprocess.run(command + ["-q"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert again.returncode == 0
    pd.testing.assert_frame_equal(contents(store)[1], want[1])


def _children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_changed_parameters_make_new_rows(reference: Path, tmp_path: Path) -> None:
    store = tmp_path / "changed.duckdb"
    store.write_bytes(reference.read_bytes())
    exp = load_experiment(SMALL)
    old_ids = {r.run_id for r in exp.runs()}
    data = dict(exp.definition)
    data["scenario"] = {**data["scenario"], "tcp": {"rwnd": "16KB"}}  # every run changes
    data["sweep"] = {"topology.rtt": ["20ms", "40ms", "60ms"]}
    changed = parse_experiment(data)
    report = run_experiment(changed, store, jobs=1, progress=False)
    assert (report.ran, report.skipped) == (12, 0)
    with Store(store) as db:
        assert len(db.finished()) == 24
        runs, flows, _ = db.frames(changed)
        rwnds = db.sql("SELECT run_id, json_extract_string(scenario, '$.tcp.rwnd') AS rwnd FROM runs")
        assert len(db.sql("SELECT * FROM definitions")) == 2
    assert set(runs["run_id"]).isdisjoint(old_ids) and len(runs) == 12
    by_id = dict(zip(rwnds["run_id"], rwnds["rwnd"]))
    assert {by_id[i] for i in runs["run_id"]} == {"16KB"} and {by_id[i] for i in old_ids} == {"6MB"}
    # A 16 KB window over 60 ms is 16384 · 8 / 0.06 = 2.18 Mb/s at most per flow: the new rows are new runs.
    rtt60 = runs[runs["topology.rtt"] == "60ms"]["run_id"]
    assert flows[flows["run_id"].isin(rtt60)]["throughput_mbps"].max() < 2.19

    # Only the new value of one axis: one new run per replication and pair, the rest reused.
    data["sweep"] = {"topology.rtt": ["20ms", "40ms", "60ms", "80ms"]}
    report = run_experiment(parse_experiment(data), store, jobs=1, progress=False)
    assert (report.total, report.ran, report.skipped) == (16, 4, 12)


def test_dask_executor_stores_the_same_values(reference: Path, tmp_path: Path) -> None:
    from distributed import LocalCluster

    store = tmp_path / "dask.duckdb"
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        report = run_experiment(load_experiment(SMALL), store, executor="dask", scheduler=cluster.scheduler_address, progress=False)
    assert (report.ran, report.invalid) == (12, 0)
    for a, b in zip(contents(store), contents(reference)):
        pd.testing.assert_frame_equal(a, b)


def test_failed_runs_are_stored_invalid_and_can_be_redone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exp = load_experiment(SMALL)
    real = backends.BACKENDS["sim"]
    failing = {"on": True}

    def flaky(scenario, seed):
        if failing["on"] and scenario.topology.rtt.ns == 60_000_000:
            raise EngineError("link down")
        return real(scenario, seed)

    monkeypatch.setitem(backends.BACKENDS, "sim", flaky)
    store = tmp_path / "flaky.duckdb"
    report = run_experiment(exp, store, jobs=1, progress=False)
    assert (report.ran, report.invalid) == (12, 4)
    with Store(store) as db:
        bad = db.sql("SELECT point, invalid_reason FROM runs WHERE NOT valid")
        assert set(bad["invalid_reason"]) == {"EngineError: link down"}
        assert all('"topology.rtt":"60ms"' in p for p in bad["point"])
        assert db.sql("SELECT count(*) AS n FROM flows WHERE run_id IN (SELECT run_id FROM runs WHERE NOT valid)")["n"].iloc[0] == 0
    assert run_experiment(exp, store, jobs=1, progress=False).ran == 0  # invalid runs are finished runs
    failing["on"] = False
    report = run_experiment(exp, store, jobs=1, progress=False, redo_invalid=True)
    assert (report.ran, report.skipped, report.invalid) == (4, 8, 0)
    with Store(store) as db:
        assert len(db.finished()) == 12


def test_run_command_prints_the_summary(tmp_path: Path, capsys) -> None:
    store = tmp_path / "cli.duckdb"
    assert main(["run", str(SMALL), "--store", str(store), "--jobs", "1"]) == 0
    out, err = capsys.readouterr()
    assert "small: 12 runs to do" in err and "[12/12]" in err and "runs/s" in err and "ETA" in err
    # the tables are tcplab table's, one per metric of the file: rows RTT, columns flow 2's variant
    exp = load_experiment(SMALL)
    frames = analysis.load_frames(store, exp)
    for metric in ("jfi", "jt_mean", "flow1_mbps", "flow2_mbps", "drop_rate"):
        assert analysis.summary_table(frames, metric) + "\n\n" in out
    assert "small: JFI, eq. (1), mean (std) over 2 replications\nflow2             newreno         sack\n" in out
    assert "12 runs: 12 run now, 0 already in the store" in out
    rows = [line for line in out.splitlines() if line.startswith(("20ms", "40ms", "60ms"))]
    assert len(rows) == 5 * 3  # 5 tables × 3 RTTs


def test_default_store_is_under_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = dict(load_experiment(SMALL).definition)
    data.update(replications=1, sweep={"topology.rtt": ["40ms"]}, pairs={"flow1": "newreno", "flow2": "newreno"})
    monkeypatch.chdir(tmp_path)
    report = run_experiment(parse_experiment(data), jobs=1, progress=False)
    assert report.store == Path("results/small.duckdb") and (tmp_path / "results" / "small.duckdb").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jobs", "0"], "tcplab: error: --jobs = 0: expected an integer >= 1"),
        (["--executor", "dask"], "tcplab: error: --scheduler: missing; expected a scheduler address"),
        (["--scheduler", "tcp://127.0.0.1:8786"], "tcplab: error: --scheduler = 'tcp://127.0.0.1:8786': expected no --scheduler with the local executor"),
    ],
)
def test_bad_options(tmp_path: Path, capsys, args: list[str], message: str) -> None:
    store = tmp_path / "x.duckdb"
    assert main(["run", str(SMALL), "--store", str(store), "-q", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not store.exists()


def test_testbed_backend_missing_is_one_line(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tcplab.testbed", None)  # as on an installation without it
    store = tmp_path / "x.duckdb"
    assert main(["run", str(SMALL), "--store", str(store), "-q", "--backend", "testbed"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tcplab: error: --backend = 'testbed': the testbed backend is not available") and err.count("\n") == 1
    assert not store.exists()
