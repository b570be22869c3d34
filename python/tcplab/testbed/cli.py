"""``tcplab testbed calibrate | run | clean`` (parsed in :mod:`tcplab.cli`).

Exit status: 0 on success; 1 when a calibration is off, a run is invalid (router lateness or RTT
off; the results are still printed and written), a tool fails, or root or a tool is missing; 2 for
bad input; 130 on Ctrl-C (after removing the testbed).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

from ..errors import ScenarioError, TcplabError
from ..units import Rate, Time, UnitError
from . import experiment, tools

# How a run the testbed judges invalid is announced (scripts/loop_captures.py looks for it).
INVALID = "testbed run INVALID"


def _quantity(parse: Callable[[str], Any], flag: str, text: str, example: str) -> Any:
    try:
        value = parse(text)
    except UnitError as e:
        raise ScenarioError(flag, text, f"expected {e.allowed}") from None
    return value


def _stalls(direction: dict[str, Any]) -> str:
    """How often the router stalled past its limit, and for how long."""
    s = direction["stalls"]
    if not s["count"]:
        return "no stalls"
    return f"{s['count']} stall{'s' if s['count'] > 1 else ''} over {direction['stall_limit_ns'] / 1e6:g} ms ({s['total_ns'] / 1e6:.1f} ms in all, longest {s['max_ns'] / 1e6:.1f} ms)"


def _calibrate(args: argparse.Namespace) -> int:
    rtt = _quantity(Time.parse, "--rtt", args.rtt, "50ms")
    rate = _quantity(Rate.parse, "--bottleneck", args.bottleneck, "100Mbps")
    if rtt.ns <= 0:
        raise ScenarioError("--rtt", args.rtt, "expected a positive time like '50ms'")
    if rate.bps <= 0:
        raise ScenarioError("--bottleneck", args.bottleneck, "expected a positive rate like '100Mbps'")
    if args.seconds < 2:
        raise ScenarioError("--seconds", args.seconds, "expected at least 2 (the first second is not counted)")
    if args.profile not in experiment.PROFILES:
        raise ScenarioError("--profile", args.profile, f"expected one of {', '.join(experiment.PROFILES)}")
    cal = experiment.calibrate(rtt.ns, rate.bps, udp_seconds=args.seconds, profile=args.profile, compensate=not args.uncompensated)
    d = cal.as_dict()
    rtt_mark = "ok" if cal.rtt_ok else "OFF"
    rate_mark = "ok" if cal.rate_ok else "OFF"
    if cal.uncorrected is not None:
        means = " ".join(f"{m:.3f}" for m in d["uncorrected_run_means_ms"])
        print(f"path      {cal.uncorrected.mean_ms:.3f} ms with the router at rtt/2 ({cal.uncorrected.count} pings, {1 / experiment.PING_INTERVAL_S:g} a second; "
              f"means of its {len(cal.uncorrected_runs)} runs {means}): overhead {cal.overhead_ns / 1e6:.3f} ms (their median's) taken out of the router's delay")  # fmt: skip
    print(f"ping RTT  {d['rtt_mean_ms']:.3f} ms (min {d['rtt_min_ms']:.3f}, max {d['rtt_max_ms']:.3f}; {d['pings']} pings, {1e3 / d['ping_interval_ms']:g} a second)  setting {d['rtt_setting_ms']:g} ms  "
          f"error {d['rtt_mean_ms'] - d['rtt_setting_ms']:+.3f} ms (limit ±{experiment.RTT_TOLERANCE_MS:g} ms)  {rtt_mark}")  # fmt: skip
    print(f"UDP rate  {d['udp_rate_bps'] / 1e6:.3f} Mb/s (IP bytes, offered 1.05x, {d['udp_lost']} lost)  bottleneck {rate.bps / 1e6:g} Mb/s  "
          f"error {cal.rate_error:+.2%} (limit ±{experiment.RATE_TOLERANCE:.0%})  {rate_mark}")  # fmt: skip
    for direction in cal.router.get("directions", []):
        late = direction["lateness"]
        print(f"router {direction['device']}: timer lateness p50 {late['p50_ns'] / 1e3:.1f} µs, p99 {late['p99_ns'] / 1e3:.1f} µs, "
              f"p99.9 {late['p999_ns'] / 1e3:.1f} µs, max {late['max_ns'] / 1e3:.1f} µs over {late['count']} packets; "
              f"SCHED_FIFO {'on' if direction['realtime'] else 'off'}; {_stalls(direction)}")  # fmt: skip
    worst = max((d["lateness"]["p999_ns"] for d in cal.router.get("directions", [])), default=0)
    if worst > experiment.LATENESS_LIMIT_NS:
        print(f"tcplab: warning: router lateness p99.9 {worst / 1e3:.0f} µs exceeds {experiment.LATENESS_LIMIT_NS / 1e3:.0f} µs: "
              "runs under this load would be marked invalid (other work on the machine delays the router)", file=sys.stderr)  # fmt: skip
    if not cal.ok:
        print("tcplab: calibration FAILED: " + "; ".join(cal.problems()), file=sys.stderr)
        return 1
    print("calibration ok")
    return 0


def _run(args: argparse.Namespace, outputs: Callable[[argparse.Namespace], list[Any]], print_table: Callable[[Any, float], None]) -> int:
    if args.profile not in experiment.PROFILES:
        raise ScenarioError("--profile", args.profile, f"expected one of {', '.join(experiment.PROFILES)}")
    tools.require()
    scenario = experiment.load(args.file)
    targets = outputs(args)
    started = time.perf_counter()
    result = experiment.run(scenario, seed=args.seed, profile=args.profile, router_pcap=args.router_pcap, compensate=not args.uncompensated)
    wall_s = time.perf_counter() - started
    result.summary()
    for fmt, path in targets:
        result.write(path, fmt)
    if not args.quiet:
        print_table(result, wall_s)
        cal = result.meta["calibration"]
        if cal.get("uncorrected_rtt_mean_ms") is not None:
            print(f"path: {cal['uncorrected_rtt_mean_ms']:.3f} ms with the router at rtt/2, overhead {cal['path_overhead_ms']:.3f} ms taken out; "
                  f"ping RTT {cal['rtt_mean_ms']:.3f} ms against the setting {cal['rtt_setting_ms']:g} ms")  # fmt: skip
        for direction in result.meta["router"]["directions"]:
            late = direction["lateness"]
            early = f" ({direction['early_drop_pkts']} early)" if direction.get("early_drop_pkts") else ""
            print(f"router {direction['device']}: lateness p50 {late['p50_ns'] / 1e3:.1f} µs, p99.9 {late['p999_ns'] / 1e3:.1f} µs, "
                  f"max {late['max_ns'] / 1e3:.1f} µs; drops {direction['dropped_pkts']}{early}, mean queue {direction['mean_pkts']:.1f} pkts; "
                  f"{_stalls(direction)}")  # fmt: skip
    for fmt, path in targets:
        print(f"wrote {path}", file=sys.stderr)
    if args.router_pcap:
        print(f"wrote {args.router_pcap}", file=sys.stderr)
    if not result.meta["valid"]:
        print(f"tcplab: {INVALID}: {result.meta['invalid_reason']}", file=sys.stderr)
        return 1
    return 0


def _clean(args: argparse.Namespace) -> int:
    tools.require(("ip",))
    try:
        removed = experiment.clean(force=args.force)
    except TcplabError as e:
        print(f"tcplab: {e}", file=sys.stderr)
        return 1
    print(f"removed {', '.join(removed)}" if removed else "nothing to remove")
    return 0


def testbed_command(args: argparse.Namespace, outputs: Callable[[argparse.Namespace], list[Any]], print_table: Callable[[Any, float], None]) -> int:
    """Run ``tcplab testbed ...``; tool and environment failures print one message and return 1."""
    try:
        if args.testbed_command == "calibrate":
            return _calibrate(args)
        if args.testbed_command == "run":
            return _run(args, outputs, print_table)
        return _clean(args)
    except (tools.MissingTool, tools.ToolError) as e:
        print(f"tcplab: {e}", file=sys.stderr)
        return 1
