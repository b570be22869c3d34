#!/usr/bin/env python3
"""Benchmark of the reference scenario: tcplab against ns-2.35.

    python bench/reference.py [--repeat N] [--quick] [--json FILE]

Runs bench/reference.toml with tcplab, twice over: the whole `tcplab` Python process
(loading the scenario, simulating, building data frames) and the engine alone
(target/release/tcplab-sim on the lowered spec, a native process like `ns`); and
bench/ns2_reference.tcl with ns-2 (when `ns` is on PATH). Each runs in its own process,
N times (default 3), and per simulator it prints:
the median wall time, the peak resident memory, the packet transmissions (one packet
crossing one link), transmissions per second of wall time, each flow's mean goodput over
120-300 s and Jain's fairness index; then the ratio of the two wall times.

--quick runs a 30-s version (flow 2 at 6 s, window 12-30 s) of both, for a smoke test.

The exit status is 0 whatever the speed; it is 1 only when a simulator crashed or
printed no result.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TOML = HERE / "reference.toml"
TCL = HERE / "ns2_reference.tcl"
ONCE = HERE / "_tcplab_once.py"
ENGINE = ROOT / "target" / "release" / "tcplab-sim"

FULL = {"duration": 300.0, "start2": 60.0, "window": (120.0, 300.0)}
QUICK = {"duration": 30.0, "start2": 6.0, "window": (12.0, 30.0)}

NS2_HINT = (
    "ns-2 was not found on PATH; install it with `apt-get install -y ns2` "
    "(Debian's ns-2.35, which has the TCP-Linux agents) to compare."
)


TCPLAB_HINT = (
    "tcplab is not importable (`import tcplab._core` failed); build it with "
    "`pip install -e .` in the repository root, then run this again."
)


def tcplab_importable() -> bool:
    r = subprocess.run([sys.executable, "-c", "import tcplab._core"], cwd=ROOT,
                       stdin=subprocess.DEVNULL, capture_output=True)
    return r.returncode == 0


class Crash(Exception):
    pass


def _fmt_s(s: float) -> str:
    return f"{s:g}s"


def run_child(cmd, cwd=ROOT, env=None):
    """Run cmd; return (wall seconds, peak RSS bytes, exit code, stdout, stderr).

    os.wait4 gives this child's own rusage, so ru_maxrss is its peak resident set
    (kilobytes on Linux)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        p.returncode = code
        out.seek(0)
        err.seek(0)
        rss = ru.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        return wall, rss, code, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def result_line(stdout: str) -> dict:
    """The last line of stdout that is a JSON object (ns-2 prints other lines too)."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON result line")


def measure(name, cmd, repeat, env=None):
    runs = []
    for i in range(repeat):
        wall, rss, code, out, err = run_child(cmd, env=env)
        if code != 0:
            raise Crash(
                f"{name} exited with {code} (run {i + 1}): {' '.join(map(str, cmd))}\n"
                f"--- stdout\n{out[-2000:]}\n--- stderr\n{err[-4000:]}"
            )
        try:
            res = result_line(out)
        except ValueError:
            raise Crash(f"{name} printed no result: {' '.join(map(str, cmd))}\n{out[-2000:]}\n{err[-2000:]}")
        runs.append({"wall_s": wall, "rss_bytes": rss, "result": res})
        print(f"  {name} run {i + 1}/{repeat}: {wall:.3f} s, {rss / 2**20:.1f} MB", file=sys.stderr, flush=True)
    walls = [r["wall_s"] for r in runs]
    med = statistics.median(walls)
    res = runs[-1]["result"]
    tx = res.get("transmissions")
    return {
        "sim": name,
        "cmd": [str(c) for c in cmd],
        "wall_s": med,
        "wall_all_s": walls,
        "rss_mb": max(r["rss_bytes"] for r in runs) / 2**20,
        "transmissions": tx,
        "tx_per_s": (tx / med) if tx else None,
        "flow1_mbps": res.get("flow1_mbps"),
        "flow2_mbps": res.get("flow2_mbps"),
        "jfi": res.get("jfi"),
        "result": res,
    }


def quick_toml(src: Path, dst: Path, p: dict) -> None:
    """Write a copy of the reference scenario with the run length, flow 2's start and
    the window changed."""
    text = src.read_text()
    w0, w1 = p["window"]
    subs = [
        (r'(?m)^(\s*duration\s*=\s*)"[^"]*"', rf'\g<1>"{_fmt_s(p["duration"])}"'),
        (r'(?m)^(\s*window\s*=\s*)"[^"]*"', rf'\g<1>"{_fmt_s(w0)}:{_fmt_s(w1)}"'),
        (r'(?m)^(\s*start\s*=\s*)"60s"', rf'\g<1>"{_fmt_s(p["start2"])}"'),
    ]
    for pat, rep in subs:
        text, n = re.subn(pat, rep, text)
        if n == 0:
            raise SystemExit(f"cannot rewrite {src} for --quick: no match for {pat}")
    dst.write_text(text)


def tcplab_cmd(toml: Path, p: dict):
    w0, w1 = p["window"]
    return [sys.executable, str(ONCE), str(toml), f"{w0:g}", f"{w1:g}"]


def engine_cmd(toml: Path, spec: Path, p: dict):
    """Lower the scenario to an engine spec (not timed), build the engine binary, and return
    the command that runs the engine alone."""
    lower = "import json, sys, tcplab; print(json.dumps(tcplab.load_scenario(sys.argv[1]).to_engine_spec()))"
    spec.write_text(subprocess.run([sys.executable, "-c", lower, str(toml)], check=True, capture_output=True, text=True).stdout)
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "tcplab-sim", "--bin", "tcplab-sim"], cwd=ROOT, check=True)
    w0, w1 = p["window"]
    return [str(ENGINE), str(spec), "--window", f"{w0:g}:{w1:g}"]


def ns2_cmd(ns: str, p: dict):
    w0, w1 = p["window"]
    return [
        ns, str(TCL),
        f"duration={p['duration']:g}", f"start2={p['start2']:g}",
        f"win_start={w0:g}", f"win_end={w1:g}",
    ]


def _num(v, spec):
    return "-" if v is None else format(v, spec)


def table(rows):
    head = ["simulator", "wall s (median)", "peak RSS MB", "transmissions", "transmissions/s",
            "flow1 Mb/s", "flow2 Mb/s", "JFI"]
    body = [
        [
            r["sim"],
            _num(r["wall_s"], ".3f"),
            _num(r["rss_mb"], ".1f"),
            _num(r["transmissions"], ",d"),
            _num(r["tx_per_s"], ",.0f"),
            _num(r["flow1_mbps"], ".2f"),
            _num(r["flow2_mbps"], ".2f"),
            _num(r["jfi"], ".4f"),
        ]
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    line = lambda cells: "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(head))
    print(line(["-" * w for w in widths]))
    for b in body:
        print(line(b))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per simulator; the median wall time is reported (default 3)")
    ap.add_argument("--quick", action="store_true", help="30-s version of the scenario, for a smoke test")
    ap.add_argument("--json", metavar="FILE", help="also write every number to FILE as JSON")
    ap.add_argument("--no-ns2", action="store_true", help="skip ns-2 even if it is installed")
    ap.add_argument("--no-tcplab", action="store_true", help="skip tcplab")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")

    p = QUICK if args.quick else FULL
    w0, w1 = p["window"]
    print(
        f"reference scenario{' (quick)' if args.quick else ''}: 100 Mb/s dumbbell, RTT 100 ms, "
        f"buffer 1 BDP (833 pkts), 2 x NewReno with SACK (flow 2 at {p['start2']:g} s), "
        f"{p['duration']:g} s simulated, throughput over {w0:g}-{w1:g} s; "
        f"{args.repeat} run(s) each",
        flush=True,
    )

    rows, crashed, notes = [], False, []
    tmp = tempfile.TemporaryDirectory()
    try:
        if not args.no_tcplab and not tcplab_importable():
            notes.append(TCPLAB_HINT)
        elif not args.no_tcplab:
            toml = TOML
            if args.quick:
                toml = Path(tmp.name) / "reference_quick.toml"
                quick_toml(TOML, toml, p)
            try:
                rows.append(measure("tcplab", tcplab_cmd(toml, p), args.repeat))
                cmd = engine_cmd(toml, Path(tmp.name) / "spec.json", p)
                rows.append(measure("tcplab-engine", cmd, args.repeat))
            except (Crash, subprocess.CalledProcessError) as e:
                crashed = True
                print(f"tcplab failed:\n{e}", file=sys.stderr)

        ns = None if args.no_ns2 else shutil.which("ns")
        if ns:
            try:
                rows.append(measure("ns2", ns2_cmd(ns, p), args.repeat))
            except Crash as e:
                crashed = True
                print(f"ns-2 failed:\n{e}", file=sys.stderr)
        elif not args.no_ns2:
            notes.append(NS2_HINT)
    finally:
        tmp.cleanup()

    print()
    if rows:
        table(rows)
    by = {r["sim"]: r for r in rows}
    ratio = None
    if "tcplab" in by and "ns2" in by:
        ratio = by["ns2"]["wall_s"] / by["tcplab"]["wall_s"]
        print()
        print(f"wall time ns2 / tcplab: {ratio:.2f}  (above 1: tcplab is faster)")
        if "tcplab-engine" in by:
            print(f"wall time ns2 / tcplab-engine: {by['ns2']['wall_s'] / by['tcplab-engine']['wall_s']:.2f}")
        a, b = by["tcplab"]["tx_per_s"], by["ns2"]["tx_per_s"]
        if a and b:
            print(f"transmissions/s tcplab / ns2: {a / b:.2f}")
    if "tcplab" in by:
        r = by["tcplab"]
        sim_s = r["result"].get("sim_s")
        if sim_s:
            inner = f", {r['transmissions'] / sim_s:,.0f} transmissions/s" if r["transmissions"] else ""
            print(f"tcplab inside simulate(): {sim_s:.3f} s of its {r['wall_s']:.3f} s wall{inner} "
                  f"(the rest is starting Python and importing tcplab)")
    for n in notes:
        print(n)

    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"quick": args.quick, "repeat": args.repeat, "runs": rows, "ns2_over_tcplab_wall": ratio}, fh, indent=2)
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
