"""scripts/loss_split.py and scripts/router_episodes.py on the simulator's own captures at both
senders. Replaying both senders' data segments through an ideal drop-tail queue must find exactly
the segments the senders retransmitted (counted over the first 11 of the 12 s: a drop in the last
RTTs is never retransmitted) and exactly the packets the bottleneck dropped, flow by flow, because
the simulated bottleneck is such a queue and the capture times are the departure times (the
access links add the same 12 µs to every segment). A broken timestamp, a wrong queue rule, a
wrong drop inference, a wrong source filter (a sender's capture also holds its ACKs) or a broken
episode window makes them differ."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
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

_spec = importlib.util.spec_from_file_location("loss_split", ROOT / "scripts" / "loss_split.py")
loss_split = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(loss_split)
ONSET_LINE = re.compile(
    r"onsets flow(\d): (\d+) \((\d+) after a silence of both senders over 4 ms\); of the other (\d+) the burst added 0 segments "
    r"over those its ACKs freed in (\d+) \(\d+%\), 1 in (\d+) \(\d+%\), 2 or more in (\d+) \(\d+%\), fewer in (\d+); "
    r"the drop was the burst's last segment in (\d+)%; ([\d.]+) drops per onset burst")


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


def test_onsets_of_the_simulator_without_host_noise_are_window_increases(captures: tuple[Path, list[Path]]) -> None:
    """Without host jitter every delay is exact: the queue fills only when a window grows, so the
    burst that meets it mostly carries its flow's increase (+1 over what its ACKs freed, more in
    slow start) and loses its last segment; and the simulator's hosts never stall. (The testbed's
    kernel: about half its onset bursts add nothing; docs/validation.md, "Which burst meets the
    full queue".)"""
    _, pcaps = captures
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "loss_split.py"), *map(str, pcaps), "--rtt", "30ms", "--limit", str(LIMIT), "--rate", "20Mbps", "--onsets",
         "--window", "0s:11s"],
        capture_output=True, text=True, check=True,
    ).stdout
    got = {int(m[0]): [int(x) for x in m[1:9]] + [float(m[9])] for m in ONSET_LINE.findall(out)}
    assert set(got) == {1, 2}, out
    total = [0, 0]
    for flow, (n, after_silence, rest, none, one, more, fewer, last, per_burst) in got.items():
        assert n >= 5 and after_silence == 0 and rest == n and none + one + more + fewer == rest, f"flow{flow}:\n{out}"
        assert fewer == 0 and last >= 60 and 1.0 <= per_burst <= 1.5, f"flow{flow}:\n{out}"
        total[0] += one + more
        total[1] += rest
    assert total[0] >= 0.8 * total[1], out
    # Reno's congestion avoidance adds one segment a window: its onsets carry that one.
    _, _, rest, _, one, *_ = got[1]
    assert one >= 0.6 * rest, out


def test_onsets_after_a_silence_of_both_senders_are_counted_apart() -> None:
    quiet = loss_split.silence_ends([np.array([0, 1_000_000, 9_000_000]), np.array([500_000, 20_000_000])])
    assert quiet.tolist() == [9_000_000, 20_000_000]  # gaps of 8 and 11 ms; 0.5 ms ones are not silences
    found = [(9_500_000, 3, True, 4), (15_000_000, 0, True, 1), (16_000_000, 1, True, 1), (17_000_000, -1, False, 2)]
    line = loss_split.onset_line(1, found, quiet)
    assert line.startswith("onsets flow1: 4 (1 after a silence of both senders over 4 ms); of the other 3 "), line
    assert "added 0 segments over those its ACKs freed in 1 (33%), 1 in 1 (33%), 2 or more in 0 (0%), fewer in 1;" in line, line
    assert "last segment in 67%; 1.33 drops per onset burst" in line, line
    assert loss_split.onset_line(2, found[:1], quiet) == "onsets flow2: 1, all after a silence of both senders"


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
