"""The ``tcplab`` command: a thin layer over the Python API.

::

    tcplab sim scenarios/reference.toml
    tcplab sim --rtt 100ms --bottleneck 100Mbps --buffer 0.2bdp \\
               --flow newreno --flow newreno@60s --duration 300s --csv out/run.csv
    tcplab table results.duckdb --metric jfi
    tcplab compare sim.duckdb testbed.duckdb --out figures/
    tcplab report results.duckdb --out report.html
    tcplab variants            # every variant name, what it is, its reference
    tcplab variants cubic      # one variant's parameters and Linux source file
    tcplab queues              # every queue discipline; tcplab queues fq_pie: its parameters
    tcplab run experiments/paper000-quick.toml --jobs 2
    tcplab export results/paper000-quick.duckdb --parquet out/

Exit status: 0 on success, 2 for bad input (a usage error or a scenario that cannot run: one line
naming the field, the value and what is allowed, and nothing written), 1 when the engine fails,
130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import variants
from .backends import BACKENDS
from .config import Scenario, read_toml, set_path
from .engine import engine_version, simulate
from .errors import MISSING, EngineError, ScenarioError, TcplabError
from .result import Result, intervals_path

__all__ = ["main", "build_parser"]

#: What ``tcplab sim`` runs without a FILE: the papers' reference dumbbell (flows from --flow).
DEFAULTS: dict[str, Any] = {
    "name": "sim",
    "duration": "300s",
    "topology": {"kind": "dumbbell", "bottleneck": "100Mbps", "rtt": "100ms", "buffer": "1bdp"},
}

# (flag, scenario path, argparse type, metavar, help)
_SCENARIO_FLAGS: list[tuple[str, str, Any, str, str]] = [
    ("--name", "name", str, "NAME", "label of the run"),
    ("--duration", "duration", str, "TIME", "simulated run length, e.g. 300s (default without FILE: 300s)"),
    ("--seed", "seed", int, "N", "master random seed (default 1)"),
    ("--interval", "interval", str, "TIME", "measurement interval (default 1s)"),
    ("--window", "window", str, "START:STOP", "measurement window, e.g. 120s:300s (default: 120 s to the end; runs under 300 s: their last 60%%)"),
    ("--start-jitter", "start_jitter", str, "TIME", "flows start uniformly in [start, start + jitter) (default 5ms)"),
    ("--host-jitter", "host_jitter", str, "TIME", "host processing delay, uniform in [0, jitter), one per send (a burst shares it; default 0ms)"),
    ("--host-stall", "host_stall", str, "TIME", "a host's rare stalls: a stalled send waits uniformly in [0, stall) (with --host-stall-probability)"),
    ("--host-stall-probability", "host_stall_probability", float, "P", "share of sends that stall (default none)"),
    ("--bottleneck", "topology.bottleneck", str, "RATE", "dumbbell bottleneck rate (default without FILE: 100Mbps)"),
    ("--rtt", "topology.rtt", str, "TIME", "dumbbell base RTT (default without FILE: 100ms)"),
    ("--buffer", "topology.buffer", str, "BUFFER", "bottleneck buffer: 834pkt, 1.2MB or 0.2bdp (default 1bdp)"),
    ("--queue", "topology.queue", str, "QUEUE", "bottleneck queue discipline: droptail, red, codel, pie, drr, fq_codel, fq_pie, fred, csfq, cake or dualpi2 (default droptail; their parameters: --set topology.red.KEY=VALUE, likewise topology.codel, .pie, .drr, .fq_codel, .fq_pie, .fred, .csfq, .cake, .dualpi2)"),
    ("--access-rate", "topology.access_rate", str, "RATE", "dumbbell access link rate (default 1Gbps)"),
    ("--access-delay", "topology.access_delay", str, "TIME", "dumbbell access link one-way delay (default 0ms)"),
    ("--loss", "topology.loss", float, "P", "random loss probability on the forward bottleneck (default 0)"),
]

#: Flags that take a value; a value that looks negative ("-5ms") is still their value.
_VALUE_FLAGS = {flag for flag, *_ in _SCENARIO_FLAGS} | {"--flow", "--set", "--csv", "--parquet", "--pcap", "--pcap-at", "--pcap-file"}

_FLOW = re.compile(r"^(?P<variant>[^@:]+)(?:@(?P<start>[^:]*)(?::(?P<stop>.*))?)?$")


class _Parser(argparse.ArgumentParser):
    """argparse with tcplab's error line (usage errors exit 2, as argparse does)."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"tcplab: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tcplab", description="How do congestion-control variants share a path?")
    parser.add_argument("--version", action="version", version=_version_text())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    sim = commands.add_parser(
        "sim",
        help="simulate a scenario and print per-flow throughput and Jain's index",
        description=(
            "Simulate a scenario (a TOML FILE, flags, or both: flags override the file) and print each "
            "flow's mean throughput over the measurement window and Jain's fairness index (JFI)."
        ),
    )
    sim.add_argument("file", nargs="?", metavar="FILE", help="scenario TOML file (see docs/scenario.md)")
    for flag, path, kind, metavar, text in _SCENARIO_FLAGS:
        sim.add_argument(flag, dest=path, type=kind, metavar=metavar, help=text)
    sim.add_argument(
        "--flow",
        action="append",
        default=[],
        metavar="VARIANT[@START[:STOP]]",
        help="a flow, e.g. newreno or newreno@60s or reno@10s:50s, or ccid2 for DCCP; repeat for more (replaces FILE's flows)",
    )
    sim.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="set any scenario field, e.g. --set tcp.rwnd=64KB --set 'flows[1].start=30s' (VALUE read as TOML, else text)",
    )
    sim.add_argument("--csv", metavar="FILE", help="write the per-flow summary to FILE and the per-interval series to <stem>.intervals.csv")
    sim.add_argument("--parquet", metavar="FILE", help="as --csv, in Parquet")
    sim.add_argument("--pcap", metavar="FLOW", help="write FLOW's packets (a flow name like flow1, or its 1-based index) as a pcap file (docs/pcap.md)")
    sim.add_argument(
        "--pcap-at",
        default="sender",
        metavar="POINT",
        help="where --pcap captures: sender (default: the sender's access link, both directions, as tcpdump on the sender), receiver, or a link id",
    )
    sim.add_argument("--pcap-file", metavar="PATH", help="the pcap file (default <scenario name>-<flow>.pcap)")
    sim.add_argument("-q", "--quiet", action="store_true", help="print no table")
    _add_analysis_commands(commands)

    listing = commands.add_parser(
        "variants",
        help="list the TCP variants, or one variant's parameters",
        description=(
            "Without NAME: every variant name with a one-line description and its reference. With NAME "
            "(a name or an alias): its congestion control's parameters (default, range, help) and Linux source file."
        ),
    )
    listing.add_argument("name", nargs="?", metavar="NAME", help="a variant or congestion-control name, e.g. reno or ctcp")
    queues = commands.add_parser(
        "queues",
        help="list the queue disciplines, or one discipline's parameters",
        description="Without NAME: every queue discipline (a scenario's topology.queue) with a one-line description and its documentation. "
        "With NAME: the keys of its [topology.NAME] table, their defaults and what they do.",
    )
    queues.add_argument("name", nargs="?", metavar="NAME", help="a queue discipline, e.g. fq_pie")
    schedule = commands.add_parser(
        "schedule",
        help="turn a Mahimahi link trace into a rate schedule to paste into a scenario",
        description="Print TRACE (a Mahimahi packet-delivery trace: one line per 1500-byte delivery opportunity, in ms, repeating "
        "with the period of its last line) as a scenario's bottleneck_schedule: the rate that carries each bin's opportunities, "
        "0 where a bin has none (docs/scenario.md, 'Rate schedules').",
    )
    schedule.add_argument("trace", metavar="TRACE", help="the trace file")
    schedule.add_argument("--bin", default="10ms", help="the width of a step, whole milliseconds (default 10ms)")
    schedule.add_argument("--duration", default="60s", help="how much of the (repeated) trace, a whole number of bins (default 60s)")
    schedule.add_argument("--key", default="bottleneck_schedule", help="the key to print (default bottleneck_schedule; a graph link's is rate_schedule)")
    _add_testbed(commands)

    run = commands.add_parser(
        "run",
        help="run an experiment's sweep into its results store (resumes where it stopped)",
        description=(
            "Expand an experiment file's grid (docs/experiments.md), run every run not yet in the store, "
            "and print mean (std) per cell. Re-running resumes: finished runs are skipped."
        ),
    )
    run.add_argument("file", metavar="FILE", help="experiment TOML file (see docs/experiments.md)")
    run.add_argument("--store", metavar="PATH", help="results store (DuckDB file); default results/<experiment name>.duckdb")
    run.add_argument("--jobs", type=int, metavar="N", help="local worker processes (default: all cores; 1 with --backend testbed)")
    run.add_argument("--backend", default="sim", choices=tuple(BACKENDS), help="what runs each scenario (default sim)")
    run.add_argument("--executor", default="local", choices=("local", "dask"), help="local process pool (default) or a Dask cluster")
    run.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://host:8786 (with --executor dask)")
    run.add_argument("--redo-invalid", action="store_true", help="run again the runs stored as invalid")
    run.add_argument("--profile", choices=("default", "tuned"), help="the testbed's stack profile (default: the file's 'profile', else default)")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no table")

    export = commands.add_parser("export", help="write every table of a results store to Parquet or CSV files")
    export.add_argument("store", metavar="STORE", help="results store (DuckDB file)")
    target = export.add_mutually_exclusive_group(required=True)
    target.add_argument("--parquet", metavar="DIR", help="write DIR/<table>.parquet")
    target.add_argument("--csv", metavar="DIR", help="write DIR/<table>.csv")
    return parser


def _add_analysis_commands(commands: Any) -> None:
    """``tcplab table | compare | report``: a results store in, tables, figures and HTML out."""
    table = commands.add_parser(
        "table",
        help="print a metric's mean (std) across replications for each grid cell",
        description="Print a metric across the replications of each grid cell of a results STORE: one row per value of "
        "--rows (default: the RTT), one column per value of the other axes, cells 'mean (std)', as the papers' tables.",
    )
    table.add_argument("store", metavar="STORE", help="results store file")
    table.add_argument("--metric", default="jfi", help="jfi (default), jt_mean, flowN_mbps, utilisation, drop_rate, queue_mean_ms … (a wrong name lists them)")
    table.add_argument("--rows", metavar="AXIS", help="the axis down the rows (default topology.rtt)")

    compare = commands.add_parser(
        "compare",
        help="compare two result sets on the same grid (D = S − T, W = |D| − 2·Tσ, Welch's t-test)",
        description="Compare the JFI of two results stores of the same grid: S (e.g. simulation) against T (e.g. testbed). "
        "Prints the mean |D| over the cells and the cells where the difference is significant (W >= 0).",
    )
    compare.add_argument("s_store", metavar="S", help="results store S")
    compare.add_argument("t_store", metavar="T", help="results store T (its replications give Tσ)")
    compare.add_argument("--metric", default="jfi", help="the per-run metric compared (default jfi)")
    compare.add_argument(
        "--more-s", metavar="STORE", action="append", default=[],
        help="add STORE's runs to S as more replications of S's cells (repeatable; a run already in S counts once)",
    )
    compare.add_argument(
        "--more-t", metavar="STORE", action="append", default=[],
        help="add STORE's runs to T as more replications of T's cells, e.g. extra testbed runs of a few cells (repeatable)",
    )
    compare.add_argument(
        "--partial", action="store_true",
        help="T covers part of S's grid, and its --more-t stores may add cells to it (a grid run in parts): "
        "compare the cells S and T both have",
    )
    compare.add_argument("--out", metavar="DIR", help="write the difference surface (difference.png, .svg) and difference.csv to DIR")

    report = commands.add_parser(
        "report",
        help="write a results store's self-contained interactive HTML report",
        description="Write the HTML report of a results STORE's experiment: parameters, tables and interactive figures. "
        "It opens offline: plotly.js is inlined.",
    )
    report.add_argument("store", metavar="STORE", help="results store file")
    report.add_argument("--out", metavar="FILE.html", help="output file, or a directory for EXPERIMENT.html (default EXPERIMENT.html)")
    report.add_argument("--figures", metavar="DIR", help="also write the static figures (PNG and SVG) to DIR")


def _add_testbed(commands: Any) -> None:
    """``tcplab testbed calibrate | run | clean``: the emulated testbed (root; iperf3, ping, ethtool)."""
    testbed = commands.add_parser(
        "testbed",
        help="run scenarios on the emulated testbed (real Linux TCP through the tcplab router; needs root)",
        description="The emulated testbed: network namespaces, iperf3 and the tcplab router (needs root, iperf3, ping, ethtool).",
    )
    sub = testbed.add_subparsers(dest="testbed_command", required=True, metavar="COMMAND", parser_class=_Parser)
    cal = sub.add_parser("calibrate", help="check ping RTT (within 1 ms) and UDP throughput (within 2%%) against the settings")
    cal.add_argument("--rtt", required=True, metavar="TIME", help="base RTT, e.g. 50ms")
    cal.add_argument("--bottleneck", required=True, metavar="RATE", help="bottleneck rate, e.g. 100Mbps")
    cal.add_argument("--seconds", type=int, default=5, metavar="N", help="UDP test length in seconds (default 5)")
    cal.add_argument("--profile", default="default", help="host stack profile: default or tuned (default: default)")
    uncompensated = "delay each direction by rtt/2 without taking the path's own overhead out first"
    cal.add_argument("--uncompensated", action="store_true", help=uncompensated)
    run = sub.add_parser("run", help="run a scenario file on the testbed and print the table 'tcplab sim' prints")
    run.add_argument("file", metavar="FILE", help="scenario TOML file (a dumbbell of TCP flows)")
    run.add_argument("--profile", default="default", help="host stack profile: default or tuned (default: default)")
    run.add_argument("--seed", type=int, metavar="N", help="seed (flow start jitter)")
    run.add_argument("--csv", metavar="FILE", help="write the per-flow summary to FILE and the per-interval series to <stem>.intervals.csv")
    run.add_argument("--parquet", metavar="FILE", help="as --csv, in Parquet")
    run.add_argument("--router-pcap", metavar="FILE", help="write what the bottleneck's queue receives (data toward the receivers), with the router's arrival times, as a pcap")
    run.add_argument("--uncompensated", action="store_true", help=uncompensated)
    run.add_argument("-q", "--quiet", action="store_true", help="print no table")
    clean = sub.add_parser("clean", help="remove what a killed testbed run left (tcplab- namespaces, their links and processes); refuses while a run is active")
    clean.add_argument("--force", action="store_true", help="remove the testbed even under an active run (that run is then recorded as invalid)")


def _version_text() -> str:
    from . import __version__

    engine = engine_version()
    return f"tcplab {__version__} (engine {engine if engine is not None else 'not built'})"


def _flow(text: str) -> dict[str, Any]:
    """``"newreno@60s:120s"`` → ``{"variant": "newreno", "start": "60s", "stop": "120s"}``."""
    m = _FLOW.match(text.strip())
    if m is None or (m.group("start") is not None and not m.group("start")):
        raise ScenarioError("--flow", text, "expected VARIANT[@START[:STOP]] like 'newreno@60s'")
    flow: dict[str, Any] = {"variant": m.group("variant").strip()}
    if m.group("start"):
        flow["start"] = m.group("start").strip()
    if m.group("stop"):
        flow["stop"] = m.group("stop").strip()
    return flow


def _value(text: str) -> Any:
    """A ``--set`` value: a TOML value (``0.01``, ``true``, ``[1, 2]``) or else the text itself."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def scenario_from_args(args: argparse.Namespace) -> Scenario:
    """The scenario of FILE (or :data:`DEFAULTS`) with the flags applied."""
    data = read_toml(args.file) if args.file else {**DEFAULTS, "topology": dict(DEFAULTS["topology"])}
    if args.file:
        data.setdefault("name", Path(args.file).stem)
    for _, path, *_ in _SCENARIO_FLAGS:
        value = getattr(args, path)
        if value is not None:
            set_path(data, path, value)
    if args.flow:
        data["flows"] = [_flow(text) for text in args.flow]
    elif not args.file:
        raise ScenarioError("--flow", MISSING, "expected at least one --flow VARIANT[@START[:STOP]] or a scenario FILE")
    for item in args.set:
        path, sep, value = item.partition("=")
        if not sep or not path.strip():
            raise ScenarioError("--set", item, "expected PATH=VALUE like 'tcp.rwnd=64KB'")
        set_path(data, path.strip(), _value(value.strip()))
    return Scenario.model_validate(data)


def _outputs(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """The requested output files, checked before anything runs."""
    outputs = []
    for fmt in ("csv", "parquet"):
        name = getattr(args, fmt)
        if name is None:
            continue
        path = Path(name)
        for target in (path, intervals_path(path)):
            if target.is_dir():
                raise ScenarioError(f"--{fmt}", name, "expected a file name, not a directory")
        if not path.parent.is_dir():
            raise ScenarioError(f"--{fmt}", name, f"expected a file in an existing directory ({path.parent} does not exist)")
        outputs.append((fmt, path))
    return outputs


def _pcap_request(args: argparse.Namespace, scenario: Scenario) -> tuple[Any, Path] | None:
    """``--pcap``'s capture point and file, checked before anything runs."""
    if args.pcap is None:
        if args.pcap_file is not None or args.pcap_at != "sender":
            raise ScenarioError("--pcap", MISSING, "expected a flow to capture with --pcap FLOW when --pcap-at or --pcap-file is given")
        return None
    from . import pcap

    flow = pcap.resolve_flow(scenario, args.pcap)
    point = pcap.capture_point(scenario, flow, args.pcap_at)
    path = Path(args.pcap_file or f"{scenario.name}-{scenario.flow_names[flow]}.pcap")
    if path.is_dir():
        raise ScenarioError("--pcap-file", str(path), "expected a file name, not a directory")
    if not path.parent.is_dir():
        raise ScenarioError("--pcap-file", str(path), f"expected a file in an existing directory ({path.parent} does not exist)")
    return point, path


def _print_table(result: Result, wall_s: float) -> None:
    from rich.console import Console
    from rich.table import Table

    summary = result.summary()
    start_s, stop_s = summary.attrs["window"]
    scenario = result.scenario
    table = Table(title=f"{scenario.name}: mean throughput over {start_s:g}–{stop_s:g} s", title_justify="left")
    # The share of packets sent that arrived CE-marked, when there are any (ECN through a
    # marking queue).
    marks = "marked_pkts" in summary.columns and bool((summary["marked_pkts"] > 0).any())
    columns = ["flow", "variant", "start", "Mb/s", "share", "retrans", "drops", "drop rate"] + (["marked"] if marks else [])
    for column in columns:
        table.add_column(column, justify="left" if column in ("flow", "variant") else "right")
    for flow, row in zip(scenario.flows, summary.itertuples(index=False)):
        cells = [
            row.flow,
            row.variant,
            str(flow.start),
            f"{row.throughput_mbps:.2f}",
            f"{row.share:.1%}" if row.share == row.share else "-",
            f"{row.retrans_pkts:.0f}",
            f"{row.dropped_pkts:.0f}",
            _percent(row.drop_rate),
        ]
        if marks:
            cells.append(_percent(row.mark_rate))
        table.add_row(*cells)
    console = Console()
    console.print(table)
    jfi = summary.attrs["jain"]
    mean_jt = result.jain_series().mean()
    console.print(f"JFI [bold]{jfi:.4f}[/]  (Jain's index of the mean throughputs)")
    console.print(f"mean J(t) {mean_jt:.4f}  (Jain's index per {scenario.interval} interval, averaged)")
    sim_s = scenario.duration.seconds
    if result.meta.get("backend") == "testbed":
        info = result.meta["backend_info"]
        console.print(f"[dim]{sim_s:g} s on the testbed (Linux {info['kernel']}, profile {info['profile']}) in {wall_s:.2f} s, seed {scenario.seed}[/]")
    else:
        console.print(f"[dim]{sim_s:g} simulated seconds in {wall_s:.2f} s, seed {scenario.seed}[/]")


def _sim(args: argparse.Namespace) -> int:
    scenario = scenario_from_args(args)
    outputs = _outputs(args)
    capture = _pcap_request(args, scenario)
    started = time.perf_counter()
    result = simulate(scenario, capture=capture[0].spec() if capture else None)
    wall_s = time.perf_counter() - started
    result.summary()  # a window that holds no interval is refused before anything is written
    for fmt, path in outputs:
        result.write(path, fmt)  # type: ignore[arg-type]
    if capture is not None:
        from .pcap import write_pcap

        point, pcap_path = capture
        assert result.capture is not None
        n = write_pcap(scenario, result.capture, point, pcap_path)
        print(f"wrote {pcap_path} ({n} packets of {scenario.flow_names[point.flow]} at {point.at})", file=sys.stderr)
    if not args.quiet:
        _print_table(result, wall_s)
    for fmt, path in outputs:
        print(f"wrote {path} and {intervals_path(path)}", file=sys.stderr)
    return 0


def _variants(args: argparse.Namespace) -> int:
    if args.name is None:
        _print_variants()
        return 0
    _print_variant(args.name)
    return 0


def _schedule(args: argparse.Namespace) -> int:
    from .traces import mahimahi_schedule, read_mahimahi
    from .units import Time, UnitError

    def time_ns(flag: str, text: str) -> int:
        try:
            return Time.parse(text).ns
        except UnitError:
            raise ScenarioError(flag, text, "expected a time like '10ms' or '60s'") from None

    bin_ns, duration_ns = time_ns("--bin", args.bin), time_ns("--duration", args.duration)
    s = mahimahi_schedule(read_mahimahi(Path(args.trace)), bin_ns, duration_ns)
    print(
        f"# {Time(s.duration_ns)} of {args.trace} (Mahimahi, period {s.period_ms} ms) in {Time(s.bin_ns)} bins: "
        f"mean {s.mean_bps / 1e6:.2f} Mb/s, {s.down_bins} of {s.bins} bins without a delivery opportunity (rate 0), {len(s.points)} steps"
    )
    print(s.toml(args.key), end="")
    return 0


def _queues(name: str | None) -> int:
    from .config import _QUEUE_TABLES, QUEUES

    if name is None:
        width = max(map(len, QUEUES))
        print("Queue disciplines (topology.queue; 'tcplab queues NAME' lists a discipline's parameters):")
        for kind, (about, doc) in QUEUES.items():
            print(f"  {kind:<{width}}  {about} ({doc})")
        return 0
    if name not in QUEUES:
        raise ScenarioError("queue", name, f"expected one of {', '.join(QUEUES)}")
    about, doc = QUEUES[name]
    print(f"{name}: {about} ({doc})")
    if name not in _QUEUE_TABLES:
        print("  parameters: none (the buffer's limit is topology.buffer)")
        return 0
    fields = _QUEUE_TABLES[name].model_fields
    print(f"  parameters ([topology.{name}] in a scenario, or {name} = {{...}} on a graph link):")
    defaults = {
        key: "unset" if field.default is None else str(field.default).lower() if isinstance(field.default, bool) else str(field.default)
        for key, field in fields.items()
    }
    width, dwidth = max(map(len, fields)), max(8, *map(len, defaults.values()))
    for key, field in fields.items():
        print(f"    {key:<{width}}  {defaults[key]:<{dwidth}} {field.description}")
    return 0


def _print_variants() -> None:
    rows = [(v.name, v.about, v.reference) for v in variants.CLASSIC.values()]
    width = max(len(name) for name in [*variants.CLASSIC, *variants.ENGINE])
    print("Classic variants (ns-2's loss recoveries with Reno congestion control, SACK off except 'sack'):")
    for name, about, reference in rows:
        print(f"  {name:<{width}}  {about} [{reference}]")
    print("Congestion controls (Linux-like: SACK recovery with PRR; 'tcplab variants NAME' lists parameters):")
    for a in variants.ENGINE.values():
        aliases = f" (also {', '.join(a['aliases'])})" if a["aliases"] else ""
        print(f"  {a['name']:<{width}}  {a['about']}{aliases} [{a['reference']}]")


def _print_variant(name: str) -> None:
    key = variants.normalise(name)
    if key in variants.CLASSIC:
        v = variants.CLASSIC[key]
        print(f"{v.name}: {v.about} [{v.reference}]")
        print(f"  loss recovery {v.recovery}, SACK {'on' if v.sack else 'off'}, PRR {'on' if v.prr else 'off'}, RACK-TLP {'on' if v.rack else 'off'}, TSO bursts {'on' if v.tso else 'off'}")
        entry = variants.ENGINE[v.cc]
    else:
        try:
            entry = variants.algorithm(name)
        except KeyError:
            allowed = ", ".join(dict.fromkeys([*variants.CLASSIC, *variants.ENGINE]))
            raise ScenarioError("variant", name, f"expected a TCP variant or congestion control: one of {allowed}") from None
        aliases = f" (also {', '.join(entry['aliases'])})" if entry["aliases"] else ""
        print(f"{entry['name']}{aliases}: {entry['about']} [{entry['reference']}]")
        print("  loss recovery sack, SACK on, PRR on, RACK-TLP on")
    print(f"  congestion control {entry['name']}; Linux: {entry['linux']}")
    params = entry["params"]
    if not params:
        print("  parameters: none")
        return
    print(f"  parameters ([cc.{entry['name']}] in a scenario, or a flow's cc_params):")
    width = max(len(p["name"]) for p in params)
    for p in params:
        print(f"    {p['name']:<{width}}  {p['default']:<8g} {p['min']:g} to {p['max']:g}  {p['help']}")


def _attach_negative_values(argv: Sequence[str]) -> list[str]:
    """``--rtt -5ms`` → ``--rtt=-5ms``, so that argparse takes ``-5ms`` as the value (and the
    scenario check can say what is wrong with it) rather than as an unknown option."""
    out: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg in _VALUE_FLAGS:
            value = next(args, None)
            if value is not None and re.match(r"^-\.?\d", value):
                out.append(f"{arg}={value}")
                continue
            out.append(arg)
            if value is not None:
                out.append(value)
        else:
            out.append(arg)
    return out


def _percent(x: float) -> str:
    """A rate as a percentage with two significant digits (0.00042% stays visible)."""
    return "0%" if x == 0 else f"{x * 100:.2g}%"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tcplab`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(_attach_negative_values(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:  # usage errors (2), --help and --version (0)
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    try:
        if args.command == "sim":
            return _sim(args)
        if args.command in ("table", "compare", "report"):
            from . import cli_results

            return cli_results.run(args)
        if args.command == "variants":
            return _variants(args)
        if args.command == "queues":
            return _queues(args.name)
        if args.command == "schedule":
            return _schedule(args)
        if args.command == "testbed":
            from .testbed.cli import testbed_command

            return testbed_command(args, _outputs, _print_table)
        if args.command in ("run", "export"):
            from . import runner

            return runner.main_run(args) if args.command == "run" else runner.main_export(args)
        return 2  # pragma: no cover - argparse refuses unknown commands
    except ScenarioError as e:
        print(f"tcplab: error: {e}", file=sys.stderr)
        return 2
    except EngineError as e:
        print(f"tcplab: engine error: {e}", file=sys.stderr)
        return 1
    except TcplabError as e:  # pragma: no cover - every tcplab error is one of the above
        print(f"tcplab: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tcplab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of stdout went away (`tcplab compare A B | head`): stop quietly, as a shell
        # tool does; stdout goes to /dev/null so that the interpreter's final flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
