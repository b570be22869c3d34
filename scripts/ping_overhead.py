"""What the testbed's path adds to the round trip, against the ping rate and the load.

    python scripts/ping_overhead.py RTT_MS [--passes N]      (root)

Opens a one-pair testbed (100 Mb/s, DropTail 1000 packets, the ``tuned`` profile) whose router
delays each direction by exactly rtt/2 (no correction) and pings the receiver from the sender's
namespace at 10, 100 and 1000 pings a second, first on the idle path, then while it carries a
run's packet rate: the load under which the testbed measures its overhead
(``tcplab.testbed.experiment._path_load``: 8333 64-byte UDP datagrams a second each way, 6% of
the bottleneck, so the pings barely queue behind them). For each ping run it prints the rate
ping kept (count over the time it took, less one RTT) and the min, mean and max above the
setting, in ms; ``--passes`` repeats the whole sequence (the idle figures drift).

docs/testbed.md, "The overhead and the packet rate", has the figures and why the testbed pings
under load.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

from tcplab.errors import TcplabError
from tcplab.testbed import experiment, tools, topology

RATE_BPS = 100_000_000
#: (pings, interval s)
PING_RUNS = ((30, 0.1), (300, 0.01), (1000, 0.001))


def measure(rtt_ms: float, passes: int) -> None:
    rtt_ns = round(rtt_ms * 1e6)
    queue = {"kind": "droptail", "limit_pkts": 1000}
    with experiment._session(1, RATE_BPS, rtt_ns, queue, "tuned") as bed:
        sender, dst = topology.sender_ns(1), topology.receiver_addr(1)
        tools.ping(sender, dst, count=1)  # ARP on every hop
        for _ in range(passes):
            for loaded in (False, True):
                longest = sum(count * interval for count, interval in PING_RUNS) + len(PING_RUNS) * (rtt_ms / 1e3 + 2)
                load = experiment._path_load(bed.workdir, RATE_BPS, longest) if loaded else contextlib.nullcontext()
                with load:
                    for count, interval in PING_RUNS:
                        started = time.monotonic()
                        p = tools.ping(sender, dst, count=count, interval_s=interval, preload=experiment._preload(interval, rtt_ns))
                        rate = count / max(1e-3, time.monotonic() - started - rtt_ms / 1e3)
                        print(f"{'run load' if loaded else 'idle    '}  {1 / interval:5g} pings/s asked, {rate:5.0f} kept ({count:4d})  "
                              f"min {p.min_ms - rtt_ms:+.3f}  mean {p.mean_ms - rtt_ms:+.3f}  max {p.max_ms - rtt_ms:+.3f} ms", flush=True)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rtt_ms", type=float, help="the round-trip setting, ms")
    p.add_argument("--passes", type=int, default=1, help="how many times to run the sequence (default 1)")
    args = p.parse_args(argv)
    if args.rtt_ms <= 0:
        p.error(f"rtt_ms: {args.rtt_ms:g} is not allowed: expected a positive number of ms")
    if args.passes < 1:
        p.error(f"--passes: {args.passes} is not allowed: expected 1 or more")
    try:
        measure(args.rtt_ms, args.passes)
    except TcplabError as e:
        print(f"ping_overhead: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
