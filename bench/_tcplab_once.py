"""Run one tcplab scenario once and print one JSON line.

    python bench/_tcplab_once.py SCENARIO.toml WIN_START WIN_END

Output: {"sim": "tcplab", "transmissions": N, "flow1_mbps": x, "flow2_mbps": y,
         "jfi": j, "sim_s": s, "events": e}

flowN_mbps is the mean goodput of flow N over [WIN_START, WIN_END] seconds, in Mb/s
(Result.summary's throughput_mbps); jfi is Result.jain over the same window; sim_s is the
time spent inside tcplab.simulate() alone (the caller measures the whole process).
"""

from __future__ import annotations

import json
import math
import sys
import time


def run(path, w0, w1):
    import tcplab

    scenario = tcplab.load_scenario(path)
    t0 = time.perf_counter()
    r = tcplab.simulate(scenario)
    sim_s = time.perf_counter() - t0

    summary = r.summary(window=(w0, w1))  # one row per flow, in flow order
    return {
        "transmissions": int(r.meta["transmissions"]),
        "mbps": [float(v) for v in summary["throughput_mbps"]],
        "jfi": float(r.jain((w0, w1))),
        "sim_s": sim_s,
        "events": int(r.meta["events"]) if "events" in r.meta else None,
    }


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    path, w0, w1 = argv[1], float(argv[2]), float(argv[3])
    out = run(path, w0, w1)

    mbps = out.pop("mbps")
    line = {"sim": "tcplab", "transmissions": out.pop("transmissions")}
    for i, v in enumerate(mbps, 1):
        line[f"flow{i}_mbps"] = round(v, 4)
    line["jfi"] = round(out.pop("jfi"), 6)
    line["sim_s"] = round(out.pop("sim_s"), 4)
    line.update(out)
    if not all(math.isfinite(v) for v in mbps):
        print("non-finite throughput", file=sys.stderr)
        return 1
    print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
