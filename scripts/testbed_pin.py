"""Pin the testbed's processes to CPUs while a testbed run or sweep goes on, to see how much of
the kernel's run-to-run spread comes from where the scheduler happens to put them
(docs/validation.md, "The whole grid on the testbed corrected under load").

    python scripts/testbed_pin.py --flow1 0 --flow2 1 --fwd 0 --rev 1 --seconds 1500 &
    tcplab run EXPERIMENT --backend testbed --store STORE

Every 0.1 s it looks for flow 1's iperf3 processes (client and server, on the testbed's first
flow port), flow 2's (the next port) and the router's forward and reverse threads (named after
their TUN devices), and pins each new one to its CPU once. The calibration's UDP load is left
alone. A CPU of -1 leaves that kind alone.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from tcplab.testbed.experiment import FLOW_PORT_BASE
from tcplab.testbed.topology import FWD_TUN, REV_TUN


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None  # the process ended between listing and reading


def _pin(tid: int, cpu: int, what: str, done: set[int]) -> None:
    if cpu < 0 or tid in done:
        return
    try:
        os.sched_setaffinity(tid, {cpu})
    except OSError:
        return
    done.add(tid)
    print(f"{time.strftime('%H:%M:%S')} {what} {tid} -> CPU {cpu}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("flow1", "flow2", "fwd", "rev"):
        parser.add_argument(f"--{name}", type=int, default=-1, metavar="CPU")
    parser.add_argument("--seconds", type=float, required=True, help="how long to keep pinning")
    args = parser.parse_args()
    ports = {f" -p {FLOW_PORT_BASE}": ("flow1", args.flow1), f" -p {FLOW_PORT_BASE + 1}": ("flow2", args.flow2)}
    threads = {FWD_TUN: args.fwd, REV_TUN: args.rev}
    done: set[int] = set()
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) in done:
                continue
            cmdline = _read(entry / "cmdline")
            if cmdline is None:
                continue
            if cmdline.startswith("iperf3 "):
                for port, (what, cpu) in ports.items():
                    if port in cmdline:
                        _pin(int(entry.name), cpu, what, done)
            elif "tcplab-router" in cmdline:
                for task in (entry / "task").glob("*"):
                    name = _read(task / "comm") or ""
                    _pin(int(task.name), threads.get(name, -1), name, done)
        time.sleep(0.1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
