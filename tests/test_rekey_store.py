"""Testbed run keys against the committed stores, and scripts/rekey_store.py, which moves a store
made before a key change to the current keys."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from tcplab.cli import main
from tcplab.config import Scenario
from tcplab.experiment import load_experiment, run_id

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "data"

_spec = importlib.util.spec_from_file_location("rekey_store", ROOT / "scripts" / "rekey_store.py")
assert _spec is not None and _spec.loader is not None
rekey_store = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rekey_store)


def _keys(store: Path, table: str = "runs") -> set[str]:
    with duckdb.connect(str(store), read_only=True) as db:
        return {key for (key,) in db.execute(f"SELECT DISTINCT run_id FROM {table}").fetchall()}


@pytest.mark.parametrize(
    ("experiment", "store"),
    [
        ("validation.toml", "validation-testbed.duckdb"),
        ("validation-single.toml", "validation-single-testbed.duckdb"),
        ("validation-c50.toml", "validation-c50-testbed.duckdb"),
        ("validation-long.toml", "validation-long-testbed.duckdb"),
        ("validation-bbr.toml", "validation-bbr-testbed.duckdb"),
        ("validation-400.toml", "validation-400-testbed.duckdb"),
        ("validation-c25.toml", "validation-c25-testbed.duckdb"),
        ("validation-mid.toml", "validation-mid-testbed.duckdb"),
        ("validation-far.toml", "validation-far-testbed.duckdb"),
        ("validation-check.toml", "validation-check-testbed.duckdb"),
        ("validation-b02.toml", "validation-b02-testbed.duckdb"),
        ("validation-timed.toml", "validation-timed-testbed.duckdb"),
        ("validation-timed-near.toml", "validation-timed-near-testbed.duckdb"),
        ("validation-spread.toml", "validation-spread-testbed.duckdb"),
        ("validation-phased.toml", "validation-phased-testbed.duckdb"),
        ("validation-phased-cubic.toml", "validation-phased-cubic-testbed.duckdb"),
        ("validation-phased-cubic25.toml", "validation-phased-cubic25-testbed.duckdb"),
        ("validation-phased-400.toml", "validation-phased-400-testbed.duckdb"),
        ("validation-phased-c25-06.toml", "validation-phased-c25-06-testbed.duckdb"),
        ("validation-phased-c400.toml", "validation-phased-c400-testbed.duckdb"),
    ],
)
def test_the_committed_testbed_stores_hold_their_experiments_runs(experiment: str, store: str) -> None:
    # `tcplab run experiments/X --backend testbed --store docs/data/Y` resumes with nothing to do:
    # the experiments write PRR, RACK and SACK compression out for the simulator, and the kernel
    # made these runs with them unasked.
    runs = load_experiment(ROOT / "experiments" / experiment).runs("testbed")
    assert {r.run_id for r in runs} == _keys(DATA / store)


@pytest.mark.parametrize(
    ("store", "replications"),
    [
        ("validation-phased-testbed.duckdb", 3),  # +20, 60, 100 us
        ("validation-phased-cubic-testbed.duckdb", 4),  # +15, 45, 75, 105 us
        ("validation-phased-cubic25-testbed.duckdb", 6),  # +10, 30, ... 110 us
        ("validation-phased-400-testbed.duckdb", 2),  # +30, 90 us
        ("validation-phased-c25-06-testbed.duckdb", 8),  # +7.5, 22.5, ... 112.5 us
        ("validation-phased-c400-testbed.duckdb", 10),  # +6, 18, ... 114 us
    ],
)
def test_the_phased_testbed_runs_sit_at_their_replications_offsets(store: str, replications: int) -> None:
    # rtt_spread = "120us": replication r of R ran with its round trip longer by (r - 1/2) x 120 us / R.
    offsets = [(r, f"{(r - 0.5) * 120 / replications:g}us") for r in range(1, replications + 1)]
    with duckdb.connect(str(DATA / store), read_only=True) as db:
        stored = db.execute("SELECT DISTINCT replication, scenario->>'$.topology.rtt_offset' FROM runs ORDER BY 1").fetchall()
    assert stored == offsets


def _with_old_keys(store: Path, n: int) -> dict[str, str]:
    """Put the first ``n`` runs of ``store`` back under the keys tcplab gave them before; returns
    {current key: old key}."""
    old = {}
    with duckdb.connect(str(store)) as db:
        rows = db.execute("SELECT run_id, scenario::VARCHAR, seed, versions->>'$.profile' FROM runs ORDER BY run_id").fetchall()
        for key, text, seed, profile in rows[:n]:
            old[key] = run_id(Scenario.model_validate(json.loads(text)), "testbed", seed, profile, kernel_defaults_unset=False)
        for table in ("runs", "flows", "intervals", "queues"):
            for key, before in old.items():
                db.execute(f"UPDATE {table} SET run_id = ? WHERE run_id = ?", [before, key])
    return old


def test_a_testbed_run_on_a_store_under_old_keys_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Running them again would store the same runs twice: one line, exit 2, nothing run or written.
    store = tmp_path / "s.duckdb"
    shutil.copy(DATA / "validation-single-testbed.duckdb", store)
    _with_old_keys(store, 2)
    before = store.read_bytes()
    assert main(["run", str(ROOT / "experiments" / "validation-single.toml"), "--backend", "testbed", "--store", str(store), "-q"]) == 2
    err = capsys.readouterr().err
    assert "2 of these runs are in it under the keys of an earlier tcplab" in err and "scripts/rekey_store.py" in err
    assert store.read_bytes() == before
    # Moved, the store resumes with nothing to run.
    assert rekey_store.main([str(store)]) == 0
    assert main(["run", str(ROOT / "experiments" / "validation-single.toml"), "--backend", "testbed", "--store", str(store), "-q"]) == 0
    runs = load_experiment(ROOT / "experiments" / "validation-single.toml").runs("testbed")
    assert _keys(store) == {r.run_id for r in runs} and len(_keys(store)) == 15


def test_rekey_moves_runs_under_their_old_keys_and_leaves_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.duckdb"
    shutil.copy(DATA / "validation-single-testbed.duckdb", store)
    current = _keys(store)
    old = _with_old_keys(store, 3)
    # And one run keyed some other way (another revision's key, say).
    stranger = sorted(current - set(old))[0]
    with duckdb.connect(str(store)) as db:
        for table in ("runs", "flows", "intervals", "queues"):
            db.execute(f"UPDATE {table} SET run_id = ? WHERE run_id = ?", ["0" * 32, stranger])
    assert _keys(store) == (current - set(old) - {stranger}) | set(old.values()) | {"0" * 32}

    assert rekey_store.main([str(store)]) == 0
    assert "3 testbed runs rekeyed, 11 already current, 1 keyed otherwise" in capsys.readouterr().out
    assert _keys(store) == (current - {stranger}) | {"0" * 32}
    for table in ("flows", "intervals", "queues"):
        assert _keys(store, table) == _keys(store), table
    # Again: nothing left to move.
    assert rekey_store.main([str(store)]) == 0
    assert "0 testbed runs rekeyed, 14 already current, 1 keyed otherwise" in capsys.readouterr().out
