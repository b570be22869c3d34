"""Shared fixtures: small scenarios that simulate in well under a second."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import tcplab

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


@pytest.fixture
def short_dumbbell() -> tcplab.Scenario:
    """Two NewReno flows on a 10 Mb/s, 40 ms dumbbell for 8 s; flow 2 starts at 2 s."""
    return tcplab.Scenario(
        name="short",
        duration="8s",
        window="4s:8s",
        topology=tcplab.Dumbbell(bottleneck="10Mbps", rtt="40ms", buffer="1bdp"),
        flows=[tcplab.TcpFlow(variant="newreno"), tcplab.TcpFlow(variant="newreno", start="2s")],
    )


@pytest.fixture
def topology_error(reference_data: dict) -> Callable[[dict], tcplab.ScenarioError]:
    """The one error the reference scenario gives with ``[topology]`` keys changed (it must fail)."""

    def error(topology: dict) -> tcplab.ScenarioError:
        data = copy.deepcopy(reference_data)
        data["topology"].update(topology)
        with pytest.raises(tcplab.ScenarioError) as e:
            tcplab.Scenario.model_validate(data)
        return e.value

    return error


@pytest.fixture
def cli_refuses(tmp_path: Path) -> Callable[[str], str]:
    """``tcplab sim FILE --csv OUT`` on a scenario file holding the given TOML, which it must refuse
    as a user's mistake: exit status 2, no traceback, nothing written. Returns its stderr."""

    def run(toml: str) -> str:
        scenario, csv = tmp_path / "refused.toml", tmp_path / "refused.csv"
        scenario.write_text(toml)
        proc = subprocess.run([sys.executable, "-m", "tcplab.cli", "sim", str(scenario), "--csv", str(csv)], capture_output=True, text=True)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert not list(tmp_path.glob("refused.*csv")), "nothing written"
        return proc.stderr

    return run


@pytest.fixture
def reference_data() -> dict:
    """The reference experiment as the table a TOML file holds."""
    return {
        "name": "reference",
        "duration": "300s",
        "seed": 1,
        "interval": "1s",
        "window": "120s:300s",
        "topology": {"kind": "dumbbell", "bottleneck": "100Mbps", "rtt": "100ms", "buffer": "1bdp", "access_rate": "1Gbps", "loss": 0.0},
        "flows": [{"variant": "newreno", "start": "0s"}, {"variant": "newreno", "start": "60s"}],
    }


# --- small results stores, written by the real runner ------------------------------------------

DATA = Path(__file__).resolve().parent / "data"


def run_store(experiment: Path, store: Path, *extra: str) -> Path:
    """Run an experiment file into ``store`` through ``tcplab run`` (in this process, quietly)."""
    from tcplab.cli import main

    assert main(["run", str(experiment), "--store", str(store), "--jobs", "1", "-q", *extra]) == 0
    return store


def variant_of(experiment: Path, directory: Path, name: str, **replace: str) -> Path:
    """A copy of an experiment file named ``name`` with text replaced (``{"seed = 1": "seed = 2"}``)."""
    text = experiment.read_text().replace(f'name = "{experiment.stem}"', f'name = "{name}"')
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    path = directory / f"{name}.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="session")
def tiny_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/data/tiny.toml's store: 2 RTTs × 2 buffers × 2 replications of a 10 Mb/s, 15 s dumbbell."""
    return run_store(DATA / "tiny.toml", tmp_path_factory.mktemp("stores") / "tiny.duckdb")


@pytest.fixture(scope="session")
def tiny_other_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same grid as ``tiny_store`` with another experiment seed and no host jitter (its
    replications differ only by the flows' start jitter): two of its four cells differ
    significantly from ``tiny_store``'s."""
    directory = tmp_path_factory.mktemp("stores")
    exp = variant_of(DATA / "tiny.toml", directory, "tiny-steady", **{"seed = 1": "seed = 2", 'host_jitter = "1ms"': 'host_jitter = "0ms"'})
    return run_store(exp, directory / "tiny-steady.duckdb")


@pytest.fixture(scope="session")
def cbr_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/data/cbr.toml's store: TCP against UDP CBR, 2 variants × 4 CBR rates."""
    return run_store(DATA / "cbr.toml", tmp_path_factory.mktemp("stores") / "cbr.duckdb")
