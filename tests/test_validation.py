"""The simulator against the kernel (docs/validation.md): experiments/validation.toml run in the
simulator, with 10 replications instead of its 3, and compared with the testbed's runs of it on
the path corrected under load (the router takes the path's own round trip, measured while a run's
packet rate crosses it, out of its delay), committed as docs/data/validation-rev4-testbed.duckdb
(89 valid runs, 2-3 a cell). A change to the simulator's TCP that moves it away from the kernel
fails here.

Ten replications: several cells are decided by which flow's segment meets the full queue at an
overflow (docs/validation.md), so three simulator replications draw one of a few outcomes, and
the grid's figures move with the seed more than with many a change under test; ten give the
simulator's mean in each cell.

The simulated hosts hold each send as long as the testbed's hosts held them, measured on the
machine that ran the whole grid last (experiments/validation.toml, docs/validation.md, "The
hosts' holds, measured, in the simulator"). That grid (docs/data/validation-timed{-near,}-
testbed.duckdb, 78 runs, each series placed at its data) is checked last and most tightly: 56 of
60 flows within 10%, mean error 3.1%, mean |ΔJFI| 0.009, worst cell 0.035 (seeds 11, 21, 31: 56,
53, 54 flows; 3.2, 3.5, 3.6%; before the senders queued their data in skbs as Linux does 59, 59,
57); the bounds are 55 flows and 3.5%. With up to 90 µs of uniform
jitter at every host instead, fitted before the holds were measured, it had 52, 49, 50 and 54.

rev4 ran on a machine that held packets longer (its router's timer lateness: median 28-31 µs
against 21-23 µs), whose holds were never measured; the 90 µs of jitter fitted it better (53
flows, 4.1%; now 51, 4.8%; seeds 11, 21, 31: 50, 51, 52 and 4.4, 4.5, 4.3%). Its bounds: the
issue's goal for the mean |ΔJFI| (0.03), paper 001's ns-2 figure (0.087) for the worst cell, 50 of
60 flows within 10% and a mean error of 5.5%. Pooled with the kernel's later runs of the cells that
scatter or were off (docs/data/validation-{c25,mid,far,b02}-testbed.duckdb: 6-11 runs in those 11
cells, 3 elsewhere) 54 flows are within 10% (seeds 11, 21, 31: 52, 52, 54; with the fitted
jitter 56, 55, 56); the bound is 51. These kernel runs place each flow's per-second series at its
client's launch, early by the preamble (docs/testbed.md): at 400 ms / 0.6 BDP that alone puts the
simulator's Reno 6% over them. Against the testbed corrected on the idle path
(docs/data/validation-rev3-testbed.duckdb, whose round trip was 0.2-0.35 ms short) the simulator
with 45 µs of host noise gave 0.013, 0.082, 54 flows, 4.6%.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import tcplab
from tcplab import analysis
from tcplab.cli import main

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "data"


def _runs(store: Path):
    return analysis.per_run(analysis.load_frames(store))


def _cells(errors, flow2: str, rtt: str, buffer: str | None = None):
    """The rows of ``errors`` (from analysis.flow_errors, or per-run rows) next to ``flow2`` at ``rtt`` (and ``buffer``)."""
    keep = (errors["flow2"] == flow2) & (errors["topology.rtt"] == rtt)
    if buffer is not None:
        keep &= errors["topology.buffer"] == buffer
    return errors[keep]


def test_the_fidelity_grid_agrees_with_the_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "sim.duckdb"
    text = (ROOT / "experiments" / "validation.toml").read_text()
    assert "\nreplications = 3\n" in text
    experiment = tmp_path / "validation.toml"
    experiment.write_text(text.replace("\nreplications = 3\n", "\nreplications = 10\n"))
    assert main(["run", str(experiment), "--backend", "sim", "--store", str(store), "-q"]) == 0
    capsys.readouterr()
    frames = analysis.load_frames(store)
    sim = analysis.per_run(frames)
    kernel = _runs(DATA / "validation-rev4-testbed.duckdb")

    jfi = analysis.compare_summary(analysis.compare(sim, kernel))
    assert jfi["cells"] == 30
    assert jfi["mean_abs_d"] <= 0.03 and jfi["max_abs_d"] <= 0.087, jfi

    errors = analysis.flow_errors(sim, kernel)
    flows = analysis.flow_error_summary(errors)
    assert flows["flows"] == 60
    assert flows["flows_within"] >= 50 and flows["mean_abs_error"] <= 0.055, flows

    # Reno next to BBR at 25 ms / 0.6 and 1.0 BDP, which hang on 1% of BBR's rate: within 8% once
    # BBR paces itself as the kernel's does (TCP's own pacing timer, no fq; docs/validation.md; now
    # +1% and +5%).
    bbr = _cells(errors, "bbr", "25ms").query("flow == 1").set_index("topology.buffer")
    for buffer in ("0.6bdp", "1.0bdp"):
        assert abs(bbr.loc[buffer, "error"]) <= 0.08, bbr[["S", "T", "error"]]

    # With the kernel's later runs of nine cells next to CUBIC and two next to BBR
    # (docs/data/validation-{c25,mid,far,b02}-testbed.duckdb: 6-11 runs in those cells, 3
    # elsewhere) 54 flows are within 10% (seeds 11, 21, 31: 52, 52, 54).
    more = [(name, _runs(DATA / f"{name}-testbed.duckdb")) for name in ("validation-c25", "validation-mid", "validation-far", "validation-b02")]
    pooled = analysis.flow_errors(sim, analysis.pool(kernel, more))
    assert analysis.flow_error_summary(pooled)["flows_within"] >= 51, pooled[pooled["error"].abs() > 0.10]

    # Where the kernel's Reno meets every overflow and the simulator's escaped some before its
    # hosts held sends as long as the testbed's loop does: Reno within 10% next to CUBIC at 100 ms
    # / 0.6 BDP and 400 ms / 0.6 BDP (with 90 µs of jitter and no stalls +24%, +13.5%; now +3.5%,
    # +5%) and next to BBR at 25 ms / 0.2 BDP (+4%; against rev4 alone +13% with the fitted
    # jitter: that cell moved between testbed revisions).
    for flow2, rtt, buffer in (("cubic", "100ms", "0.6bdp"), ("cubic", "400ms", "0.6bdp"), ("bbr", "25ms", "0.2bdp")):
        reno = _cells(pooled, flow2, rtt, buffer).query("flow == 1")
        assert len(reno) == 1 and abs(reno["error"].iloc[0]) <= 0.10, reno[["S", "T", "error", "p"]]

    # At 25 ms CUBIC takes more than Reno in both backends once the buffer holds 0.6 BDP or more
    # (the kernel's CUBIC 1.14-1.25x Reno's, the simulator's 1.22-1.47x); at 0.2 BDP the kernel's
    # runs split either way (Reno 42-61 Mb/s in these, 34-52 in later ones).
    short = _cells(errors, "cubic", "25ms")
    for buffer, cell in short.groupby("topology.buffer"):
        if buffer == "0.2bdp":
            continue
        mbps = cell.set_index("flow")
        assert mbps.loc[2, "S"] > 1.1 * mbps.loc[1, "S"], f"simulator at {buffer}: {mbps[['S', 'T']]}"
        assert mbps.loc[2, "T"] > 1.1 * mbps.loc[1, "T"], f"kernel at {buffer}: {mbps[['S', 'T']]}"

    # At 100 ms / 0.6 BDP CUBIC starts while Reno's window nears the queue's limit, and where its
    # data starts decides the cell: iperf3's preamble holds it back five round trips (0.7 s), past
    # Reno's overflow, so CUBIC leaves slow start with a large overshoot, as in the kernel (15-127
    # segments retransmitted over 30-36 s, 34 in most runs), and the kernel's Reno then goes
    # through 7 or 9 recoveries (20-21.5 or 15.3 Mb/s). Without the preamble CUBIC's first window
    # met that overflow in every simulated run: 4-9 segments, and Reno never had 9.
    cell = _cells(sim, "cubic", "100ms", "0.6bdp")["run_id"]
    recoveries = frames.flows[frames.flows["run_id"].isin(cell) & (frames.flows["flow"] == 0)]["recoveries"]
    assert recoveries.min() <= 7 and recoveries.max() >= 9, sorted(recoveries)
    iv = frames.intervals
    start = iv[iv["run_id"].isin(cell) & (iv["flow"] == 1) & (iv["t_s"] > 30) & (iv["t_s"] <= 36)].groupby("run_id")["retrans_pkts"].sum()
    assert len(start) == 10 and start.median() >= 15, sorted(start)

    # The 200 and 400 ms cells on the testbed that places each flow's series at its data's start
    # (docs/data/validation-timed-testbed.duckdb, 2 runs a cell, made after the preamble was put
    # in): 24 of 24 flows within 10%, mean error 1.6%, mean |ΔJFI| 0.004 (seeds 11, 21, 31: 24,
    # 24, 23 and 1.7, 2.0, 2.4%). One flow outside is allowed where the rate is small: Reno next
    # to BBR at 200 ms / 0.2 BDP, which BBR leaves 1.2 Mb/s, was 1.37 against the kernel's 1.24
    # before the simulator queued its data in skbs as Linux does.
    timed = _runs(DATA / "validation-timed-testbed.duckdb")
    long_rtt, timed, _, _ = analysis.common_cells(sim, timed)
    late = analysis.flow_errors(long_rtt, timed)
    off = late[late["error"].abs() > 0.10]
    assert len(late) == 24 and len(off) <= 1 and late["error"].abs().mean() <= 0.025, late[["flow2", "topology.rtt", "topology.buffer", "flow", "S", "T", "error"]]
    assert (off["T"] < 2.0).all(), off
    assert analysis.compare_summary(analysis.compare(long_rtt, timed))["mean_abs_d"] <= 0.01

    # The whole grid on that testbed: its 25, 50 and 100 ms cells
    # (docs/data/validation-timed-near-testbed.duckdb, 3 runs a cell) with the 200 and 400 ms ones,
    # run on the machine whose hosts' holds the simulator draws: 56 of 60 flows within 10%, mean
    # error 3.1% (seeds 11, 21, 31: 56, 53, 54 and 3.2, 3.5, 3.6%; before the skbs 59, 59, 57).
    # The flows outside 10% on seed 1: Reno next to BBR at 100 ms / 0.2 BDP (2.04 against 2.28
    # Mb/s, p 0.05) and Reno next to CUBIC at 25 ms / 0.2 and 0.6 BDP and 50 ms / 0.2 BDP (+14%,
    # +10%, +14%, where the kernel's three runs have a standard deviation of 4.7, 6.1 and 1.5
    # Mb/s; p 0.20, 0.40, 0.15). These runs sit at one round trip each; over the phase the 25 ms
    # cells agree (below).
    fixed = analysis.pool(_runs(DATA / "validation-timed-near-testbed.duckdb"), [("validation-timed", timed)], new_cells=True)
    jfi = analysis.compare_summary(analysis.compare(sim, fixed))
    assert jfi["cells"] == 30 and jfi["mean_abs_d"] <= 0.02 and jfi["max_abs_d"] <= 0.06, jfi
    errors = analysis.flow_errors(sim, fixed)
    flows = analysis.flow_error_summary(errors)
    assert flows["flows"] == 60 and flows["flows_within"] >= 55 and flows["mean_abs_error"] <= 0.035, flows

    # Three more kernel runs of the six cells next to CUBIC at 25-100 ms / 0.6 and 1.0 BDP, where
    # the kernel's first three spread most (docs/data/validation-spread-testbed.duckdb, same
    # machine): pooled, 55 of 60 (seeds 11, 21, 31: 56, 51, 52), mean error 3.5%. They show a gap
    # that three runs hid: at 25 ms / 0.6 and 1.0 BDP the kernel's Reno gets 35.5 Mb/s in six
    # runs each, the simulator's 40.8-41.7 (+15-17%, p 0.03-0.04; docs/validation.md).
    spread = analysis.pool(fixed, [("validation-spread", _runs(DATA / "validation-spread-testbed.duckdb"))])
    flows = analysis.flow_error_summary(analysis.flow_errors(sim, spread))
    assert flows["flows_within"] >= 53 and flows["mean_abs_error"] <= 0.04, flows

    # 25 ms / 0.2 BDP next to CUBIC, where the kernel's runs scatter most (Reno 32-41 Mb/s in
    # these three, 34-61 Mb/s over every store), is checked over the phase instead (below): at this
    # one round trip the simulator's Reno is +14% over these three runs (p 0.20), at the
    # phased runs' spread of round trips -4% under their 13.


#: The kernel's Reno next to BBR at 0.2 BDP, Mb/s over 48-120 s, at round trips within one
#: packet's time (the router at exactly rtt/2 each way, `tcplab testbed run --uncompensated`;
#: 2026-11-27, build 6.18.44-fc-v657; docs/validation.md, "Phase: the loop's delay modulo one
#: packet"): at 50 ms two runs a setting, at 100 and 200 ms one.
KERNEL_PHASE = {
    "50ms": {
        "50.00ms": (3.38, 3.30),
        "50.015ms": (3.22, 3.09),
        "50.03ms": (3.38, 3.30),
        "50.06ms": (3.24, 3.19),
        "50.09ms": (3.59, 3.51),
        "50.10ms": (3.41, 3.53),
        "50.11ms": (3.28, 3.28),
        "50.12ms": (3.56, 3.52),
    },
    "100ms": {
        "100.00ms": (2.60,),
        "100.015ms": (2.31,),
        "100.03ms": (1.99,),
        "100.045ms": (2.02,),
        "100.06ms": (1.96,),
        "100.075ms": (2.01,),
        "100.09ms": (2.28,),
        "100.105ms": (2.66,),
    },
    "200ms": {
        "200.00ms": (1.17,),
        "200.015ms": (1.14,),
        "200.03ms": (1.33,),
        "200.045ms": (1.18,),
        "200.06ms": (1.18,),
        "200.075ms": (1.44,),
        "200.09ms": (1.51,),
        "200.105ms": (1.23,),
    },
    # Next to CUBIC at 25 ms / 0.6 BDP (125 packets; 126 at 25.105 ms, the BDP's rounding).
    "cubic-25ms": {
        "25.00ms": (40.34,),
        "25.015ms": (31.42,),
        "25.03ms": (33.73,),
        "25.045ms": (38.72,),
        "25.06ms": (35.26,),
        "25.075ms": (35.47,),
        "25.09ms": (42.60,),
        "25.105ms": (58.89,),
    },
}
#: What a cell changes in scenarios/validation-phase.toml (Reno next to BBR at 0.2 BDP).
PHASE_CELL = {"cubic-25ms": {"topology.buffer": "0.6bdp", "flows[1].variant": "cubic"}}


def _reno_over_the_period(cell: str) -> tuple[list[float], list[float]]:
    """Reno's Mb/s at each of the cell's kernel settings: the simulator's (mean of 10 seeds) and the
    kernel's. The seeds run on every core (the engine releases the GIL)."""
    base = tcplab.load_scenario(ROOT / "scenarios" / "validation-phase.toml")
    sim, kernel = [], []
    for rtt, runs in KERNEL_PHASE[cell].items():
        scenario = base.override({**PHASE_CELL.get(cell, {}), "topology.rtt": rtt})
        with ThreadPoolExecutor(os.cpu_count()) as pool:
            summaries = list(pool.map(lambda seed: tcplab.simulate(scenario, seed=seed).summary(), range(1, 11)))
        sim.append(sum(float(s.loc[s["flow"] == "flow1", "throughput_mbps"].iloc[0]) for s in summaries) / len(summaries))
        kernel.append(sum(runs) / len(runs))
    return sim, kernel


def test_reno_next_to_bbr_follows_the_round_trip_to_microseconds_as_on_the_kernel() -> None:
    # Which segments BBR's overflows drop follows the round trip against the bottleneck's 120-us
    # departures: at 50 ms, over 120 us of settings, the kernel's Reno spans 3.16-3.55 Mb/s (its
    # two runs at a setting within 0.13), the simulator's 3.28-3.76 (10 seeds). The two curves
    # differ in detail (docs/validation.md), so the cell is compared over the period: the
    # simulator's mean within 10% of the kernel's (+6.3%), and Reno's spread at least
    # 8% in both.
    sim, kernel = _reno_over_the_period("50ms")
    assert abs(sum(sim) / sum(kernel) - 1) <= 0.10, (sim, kernel)
    assert max(kernel) >= 1.08 * min(kernel) and max(sim) >= 1.08 * min(sim), (sim, kernel)


@pytest.mark.parametrize("cell", ["100ms", "200ms"])
def test_reno_next_to_bbr_at_long_rtts_over_the_period_as_on_the_kernel(cell: str) -> None:
    # Over the period the kernel's Reno spans 1.96-2.66 Mb/s at 100 ms and 1.14-1.51 at 200 ms,
    # the simulator's (10 seeds) 2.00-2.49 and 1.18-1.42, its highs elsewhere; their means agree
    # (2.204 against 2.229, 1.280 against 1.272). At the grid's one round trip the simulator was 8%
    # under the kernel's three runs at 100 ms and 9-13% over at 200 ms.
    sim, kernel = _reno_over_the_period(cell)
    assert abs(sum(sim) / sum(kernel) - 1) <= 0.05, (sim, kernel)


def test_reno_next_to_cubic_at_25ms_over_the_period_as_on_the_kernel() -> None:
    # At the grid's one round trip the kernel's Reno got 35.5 Mb/s in six runs (compensated
    # router) and the simulator's 39-42. Over eight round trips 15 us apart (one uncompensated
    # kernel run each) the kernel's spans 31.4-58.9 Mb/s, the simulator's (10 seeds each)
    # 35.7-48.7, and the means agree: 40.65 against 39.55 (+2.8%; +0.7% before the senders queued
    # their data in skbs). A CUBIC cell's kernel runs also scatter at one setting (2-6 Mb/s), so
    # the bound is the study's 10%.
    sim, kernel = _reno_over_the_period("cubic-25ms")
    assert abs(sum(sim) / sum(kernel) - 1) <= 0.10, (sim, kernel)
    assert max(kernel) >= 1.2 * min(kernel) and max(sim) >= 1.1 * min(sim), (sim, kernel)


#: The kernel's runs of experiments/validation-phased.toml and of its extra files, each at a round
#: trip spread over one packet's time (docs/validation.md, "The grid spread over the loop's phase").
PHASED = ("validation-phased", "validation-phased-cubic", "validation-phased-cubic25", "validation-phased-400", "validation-phased-c25-06", "validation-phased-c400")


def _phased_kernel():
    """Every valid kernel run of :data:`PHASED`, pooled as one grid (158 runs, 3-21 a cell)."""
    return analysis.pool(_runs(DATA / f"{PHASED[0]}-testbed.duckdb"), [(name, _runs(DATA / f"{name}-testbed.duckdb")) for name in PHASED[1:]], new_cells=True)


def test_reno_next_to_cubic_at_25ms_spread_over_the_phase_as_on_the_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The 25 ms cells next to CUBIC at 0.2 and 0.6 BDP, where the kernel's runs scatter most
    # (Reno 32-60 and 34-64 Mb/s in these): experiments/validation-phased.toml restricted to
    # them, 40 replications at round trips spread over one packet's time, against the kernel's 13
    # and 21 runs spread the same way. Both flows within 10% (Reno -3.8% and -8.1%; with 200
    # replications -2.6% and -7.7%; before the simulator queued its data in skbs as Linux does,
    # -7.0% and -9.6%, and -5.3% and -10.3% with 200). At one round trip, against three kernel
    # runs, these cells move with the phase (docs/validation.md).
    text = (ROOT / "experiments" / "validation-phased.toml").read_text()
    cut = {
        "\nreplications = 3\n": "\nreplications = 40\n",
        '\nflow2 = ["cubic", "bbr"]\n': '\nflow2 = ["cubic"]\n',
        '\n"topology.rtt" = ["25ms", "50ms", "100ms", "200ms", "400ms"]\n': '\n"topology.rtt" = ["25ms"]\n',
        '\n"topology.buffer" = ["0.2bdp", "0.6bdp", "1.0bdp"]\n': '\n"topology.buffer" = ["0.2bdp", "0.6bdp"]\n',
    }
    for old, new in cut.items():
        assert old in text, old
        text = text.replace(old, new)
    experiment = tmp_path / "phased.toml"
    experiment.write_text(text)
    store = tmp_path / "sim.duckdb"
    assert main(["run", str(experiment), "--backend", "sim", "--store", str(store), "-q"]) == 0
    capsys.readouterr()
    sim, kernel, _, _ = analysis.common_cells(_runs(store), _phased_kernel())
    errors = analysis.flow_errors(sim, kernel)
    assert len(errors) == 4 and (errors["error"].abs() <= 0.10).all(), errors[["topology.buffer", "flow", "S", "T", "error", "p"]]
    runs = kernel.groupby("topology.buffer")["run_id"].nunique().to_dict()
    assert runs == {"0.2bdp": 13, "0.6bdp": 21}, runs


def test_the_phased_grid_with_each_round_trips_holds_agrees_with_the_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # experiments/validation-phased-holds.toml: the phased grid with the simulated hosts holding
    # packets as the testbed's hosts were measured to at each round trip ([[cells]]), 10
    # replications, against every phased kernel run (158). 56 of 60 flows within 10%, mean error
    # 2.7%, mean |ΔJFI| 0.007 (seeds 11, 21, 31: 59, 58, 59 flows; 2.4, 2.6, 2.1%); with the
    # grid's one table instead 55, 58, 56, 55 and 3.6, 3.0, 2.9, 2.9%, which the bound on the
    # mean error refuses on seed 1. With 200 replications every flow is within 10% (mean error
    # 2.1%; one table: 59, 2.6%; docs/validation.md).
    text = (ROOT / "experiments" / "validation-phased-holds.toml").read_text()
    assert "\nreplications = 3\n" in text
    experiment = tmp_path / "holds.toml"
    experiment.write_text(text.replace("\nreplications = 3\n", "\nreplications = 10\n"))
    store = tmp_path / "sim.duckdb"
    assert main(["run", str(experiment), "--backend", "sim", "--store", str(store), "-q"]) == 0
    capsys.readouterr()
    sim = _runs(store)
    kernel = _phased_kernel()
    assert kernel["run_id"].nunique() == 158
    jfi = analysis.compare_summary(analysis.compare(sim, kernel))
    assert jfi["cells"] == 30 and jfi["mean_abs_d"] <= 0.01, jfi
    flows = analysis.flow_error_summary(analysis.flow_errors(sim, kernel))
    assert flows["flows"] == 60 and flows["flows_within"] >= 55 and flows["mean_abs_error"] <= 0.03, flows
