"""Run by the testbed in its own session: waits for EOF on stdin and removes the testbed unless
the runner said ``done`` first, so a SIGKILLed runner leaves nothing behind.

Not a public entry point; ``python -m tcplab.testbed.watchdog``.
"""

from __future__ import annotations

import fcntl
import signal
import sys


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the runner is not ours
    said = sys.stdin.buffer.read()
    if b"done" in said:
        return 0
    from .experiment import LOCK_PATH
    from .topology import clean

    # The runner is dead, so its lock is free; holding it keeps a new run from starting mid-clean.
    with open(LOCK_PATH, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        clean()
    return 0


if __name__ == "__main__":
    sys.exit(main())
