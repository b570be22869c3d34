"""The tables of docs/validation.md from a simulator store S and a testbed store T of the same
experiment: per cell the JFI of both, D = S − T with Tσ, each flow's mean throughput and the
simulator's error relative to the testbed, its runs' spread in each backend (the standard
deviation of the per-run means), and the per-flow diagnostics (retransmitted segments,
mean cwnd and smoothed RTT in the measurement window) that explain a difference.

    python scripts/validation_tables.py results/validation-sim.duckdb results/validation-testbed.duckdb

Only valid runs count; a cell with fewer testbed replications than simulator ones says so (n).
With --partial, a testbed store that does not yet cover the grid is compared on the cells it has.
"""

from __future__ import annotations

import argparse
import json

import duckdb
import pandas as pd

from tcplab import analysis


def _cell(point: str) -> tuple[str, int, str]:
    p = json.loads(point)
    return p["flow2"], int(str(p["topology.rtt"]).removesuffix("ms")), str(p["topology.buffer"]).removesuffix("bdp")


def diagnostics(path: str, window_start_s: float) -> pd.DataFrame:
    """Per cell and flow, means over the valid runs: retransmitted segments per second in the
    window, mean cwnd (segments of 1448 B) and mean smoothed RTT (ms) from the intervals."""
    con = duckdb.connect(path, read_only=True)
    rows = con.execute(
        """SELECT r.point, i.flow, sum(i.retrans_pkts) / count(*) AS rtx_per_s,
                  avg(i.cwnd_bytes) / 1448 AS cwnd, avg(i.srtt_ns) / 1e6 AS srtt_ms
           FROM runs r JOIN intervals i USING (run_id)
           WHERE r.valid AND i.t_s > ? GROUP BY r.run_id, r.point, i.flow""",
        [window_start_s],
    ).fetchdf()
    con.close()
    rows[["flow2", "rtt", "buffer"]] = pd.DataFrame(rows["point"].map(_cell).tolist(), index=rows.index)
    return rows.groupby(["flow2", "rtt", "buffer", "flow"])[["rtx_per_s", "cwnd", "srtt_ms"]].mean()


def single_flow(path: str, until_s: float) -> pd.DataFrame:
    """Flow 1 alone (10 s to flow 2's start), per RTT and buffer over the valid runs of both
    pairs: mean throughput and cwnd — the slow-start overshoot and its recovery, before any
    competition."""
    con = duckdb.connect(path, read_only=True)
    rows = con.execute(
        """SELECT r.point, avg(i.throughput_mbps) AS mbps, avg(i.cwnd_bytes) / 1448 AS cwnd
           FROM runs r JOIN intervals i USING (run_id)
           WHERE r.valid AND i.flow = 0 AND i.t_s > 10 AND i.t_s <= ? GROUP BY r.run_id, r.point""",
        [until_s],
    ).fetchdf()
    con.close()
    rows[["flow2", "rtt", "buffer"]] = pd.DataFrame(rows["point"].map(_cell).tolist(), index=rows.index)
    return rows.groupby(["rtt", "buffer"]).agg(mbps=("mbps", "mean"), cwnd=("cwnd", "mean"), n=("mbps", "size"))


def _fmt(v: float, digits: int = 2) -> str:
    return "–" if pd.isna(v) else f"{v:.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sim")
    parser.add_argument("testbed")
    parser.add_argument("--window-start", type=float, default=60.0, help="start of the measurement window, s (default 60)")
    parser.add_argument("--partial", action="store_true", help="compare only the cells with a valid testbed run")
    args = parser.parse_args()

    s_table = analysis.per_run(analysis.load_frames(args.sim))
    t_table = analysis.per_run(analysis.load_frames(args.testbed))
    if args.partial:
        axes = ["flow2", "topology.rtt", "topology.buffer"]
        t_table = t_table[t_table["valid"].astype(bool)]
        have = set(map(tuple, t_table[axes].astype(str).to_numpy()))
        s_table = s_table[[tuple(r) in have for r in s_table[axes].astype(str).to_numpy()]]
        print(f"(partial testbed store: {len(have)} of 30 cells, {len(t_table)} valid runs)\n")
    jfi = analysis.compare(s_table, t_table)
    errors = analysis.flow_errors(s_table, t_table)
    diag_s, diag_t = diagnostics(args.sim, args.window_start), diagnostics(args.testbed, args.window_start)

    def key(row: pd.Series) -> tuple[str, int, str]:
        return row["flow2"], int(str(row["topology.rtt"]).removesuffix("ms")), str(row["topology.buffer"]).removesuffix("bdp")

    print("| flow 2 | RTT | buffer | JFI S | JFI T (Tσ) | D | n T |")
    print("|---|---|---|---|---|---|---|")
    for _, r in jfi.iterrows():
        f2, rtt, buf = key(r)
        print(f"| {f2} | {rtt} ms | {buf} BDP | {_fmt(r['S'])} | {_fmt(r['T'])} ({_fmt(r['T_std'])}) | {r['D']:+.2f}{' *' if r['significant'] else ''} | {int(r['n_T'])} |")
    summary = analysis.compare_summary(jfi)
    print(f"\nmean |ΔJFI| {summary['mean_abs_d']:.3f} (range {summary['min_abs_d']:.3f}–{summary['max_abs_d']:.3f}); W ≥ 0 in {summary['significant']} of {summary['cells']} cells\n")

    print("| flow 2 | RTT | buffer | flow 1 S / T, Mb/s | error | flow 2 S / T, Mb/s | error | run-to-run σ S / T (1; 2) | retrans/s S / T (1; 2) | cwnd S / T (1; 2) | srtt S / T, ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    wide = errors.pivot_table(index=["flow2", "topology.rtt", "topology.buffer"], columns="flow", values=["S", "T", "S_std", "T_std", "error"])
    order = sorted(wide.index, key=lambda i: key(pd.Series({"flow2": i[0], "topology.rtt": i[1], "topology.buffer": i[2]})))
    for index in order:
        r = wide.loc[index]
        f2, rtt, buf = key(pd.Series({"flow2": index[0], "topology.rtt": index[1], "topology.buffer": index[2]}))
        cells = []
        for flow in (1, 2):
            cells += [f"{_fmt(r[('S', flow)])} / {_fmt(r[('T', flow)])}", f"{r[('error', flow)]:+.0%}"]
        spread = "; ".join(f"{_fmt(r[('S_std', flow)], 1)} / {_fmt(r[('T_std', flow)], 1)}" for flow in (1, 2))
        d = [spread]
        for col, digits in (("rtx_per_s", 1), ("cwnd", 0)):
            parts = []
            for flow in (0, 1):
                s = diag_s[col].get((f2, rtt, buf, flow))
                t = diag_t[col].get((f2, rtt, buf, flow))
                parts.append(f"{_fmt(s, digits)} / {_fmt(t, digits)}")
            d.append("; ".join(parts))
        srtt = f"{_fmt(diag_s['srtt_ms'].get((f2, rtt, buf, 0)), 0)} / {_fmt(diag_t['srtt_ms'].get((f2, rtt, buf, 0)), 0)}"
        print(f"| {f2} | {rtt} ms | {buf} BDP | " + " | ".join(cells + d) + f" | {srtt} |")
    print("\nFlow 1 alone, 10–30 s (both pairs' runs):\n")
    print("| RTT | buffer | Mb/s S / T | error | cwnd S / T | runs T |")
    print("|---|---|---|---|---|---|")
    alone_s, alone_t = single_flow(args.sim, 30.0), single_flow(args.testbed, 30.0)
    errs = []
    for (rtt, buf), t in alone_t.iterrows():
        s_row = alone_s.loc[(rtt, buf)]
        e = (s_row["mbps"] - t["mbps"]) / t["mbps"]
        errs.append(abs(e))
        print(f"| {rtt} ms | {buf} BDP | {s_row['mbps']:.1f} / {t['mbps']:.1f} | {e:+.0%} | {s_row['cwnd']:.0f} / {t['cwnd']:.0f} | {int(t['n'])} |")
    if errs:
        print(f"\nflow 1 alone: mean |error| {sum(errs) / len(errs):.1%}, max {max(errs):.1%} over {len(errs)} cells")
    fs = analysis.flow_error_summary(errors)
    print(
        f"\nper-flow mean throughput: mean |error| {fs['mean_abs_error']:.1%}, max {fs['max_abs_error']:.1%}; "
        f"within 10%: {fs['flows_within']} of {fs['flows']} flows, every flow in {fs['cells_within']} of {fs['cells']} cells"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
