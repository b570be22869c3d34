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

The bounds: the issue's goal for the mean |ΔJFI| (0.03), paper 001's ns-2 figure (0.087) for the
worst cell, 47 of 60 flows within 10% and a mean error of 5% (the simulator now, with the hosts'
90 µs of timing noise and the measured tail of their holds, 0.5% of sends held up to 0.5 ms:
0.012, 0.055, 49 flows, 4.6%; seed 11: 0.012, 0.045, 51, 4.5%; seeds 21 and 31: 55 and 54 flows;
with 90 µs alone 0.013, 0.039, 51 flows, 4.7%; with 3% of sends stalled up to 1 ms, fitted to
these runs rather than measured, 0.010, 0.040, 55 flows, 4.0%; with 45 µs of jitter alone 0.011,
0.051, 47 flows, 6.0%; without noise 0.016, 0.104, 46 flows, 7.2%). Pooled with the kernel's
later runs of the cells that scatter or were off (docs/data/validation-{c25,mid,far}-testbed.duckdb:
6-11 runs in those 9 cells, 3 elsewhere) 52 flows are within 10% (seeds 11, 21, 31: 53, 55, 55;
90 µs alone 54, 53, 55, 53; the fitted stalls 58, 58, 59, 55); the bound is 50. Two cells the
tail brought in are checked one by one: Reno next to CUBIC at 100 ms / 1.0 BDP and at 400 ms /
0.6 BDP (+14%, +13.5% with 90 µs alone; now +5%, −1%), where the kernel's Reno meets every one of
CUBIC's overflows and, without the tail, the simulator's escapes some. Against the testbed
corrected on the idle path (docs/data/validation-rev3-testbed.duckdb, whose round trip was
0.2-0.35 ms short) the simulator with 45 µs gave 0.013, 0.082, 54 flows, 4.6%.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tcplab import analysis
from tcplab.cli import main

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "data"


def _runs(store: Path):
    return analysis.per_run(analysis.load_frames(store))


def _cells(errors, flow2: str, rtt: str, buffer: str | None = None):
    """The rows of ``errors`` (from analysis.flow_errors) next to ``flow2`` at ``rtt`` (and ``buffer``)."""
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
    sim = _runs(store)
    kernel = _runs(DATA / "validation-rev4-testbed.duckdb")

    jfi = analysis.compare_summary(analysis.compare(sim, kernel))
    assert jfi["cells"] == 30
    assert jfi["mean_abs_d"] <= 0.03 and jfi["max_abs_d"] <= 0.087, jfi

    errors = analysis.flow_errors(sim, kernel)
    flows = analysis.flow_error_summary(errors)
    assert flows["flows"] == 60
    assert flows["flows_within"] >= 47 and flows["mean_abs_error"] <= 0.05, flows

    # Reno next to BBR at 25 ms / 0.6 and 1.0 BDP, which hang on 1% of BBR's rate: within 8% once
    # BBR paces itself as the kernel's does (TCP's own pacing timer, no fq; docs/validation.md; now
    # +3% and +6%).
    bbr = _cells(errors, "bbr", "25ms").query("flow == 1").set_index("topology.buffer")
    for buffer in ("0.6bdp", "1.0bdp"):
        assert abs(bbr.loc[buffer, "error"]) <= 0.08, bbr[["S", "T", "error"]]

    # With the kernel's later runs of nine cells next to CUBIC (docs/data/validation-{c25,mid,far}
    # -testbed.duckdb: 6-11 runs in those cells, 3 elsewhere) 52 flows are within 10%.
    more = [(name, _runs(DATA / f"{name}-testbed.duckdb")) for name in ("validation-c25", "validation-mid", "validation-far")]
    pooled = analysis.flow_errors(sim, analysis.pool(kernel, more))
    assert analysis.flow_error_summary(pooled)["flows_within"] >= 50, pooled[pooled["error"].abs() > 0.10]

    # Where the kernel's Reno meets every overflow and the simulator's escaped some before its
    # hosts held sends as long as the testbed's loop does: Reno within 10% next to CUBIC at 100 ms
    # / 1.0 BDP and 400 ms / 0.6 BDP (with 90 µs alone +14%, +13.5%). (Next to BBR at 25 ms / 0.2
    # BDP Reno is +14% against rev4's 4.26 Mb/s, +3% against the 4.70 of the later kernel runs in
    # docs/data/validation-check-testbed.duckdb: that cell moved between testbed revisions.)
    for flow2, rtt, buffer in (("cubic", "100ms", "1.0bdp"), ("cubic", "400ms", "0.6bdp")):
        reno = _cells(pooled, flow2, rtt, buffer).query("flow == 1")
        assert len(reno) == 1 and abs(reno["error"].iloc[0]) <= 0.10, reno[["S", "T", "error", "p"]]

    # 25 ms / 0.2 BDP next to CUBIC, where the kernel's runs scatter most (Reno 34-61 Mb/s): with
    # the 8 more runs of docs/data/validation-c25-testbed.duckdb (11 in all) both flows are within
    # 10% (Reno -3%, CUBIC +4%; with 90 µs alone -4%, +6%; with 45 µs alone -17% and +18%, p 0.008
    # and 0.007).
    cell = _cells(pooled, "cubic", "25ms", "0.2bdp")
    assert len(cell) == 2 and (cell["error"].abs() <= 0.10).all(), cell[["flow", "S", "T", "error", "p"]]

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
