"""How long the hosts along a TCP flow's loop hold its packets, from captures with one clock.

    python scripts/loop_holds.py ack CAPTURE [CAPTURE ...]      # the receiver's ACK holds
    python scripts/loop_holds.py react CAPTURE [CAPTURE ...]    # the sender's answer to an ACK
    python scripts/loop_holds.py path UPSTREAM DOWNSTREAM       # the ACKs' path between two points

``ack``: a capture that sees the data reaching a receiver and its ACKs leaving (on the receiver's
interface, or on the router's end of its veth, where the veth and the router's reading count
too). Each ACK that moves the cumulative ACK on is timed from the arrival of the segment whose
end it acknowledges. ACKs held longer than ``--timer`` (5 ms) are counted apart: the delayed-ACK
timer sent those, not a held stack.

``react``: a capture that sees a sender's ACKs arrive and its data leave. Each ACK followed by
data before the next ACK is timed to that data's first segment; an ACK that opened no room is
skipped.

``path``: the ACKs of the flow seen at two capture points (matched by source, ACK number and
TSval, first sight at each), e.g. the router's end of the receiver's veth and of the sender's:
the delay of each beyond the smallest, which takes out the path's fixed delay.

Each prints the count, percentiles (µs) and the share of holds over 100, 200, 500 and 1000 µs:
the tail the simulator draws as ``host_stall`` (docs/validation.md, "The loop's holds,
measured"). The flow is the capture's busiest data connection; tshark reads the files.

    python scripts/loop_holds.py table --ack R ... --react S ... [--path UP DOWN ...]

``table``: the scenario lines ``host_data_holds`` and ``host_ack_holds`` for the simulator. A data
send is held as long as a sender's answer (``react``) plus an ACK's path (``path``, when given);
an ACK send as long as a receiver's ACK hold (``ack``) plus an ACK's path, each draw independent,
every capture weighing the same. The tables are the quantiles of those sums up to their
``--body`` percentile (99), at ``--points`` evenly spaced probabilities (21); the rarer, longer
holds are ``host_stall``'s. It first prints each capture's summary as a comment line (a
``path``'s under its downstream capture).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections import Counter

import numpy as np

from loss_split import epoch_ns, tshark_rows

FIELDS = ["frame.time_epoch", "ip.src", "ip.dst", "tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.ack_raw", "tcp.len", "tcp.options.timestamp.tsval"]
PERCENTILES = (10, 50, 90, 99, 99.9)
TAILS_US = (100, 200, 500, 1000)

Row = tuple[int, tuple[str, str, str, str], int, int, int, str]


def packets(path: str) -> tuple[list[Row], tuple[str, str, str, str]]:
    """(time ns, (src, dst, sport, dport), raw seq, raw ack, payload bytes, TSval) of every TCP
    segment in ``path``, and the 4-tuple of its busiest data connection."""
    rows = [
        (epoch_ns(t), (src, dst, sp, dp), int(seq or 0), int(ack or 0), int(ln or 0), tsval)
        for t, src, dst, sp, dp, seq, ack, ln, tsval in tshark_rows(path, FIELDS, "tcp", tool="loop_holds")
    ]
    data = Counter(r[1] for r in rows if r[4] > 0)
    if not data:
        raise SystemExit(f"loop_holds: '{path}' holds no TCP data segments")
    return rows, data.most_common(1)[0][0]


def reverse(conn: tuple[str, str, str, str]) -> tuple[str, str, str, str]:
    return (conn[1], conn[0], conn[3], conn[2])


def ack_holds(path: str, timer_ns: int) -> tuple[np.ndarray, int]:
    """The receiver's holds (ns) and how many ACKs came later than ``timer_ns``."""
    rows, data = packets(path)
    acks = reverse(data)
    arrived: dict[int, int] = {}
    holds, timed, last = [], 0, None
    for t, conn, seq, ack, length, _ in rows:
        if conn == data and length > 0:
            arrived[(seq + length) & 0xFFFFFFFF] = t
        elif conn == acks and length == 0:
            if ack != last and ack in arrived:
                hold = t - arrived[ack]
                if hold > timer_ns:
                    timed += 1
                else:
                    holds.append(hold)
            last = ack
    return np.asarray(holds, dtype=np.int64), timed


def reactions(path: str) -> np.ndarray:
    """Time (ns) from each ACK that the sender answered with data to that data."""
    rows, data = packets(path)
    acks = reverse(data)
    pending, out = None, []
    for t, conn, _, _, length, _ in rows:
        if conn == acks and length == 0:
            pending = t
        elif conn == data and length > 0 and pending is not None:
            out.append(t - pending)
            pending = None
    return np.asarray(out, dtype=np.int64)


def ack_path(upstream: str, downstream: str) -> np.ndarray:
    """Each ACK's delay from ``upstream`` to ``downstream`` beyond the smallest (ns)."""
    def first_sight(path: str) -> dict[tuple, int]:
        rows, data = packets(path)
        acks = reverse(data)
        seen: dict[tuple, int] = {}
        for t, conn, _, ack, length, tsval in rows:
            if conn[:2] == acks[:2] and length == 0:
                seen.setdefault((conn[0], ack, tsval), t)
        return seen

    up, down = first_sight(upstream), first_sight(downstream)
    d = np.asarray([down[k] - up[k] for k in up if k in down], dtype=np.int64)
    if len(d) == 0:
        raise SystemExit(f"loop_holds: no ACK of '{upstream}' is in '{downstream}'")
    return d - d.min()


def summary(label: str, holds_ns: np.ndarray) -> str:
    if len(holds_ns) == 0:
        return f"{label}: no holds"
    us = holds_ns / 1000.0
    pct = " ".join(f"p{p:g} {v:.1f}" for p, v in zip(PERCENTILES, np.percentile(us, PERCENTILES)))
    tails = " ".join(f">{x} {(us > x).mean() * 100:.3f}%" for x in TAILS_US)
    return f"{label}: {len(us)} holds, µs: {pct} max {us.max():.1f} mean {us.mean():.1f}; {tails}"


def pooled(samples: list[np.ndarray], n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws from the samples together, each sample weighing the same."""
    return np.concatenate([rng.choice(s, n // len(samples)) for s in samples])


def holds_tables(acks: list[np.ndarray], reacts: list[np.ndarray], paths: list[np.ndarray], points: int, body: float) -> tuple[np.ndarray, np.ndarray]:
    """(data sends' table, ACK sends' table), ns: see ``table`` above."""
    rng = np.random.default_rng(0)
    n = 400_000
    path = pooled(paths, n, rng) if paths else np.zeros(n, dtype=np.int64)
    data = pooled(reacts, n, rng) + rng.permutation(path)
    ack = pooled(acks, n, rng) + rng.permutation(path)
    probs = np.linspace(0.0, body / 100.0, points)
    return np.quantile(data, probs), np.quantile(ack, probs)


def toml_list(name: str, holds_ns: np.ndarray) -> str:
    return f"{name} = [" + ", ".join(f'"{h / 1000:.1f}us"' for h in holds_ns) + "]"


def table(a: argparse.Namespace, p: argparse.ArgumentParser) -> int:
    if a.captures or not a.ack or not a.react:
        p.error("table takes --ack CAPTURE ... and --react CAPTURE ... (and --path UPSTREAM DOWNSTREAM, repeated), no other captures")
    if not 2 <= a.points <= 1000 or not 50 <= a.body <= 100:
        p.error(f"--points {a.points} --body {a.body:g}: expected 2-1000 points and a body percentile of 50-100")
    timer_ns = int(a.timer * 1e6)
    acks = [ack_holds(path, timer_ns)[0] for path in a.ack]
    reacts = [reactions(path) for path in a.react]
    paths = [ack_path(up, down) for up, down in a.path or []]
    for name, samples in (("--ack", acks), ("--react", reacts), ("--path", paths)):
        if any(len(s) == 0 for s in samples):
            p.exit(1, f"loop_holds: a {name} capture gave no holds\n")
    for name, captures, samples in (("ack", a.ack, acks), ("react", a.react, reacts), ("path", [down for _, down in a.path or []], paths)):
        for capture, holds in zip(captures, samples):
            print("# " + summary(f"{name} {capture}", holds))
    data, ack = holds_tables(acks, reacts, paths, a.points, a.body)
    n_acks, n_reacts, n_paths = (sum(len(s) for s in samples) for samples in (acks, reacts, paths))
    print(
        f"# {n_acks} ACK holds ({len(acks)} captures), {n_reacts} answers ({len(reacts)}), "
        f"{n_paths} ACK paths ({len(paths)}); quantiles 0-{a.body:g}th percentile at {a.points} points"
    )
    print(toml_list("host_data_holds", data))
    print(toml_list("host_ack_holds", ack))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["ack", "react", "path", "table"])
    p.add_argument("captures", nargs="*")
    p.add_argument("--timer", type=float, default=5.0, metavar="MS", help="ACKs held longer were sent by a timer (ack and table modes; default 5)")
    p.add_argument("--ack", nargs="+", action="extend", metavar="CAPTURE", help="table: receivers' captures (their ACK holds)")
    p.add_argument("--react", nargs="+", action="extend", metavar="CAPTURE", help="table: senders' captures (their answers)")
    p.add_argument("--path", nargs=2, action="append", metavar=("UPSTREAM", "DOWNSTREAM"), help="table: an ACK path's two captures (repeat for more)")
    p.add_argument("--points", type=int, default=21, help="table: quantiles per table (default 21)")
    p.add_argument("--body", type=float, default=99.0, help="table: percentile the tables end at (default 99)")
    a = p.parse_args(argv)
    if shutil.which("tshark") is None:
        p.exit(2, "loop_holds: tshark is not installed (Debian: apt-get install tshark; `make deps` installs it)\n")
    if a.mode == "table":
        return table(a, p)
    if not a.captures:
        p.error(f"{a.mode} takes captures")
    if a.mode == "path":
        if len(a.captures) != 2:
            p.error("path takes two captures: UPSTREAM DOWNSTREAM")
        print(summary(f"ACKs {a.captures[0]} -> {a.captures[1]}", ack_path(*a.captures)))
        return 0
    for path in a.captures:
        if a.mode == "ack":
            holds, timed = ack_holds(path, int(a.timer * 1e6))
            print(summary(f"{path} ACKs", holds) + f"; {timed} later than {a.timer:g} ms")
        else:
            print(summary(f"{path} answers", reactions(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
