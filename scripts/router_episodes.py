"""Who the bottleneck's queue dropped, loss episode by loss episode, and how full each flow found it.

    python scripts/router_episodes.py ROUTER.pcap --limit 667 [--rate 100Mbps] [--from 36s] [--gap 2s]
    python scripts/router_episodes.py FLOW1.pcap FLOW2.pcap --limit 667 ...

The input is what a drop-tail bottleneck was offered: the testbed router's own capture
(``tcplab testbed run FILE --router-pcap ROUTER.pcap``: every packet its queue was offered, stamped
with the time its drop decision used), or the simulator's captures at each sender (``tcplab sim
FILE --pcap N``; both files share the simulation's clock, and a data segment reaches the router a
fixed serialisation time after its stamp). Only packets from addresses that send data in a file
are kept (a sender's capture also holds its ACKs). The packets go, in time order, through the
queue tcplab's router and links implement (``loss_split.replay``: ``--limit`` waiting packets,
the one in service not counted, served at ``--rate`` counting IP bytes), which gives the
router's own drops exactly (tests/test_testbed.py). It prints each source address's packets and
drops, then every loss episode (drops less than ``--gap`` apart) from ``--from`` on: its start
and length, and for each source its arrivals in the episode, its drops, and how many free places
in the queue its arrivals found (0 means dropped). docs/validation.md ("How hard Reno is hit")
reads the kernel's and the simulator's episodes at 400 ms / 0.2 BDP this way;
tests/test_loss_split.py checks it on the simulator's captures.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
from collections import Counter
from pathlib import Path

from tcplab.units import Rate, Time

_spec = importlib.util.spec_from_file_location("loss_split", Path(__file__).resolve().parent / "loss_split.py")
assert _spec is not None and _spec.loader is not None
loss_split = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(loss_split)

FREE_CLASSES = 4  # free places 0, 1, 2, 3 and "4 or more"


def arrivals(path: str) -> list[tuple[int, str, int]]:
    """(time ns, source address, IP bytes) of the IPv4 packets of ``path`` sent by an address that
    sends data in it."""
    rows = loss_split.tshark_rows(path, ["frame.time_epoch", "ip.src", "ip.len", "tcp.len"], "ip", tool="router_episodes")
    senders = {r[1] for r in rows if r[3] not in ("", "0")}
    return [(loss_split.epoch_ns(r[0]), r[1], int(r[2])) for r in rows if r[1] in senders]


def episodes(drop_times: list[int], gap_ns: int) -> list[tuple[int, int]]:
    """(first, last) drop time of each run of drops less than ``gap_ns`` apart."""
    out: list[tuple[int, int]] = []
    for t in sorted(drop_times):
        if out and t - out[-1][1] < gap_ns:
            out[-1] = (out[-1][0], t)
        else:
            out.append((t, t))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", help="the router's capture, or each sender's capture of one simulation")
    p.add_argument("--limit", required=True, type=int, help="the bottleneck's drop-tail limit in packets")
    p.add_argument("--rate", default="100Mbps", type=loss_split._arg(Rate.parse), help="bottleneck rate (default 100Mbps)")
    p.add_argument("--from", dest="start", default="0s", type=loss_split._arg(Time.parse), metavar="TIME",
                   help="list the episodes that start this long after the first packet (default 0s)")
    p.add_argument("--gap", default="2s", type=loss_split._arg(Time.parse), help="drops closer than this share an episode (default 2s)")
    a = p.parse_args(argv)
    if a.limit < 1:
        p.error(f"--limit: {a.limit} must be at least 1 packet")
    if shutil.which("tshark") is None:
        raise SystemExit("router_episodes: tshark is not installed (apt-get install -y tshark)")
    pkts = sorted(x for path in a.files for x in arrivals(path))
    if not pkts:
        raise SystemExit("router_episodes: no packet from a data sender in " + ", ".join(a.files))
    waiting: list[int] = []
    dropped = loss_split.replay([(t, k, size) for k, (t, _, size) in enumerate(pkts)], a.limit, a.rate.bps, occupancy=waiting)
    t0 = pkts[0][0]
    sources = sorted({src for _, src, _ in pkts})
    total = Counter(src for _, src, _ in pkts)
    lost = Counter(pkts[k][1] for k in dropped)
    print(f"{len(pkts)} packets; " + "; ".join(f"{src}: {total[src]} packets, {lost[src]} dropped" for src in sources))
    drop_times = [pkts[k][0] for k in dropped if pkts[k][0] - t0 >= a.start.ns]
    times = [t for t, _, _ in pkts]
    lo = 0
    for first, last in episodes(drop_times, a.gap.ns):
        while times[lo] < first:
            lo += 1
        hi = lo
        while hi < len(pkts) and times[hi] <= last:
            hi += 1
        parts = []
        for src in sources:
            free = [min(a.limit - waiting[k], FREE_CLASSES) for k in range(lo, hi) if pkts[k][1] == src]
            n = len(free)
            shares = "/".join(f"{free.count(c) / n:.3f}" if n else "-" for c in range(FREE_CLASSES + 1))
            parts.append(f"{src}: {n} arrivals, {free.count(0)} dropped, "  # no free place: dropped
                         f"free places 0/1/2/3/4+ {shares}")
        print(f"episode at {(first - t0) / 1e9:.3f} s, {(last - first) / 1e6:.0f} ms: " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
