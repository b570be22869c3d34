"""How one cell of an experiment moves when one flow's round trip is made a few microseconds longer
than the other's, or flow 2 starts a little later: the drop-tail phase effect. For each offset d (µs), flow 1's two access links
each get d/4 more one-way delay (d > 0: flow 1's base RTT is d longer than flow 2's) or flow 2's
get −d/4 (d < 0), and every replication of the cell is simulated; the script prints each flow's
mean and median throughput over the experiment's window per offset (docs/validation.md,
"400 ms / 0.2 BDP: a phase effect"):

    python scripts/rtt_offset_scan.py experiments/validation-400.toml --replications 40 --seed 1 \\
        --offsets=-400:400:40
    python scripts/rtt_offset_scan.py experiments/validation.toml --cell flow2=cubic \\
        --cell topology.rtt=400ms --cell topology.buffer=0.2bdp --offsets=-80:80:40 --host-jitter 30us
    python scripts/rtt_offset_scan.py experiments/validation-400.toml --replications 40 --seed 1 \\
        --offsets=0:0:1 --host-jitter 100us --each

``--each`` also prints every run's flow 1 throughput, sorted: the levels a drop-tail lottery
lands on.

``--shift start`` moves flow 2's start instead: each offset d (µs, d ≥ 0) starts flow 2 d later
than the scenario says, with no start jitter, so the scan walks flow 2's arrival across flow 1's
state (its sawtooth, its bursts). A cell decided by a few overflows gives a different flow 1
throughput at different offsets; the mean over offsets spread evenly over a round trip or more is
the cell's value with that phase averaged out (docs/validation.md, "Where flow 2 starts"):

    python scripts/rtt_offset_scan.py experiments/validation.toml --cell flow2=cubic \\
        --cell topology.rtt=200ms --cell topology.buffer=1.0bdp --shift start \\
        --offsets=0:400000:10000 --replications 1 --each

Two-flow dumbbell experiments only (an RTT offset goes on the flows' own access links).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import statistics
import sys
from typing import Any

from tcplab import _core
from tcplab.errors import ResultsError, TcplabError
from tcplab.experiment import Run, load_experiment
from tcplab.result import Result
from tcplab.units import Time, UnitError


def offset_spec(spec: dict[str, Any], offset_us: int) -> dict[str, Any]:
    """``spec`` (an engine spec of a two-flow dumbbell) with flow 1's base RTT ``offset_us`` longer
    than flow 2's (shorter when negative): the two access links of the flow whose round trip
    grows each get a quarter of it as one-way delay, since a round trip crosses four of them."""
    out = copy.deepcopy(spec)
    flow = 0 if offset_us > 0 else 1
    pair = out["flows"][flow]["src"]  # sender i of a dumbbell is node i, on pair i
    out["topology"]["access_delay_ns"][pair] += abs(offset_us) * 1000 // 4
    return out


def start_spec(spec: dict[str, Any], offset_us: int) -> dict[str, Any]:
    """``spec`` with flow 2 starting ``offset_us`` later than it says and no start jitter."""
    out = copy.deepcopy(spec)
    out["start_jitter_ns"] = 0
    out["flows"][1]["start_ns"] += offset_us * 1000
    return out


SHIFTS = {"rtt": offset_spec, "start": start_spec}


def throughputs(run: Run, spec: dict[str, Any]) -> list[float]:
    """Each flow's mean throughput (Mb/s) over the scenario's window, simulating ``spec``."""
    result = Result.from_engine(run.scenario, _core.simulate(json.dumps(spec)))
    return result.summary()["throughput_mbps"].tolist()


def scan(runs: list[Run], offsets: list[int], host_jitter: Time | None = None, shift: str = "rtt") -> list[tuple[int, list[list[float]]]]:
    """For each offset, every run's per-flow throughputs; ``shift`` says what the offset moves
    (``SHIFTS``: flow 1's round trip against flow 2's, or flow 2's start)."""
    apply = SHIFTS[shift]
    specs = [run.scenario.to_engine_spec() for run in runs]
    if host_jitter is not None:
        for spec in specs:
            spec["host_jitter_ns"] = host_jitter.ns
    return [(d, [throughputs(run, apply(spec, d)) for run, spec in zip(runs, specs)]) for d in offsets]


def _means(per_run: list[list[float]]) -> str:
    """Each flow's mean and median throughput over ``per_run`` (runs × flows)."""
    return "  ".join(
        f"flow{f + 1} mean {statistics.mean(x[f] for x in per_run):6.2f} median {statistics.median(x[f] for x in per_run):6.2f}"
        for f in range(2)
    )


def _cell(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
        raise argparse.ArgumentTypeError(f"{text!r}: expected AXIS=VALUE, e.g. topology.rtt=400ms")
    return key, value


def _offsets(text: str) -> list[int]:
    try:
        start, stop, step = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected START:STOP:STEP in whole microseconds, e.g. -400:400:40") from None
    if step <= 0 or stop < start:
        raise argparse.ArgumentTypeError(f"{text!r}: expected STOP >= START and a positive STEP")
    return list(range(start, stop + 1, step))


def _time(text: str) -> Time:
    try:
        return Time.parse(text)
    except UnitError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("experiment", help="an experiment file (a two-flow dumbbell)")
    p.add_argument("--cell", type=_cell, action="append", default=[], metavar="AXIS=VALUE",
                   help="keep the runs whose AXIS has VALUE (repeatable); the runs kept must be one cell")
    p.add_argument("--offsets", type=_offsets, default=_offsets("-400:400:40"), metavar="START:STOP:STEP",
                   help="flow 1's RTT minus flow 2's, µs (default -400:400:40); with --shift start, flow 2's delay, µs")
    p.add_argument("--shift", choices=sorted(SHIFTS), default="rtt",
                   help="what the offsets move: flow 1's round trip against flow 2's (rtt, the default) or flow 2's start")
    p.add_argument("--replications", type=int, metavar="N", help="replications (default: the file's)")
    p.add_argument("--seed", type=int, help="the experiment's seed (default: the file's)")
    p.add_argument("--host-jitter", type=_time, metavar="TIME", help="the hosts' processing jitter (default: the file's)")
    p.add_argument("--each", action="store_true", help="also print every run's flow 1 throughput, sorted")
    a = p.parse_args(argv)
    if a.replications is not None and a.replications < 1:
        p.error(f"--replications: {a.replications} must be at least 1")
    if a.shift == "start" and a.offsets[0] < 0:
        p.error(f"--offsets: {a.offsets[0]} µs: with --shift start the offsets delay flow 2's start and must be 0 or more")
    try:
        exp = load_experiment(a.experiment)
        changes = {k: v for k, v in (("replications", a.replications), ("seed", a.seed)) if v is not None}
        runs = dataclasses.replace(exp, **changes).runs("sim")
        axes = exp.axis_keys[:-1]  # without replication
        for key, value in a.cell:
            if key not in axes:
                raise ResultsError("--cell", f"{key}={value}", f"expected an axis of {a.experiment} ({', '.join(axes)}) and one of its values")
            runs = [r for r in runs if str(r.point[key]) == value]
        cells = {tuple((k, str(v)) for k, v in r.point.items() if k != "replication") for r in runs}
        if len(cells) != 1:
            shown = " ".join(f"{k}={v}" for k, v in a.cell) or "(none)"
            raise ResultsError("--cell", shown, f"expected options that select one cell of {a.experiment}; they select {len(cells)}")
        spec = runs[0].scenario.to_engine_spec()
        if spec["topology"].get("kind") != "dumbbell" or len(spec["flows"]) != 2:
            raise ResultsError("experiment", a.experiment, "expected a dumbbell with two flows")
        results = scan(runs, a.offsets, a.host_jitter, a.shift)
    except TcplabError as e:
        print(f"rtt_offset_scan: error: {e}", file=sys.stderr)
        return 2
    what = "flow 1's RTT minus flow 2's" if a.shift == "rtt" else "flow 2's start delayed by"
    print(f"{a.experiment}: {dict(next(iter(cells)))}, {len(runs)} replications; {what}")
    for d, per_run in results:
        print(f"{d:+5d} us  {_means(per_run)}  Mb/s")
        if a.each:
            print("         flow1 each: " + " ".join(f"{x:.2f}" for x in sorted(run[0] for run in per_run)))
    if a.shift == "start" and len(results) > 1:  # the phase-averaged value
        print(f"{'all':>5s} {len(results)} offsets  {_means([run for _, per_run in results for run in per_run])}  Mb/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
