"""DRR (``queue = "drr"``): against ns-2.35's ``Queue/DRR``, fair queueing's protection of a
responsive flow, the keys and their errors."""

from __future__ import annotations

import copy
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.config import Scenario

DATA = Path(__file__).resolve().parent / "data"


def _ns2(duration: int, quantum: int, limit: int, streams: list[tuple[float, int]]) -> tuple[list[int], int]:
    argv = [str(duration), str(quantum), str(limit), *(f"{rate}:{size}" for rate, size in streams)]
    out = subprocess.run(["ns", str(DATA / "ns2_drr_cbr.tcl"), *argv], capture_output=True, text=True, check=True, timeout=120).stdout
    lines = [line.split() for line in out.splitlines()]
    return [int(w[3]) for w in lines if w[0] == "flow"], next(int(w[1]) for w in lines if w[0] == "drops")


def _streams(duration: int, quantum: int, limit: int, streams: list[tuple[float, int]]) -> Scenario:
    """The ns-2 script's path: a source per stream, 1 Gb/s access, a 10 Mb/s, 20 ms DRR bottleneck."""
    return Scenario.model_validate(
        {
            "name": "drr-cbr",
            "duration": f"{duration}s",
            "start_jitter": "0s",  # every stream starts at 0, as in the script
            "topology": {"bottleneck": "10Mbps", "rtt": "40ms", "buffer": f"{limit}B", "queue": "drr", "drr": {"quantum": f"{quantum}B"}},
            "flows": [{"kind": "cbr", "rate": f"{rate}Mbps", "packet_size": f"{size}B"} for rate, size in streams],
        }
    )


NS2_CASES = [
    pytest.param(30, 250, 75000, [(2, 1000), (4, 500), (8, 1500)], id="max-min-250B"),
    pytest.param(30, 1500, 75000, [(2, 1000), (4, 500), (8, 1500)], id="max-min-1500B"),
    pytest.param(30, 500, 20000, [(6, 1500), (6, 1000), (6, 200)], id="sizes-by-bytes"),
    pytest.param(30, 1000, 50000, [(1, 1500), (3, 1500), (5, 1500), (7, 1500)], id="four-streams"),
    pytest.param(20, 250, 30000, [(12, 1500), (1.5, 64)], id="small-packets"),
]


@pytest.mark.parametrize(("duration", "quantum", "limit", "streams"), NS2_CASES)
def test_drr_matches_ns2(duration: int, quantum: int, limit: int, streams: list[tuple[float, int]]) -> None:
    # CBR streams over the link's rate: DRR alone decides who gets what (max-min fair shares, in
    # bytes) and whose packets the shared buffer pushes out. Both simulators deliver the same
    # bytes per stream to a packet (the last packets of a run, and which of two streams with equal
    # shares is served first, can differ) and drop the same number of packets.
    assert shutil.which("ns") is not None, "ns-2 is not installed (make deps installs Debian's ns2)"
    ns_bytes, ns_drops = _ns2(duration, quantum, limit, streams)
    r = tcplab.simulate(_streams(duration, quantum, limit, streams))
    ours = r.flows.goodput_bytes.tolist()
    largest = max(size for _, size in streams)
    assert all(abs(a - b) <= largest for a, b in zip(ours, ns_bytes, strict=True)), (ours, ns_bytes)
    assert abs(r.queues.iloc[0].dropped_pkts - ns_drops) <= 1, (r.queues.iloc[0].dropped_pkts, ns_drops)
    assert r.queues.iloc[0].early_drop_pkts == 0  # DRR drops only when the buffer is full


def test_drr_protects_a_responsive_flow_from_an_unresponsive_one() -> None:
    # A CUBIC flow and a 15 Mb/s CBR stream (from 5 s) on 10 Mb/s: through DropTail the stream
    # takes the link (CUBIC 0.02 Mb/s over 10-30 s); through DRR each gets its fair half.
    def run(queue: str) -> list[float]:
        scenario = Scenario.model_validate(
            {
                "name": "protect",
                "duration": "30s",
                "topology": {"bottleneck": "10Mbps", "rtt": "40ms", "buffer": "100pkt", "queue": queue},
                "flows": [{"variant": "cubic"}, {"kind": "cbr", "rate": "15Mbps", "packet_size": "1500B", "start": "5s"}],
            }
        )
        return tcplab.simulate(scenario).summary((10, 30)).throughput_mbps.tolist()

    tcp, cbr = run("droptail")
    assert tcp < 0.5 and cbr > 9.5, (tcp, cbr)
    tcp, cbr = run("drr")
    assert 4.5 < tcp < 5.1 and 4.9 < cbr < 5.1, (tcp, cbr)


def test_drr_lowers_to_the_engine_spec(reference_data: dict) -> None:
    data = copy.deepcopy(reference_data)
    data["topology"]["queue"] = "drr"
    spec = Scenario.model_validate(data).to_engine_spec()["topology"]
    assert spec["queue"] == {"kind": "drr", "limit_pkts": 833, "drr": {"quantum_bytes": 250}}
    data["topology"]["drr"] = {"quantum": "1500B"}
    assert Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["drr"] == {"quantum_bytes": 1500}


@pytest.mark.parametrize(
    ("topology", "field", "allowed"),
    [
        ({"drr": {"quantum": "1500B"}}, "topology.drr", "a [drr] table only with queue = 'drr'"),
        ({"queue": "drr", "drr": {"quantum": "0B"}}, "topology.drr.quantum", "positive size"),
        ({"queue": "drr", "drr": {"buckets": 16}}, "topology.drr.buckets", "unknown key"),
    ],
)
def test_bad_drr_settings_name_the_field(topology_error: Callable[[dict], ScenarioError], topology: dict, field: str, allowed: str) -> None:
    e = topology_error(topology)
    assert e.field == field and allowed in str(e), str(e)


def test_drr_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    from tcplab.cli import main

    argv = ["sim", "--rtt", "40ms", "--bottleneck", "10Mbps", "--buffer", "100pkt", "--flow", "reno", "--flow", "cubic", "--duration", "20s"]
    assert main([*argv, "--queue", "drr", "--set", "topology.drr.quantum=1500B"]) == 0
    assert "JFI" in capsys.readouterr().out
    assert main([*argv, "--queue", "drr", "--set", "topology.drr.quantum=0B"]) == 2
    assert "topology.drr.quantum" in capsys.readouterr().err
