"""How two flows share the losses at a drop-tail bottleneck, from a capture at each sender.

    python scripts/loss_split.py FLOW1.pcap FLOW2.pcap --rtt 25ms --limit 208 [--rate 100Mbps]
                                 [--window 40s:100s]

Each file holds one flow as seen at its sender (``tcplab sim F --pcap N``, or dumpcap/tcpdump
on the sender's interface of the testbed); both must share a clock (one simulation, or one
host). tshark reads them. For each flow it prints

- the sizes of its bursts (data segments less than 20 µs apart: Linux's TSO/GSO bursts),
- its drops, inferred from the data: a segment whose first byte is sent again was lost;

then the loss episodes (drops of either flow within one RTT of the episode's first), classed as
both flows / flow 1 only / flow 2 only, and a replay: both flows' data segments, at their
capture times, through an ideal drop-tail queue of LIMIT packets drained at RATE (1500-byte
segments). On a simulator capture the replay finds the simulator's own drops; on a testbed
capture, how far it misses says how much the path from the senders to the router reshapes
the traffic (docs/validation.md). ``--list-episodes`` also prints every episode;
``--acks`` (captures holding both directions) each flow's share of data segments with PSH and
how many segments its receiver's pure ACKs acknowledge; ``--onsets`` (the same) what each flow's
loss onsets look like: the burst that met the full queue after a flow had lost nothing for an
RTT, how many segments it added over those its ACKs had freed since the flow's burst before
(its window increase shows as +1), whether its drop was its last segment, and whether the onset
followed a silence of both senders (a stall of the machine: no data from either for 4 ms).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections import Counter, deque
from collections.abc import Hashable

import numpy as np

from tcplab.units import Rate, Time, UnitError, Window

BURST_GAP_NS = 20_000
SILENCE_NS = 4_000_000  # no data from either sender for this long: the hosts stalled
MTU = 1500
MSS = 1448


def epoch_ns(epoch: str) -> int:
    """tshark's ``frame.time_epoch`` ("1795378613.029310500") as integer ns: a float would round
    a 120-µs step to a multiple of 0.24 µs at today's epoch and drift the replay's clock."""
    sec, _, frac = epoch.partition(".")
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


def tshark_rows(path: str, fields: list[str], display_filter: str | None = None, tool: str = "loss_split") -> list[list[str]]:
    """One row of ``fields`` per frame of ``path`` (matching ``display_filter``), read with tshark;
    a file tshark cannot read, or without a matching TCP segment, ends the script with a message."""
    cmd = ["tshark", "-r", path, *(["-Y", display_filter] if display_filter else []), "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{tool}: tshark cannot read '{path}': {out.stderr.strip()}")
    rows = [line.split("\t") for line in out.stdout.splitlines() if line.count("\t") == len(fields) - 1]
    if not rows:
        raise SystemExit(f"{tool}: '{path}' holds no TCP {'data ' if display_filter == 'tcp.len>0' else ''}segments")
    return rows


def data_port(rows: list[list[str]], port: int, length: int) -> str:
    """The source port of the most data segments among ``rows`` (field ``port`` the source port,
    field ``length`` the TCP payload length): the flow's sender."""
    return Counter(r[port] for r in rows if r[length] not in ("", "0")).most_common(1)[0][0]


def load(path: str) -> tuple[np.ndarray, np.ndarray]:
    """(send times in ns, relative sequence numbers) of the data segments of the busiest
    direction of ``path``."""
    rows = tshark_rows(path, ["frame.time_epoch", "tcp.seq", "tcp.srcport"], "tcp.len>0")
    port = Counter(r[2] for r in rows).most_common(1)[0][0]
    t = np.array([epoch_ns(r[0]) for r in rows if r[2] == port], dtype=np.int64)
    seq = np.array([int(r[1]) for r in rows if r[2] == port])
    return t, seq


def acks_and_pushes(path: str) -> tuple[Counter, float, float]:
    """(how many segments each pure ACK without SACK blocks newly acknowledges: a Counter, the
    share of data segments carrying PSH, the share of one-segment ACKs that acknowledge up to
    the end of a PSH segment) for the busiest flow of ``path``, which must hold both directions
    (a capture on the sender's interface does)."""
    rows = tshark_rows(path, ["tcp.srcport", "tcp.len", "tcp.ack", "tcp.flags.push", "tcp.options.sack_le", "tcp.nxtseq"], "tcp")
    port = data_port(rows, 0, 1)
    data = [r for r in rows if r[0] == port and r[1] not in ("", "0")]
    pushed = sum(r[3] in ("1", "True") for r in data) / len(data)
    push_ends = {int(r[5]) for r in data if r[3] in ("1", "True") and r[5]}
    sizes: Counter = Counter()
    one_at_push = 0
    prev = None
    for r in rows:
        if r[0] == port or r[1] not in ("", "0") or not r[2]:
            continue
        ack = int(r[2])
        if prev is not None and not r[4] and ack > prev:
            segs = round((ack - prev) / MSS)
            sizes[segs] += 1
            one_at_push += segs == 1 and ack in push_ends
        prev = ack
    return sizes, pushed, one_at_push / max(1, sizes[1])


def inferred_drops(seq: np.ndarray) -> np.ndarray:
    """Indices of first transmissions whose first byte was sent again (lost at the queue)."""
    first: dict[int, int | None] = {}
    lost = []
    for i, s in enumerate(seq.tolist()):
        j = first.get(s, -1)
        if j == -1:
            first[s] = i
        elif j is not None:
            lost.append(j)
            first[s] = None
    return np.array(sorted(lost), dtype=int)


def burst_bounds(t: np.ndarray) -> np.ndarray:
    """Where each burst of send times ``t`` starts, and ``len(t)`` last."""
    return np.concatenate([[0], np.nonzero(np.diff(t) >= BURST_GAP_NS)[0] + 1, [len(t)]])


def burst_sizes(t: np.ndarray) -> np.ndarray:
    return np.diff(burst_bounds(t))


def episodes(drop_times: list[tuple[int, int]], rtt_ns: int) -> list[tuple[int, dict[int, int]]]:
    """Group (time, flow) drops: a drop within one RTT of an episode's first joins it."""
    eps: list[tuple[int, dict[int, int]]] = []
    for t, f in sorted(drop_times):
        if eps and t - eps[-1][0] <= rtt_ns:
            eps[-1][1][f] += 1
        else:
            eps.append((t, {1: int(f == 1), 2: int(f == 2)}))
    return eps


def replay(arrivals: list[tuple[int, Hashable, int]], limit: int, rate_bps: int, initial: int = 0,
           occupancy: list[int] | None = None) -> set[Hashable]:
    """Keys of the arrivals (time ns, key, IP bytes) that an ideal drop-tail queue of ``limit``
    waiting packets, served at ``rate_bps``, drops (the packet in service does not count, as in
    tcplab's queues); ``initial`` full-sized packets wait when the first one arrives. Given
    ``occupancy``, it appends how many packets were waiting as each arrival came."""
    def tx(size: int) -> int:
        return -(-size * 8 * 1_000_000_000 // rate_bps)  # ns, rounded up as tcplab's links do

    waiting: deque[int] = deque([tx(MTU)] * initial)  # service times of the waiting packets
    free_at, dropped = arrivals[0][0] if initial else arrivals[0][0] - 1, set()
    for t, key, size in arrivals:
        while waiting and free_at <= t:
            free_at += waiting.popleft()
        if occupancy is not None:
            occupancy.append(len(waiting))
        if len(waiting) < limit:
            waiting.append(tx(size))
        else:
            dropped.add(key)
        if waiting and free_at <= t:
            free_at = t + waiting.popleft()
    return dropped


def acked_until(path: str) -> tuple[np.ndarray, np.ndarray]:
    """(arrival times in ns, the highest sequence number covered so far: cumulative ACK plus the
    SACKed bytes above it) of the ACKs in ``path`` (a capture at the sender: both directions) for
    its busiest flow."""
    rows = tshark_rows(path, ["frame.time_epoch", "tcp.srcport", "tcp.len", "tcp.ack", "tcp.options.sack_le", "tcp.options.sack_re"], "tcp")
    port = data_port(rows, 1, 2)
    t, covered = [], []
    for r in rows:
        if r[1] == port or not r[3]:
            continue
        ack = int(r[3])
        blocks = zip(map(int, r[4].split(",")), map(int, r[5].split(","))) if r[4] and r[5] else ()
        t.append(epoch_ns(r[0]))
        covered.append(ack + sum(re - le for le, re in blocks if le >= ack))
    if not t:
        raise SystemExit(f"loss_split: '{path}' holds no ACKs: --onsets needs a capture of both directions at the sender")
    return np.array(t, dtype=np.int64), np.maximum.accumulate(np.array(covered, dtype=np.int64))


def onsets(t: np.ndarray, seq: np.ndarray, drops: set[int], ack_t: np.ndarray, covered: np.ndarray,
           rtt_ns: int) -> list[tuple[int, int, bool, int]]:
    """A flow's loss onsets: for each burst holding its first drop after more than ``rtt_ns``
    without one, and no retransmission, (the burst's time, its size less the segments the flow's
    ACKs freed since its previous burst, whether the first drop is its last segment, its drops)."""
    bounds = burst_bounds(t).tolist()
    seen: set[int] = set()
    out, before, last_drop = [], None, None
    for a, b in zip(bounds[:-1], bounds[1:]):
        k = int(np.searchsorted(ack_t, t[a], side="right")) - 1
        now = int(covered[k]) if k >= 0 else 0
        freed = None if before is None else round((now - before) / MSS)
        before = now
        sent = seq[a:b].tolist()
        retransmits = any(s in seen for s in sent)
        seen.update(sent)
        lost = [i for i in range(a, b) if i in drops]
        if not lost:
            continue
        onset = last_drop is None or t[a] - last_drop > rtt_ns
        last_drop = int(t[a])
        if onset and not retransmits and freed is not None:
            out.append((int(t[a]), (b - a) - freed, lost[0] == b - 1, len(lost)))
    return out


def silence_ends(times: list[np.ndarray]) -> np.ndarray:
    """The ends of the gaps over SILENCE_NS in both senders' data together."""
    both = np.sort(np.concatenate(times))
    gaps = np.nonzero(np.diff(both) > SILENCE_NS)[0]
    return both[gaps + 1]


def onset_line(f: int, found: list[tuple[int, int, bool, int]], quiet_ends: np.ndarray) -> str:
    """The --onsets line of flow ``f``: its onsets (from ``onsets``), those within SILENCE_NS after
    one of ``quiet_ends`` counted apart, the rest summed up."""
    def after_silence(at: int) -> bool:
        k = int(np.searchsorted(quiet_ends, at, side="right")) - 1
        return k >= 0 and at - int(quiet_ends[k]) < SILENCE_NS
    rest = [o for o in found if not after_silence(o[0])]
    n = len(rest)
    if not n:
        return f"onsets flow{f}: {len(found)}, all after a silence of both senders"
    added = Counter(min(o[1], 2) for o in rest)

    def share(k: int) -> str:
        return f"{added[k]} ({added[k] / n:.0%})"
    return (f"onsets flow{f}: {len(found)} ({len(found) - n} after a silence of both senders over {SILENCE_NS // 1_000_000} ms); "
            f"of the other {n} the burst added 0 segments over those its ACKs freed in {share(0)}, 1 in {share(1)}, "
            f"2 or more in {share(2)}, fewer in {sum(v for k, v in added.items() if k < 0)}; "
            f"the drop was the burst's last segment in {sum(o[2] for o in rest) / n:.0%}; "
            f"{np.mean([o[3] for o in rest]):.2f} drops per onset burst")


def _arg(parse):
    """An argparse type from a tcplab unit parser: its message names the value and what is allowed."""
    def read(text: str):
        try:
            return parse(text)
        except UnitError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return read


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("flow1")
    p.add_argument("flow2")
    p.add_argument("--rtt", required=True, type=_arg(Time.parse), help="base RTT, e.g. 25ms (groups drops into episodes)")
    p.add_argument("--limit", required=True, type=int, help="the bottleneck's drop-tail limit in packets")
    p.add_argument("--rate", default="100Mbps", type=_arg(Rate.parse), help="bottleneck rate (default 100Mbps)")
    p.add_argument("--initial-queue", type=int, default=0, metavar="PKTS",
                   help="packets already queued at the first packet (default 0: capture from the start of the run)")
    p.add_argument("--window", type=_arg(Window.parse), help="START:STOP after the first packet of either file, e.g. 40s:100s")
    p.add_argument("--list-episodes", action="store_true", help="also print every loss episode: its start and each flow's drops")
    p.add_argument("--acks", action="store_true",
                   help="also print each flow's share of data segments with PSH and how many segments its pure ACKs acknowledge "
                        "(the files must hold both directions)")
    p.add_argument("--onsets", action="store_true",
                   help="also print what each flow's loss onsets look like: what the burst that met the full queue added "
                        "over the segments its ACKs freed, where its drop fell, and whether a silence of both senders "
                        "came before (the files must hold both directions)")
    a = p.parse_args(argv)
    if a.limit < 1:
        p.error(f"--limit: {a.limit} must be at least 1 packet")
    if not 0 <= a.initial_queue <= a.limit:
        p.error(f"--initial-queue: {a.initial_queue} must be within 0..{a.limit} (the limit)")
    if shutil.which("tshark") is None:
        raise SystemExit("loss_split: tshark is not installed (apt-get install -y tshark)")
    whole = {1: load(a.flow1), 2: load(a.flow2)}
    t0 = min(whole[1][0][0], whole[2][0][0])
    lo, hi = (a.window.start.ns, a.window.stop.ns if a.window.stop else None) if a.window else (0, None)
    # The replay runs over everything (the queue's state carries over); the counts are the window's.
    arrivals = sorted((int(t), (f, i), MTU) for f, (ts, _) in whole.items() for i, t in enumerate(ts.tolist()))
    got_all = replay(arrivals, a.limit, a.rate.bps, a.initial_queue)
    inferred_all = {f: inferred_drops(seq) for f, (_, seq) in whole.items()}
    flows, drops, got = {}, {}, set()
    for f, (t, seq) in whole.items():
        keep = (t - t0 >= lo) & ((t - t0 < hi) if hi is not None else True)
        index = np.nonzero(keep)[0]
        first = int(index[0]) if len(index) else 0
        flows[f] = (t[keep], seq[keep])
        inside = set(index.tolist())
        drops[f] = {i - first for i in inferred_all[f].tolist() if i in inside}
        got |= {(f, i - first) for (g, i) in got_all if g == f and i in inside}
    rtt_ns = a.rtt.ns
    for f, (t, seq) in flows.items():
        b = burst_sizes(t)
        hist = " ".join(f"{k}:{(b == k).mean():.2f}" for k in range(1, 11)) + f" >10:{(b > 10).mean():.2f}"
        print(f"flow{f}: {len(t)} data segments, {len(b)} bursts, mean {b.mean():.2f} segments; sizes {hist}; drops {len(drops[f])}")
    if a.acks:
        for f, path in ((1, a.flow1), (2, a.flow2)):
            sizes, pushed, one_at_push = acks_and_pushes(path)
            n = sum(sizes.values()) or 1
            hist = " ".join(f"{k}:{v / n:.2f}" for k, v in sorted(sizes.items()) if v / n >= 0.005)
            print(f"flow{f}: PSH on {pushed:.1%} of data segments; segments per pure ACK {hist}; "
                  f"one-segment ACKs ending at a PSH segment {one_at_push:.0%}")
    eps = episodes([(int(flows[f][0][i]), f) for f in (1, 2) for i in drops[f]], rtt_ns)
    kinds = Counter("both" if c[1] and c[2] else "flow1 only" if c[1] else "flow2 only" for _, c in eps)
    per = np.mean([c[1] + c[2] for _, c in eps]) if eps else 0.0
    print(f"episodes: {len(eps)} ({kinds['both']} both flows, {kinds['flow1 only']} flow 1 only, {kinds['flow2 only']} flow 2 only); "
          f"{per:.2f} drops per episode")
    if a.list_episodes:
        for start, c in eps:
            print(f"  episode at {(start - t0) / 1e9:.3f} s: flow1 {c[1]}, flow2 {c[2]}")
    if a.onsets:
        quiet = silence_ends([flows[1][0], flows[2][0]])
        for f, path in ((1, a.flow1), (2, a.flow2)):
            ack_t, covered = acked_until(path)
            t, seq = flows[f]
            print(onset_line(f, onsets(t, seq, drops[f], ack_t, covered, rtt_ns), quiet))
    want = {(f, i) for f in (1, 2) for i in drops[f]}
    for f in (1, 2):
        g = {x for x in got if x[0] == f}
        w = {x for x in want if x[0] == f}
        print(f"replay flow{f}: {len(g)} drops, {len(g & w)} of the {len(w)} inferred")
    return 0


if __name__ == "__main__":
    sys.exit(main())
