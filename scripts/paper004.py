"""Paper 004's studies beyond Fig. 3 (experiments/paper004.toml): one TCP flow against n − 1 UDP
flows (§2.3, Fig. 4) and one flow across several congested links (§3, Fig. 5), through each
discipline, printed as tables and drawn as the paper's figures.

    python scripts/paper004.py                       # the paper's settings, 20-s runs, 3 seeds
    python scripts/paper004.py --quick --out figs/   # fewer points, for a look

Settings are the page's: 10 Mb/s links with 1 ms of delay, 1000-byte packets, 64-packet buffers,
RED and FRED thresholds 16 and 32, CSFQ's K and Kc 100 ms; TCP is Tahoe (the page's "TCP"). The
UDP flows send at twice their fair share. A flow's relative throughput is its throughput over its
fair share; for FRED the better of FRED and FREDL (`many_flows`), as the page reports it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

import tcplab
from tcplab.config import Scenario

QUEUES = ("droptail", "red", "fred", "drr", "csfq")
LINK = {"rate": "10Mbps", "delay": "1ms", "buffer": "64pkt"}


def _queue(kind: str, many_flows: bool = False) -> dict[str, Any]:
    """A link's discipline keys, with paper 004's parameters."""
    if kind == "red":
        return {"queue": "red", "red": {"min_thresh": 16, "max_thresh": 32, "byte_mode": False}}
    if kind == "fred":
        return {"queue": "fred", "fred": {"min_thresh": 16, "max_thresh": 32, "many_flows": many_flows}}
    if kind == "drr":
        return {"queue": "drr", "drr": {"quantum": "1000B"}}
    return {"queue": kind}


def _run(data: dict[str, Any], seed: int) -> tcplab.Result:
    data = {**data, "seed": seed, "tcp": {"mss": "948B"}}
    return tcplab.simulate(Scenario.model_validate(data))


def _best(kind: str, measure: Any) -> float:
    """``measure(many_flows)`` for a discipline; FRED's is the better of FRED and FREDL."""
    return max(measure(False), measure(True)) if kind == "fred" else measure(False)


def one_tcp_against_udp(kind: str, n: int, duration_s: int, seeds: int) -> float:
    """§2.3: a TCP flow and n − 1 UDP flows at twice the fair share 10/n Mb/s on one 10 Mb/s link:
    the TCP flow's throughput over the fair share, mean over ``seeds`` runs."""

    def measure(many_flows: bool) -> float:
        fair = 10.0 / n
        flows = [{"variant": "tahoe"}] + [{"kind": "cbr", "rate": f"{2 * fair:.6f}Mbps"} for _ in range(n - 1)]
        topology = {"bottleneck": "10Mbps", "rtt": "6ms", "access_rate": "10Mbps", "access_delay": "1ms", "buffer": "64pkt", **_queue(kind, many_flows)}
        data = {"name": f"tcp-vs-{n - 1}-udp", "duration": f"{duration_s}s", "window": f"{duration_s // 2}s:{duration_s}s", "topology": topology, "flows": flows}
        return float(np.mean([_run(data, seed).summary().throughput_mbps.iloc[0] / fair for seed in range(1, seeds + 1)]))

    return _best(kind, measure)


def across_links(kind: str, links: int, flow: str, duration_s: int, seeds: int) -> float:
    """§3: a flow (``"udp"`` at twice its fair share, or ``"tcp"``) across ``links`` congested
    links in a row, each shared with 10 UDP flows at twice the fair share 10/11 Mb/s: its
    throughput over that share, mean over ``seeds`` runs."""
    fair = 10.0 / 11

    def measure(many_flows: bool) -> float:
        routers = [f"r{i}" for i in range(links + 1)]
        nodes = [*routers, "src", "dst"]
        hop = [{"from": a, "to": b, **LINK, **_queue(kind, many_flows)} for a, b in zip(routers, routers[1:])]
        back = [{"from": b, "to": a, **LINK} for a, b in zip(routers, routers[1:])]
        edges = [("src", routers[0]), ("dst", routers[-1])]
        cross = []
        for k in range(1, links + 1):
            for j in range(10):
                s, d = f"s{k}_{j}", f"d{k}_{j}"
                nodes += [s, d]
                edges += [(s, routers[k - 1]), (d, routers[k])]
                cross.append({"kind": "cbr", "src": s, "dst": d, "rate": f"{2 * fair:.6f}Mbps"})
        access = [{"from": a, "to": b, **LINK} for x, y in edges for a, b in ((x, y), (y, x))]
        first = {"kind": "cbr", "rate": f"{2 * fair:.6f}Mbps"} if flow == "udp" else {"variant": "tahoe"}
        data = {
            "name": f"{flow}-across-{links}",
            "duration": f"{duration_s}s",
            "window": f"{duration_s // 2}s:{duration_s}s",
            "topology": {"kind": "graph", "nodes": nodes, "links": hop + back + access},
            "flows": [{**first, "src": "src", "dst": "dst"}, *cross],
        }
        return float(np.mean([_run(data, seed).summary().throughput_mbps.iloc[0] / fair for seed in range(1, seeds + 1)]))

    return _best(kind, measure)


def _figure(xs: list[int], curves: dict[str, list[float]], xlabel: str, title: str) -> Any:
    from tcplab import plots

    plt = plots._mpl()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for k, (kind, ys) in enumerate(curves.items()):
        colour, marker, dash = plots.STYLES[k % len(plots.STYLES)]
        ax.plot(xs, ys, color=colour, marker=marker, linestyle=dash, label=kind)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("throughput / fair share")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")
    ax.set_title(f"paper004: {title}")
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer points and one seed of 10 s")
    parser.add_argument("--seeds", type=int, default=3, help="runs per point (default 3)")
    parser.add_argument("--duration", type=int, default=20, help="seconds per run (default 20; the second half is measured)")
    parser.add_argument("--out", type=Path, help="write the figures (PNG and SVG) to this directory")
    args = parser.parse_args(argv)
    seeds, duration = (1, 10) if args.quick else (args.seeds, args.duration)
    counts = [2, 8, 16, 32] if args.quick else [2, 4, 8, 12, 16, 20, 22, 24, 28, 32]
    hops = [1, 3, 5] if args.quick else [1, 2, 3, 4, 5]
    studies = [
        ("one TCP flow against n - 1 UDP flows (§2.3, Fig. 4)", "flows n", counts, lambda q, x: one_tcp_against_udp(q, x, duration, seeds), "tcp-vs-udp"),
        ("a UDP flow across congested links (§3.1, Fig. 5a)", "congested links", hops, lambda q, x: across_links(q, x, "udp", duration, seeds), "udp-links"),
        ("a TCP flow across congested links (§3.2, Fig. 5b)", "congested links", hops, lambda q, x: across_links(q, x, "tcp", duration, seeds), "tcp-links"),
    ]
    for title, xlabel, xs, measure, name in studies:
        curves = {q: [measure(q, x) for x in xs] for q in QUEUES}
        print(f"\n{title}: throughput / fair share ({seeds} run(s) of {duration} s per point)")
        print(f"{xlabel:>16} " + " ".join(f"{q:>9}" for q in QUEUES))
        for i, x in enumerate(xs):
            print(f"{x:>16} " + " ".join(f"{curves[q][i]:>9.3f}" for q in QUEUES))
        if args.out:
            from tcplab import plots

            plots.save(_figure(xs, curves, xlabel, title), args.out, f"paper004-{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
