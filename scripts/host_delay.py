"""How long each burst of a sender's data takes to reach a later capture point.

    python scripts/host_delay.py DOWNSTREAM.pcap SENDER.pcap [SENDER.pcap ...]

DOWNSTREAM is a capture further along the path with the same clock: on the testbed the router's
own record of what its bottleneck queue receives (``tcplab testbed run FILE --router-pcap P``),
each SENDER a capture on a sender's interface (dumpcap in its namespace; commands in
``scenarios/validation-cubic.toml``). Between the two lie only the hosts' stacks, the veths and
the router's reading of its TUN device, so the delay's spread is the testbed's timing noise,
which ``experiments/validation.toml`` gives the simulator as ``host_jitter`` (docs/validation.md).

A data segment is matched by source address and raw sequence number, first occurrence on each
side (the router's capture holds every arrival, dropped or not, so that is the original
transmission; a capture at a receiver would match a lost segment's retransmission); bursts are runs of segments less than 20 µs apart at the sender. For each sender it
prints the delay of each burst's first segment (percentiles, µs) and the median spacing of a
burst's segments at the sender and downstream. tshark reads the files.
"""

from __future__ import annotations

import argparse
import shutil
import sys

import numpy as np

from loss_split import burst_bounds, epoch_ns, tshark_rows

PERCENTILES = (1, 10, 50, 90, 99)


def segments(path: str) -> list[tuple[int, tuple[str, str]]]:
    """(time ns, (source, raw sequence number)) of every TCP data segment in ``path``."""
    rows = tshark_rows(path, ["frame.time_epoch", "ip.src", "tcp.seq_raw"], "tcp.len>0", tool="host_delay")
    return [(epoch_ns(t), (src, seq)) for t, src, seq in rows]


def burst_delays(sender: list[tuple[int, tuple]], downstream: dict[tuple, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(first-segment delays, in-burst spacing at the sender, the same downstream; all in ns,
    for the bursts whose every segment is matched downstream), distinct segments, matched ones."""
    seen: set[tuple] = set()
    first = [(t, key) for t, key in sender if not (key in seen or seen.add(key))]
    t_s = np.array([t for t, _ in first], dtype=np.int64)
    t_d = np.array([downstream.get(key, -1) for _, key in first], dtype=np.int64)
    bounds = burst_bounds(t_s).tolist()
    delays, spacing_s, spacing_d = [], [], []
    for a, b in zip(bounds[:-1], bounds[1:]):
        if (t_d[a:b] < 0).any():
            continue
        delays.append(t_d[a] - t_s[a])
        spacing_s.extend(np.diff(t_s[a:b]).tolist())
        spacing_d.extend(np.diff(t_d[a:b]).tolist())
    return np.array(delays), np.array(spacing_s), np.array(spacing_d), len(first), int((t_d >= 0).sum())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("downstream", help="the later capture (the router's --router-pcap file)")
    p.add_argument("senders", nargs="+", metavar="sender", help="a sender's capture")
    a = p.parse_args(argv)
    if shutil.which("tshark") is None:
        raise SystemExit("host_delay: tshark is not installed (apt-get install -y tshark)")
    downstream: dict[tuple, int] = {}
    for t, key in segments(a.downstream):
        downstream.setdefault(key, t)
    for path in a.senders:
        sender = segments(path)
        delays, spacing_s, spacing_d, distinct, matched = burst_delays(sender, downstream)
        if len(delays) == 0:
            raise SystemExit(f"host_delay: no burst of '{path}' is in '{a.downstream}' (same run, same clock?)")
        pct = " ".join(f"p{q} {v / 1e3:.1f}" for q, v in zip(PERCENTILES, np.percentile(delays, PERCENTILES)))
        line = f"{path}: {distinct} segments, {matched} matched, {len(delays)} bursts; first segment's delay, µs: {pct}"
        if len(spacing_s):
            line += f"; in-burst spacing, µs: sender {np.median(spacing_s) / 1e3:.2f}, downstream {np.median(spacing_d) / 1e3:.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
