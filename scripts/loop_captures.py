"""Capture a testbed run all along its loop, for scripts/loop_holds.py (docs/validation.md, "The
hosts' holds, measured, in the simulator").

    python scripts/loop_captures.py SCENARIO DIR [--start 40] [--length 50] [--profile tuned] [--table]
                                    [--allow-invalid]

Runs ``tcplab testbed run SCENARIO --profile PROFILE`` (its output in DIR/run.out, its per-flow
summary in DIR/run.csv and per-interval series in DIR/run.intervals.csv) and, from
``--start`` seconds after its launch for ``--length`` seconds, dumpcap (the first 96 bytes of each
TCP packet) on each receiver's veth (DIR/rX.pcapng) and on the router's end of each receiver's
and each sender's veth (DIR/rtrX.pcapng, DIR/rtsX.pcapng), X = 1 … pairs. The launch includes
the testbed's set-up and calibration, a few seconds. With ``--table`` it then prints what
``loop_holds.py table`` prints for these captures: the scenario lines ``host_data_holds`` and
``host_ack_holds``. A paced sender (BBR, ``pacing = true``) sends when its pacing timer fires,
not when its host has handled an ACK, so its answers are left out of the data holds (its
receiver's ACK holds and its ACKs' path stay in); a scenario whose senders are all paced has no
``--table``. A run the testbed calls invalid (its router fell behind its timers: the machine was
busy) is a failure, exit 1, unless ``--allow-invalid``: the captures and tables are then made all
the same, after a warning, though what crossed the router may carry its stalls. Needs root,
dumpcap and tshark (``make deps`` installs them).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loop_holds  # noqa: E402

from tcplab.config import Scenario  # noqa: E402
from tcplab.errors import TcplabError  # noqa: E402
from tcplab.testbed import topology  # noqa: E402
from tcplab.testbed.cli import INVALID  # noqa: E402
from tcplab.testbed.experiment import check, load  # noqa: E402


def captures(pairs: int, out: Path) -> list[tuple[str, str, Path]]:
    """(namespace, interface, file) of every capture point."""
    points = []
    for i in range(1, pairs + 1):
        points.append((topology.receiver_ns(i), f"{topology.PREFIX}r{i}h", out / f"r{i}.pcapng"))
        points.append((topology.ROUTER_NS, f"{topology.PREFIX}r{i}", out / f"rtr{i}.pcapng"))
        points.append((topology.ROUTER_NS, f"{topology.PREFIX}s{i}", out / f"rts{i}.pcapng"))
    return points


def verdict(code: int, output: list[str], allow_invalid: bool) -> tuple[bool, str]:
    """Whether to go on after the testbed run that exited with `code` and printed `output`, and
    the warning to print first ('' for none): an invalid run goes on only with `allow_invalid`."""
    if code == 0:
        return True, ""
    invalid = [line.removeprefix("tcplab: ") for line in output if INVALID in line]
    if code == 1 and invalid and allow_invalid:
        return True, f"{invalid[-1]}; going on (--allow-invalid)"
    return False, ""


def unpaced(scenario: Scenario, profile: str) -> list[int]:
    """The pairs (1 …) whose senders send when their host has handled an ACK: not paced."""
    _, stacks = check(scenario, profile)
    return [i for i, stack in enumerate(stacks, 1) if not (stack.pacing or stack.cc == "bbr")]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenario")
    p.add_argument("dir", help="where the captures and the run's output go (created)")
    p.add_argument("--start", type=float, default=40.0, help="seconds after the run's launch to start capturing (default 40)")
    p.add_argument("--length", type=float, default=50.0, help="seconds to capture (default 50)")
    p.add_argument("--profile", default="tuned", help="the testbed's stack profile (default tuned)")
    p.add_argument("--table", action="store_true", help="then print loop_holds.py table's lines for the captures")
    p.add_argument("--allow-invalid", action="store_true", help="go on when the testbed calls the run invalid (its router fell behind), with a warning")
    a = p.parse_args(argv)
    if a.start < 0 or a.length <= 0:
        p.error(f"--start {a.start:g} --length {a.length:g}: expected a start of at least 0 and a positive length")
    if os.geteuid() != 0:
        p.exit(2, "loop_captures: the testbed and dumpcap in its namespaces need root\n")
    for tool in ("dumpcap", "tshark"):
        if shutil.which(tool) is None:
            p.exit(2, f"loop_captures: {tool} is not installed (Debian: apt-get install tshark; `make deps` installs it)\n")
    try:
        scenario = load(a.scenario)
        answering = unpaced(scenario, a.profile)
    except (TcplabError, OSError) as e:
        p.exit(2, f"loop_captures: {e}\n")
    if a.table and not answering:
        p.exit(2, "loop_captures: --table needs a sender that is not paced: a paced sender's data waits for its pacing timer, so its answers to ACKs are not its host's holds\n")
    if a.start + a.length > scenario.duration.ns / 1e9:
        p.error(f"--start {a.start:g} --length {a.length:g}: expected captures that end within the run ({scenario.duration})")
    out = Path(a.dir)
    out.mkdir(parents=True, exist_ok=True)
    points = captures(len(scenario.flows), out)
    with open(out / "run.out", "wb") as log:
        run = subprocess.Popen([sys.executable, "-m", "tcplab", "testbed", "run", a.scenario, "--profile", a.profile, "--csv", str(out / "run.csv")], stdout=log, stderr=subprocess.STDOUT)
        launched = time.monotonic()
        dumps: list[subprocess.Popen[bytes]] = []
        try:
            while time.monotonic() - launched < a.start and run.poll() is None:
                time.sleep(0.1)
            if run.poll() is None:
                for ns, dev, path in points:
                    cmd = ["ip", "netns", "exec", ns, "dumpcap", "-q", "-i", dev, "-s", "96", "-f", "tcp", "-a", f"duration:{a.length:g}", "-w", str(path)]
                    dumps.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            failed = [(d.args, d.communicate()[1].decode(errors="replace").strip()) for d in dumps if d.wait() != 0]
            code = run.wait()
        except BaseException:
            for proc in (*dumps, run):
                proc.terminate()
            raise
    lines = (out / "run.out").read_text(errors="replace").strip().splitlines()
    tail = "\n".join(lines[-5:])
    ok, warning = verdict(code, lines, a.allow_invalid)
    if not ok:
        print(f"loop_captures: the testbed run failed (exit {code}); the end of {out / 'run.out'}:\n{tail}", file=sys.stderr)
        return 1
    if warning:
        print(f"loop_captures: warning: {warning}", file=sys.stderr)
    if failed or len(dumps) != len(points):
        detail = "; ".join(f"{' '.join(args)}: {err}" for args, err in failed) or "the run ended before --start"
        print(f"loop_captures: the captures failed: {detail}", file=sys.stderr)
        return 1
    print(tail)
    for _, _, path in points:
        print(f"wrote {path}")
    if not a.table:
        return 0
    pairs = range(1, len(scenario.flows) + 1)
    args = ["table", "--ack", *(str(out / f"r{i}.pcapng") for i in pairs), "--react", *(str(out / f"rts{i}.pcapng") for i in answering)]
    for i in pairs:
        args += ["--path", str(out / f"rtr{i}.pcapng"), str(out / f"rts{i}.pcapng")]
    return loop_holds.main(args)


if __name__ == "__main__":
    sys.exit(main())
