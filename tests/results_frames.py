"""Results frames in the store's shape (``tcplab.analysis.Frames``), built from real simulations.

A tiny sweep: a 10 Mb/s dumbbell for 20 s, flow 2 from 2 s, over RTT × buffer × replications, each
replication with its own seed, as the sweep runner would store it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pandas as pd

import tcplab
from tcplab.analysis import Frames

FLOW_COLUMNS = ["throughput_mbps", "share", "retrans_pkts", "sent_pkts", "dropped_pkts", "drop_rate", "rto_count", "recoveries", "owd_mean_ms", "owd_p99_ms"]
INTERVAL_COLUMNS = ["t_s", "goodput_bytes", "throughput_mbps", "cwnd_bytes", "srtt_ns", "retrans_pkts", "sent_pkts", "dropped_pkts"]


def add_run(tables: dict[str, list[pd.DataFrame]], run: dict, scenario: tcplab.Scenario, seed: int) -> None:
    """Simulate ``scenario`` with ``seed`` and append its rows (``run`` holds the runs columns)."""
    result = tcplab.simulate(scenario, seed=seed)
    summary = result.summary()
    run_id = run["run_id"]
    tables["runs"].append(pd.DataFrame([run]))
    flows = summary[FLOW_COLUMNS].copy()
    flows.insert(0, "run_id", run_id)
    flows.insert(1, "flow", range(len(summary)))
    flows.insert(2, "name", summary["flow"].to_numpy())
    flows.insert(3, "variant", summary["variant"].to_numpy())
    tables["flows"].append(flows)
    iv = result.intervals
    intervals = iv[["flow", *INTERVAL_COLUMNS]].copy()
    intervals.insert(0, "run_id", run_id)
    tables["intervals"].append(intervals)


def frames_of(tables: dict[str, list[pd.DataFrame]], params: dict | None = None) -> Frames:
    return Frames(*(pd.concat(tables[name], ignore_index=True) for name in ("runs", "flows", "intervals")), params=params or {})


def dumbbell_sweep(
    rtts: Sequence[str] = ("20ms", "80ms"),
    buffers: Sequence[str] = ("0.2bdp", "1bdp"),
    replications: int = 2,
    variants: tuple[str, str] = ("newreno", "reno"),
    experiment: str = "tiny",
    backend: str = "sim",
    seed0: int = 1,
    host_jitter: str = "1ms",
) -> Frames:
    """RTT × buffer × replications of a 10 Mb/s, 20 s dumbbell; flow 2 starts at 2 s. A per-packet
    host delay (``host_jitter``) makes replications with different seeds differ, as real hosts do."""
    tables: dict[str, list[pd.DataFrame]] = {"runs": [], "flows": [], "intervals": []}
    for n, (rtt, buffer, rep) in enumerate(itertools.product(rtts, buffers, range(replications))):
        scenario = tcplab.Scenario(
            name=experiment,
            duration="20s",
            host_jitter=host_jitter,
            topology=tcplab.Dumbbell(bottleneck="10Mbps", rtt=rtt, buffer=buffer),
            flows=[tcplab.TcpFlow(variant=variants[0]), tcplab.TcpFlow(variant=variants[1], start="2s")],
        )
        seed = seed0 + 1000 * rep + n
        run = {
            "run_id": f"{experiment}-{backend}-{n:03d}",
            "experiment": experiment,
            "replication": rep,
            "seed": seed,
            "backend": backend,
            "valid": True,
            "topology.rtt": rtt,
            "topology.buffer": buffer,
            "flow1": variants[0],
            "flow2": variants[1],
        }
        add_run(tables, run, scenario, seed)
    params = {"name": experiment, "duration": "20s", "host_jitter": host_jitter, "topology.kind": "dumbbell", "topology.bottleneck": "10Mbps",
              "flows": f"{variants[0]}, {variants[1]}@2s", "replications": replications}
    return frames_of(tables, params)


def cbr_sweep(rates: Sequence[str] = ("1Mbps", "4Mbps", "7Mbps", "9Mbps"), variants: Sequence[str] = ("tahoe", "newreno")) -> Frames:
    """002's experiment, short: a TCP flow against UDP CBR cross traffic on a 10 Mb/s, 10 ms chain,
    one run per variant and CBR rate (axis ``flows[1].rate``)."""
    links = [
        {"from": "n1", "to": "n2", "rate": "10Mbps", "delay": "10ms"},
        {"from": "n2", "to": "n1", "rate": "10Mbps", "delay": "10ms"},
        {"from": "n2", "to": "n3", "rate": "10Mbps", "delay": "10ms", "buffer": "20pkt"},
        {"from": "n3", "to": "n2", "rate": "10Mbps", "delay": "10ms"},
    ]
    tables: dict[str, list[pd.DataFrame]] = {"runs": [], "flows": [], "intervals": []}
    for n, (variant, rate) in enumerate(itertools.product(variants, rates)):
        scenario = tcplab.Scenario.model_validate(
            {
                "name": "cbr",
                "duration": "20s",
                "topology": {"kind": "graph", "nodes": ["n1", "n2", "n3"], "links": links},
                "flows": [{"variant": variant, "src": "n1", "dst": "n3"}, {"kind": "cbr", "src": "n2", "dst": "n3", "rate": rate}],
            }
        )
        run = {"run_id": f"cbr-{n:03d}", "experiment": "cbr", "replication": 0, "seed": 1, "backend": "sim", "valid": True, "flows[0].variant": variant, "flows[1].rate": rate}
        add_run(tables, run, scenario, 1)
    return frames_of(tables)
