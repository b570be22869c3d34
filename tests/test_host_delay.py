"""scripts/host_delay.py on the simulator's own captures, where every delay is known: one flow held
by its receive window far below the path's capacity, captured at its sender and at its receiver.
A burst's first segment then meets an empty bottleneck and takes exactly 12 µs (1500 B on the
1 Gb/s access link) + 600 µs (on the 20 Mb/s bottleneck) + 15 ms (one way) + 12 µs (the
receiver's access link) = 15,624 µs; a burst leaves the sender 12 µs per segment and reaches the
receiver 600 µs per segment. A wrong match, timestamp or burst split gives other numbers."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcplab.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "tests" / "data" / "window_limited.toml"


def test_delays_on_a_path_without_queueing_are_the_paths_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert shutil.which("tshark") is not None, "tshark is not installed (make deps installs it)"
    sender, receiver = tmp_path / "sender.pcap", tmp_path / "receiver.pcap"
    assert main(["sim", str(SCENARIO), "--pcap", "1", "--pcap-file", str(sender), "-q"]) == 0
    assert main(["sim", str(SCENARIO), "--pcap", "1", "--pcap-at", "receiver", "--pcap-file", str(receiver), "-q"]) == 0
    capsys.readouterr()
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "host_delay.py"), str(receiver), str(sender)], capture_output=True, text=True, check=True,
    ).stdout
    m = re.search(r"(\d+) segments, (\d+) matched, (\d+) bursts; first segment's delay, µs: p1 ([\d.]+) p10 ([\d.]+) p50 ([\d.]+) p90 ([\d.]+) p99 ([\d.]+); "
                  r"in-burst spacing, µs: sender ([\d.]+), downstream ([\d.]+)", out)
    assert m, out
    segments, matched, bursts = map(int, m.groups()[:3])
    p1, p10, p50, p90, p99, spacing_sender, spacing_receiver = map(float, m.groups()[3:])
    # Only what was still in flight at the end (at most the 20 KB window: 13 segments) is unmatched.
    assert segments > 1000 and segments - 13 <= matched < segments and bursts > 300, out
    assert p1 == p10 == p50 == p90 == p99 == 15624.0, out
    assert (spacing_sender, spacing_receiver) == (12.0, 600.0), out
