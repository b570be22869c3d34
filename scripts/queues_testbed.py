"""The queue disciplines on both backends: the kernel's CUBIC beside a second flow through the
testbed router's discipline, and the simulator on the same file.

    python scripts/queues_testbed.py [--queues Q ...] [--second cubic|bbr|cbr ...] [--duration S]   (root)

Each case is one file: 20 Mb/s, 40 ms, a 400-packet buffer (10 BDP) through the discipline, the
first flow CUBIC, the second (from 1 s) CUBIC, BBR or a 15 Mb/s UDP CBR flow, seed 1, measured
from 8 s to the end. For each case and backend it prints whether the testbed judged its run
valid (and if not, why), each flow's throughput, Jain's index and the forward queue (mean and
largest in packets, drops, of which the discipline's own, ECN marks). By default every
discipline with every second flow: 30 runs of about 30 s on the testbed. ``tests/test_testbed.py``
runs some of these cases (each discipline's docs/queues/*.md says which); this script runs them
all.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import tcplab
import tcplab.testbed as testbed
from tcplab.errors import ScenarioError, TcplabError

QUEUES = ("droptail", "red", "codel", "pie", "fq_codel", "fq_pie", "cake", "dualpi2", "drr", "fred", "csfq")
#: the second flow's TOML keys
SECOND = {"cubic": 'variant = "cubic"', "bbr": 'variant = "bbr"', "cbr": 'kind = "cbr"\nrate = "15Mbps"'}


def cubic_and(queue: str, second: str, duration_s: int = 20) -> str:
    """The scenario file (without name and seed) of the kernel's CUBIC and the ``second`` flow
    (its TOML keys, starting at 1 s) on 20 Mb/s, 40 ms, a 400-packet buffer through ``queue``,
    window 8 s to the end."""
    return (
        f'duration = "{duration_s}s"\nwindow = "8s:{duration_s}s"\n[topology]\nbottleneck = "20Mbps"\nrtt = "40ms"\nbuffer = "400pkt"\n'
        f'queue = "{queue}"\n[[flows]]\nvariant = "cubic"\n[[flows]]\n{second}\nstart = "1s"\n'
    )


def on_both_backends(directory: Path, name: str, toml: str) -> tuple[tcplab.Result, tcplab.Result]:
    """The scenario file ``toml`` (named ``testbed-{name}``, seed 1) run on the testbed and in the
    simulator."""
    path = directory / f"{name}.toml"
    path.write_text(f'name = "testbed-{name}"\nseed = 1\n{toml}')
    scenario = testbed.load(path)
    return testbed.run(scenario), tcplab.simulate(scenario)


def row(queue: str, second: str, backend: str, r: tcplab.Result) -> str:
    x = r.summary()["throughput_mbps"]
    q = r.queues.iloc[0]
    valid = "yes" if r.meta.get("valid", True) else "NO"
    rates = " / ".join(f"{v:.2f}" for v in x)
    return (f"{queue:9s} {second:6s} {backend:9s} {valid:5s} {rates:>14s} {r.jain():7.4f} {q['mean_pkts']:7.1f} {int(q['max_pkts']):5d} "
            f"{int(q['dropped_pkts']):6d} {int(q['early_drop_pkts']):6d} {int(q['marked_pkts']):6d}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queues", nargs="+", choices=QUEUES, default=list(QUEUES), metavar="Q", help=f"disciplines (default all: {', '.join(QUEUES)})")
    p.add_argument("--second", nargs="+", choices=tuple(SECOND), default=list(SECOND), help="the second flow (default all three)")
    p.add_argument("--duration", type=int, default=20, help="seconds per run, 9 or more (default 20; measured from 8 s)")
    args = p.parse_args(argv)
    if args.duration < 9:
        p.error(f"--duration: {args.duration} is not allowed: expected 9 or more seconds (the window starts at 8 s)")
    print(f"{'queue':9s} {'second':6s} {'backend':9s} {'valid':5s} {'Mb/s':>14s} {'JFI':>7s} {'mean q':>7s} {'max q':>5s} {'drops':>6s} {'early':>6s} {'marks':>6s}", flush=True)  # fmt: skip
    try:
        with tempfile.TemporaryDirectory(prefix="tcplab-queues-") as tmp:
            for queue in args.queues:
                for second in args.second:
                    tb, sim = on_both_backends(Path(tmp), f"{second}-{queue}", cubic_and(queue, SECOND[second], args.duration))
                    print(row(queue, second, "testbed", tb), flush=True)
                    if not tb.meta["valid"]:
                        print(f"{'':26s} invalid: {tb.meta['invalid_reason']}", flush=True)
                    print(row(queue, second, "simulator", sim), flush=True)
    except ScenarioError as e:
        print(f"queues_testbed: error: {e}", file=sys.stderr)
        return 2
    except TcplabError as e:
        print(f"queues_testbed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
