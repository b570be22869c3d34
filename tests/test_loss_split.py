"""scripts/loss_split.py and scripts/router_episodes.py on the simulator's own captures at both
senders. Replaying both senders' data segments through an ideal drop-tail queue must find exactly
the segments the senders retransmitted (counted over the first 11 of the 12 s: a drop in the last
RTTs is never retransmitted) and exactly the packets the bottleneck dropped, flow by flow, because
the simulated bottleneck is such a queue and the capture times are the departure times (the
access links add the same 12 µs to every segment). A broken timestamp, a wrong queue rule, a
wrong drop inference, a wrong source filter (a sender's capture also holds its ACKs) or a broken
episode window makes them differ."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tcplab
from tcplab.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = """
name = "split"
duration = "12s"
seed = 3

[topology]
kind = "dumbbell"
bottleneck = "20Mbps"
rtt = "30ms"
buffer = "1bdp"

[tcp]
tso = true

[[flows]]
variant = "sack"

[[flows]]
variant = "cubic"
start = "2s"
"""
# 20 Mb/s × 30 ms = 75,000 B = 50 packets of 1500 B.
LIMIT = 50


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """The scenario file and each sender's capture of one run of it."""
    assert shutil.which("tshark") is not None, "tshark is not installed (make deps installs it)"
    workdir = tmp_path_factory.mktemp("split")
    scenario = workdir / "split.toml"
    scenario.write_text(SCENARIO)
    pcaps = [workdir / f"flow{i}.pcap" for i in (1, 2)]
    for i, path in enumerate(pcaps, start=1):
        assert main(["sim", str(scenario), "--pcap", str(i), "--pcap-file", str(path), "-q"]) == 0
    return scenario, pcaps


def test_replay_finds_the_simulators_drops(captures: tuple[Path, list[Path]]) -> None:
    _, pcaps = captures
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "loss_split.py"), *map(str, pcaps), "--rtt", "30ms", "--limit", str(LIMIT), "--rate", "20Mbps", "--acks",
         "--window", "0s:11s"],  # a drop in the run's last RTTs is never retransmitted
        capture_output=True, text=True, check=True,
    ).stdout
    replayed = {int(f): (int(d), int(m), int(n)) for f, d, m, n in re.findall(r"replay flow(\d): (\d+) drops, (\d+) of the (\d+) inferred", out)}
    assert set(replayed) == {1, 2}, out
    for flow, (drops, matched, inferred) in replayed.items():
        assert inferred >= 5, f"flow{flow} lost too little to test anything:\n{out}"
        assert matched == inferred and drops == inferred, f"flow{flow}:\n{out}"
    # --acks: as the testbed's Linux hosts (docs/tcp.md), the senders end each burst (2 segments
    # at 20 Mb/s) with PSH and the receivers acknowledge every second segment and, at once, a
    # burst's closing PSH segment: every one-segment ACK ends at one (they are 5-10% of the
    # pure ACKs here, so at least 2% shows they happen).
    acks = {int(f): (float(p), dict((int(k), float(v)) for k, v in re.findall(r"(\d+):([\d.]+)", h)), int(e))
            for f, p, h, e in re.findall(r"flow(\d): PSH on ([\d.]+)% of data segments; segments per pure ACK ([\d: .]+); one-segment ACKs ending at a PSH segment (\d+)%", out)}
    assert set(acks) == {1, 2}, out
    for flow, (pushed, sizes, at_push) in acks.items():
        assert 30 < pushed < 70 and sizes.get(1, 0) >= 0.02 and sizes.get(1, 0) + sizes.get(2, 0) >= 0.95 and at_push == 100, f"flow{flow}: {sizes}\n{out}"
    assert re.search(r"episodes: \d+ \(\d+ both flows", out), out


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "loss_split.py"), "a.pcap", "b.pcap", "--rtt", "30xs", "--limit", "5"],
        capture_output=True, text=True,
    )
    assert run.returncode == 2
    assert "--rtt" in run.stderr and "30xs" in run.stderr and "Traceback" not in run.stderr


def test_episodes_find_the_simulators_drops_flow_by_flow(captures: tuple[Path, list[Path]]) -> None:
    scenario, pcaps = captures
    want = tcplab.simulate(tcplab.load_scenario(scenario)).flows["dropped_pkts"].tolist()
    assert all(n > 0 for n in want), want

    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "router_episodes.py"), *map(str, pcaps), "--limit", str(LIMIT), "--rate", "20Mbps", "--gap", "100ms"],
        capture_output=True, text=True, check=True,
    ).stdout
    head, *eps = out.splitlines()
    # Flow i's sender is 10.0.i.1 in the simulator's captures (docs/pcap.md).
    got = {int(i): (int(n), int(d)) for i, n, d in re.findall(r"10\.0\.(\d)\.1: (\d+) packets, (\d+) dropped", head)}
    assert [got[1][1], got[2][1]] == want, out
    assert eps, out
    in_episodes = 0
    for line in eps:
        for arrived, dropped, shares in re.findall(r"10\.0\.\d\.1: (\d+) arrivals, (\d+) dropped, free places 0/1/2/3/4\+ ([-\d./]+)", line):
            if int(arrived) == 0:
                continue
            parts = [float(x) for x in shares.split("/")]
            assert sum(parts) == pytest.approx(1.0, abs=0.003), line
            assert parts[0] * int(arrived) == pytest.approx(int(dropped), abs=0.5), line
            in_episodes += int(dropped)
    assert in_episodes == sum(want), out


def test_router_episodes_bad_limit_is_a_usage_error() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "router_episodes.py"), "x.pcap", "--limit", "0"], capture_output=True, text=True)
    assert run.returncode == 2
    assert "--limit: 0 must be at least 1 packet" in run.stderr
    assert "Traceback" not in run.stderr
