"""scripts/router_episodes.py on the simulator's own captures at both senders: the queue it replays
is the simulated bottleneck (the access links add the same serialisation time to every segment),
so it must find exactly the packets the bottleneck dropped, flow by flow, and every episode's
arrivals must split into its free-place classes, the dropped ones being those that found none.
A wrong queue rule, a wrong source filter (a sender's capture also holds its ACKs) or a broken
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
name = "episodes"
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


def test_episodes_find_the_simulators_drops_flow_by_flow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert shutil.which("tshark") is not None, "tshark is not installed (make deps installs it)"
    scenario = tmp_path / "episodes.toml"
    scenario.write_text(SCENARIO)
    pcaps = [tmp_path / f"flow{i}.pcap" for i in (1, 2)]
    for i, path in enumerate(pcaps, start=1):
        assert main(["sim", str(scenario), "--pcap", str(i), "--pcap-file", str(path), "-q"]) == 0
    capsys.readouterr()
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


def test_bad_limit_is_a_usage_error() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "router_episodes.py"), "x.pcap", "--limit", "0"], capture_output=True, text=True)
    assert run.returncode == 2
    assert "--limit: 0 must be at least 1 packet" in run.stderr
    assert "Traceback" not in run.stderr
