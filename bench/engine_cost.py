#!/usr/bin/env python3
"""The engine's cost per congestion control, counted in instructions rather than timed.

    python bench/engine_cost.py [SPEC.json ...] [--jobs N] [--branches] [--json FILE]
    python bench/engine_cost.py --variants reno cubic bbr [--buffer 4bdp]
    python bench/engine_cost.py [SPEC.json] --cc reno cubic vegas ...

Wall times on a shared machine move by tens of percent from run to run; the number of
instructions a run executes does not move at all. This script builds the engine binary with
line tables (same code as the release build, so callgrind can name the source file of each
instruction), runs each spec once under valgrind's callgrind, and prints per spec:

- events and transmissions (from the engine's own result line);
- instructions in all, per event and per transmission;
- the share executed in the congestion control's own file (src/cc/*.rs), the share in
  the TCP endpoints (src/transport/) and the rest (event loop, links, queues, inlined std);
- with --branches, mispredicted branches per event (callgrind's branch simulator: a model of
  a predictor, not this CPU's, but the same model for every spec);
- the ratio of instructions to the first spec's (the Reno spec by default).

Default specs: bench/engine_{reno,cubic,bbr,reno_4bdp,bbr_4bdp}.json (the reference scenario,
its flows' stack that of variant `sack`, only `cc` changed). --variants instead lowers
bench/reference.toml with both flows set to each variant, with that variant's own defaults (for
the Linux family: RACK-TLP, PRR and TSO bursts), and --buffer sets its buffer (default 1bdp);
that needs tcplab importable (`pip install -e .`). --cc instead runs one spec (default
bench/engine_reno.json) once per named congestion control, every flow's `cc` set to it and
nothing else changed: the cost of each algorithm on the same stack. Each spec takes about 50
times its native run time (1-2 min here); --jobs runs that many at once (default 2).

Needs valgrind (`make deps` installs it) and cargo. The exit status is 0 whatever the
counts; 1 when a run failed, 2 for bad arguments or a missing tool.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from reference import result_line  # bench/reference.py, beside this script

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TOML = HERE / "reference.toml"
TARGET = ROOT / "target" / "cost"
BINARY = TARGET / "release" / "tcplab-sim"
DEFAULT_SPECS = [HERE / f"engine_{n}.json" for n in ("reno", "cubic", "bbr", "reno_4bdp", "bbr_4bdp")]


def build() -> None:
    """The engine binary with line tables, in target/cost (the release build is left alone)."""
    env = dict(os.environ, CARGO_PROFILE_RELEASE_DEBUG="line-tables-only", CARGO_TARGET_DIR=str(TARGET))
    print("building target/cost/release/tcplab-sim (release, with line tables)", file=sys.stderr, flush=True)
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "tcplab-sim", "--bin", "tcplab-sim"],
                   cwd=ROOT, env=env, check=True)


class UsageError(Exception):
    pass


def lowered(variants: list[str], buffer: str, tmp: Path) -> list[Path]:
    """bench/reference.toml with both flows set to each variant, lowered to engine specs."""
    try:
        from pydantic import ValidationError
        from tcplab.config import load_scenario
        from tcplab.errors import TcplabError, from_validation_error
    except ImportError as e:
        raise UsageError(f"--variants needs tcplab importable ({e}); run `pip install -e .` first") from None
    specs = []
    for v in variants:
        overrides = {"flows[0].variant": v, "flows[1].variant": v, "topology.buffer": buffer}
        try:
            spec = load_scenario(TOML, overrides).to_engine_spec()
        except ValidationError as e:
            raise UsageError(str(from_validation_error(e))) from None
        except TcplabError as e:
            raise UsageError(str(e)) from None
        path = tmp / f"{v}_{buffer}.json"
        path.write_text(json.dumps(spec))
        specs.append(path)
    return specs


def with_cc(base: Path, names: list[str], tmp: Path) -> list[Path]:
    """`base` with every flow's congestion control set to each of `names` (its defaults)."""
    try:
        from tcplab.variants import ENGINE
    except ImportError:
        known = None  # the engine names an unknown one itself
    else:
        known = {n for c in ENGINE.values() for n in [c["name"], *c["aliases"]]}
    spec = json.loads(base.read_text())
    specs = []
    for name in names:
        if known is not None and name not in known:
            raise UsageError(f"--cc = '{name}': not a congestion control; expected one of {', '.join(sorted(known))}")
        for flow in spec["flows"]:
            if flow.get("kind") == "tcp":
                flow["cc"] = name
                flow.pop("cc_params", None)
        path = tmp / f"{base.stem}_{name}.json"
        path.write_text(json.dumps(spec))
        specs.append(path)
    return specs


def group(path: str) -> str:
    """Which part of the engine a source file belongs to."""
    if "tcplab-sim/src/cc/" in path:
        return "cc"
    if "tcplab-sim/src/transport/" in path:
        return "transport"
    return "rest"


def file_costs(out_file: Path, events: list[str]) -> dict[str, list[int]]:
    """Self cost per source file, from callgrind_annotate's per-function table."""
    text = subprocess.run(
        ["callgrind_annotate", "--auto=no", "--inclusive=no", "--threshold=100", f"--show={','.join(events)}", str(out_file)],
        capture_output=True, text=True, check=True,
    ).stdout
    costs: dict[str, list[int]] = {}
    # "  1,234 (12.3%)  5,678 (1.0%)  /path/file.rs:function" ('.' for a zero count)
    cell = r"([0-9,]+|\.)(?: \([ 0-9.]+%\))?\s+"
    row = re.compile(r"^\s*" + cell * len(events) + r"(\S[^:]*):\S")
    for line in text.splitlines():
        m = row.match(line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        values = [0 if v == "." else int(v.replace(",", "")) for v in m.groups()[: len(events)]]
        path = m.group(len(events) + 1)
        acc = costs.setdefault(path, [0] * len(events))
        for i, v in enumerate(values):
            acc[i] += v
    return costs


def run_one(spec: Path, branches: bool, tmp: Path) -> dict:
    out_file = tmp / (spec.stem + ".callgrind")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
    if branches:
        cmd.append("--branch-sim=yes")
    cmd += [str(BINARY), str(spec)]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{spec.name}: exit {p.returncode}\n{p.stderr[-3000:]}")
    res = result_line(p.stdout)
    header = out_file.read_text(errors="replace")
    names = re.search(r"^events: (.*)$", header, re.M).group(1).split()
    totals = [int(v) for v in re.search(r"^summary: (.*)$", header, re.M).group(1).split()]
    total = dict(zip(names, totals))
    wanted = ["Ir"] + (["Bcm", "Bim"] if branches else [])
    by_file = file_costs(out_file, wanted)
    parts = {"cc": 0, "transport": 0, "rest": 0}
    for path, v in by_file.items():
        parts[group(path)] += v[0]
    ir = total["Ir"]
    row = {
        "spec": str(spec.relative_to(ROOT) if spec.is_relative_to(ROOT) else spec.name),
        "events": res["events"],
        "transmissions": res["transmissions"],
        "instructions": ir,
        "per_event": ir / res["events"],
        "per_transmission": ir / res["transmissions"],
        "cc_share": parts["cc"] / ir,
        "transport_share": parts["transport"] / ir,
        "rest_share": 1 - (parts["cc"] + parts["transport"]) / ir,
        "flow1_mbps": res.get("flow1_mbps"),
        "flow2_mbps": res.get("flow2_mbps"),
    }
    if branches:
        row["mispredicts"] = total.get("Bcm", 0) + total.get("Bim", 0)
        row["mispredicts_per_event"] = row["mispredicts"] / res["events"]
    print(f"  {spec.name}: {ir / 1e9:.3f} G instructions", file=sys.stderr, flush=True)
    return row


def table(rows: list[dict], branches: bool) -> str:
    base = rows[0]["instructions"]
    head = ["spec", "events", "transmissions", "instructions", "per event", "per transmission",
            "cc", "transport", "rest"] + (["mispredicts/event"] if branches else []) + ["× first"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            Path(r["spec"]).name,
            f"{r['events'] / 1e6:.2f} M",
            f"{r['transmissions'] / 1e6:.2f} M",
            f"{r['instructions'] / 1e9:.3f} G",
            f"{r['per_event']:.0f}",
            f"{r['per_transmission']:.0f}",
            f"{100 * r['cc_share']:.1f} %",
            f"{100 * r['transport_share']:.1f} %",
            f"{100 * r['rest_share']:.1f} %",
        ]
        if branches:
            cells.append(f"{r['mispredicts_per_event']:.2f}")
        cells.append(f"{r['instructions'] / base:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="*", type=Path, help="engine specs (JSON); the first is the base of the ratios")
    ap.add_argument("--variants", nargs="+", metavar="VARIANT", help="lower bench/reference.toml with both flows set to each of these instead")
    ap.add_argument("--buffer", default="1bdp", help="with --variants: the router buffer (default 1bdp)")
    ap.add_argument("--cc", nargs="+", metavar="CC", help="run the one spec given (default bench/engine_reno.json) with every flow's cc set to each of these")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    ap.add_argument("--branches", action="store_true", help="also simulate branch prediction (slower)")
    ap.add_argument("--json", type=Path, help="also write every number to this file")
    a = ap.parse_args(argv)
    if a.variants and a.specs:
        print("engine_cost: give spec files or --variants, not both", file=sys.stderr)
        return 2
    if a.variants and a.cc:
        print("engine_cost: give --variants or --cc, not both", file=sys.stderr)
        return 2
    if a.cc and len(a.specs) > 1:
        print(f"engine_cost: --cc takes one spec to change, not {len(a.specs)}", file=sys.stderr)
        return 2
    specs = a.specs or ([HERE / "engine_reno.json"] if a.cc else DEFAULT_SPECS)
    for s in specs:
        if not a.variants and not s.is_file():
            print(f"engine_cost: spec = '{s}': no such file (expected an engine spec, e.g. bench/engine_reno.json)", file=sys.stderr)
            return 2
    if a.jobs < 1:
        print(f"engine_cost: --jobs = {a.jobs}: expected a whole number of at least 1", file=sys.stderr)
        return 2
    for tool, pkg in (("valgrind", "valgrind"), ("callgrind_annotate", "valgrind"), ("cargo", "cargo")):
        if shutil.which(tool) is None:
            print(f"engine_cost: {tool} not found on PATH; install it (`apt-get install -y {pkg}`)", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="engine_cost.") as tmp:
        try:
            if a.variants:
                specs = lowered(a.variants, a.buffer, Path(tmp))
            elif a.cc:
                specs = with_cc(specs[0], a.cc, Path(tmp))
        except UsageError as e:
            print(f"engine_cost: {e}", file=sys.stderr)
            return 2
        try:
            build()
        except subprocess.CalledProcessError as e:
            print(f"engine_cost: building the engine failed (exit {e.returncode})", file=sys.stderr)
            return 1
        specs = [s.resolve() for s in specs]
        try:
            with ThreadPoolExecutor(max_workers=a.jobs) as pool:
                rows = list(pool.map(lambda s: run_one(s, a.branches, Path(tmp)), specs))
        except (RuntimeError, ValueError, subprocess.CalledProcessError) as e:
            print(f"engine_cost: a run failed: {e}", file=sys.stderr)
            return 1
    print(table(rows, a.branches))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
