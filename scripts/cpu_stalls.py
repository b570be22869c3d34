"""Find the moments this machine holds a CPU: one probe per CPU, each a SCHED_FIFO thread pinned
to its CPU that sleeps a short while in a loop and logs every wake-up later than a limit
(docs/testbed.md, "Stalls").

    python scripts/cpu_stalls.py --seconds 60 [--sleep-us 200] [--limit-ms 2] [--priority 99]

Run it beside a testbed run to see whether the router's long lateness is the router's own or
the machine's: stalls on every CPU at the same instant hold the whole machine. Prints each
probe's late wake-ups (wall-clock time, how late) and those that came on every CPU within 1 ms
of each other. Needs root for SCHED_FIFO; without it the probes run at normal priority and say so.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time


def probe(cpu: int, seconds: float, sleep_s: float, limit_s: float, priority: int, out: multiprocessing.Queue) -> None:
    os.sched_setaffinity(0, {cpu})
    realtime = True
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except PermissionError:
        realtime = False
    late: list[tuple[float, float]] = []
    end = time.monotonic() + seconds
    while (t := time.monotonic()) < end:
        time.sleep(sleep_s)
        over = time.monotonic() - t - sleep_s
        if over > limit_s:
            late.append((time.time() - over, over))
    out.put((cpu, realtime, late))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long to probe (default 60)")
    ap.add_argument("--sleep-us", type=float, default=200.0, help="each probe's sleep (default 200 µs)")
    ap.add_argument("--limit-ms", type=float, default=2.0, help="log wake-ups later than this (default 2 ms)")
    ap.add_argument("--priority", type=int, default=99, help="SCHED_FIFO priority (default 99, above the router's 50)")
    args = ap.parse_args()
    for name in ("seconds", "sleep_us", "limit_ms"):
        if getattr(args, name) <= 0:
            print(f"cpu_stalls: --{name.replace('_', '-')} {getattr(args, name)} must be positive", file=sys.stderr)
            return 2
    if not 1 <= args.priority <= 99:
        print(f"cpu_stalls: --priority {args.priority} must be within 1–99", file=sys.stderr)
        return 2
    cpus = sorted(os.sched_getaffinity(0))
    out: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=probe, args=(c, args.seconds, args.sleep_us / 1e6, args.limit_ms / 1e3, args.priority, out)) for c in cpus]
    for p in procs:
        p.start()
    results = sorted(out.get() for _ in procs)
    for p in procs:
        p.join()
    for cpu, realtime, late in results:
        where = f"SCHED_FIFO {args.priority}" if realtime else "normal priority (SCHED_FIFO not permitted)"
        print(f"CPU {cpu} ({where}): {len(late)} wake-ups more than {args.limit_ms:g} ms late")
        for at, over in late:
            print(f"  {time.strftime('%H:%M:%S', time.localtime(at))}.{int(at % 1 * 1e3):03d}  {over * 1e3:.1f} ms")
    if len(results) > 1:
        first = results[0][2]
        together = [(at, over) for at, over in first if all(any(abs(at - a) < 1e-3 for a, _ in r[2]) for r in results[1:])]
        print(f"on every CPU at once: {len(together)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
