"""scripts/cpu_stalls.py: one probe per CPU that logs its late wake-ups (docs/testbed.md, "Stalls")."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "cpu_stalls.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_a_probe_per_cpu_logs_the_wake_ups_over_its_limit() -> None:
    # A limit of 1 µs against 100-µs sleeps: every probe is late on some wake-ups (Python's own
    # overhead alone is more), so each CPU's list is non-empty and every entry is over the limit.
    r = _run("--seconds", "0.3", "--sleep-us", "100", "--limit-ms", "0.001")
    assert r.returncode == 0, r.stderr
    heads = re.findall(r"^CPU (\d+) \((.*?)\): (\d+) wake-ups more than 0\.001 ms late$", r.stdout, re.M)
    assert sorted(int(c) for c, _, _ in heads) == sorted(os.sched_getaffinity(0))
    assert all(int(n) > 0 for _, _, n in heads), r.stdout
    lates = [float(x) for x in re.findall(r"^  \d\d:\d\d:\d\d\.\d{3}  ([\d.]+) ms$", r.stdout, re.M)]
    assert len(lates) == sum(int(n) for _, _, n in heads)
    if os.geteuid() == 0:
        assert all(where == "SCHED_FIFO 99" for _, where, _ in heads)


def test_a_generous_limit_logs_nothing_on_a_short_probe() -> None:
    r = _run("--seconds", "0.2", "--limit-ms", "1000")
    assert r.returncode == 0, r.stderr
    assert re.findall(r": (\d+) wake-ups more than 1000 ms late", r.stdout) == ["0"] * len(os.sched_getaffinity(0))


def test_bad_input_is_a_usage_error() -> None:
    for args, message in ((("--seconds", "0"), "--seconds 0.0 must be positive"), (("--priority", "100"), "--priority 100 must be within 1–99")):
        r = _run(*args)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
