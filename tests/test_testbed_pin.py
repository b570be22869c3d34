"""scripts/testbed_pin.py pins what it is told to and nothing else: two real iperf3 servers on
flow 1's and flow 2's ports and a third on the calibration load's port, each allowed every CPU;
after one pass flow 1's runs on the first CPU only, flow 2's on the last only, the third still on all.
The test holds the testbed's lock, so that no testbed run's iperf3 is pinned meanwhile."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

from tcplab.testbed.experiment import FLOW_PORT_BASE, LOAD_PORT, LOCK_PATH

ROOT = Path(__file__).resolve().parent.parent


def test_pins_each_flows_iperf3_and_leaves_the_rest() -> None:
    LOCK_PATH.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK_PATH, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            _pin_three_servers()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _pin_three_servers() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    procs = {
        port: subprocess.Popen(["iperf3", "-s", "-1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for port in (FLOW_PORT_BASE, FLOW_PORT_BASE + 1, LOAD_PORT)
    }
    try:
        out = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "testbed_pin.py"), "--flow1", str(cpus[0]), "--flow2", str(cpus[-1]), "--seconds", "1"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout
        assert os.sched_getaffinity(procs[FLOW_PORT_BASE].pid) == {cpus[0]}, out
        assert os.sched_getaffinity(procs[FLOW_PORT_BASE + 1].pid) == {cpus[-1]}, out
        assert os.sched_getaffinity(procs[LOAD_PORT].pid) == set(cpus), out
        assert f"flow1 {procs[FLOW_PORT_BASE].pid} -> CPU {cpus[0]}" in out and f"flow2 {procs[FLOW_PORT_BASE + 1].pid} -> CPU {cpus[-1]}" in out
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()
