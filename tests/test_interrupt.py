"""Ctrl-C stops a long simulation promptly: the engine polls Python's signal handlers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

LONG_RUN = """
import tcplab
s = tcplab.Scenario(name="long", duration="3000s",
    topology=tcplab.Dumbbell(bottleneck="1Gbps", rtt="100ms", buffer="1bdp"),
    flows=[tcplab.TcpFlow(variant="sack"), tcplab.TcpFlow(variant="sack")])
print("start", flush=True)
tcplab.simulate(s)
print("finished", flush=True)
"""


def test_ctrl_c_interrupts_a_long_simulation() -> None:
    # 3000 s at 1 Gb/s is about a minute of work; SIGINT after it starts must end it at once.
    # The child starts with SIGINT's default action even when this test runs from a background
    # job, whose shell has it ignored (a Python started with SIGINT ignored never raises
    # KeyboardInterrupt).
    p = subprocess.Popen(
        [sys.executable, "-c", LONG_RUN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "start"
    time.sleep(0.5)
    t0 = time.monotonic()
    os.kill(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert time.monotonic() - t0 < 5
    assert "finished" not in out
    assert "KeyboardInterrupt" in err
