"""The emulated testbed end to end: calibration, a run of scenarios/testbed-quick.toml returning
simulate's tables, and clean-up after success and after a SIGKILLed runner.

These need root, iperf3, ping, ethtool and the router (``cargo build --release -p tcplab-router``,
done by ``make install``); the CI machine runs as root. About a minute in all.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import signal
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import tcplab
from leftovers import netns, processes
import tcplab.testbed as testbed
from tcplab.experiment import KERNEL_DEFAULT_TCP
from tcplab.testbed import stack
from tcplab.testbed.experiment import Calibration
from tcplab.testbed.tools import PingStats

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / "scenarios" / "testbed-quick.toml"


def _script(name: str) -> ModuleType:
    """``scripts/{name}.py`` as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


loss_split = _script("loss_split")
queues_testbed = _script("queues_testbed")


def _assert_nothing_left() -> None:
    assert netns() == []
    assert processes("tcplab-router", "iperf3") == []


@pytest.fixture(scope="module")
def quick_pcap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("router") / "fwd.pcap"


@pytest.fixture(scope="module")
def quick(quick_pcap: Path) -> tcplab.Result:
    return testbed.run(testbed.load(QUICK), router_pcap=quick_pcap)


def test_router_pcap_is_what_the_queue_received(quick: tcplab.Result, quick_pcap: Path) -> None:
    """--router-pcap: every packet the bottleneck's queue was offered, at the router's arrival
    time. Fed to an ideal drop-tail queue of the same limit and rate, those arrivals must give
    exactly the router's drop count: the router's queue is that queue, and the stamps are the
    times its drop decisions used."""
    tshark = shutil.which("tshark")
    assert tshark is not None, "tshark is not installed (make deps installs it)"
    out = subprocess.run([tshark, "-r", str(quick_pcap), "-T", "fields", "-e", "frame.time_epoch", "-e", "frame.len"],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    fwd = quick.queues.iloc[0]
    assert len(rows) == fwd["enqueued_pkts"]
    arrivals = [(loss_split.epoch_ns(stamp), k, int(size)) for k, (stamp, size) in enumerate(rows)]
    dropped = len(loss_split.replay(arrivals, int(fwd["max_pkts"]), 100_000_000))
    assert dropped == fwd["dropped_pkts"] > 0


def _held_up(cal: Calibration) -> str:
    """The routers' own verdict on a calibration: '' unless the machine held one up past the limit
    that marks runs invalid (p99.9 lateness) while the overhead's or the judged pings ran, else
    what they reported."""
    late = testbed.experiment._lateness_p999(cal.router)
    before = cal.uncorrected_lateness_ns or 0
    if max(late, before) <= testbed.LATENESS_LIMIT_NS:
        return ""
    return f"router lateness p99.9 {before / 1e3:.0f} µs under the overhead's pings, {late / 1e3:.0f} µs after"


#: Calibrations a test takes before it gives up on a machine that holds the router up in each.
TRIES = 3


def test_calibration_meets_the_papers_tolerances() -> None:
    # Ping RTT within 1 ms of 50 ms; UDP offered above 100 Mb/s arrives at 100 Mb/s ± 2 %. A
    # calibration that fails while the machine holds its router up (its own warning: lateness past
    # the limit that marks runs invalid) is taken again: in CI on 2026-12-01 two in a row met
    # 1.06 s and 3.2 s of stalls in 3 s of UDP and came out 28% slow. Such a machine cannot show
    # the tolerances, and the test says so; a failure without that warning fails.
    held = []
    for _ in range(TRIES):
        p = subprocess.run(
            [sys.executable, "-m", "tcplab", "testbed", "calibrate", "--rtt", "50ms", "--bottleneck", "100Mbps", "--seconds", "3"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if p.returncode == 0 or "runs under this load would be marked invalid" not in p.stderr + p.stdout:
            break
        held.append(p.stdout.splitlines()[-2:])
    else:
        _assert_nothing_left()
        pytest.skip(f"the machine held the router up in {TRIES} calibrations: {held}")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "calibration ok" in p.stdout
    assert "ping RTT" in p.stdout and "UDP rate" in p.stdout and "taken out of the router's delay" in p.stdout
    # Each direction's line ends with its stalls (wake-ups over 1 ms late).
    for device in ("tcplab-fwd", "tcplab-rev"):
        assert re.search(rf"^router {device}: timer lateness .*; (no stalls|\d+ stalls? over 1 ms \([\d.]+ ms in all, longest [\d.]+ ms\))$", p.stdout, re.M), p.stdout
    _assert_nothing_left()


def test_calibration_takes_the_paths_own_round_trip_out_of_the_routers_delay() -> None:
    # The path (veths, the router's wake-ups and writes) adds a few hundred µs to the router's
    # delay; the corrected router delays each direction by half of that less, and the fastest
    # ping comes back that much sooner (the minimum: a stall of the machine cannot lower it).
    # Both are pinged under a run's packet rate (_path_load), under which the overhead is
    # steady (0.12-0.18 ms on a quiet machine), so the corrected mean is the setting's (measured
    # within 0.03 ms; docs/testbed.md). The overhead is the median of six runs' means: a burst
    # of stalls in one run does not move it.
    rtt_ns = 25_000_000
    held = []
    for _ in range(TRIES):
        cal = testbed.calibrate(rtt_ns, 100_000_000, udp_seconds=2)
        assert cal.uncorrected is not None and cal.uncorrected.count == testbed.experiment.OVERHEAD_PINGS == 300
        assert [r.count for r in cal.uncorrected_runs] == [50] * 6
        assert cal.uncorrected == PingStats.combine(cal.uncorrected_runs)
        assert cal.rtt.count == 200 and cal.as_dict()["ping_interval_ms"] == 10.0
        median = statistics.median(r.mean_ms for r in cal.uncorrected_runs)
        assert 0 < cal.overhead_ns == round(median * 1e6) - rtt_ns < 5_000_000
        assert {d["delay_ns"] for d in cal.router["directions"]} == {(rtt_ns - cal.overhead_ns) // 2}
        assert cal.rtt.min_ms < cal.uncorrected.min_ms
        # The corrected pings' mean is the setting's, unless the machine held the router up
        # while they or the overhead's pings ran (then try again).
        if abs(cal.rtt_mean_ms - 25) < 0.2 and cal.ok:
            break
        reason = _held_up(cal)
        assert reason, cal.as_dict()
        held.append(reason)
    else:
        _assert_nothing_left()
        pytest.skip(f"the machine held the router up in {TRIES} calibrations: {held}")
    plain = testbed.calibrate(rtt_ns, 100_000_000, udp_seconds=2, ping_count=5, compensate=False)
    assert plain.overhead_ns == 0 and plain.uncorrected is None and plain.uncorrected_runs == [] and plain.uncorrected_lateness_ns is None
    assert {d["delay_ns"] for d in plain.router["directions"]} == {rtt_ns // 2}
    assert plain.as_dict()["path_overhead_ms"] == 0 and plain.as_dict()["uncorrected_rtt_mean_ms"] is None
    _assert_nothing_left()


def test_a_runs_router_takes_the_rtt_offset_and_its_queue_the_rtts_bdp(monkeypatch: pytest.MonkeyPatch) -> None:
    """The testbed builds its path for rtt + rtt_offset (the router delays each way by half of it,
    less half the path's overhead), and sizes a buffer in BDP by the rtt alone, as the simulator
    does; its queue discipline (RED, CoDel) is the scenario's."""
    opened: list[tuple[int, dict, int]] = []

    class Opened(Exception):
        pass

    def session(pairs: int, rate_bps: int, rtt_ns: int, queue: dict, *rest: object, seed: int, rate_schedule: list) -> None:
        assert rate_schedule == []  # the quick scenario's bottleneck keeps its rate
        opened.append((rtt_ns, queue, seed))
        raise Opened

    monkeypatch.setattr(testbed.experiment, "_session", session)
    base = testbed.load(QUICK).override({"topology.buffer": "0.6bdp"})
    red = base.override({"topology.queue": "red"})
    codel = base.override({"topology.queue": "codel", "topology.codel.target": "2ms"})
    for scenario in (base, base.override({"topology.rtt_offset": "60us"}), red, codel):
        with pytest.raises(Opened):
            testbed.run(scenario, seed=7)
    assert [rtt for rtt, _, _ in opened] == [base.topology.rtt.ns, base.topology.rtt.ns + 60_000, base.topology.rtt.ns, base.topology.rtt.ns]
    limit = {"limit_pkts": round(0.6 * 100e6 * base.topology.rtt.ns / 8e9 / 1500)}
    assert opened[0][1] == opened[1][1] == {"kind": "droptail", **limit}
    # RED goes to the router as the simulator gets it, with the run's seed for its drops.
    assert opened[2][1] == red.to_engine_spec()["topology"]["queue"] == {"kind": "red", **limit, "red": opened[2][1]["red"]}
    # CoDel too, its parameters as given.
    assert opened[3][1] == codel.to_engine_spec()["topology"]["queue"] == {"kind": "codel", **limit, "codel": {"target_ns": 2_000_000, "interval_ns": 100_000_000, "mtu_bytes": 1500}}
    assert [seed for _, _, seed in opened] == [7, 7, 7, 7]


@contextlib.contextmanager
def _kernel(r: tcplab.Result) -> Iterator[None]:
    """Assertions about what a run measured. On a testbed run the testbed itself marked invalid
    (the machine held its router up past the limit, or its calibration failed) a failed assertion
    skips the test, naming both: such a run shows the machine, not the kernel (in CI on
    2026-12-02 one's two CUBIC flows through CoDel queued 15.4 packets on average, CSFQ's JFI
    was 0.954, Reno and CUBIC filled 74 Mb/s of 100). On a valid run or a simulator's result it
    fails. The simulator's result is checked first, so that it always is."""
    try:
        yield
    except AssertionError as e:
        if r.meta.get("backend") == "testbed" and not r.meta["valid"]:
            pytest.skip(f"the testbed marked its run invalid ({r.meta['invalid_reason']}); what it measured: {e}")
        raise


_on_both_backends = queues_testbed.on_both_backends


def _cubic_and(tmp_path: Path, name: str, queue: str, second: str) -> tuple[tcplab.Result, tcplab.Result]:
    """The kernel's CUBIC and a ``second`` flow (``cubic``, ``bbr`` or ``cbr``, from 1 s) on 20
    Mb/s, 40 ms, a 400-packet buffer through ``queue``, 20 s, window 8–20 s: the testbed's run and
    the simulator's of the same file (``scripts/queues_testbed.py`` runs every discipline so)."""
    return _on_both_backends(tmp_path, name, queues_testbed.cubic_and(queue, queues_testbed.SECOND[second]))


# Every floor is 17 Mb/s. The router's CoDel and FQ-CoDel once lost a packet's slot when they
# dropped as an arrival was read: a later arrival's bytes left in an earlier packet's place, and
# the kernels, seeing their segments reordered, spun in recovery (two FQ-CoDel runs of six short,
# 17.74 and 15.99 Mb/s; on 2026-12-01 ten CoDel and FQ-CoDel runs in eleven at 0.3–1.5 Mb/s).
# Fixed (`every_discipline_sends_each_packet_once_in_order_and_frees_every_slot` in the router):
# FQ-CoDel 18.21, 18.61, 18.47 Mb/s and CoDel 19.13, 18.97 in the next runs, nothing reordered.
@pytest.mark.parametrize(("queue", "most_pkts", "least_mbps"), [("pie", 40, 17), ("fq_codel", 15, 17), ("cake", 15, 17), ("dualpi2", 40, 17)])
def test_an_aqm_in_the_router_holds_the_kernels_queue_at_its_target(tmp_path: Path, queue: str, most_pkts: int, least_mbps: float) -> None:
    """Two kernel CUBIC flows into a 400-packet buffer (10 BDP) through the router's PIE, FQ-CoDel,
    CAKE or DualPI2 (classic flows: its C queue): the queue stays short (CoDel's and CAKE's target
    is 5 ms, 8 packets here; PIE's and DualPI2's 15 ms, 25), every drop the discipline's, the link
    full. CoDel runs here with ECN (the next test but
    one), FQ-PIE beside BBR (the next); ``scripts/queues_testbed.py --second cubic`` runs this case
    for every discipline. With DropTail the same
    flows keep about 324 packets queued (30-s runs, 2026-11-28, router and simulator: DropTail
    324.4 and 324.6 packets on average; CoDel 6.5 and 7.1; PIE 25.3 and 25.9; FQ-CoDel 4.5 (4.0
    in a second run) and 4.8; FQ-PIE 25.6 and 25.7; 2026-12-02, CAKE 4.56 and 3.88, 51 drops in
    both, 9.44 / 9.53 and 9.44 / 9.62 Mb/s; 2026-12-03, DualPI2 22.4 and 22.9, 45 and 46 drops)."""
    tb, sim = _cubic_and(tmp_path, queue, queue, "cubic")
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            fwd = r.queues.iloc[0]
            total = r.summary()["throughput_mbps"].sum()
            assert fwd["mean_pkts"] < most_pkts, (name, fwd["mean_pkts"])
            assert fwd["dropped_pkts"] == fwd["early_drop_pkts"] > 0 and fwd["max_pkts"] < 400, (name, fwd)
            assert total > least_mbps, (name, total)
    _assert_nothing_left()


def test_cakes_shaper_and_tins_in_the_router_hold_the_kernels_flows(tmp_path: Path) -> None:
    """Two kernel CUBIC flows through the router's CAKE shaped to 15 Mb/s on the 20-Mb/s
    bottleneck (40 ms, 400 packets, 20 s), the second marked CS1 by iperf3's --dscp: the shaper,
    not the link, is the bottleneck, and CAKE's diffserv3 (Linux's default) puts the marked flow
    in its bulk tin, which has priority only up to 1/16 of the rate. The flows carry at most the
    shaper's 14.86 Mb/s of IP packets (15 Mb/s of frames), the marked one little of it, and
    CAKE's queue stays short with every drop its own (2026-12-02, 20 s: router 12.82 / 1.36 Mb/s,
    mean queue 8.1 packets, 99 drops; simulator 12.79 / 1.37, 8.0, 102, all CAKE's. Unmarked,
    30-s runs: router 6.81 / 6.83 and 6.86 / 6.81 Mb/s against 6.93 / 6.86, mean queue 3.47 and
    3.56 packets against 3.31; docs/queues/cake.md)."""
    toml = queues_testbed.cubic_and("cake", queues_testbed.SECOND["cubic"] + '\ndscp = "CS1"') + '[topology.cake]\nbandwidth = "15Mbps"\n'
    tb, sim = _on_both_backends(tmp_path, "cake-shaped", toml)
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            fwd = r.queues.iloc[0]
            rates = r.summary()["throughput_mbps"]
            assert 13 < rates.sum() < 15 * 1500 / 1514 + 0.01, (name, list(rates))
            assert rates.iloc[1] < 2.5 < 10 < rates.iloc[0], (name, list(rates))
            assert fwd["mean_pkts"] < 15 and fwd["dropped_pkts"] == fwd["early_drop_pkts"] > 0, (name, fwd)
    _assert_nothing_left()


def test_the_router_follows_the_bottleneck_schedule_from_the_runs_start(tmp_path: Path) -> None:
    """The kernel's CUBIC on a bottleneck of 20 Mb/s, 5 from 6 s, 12 from 12 s (40 ms, 1 BDP,
    18 s): the router counts the schedule from the run's start, which it marks itself, and both
    backends carry each rate's goodput ceiling inside each phase (the seconds right after a step
    left out: the queue drains, the flow reacts). 2026-12-02: the router's phases' middles at
    19.31 / 4.83 / 11.53 Mb/s, the simulator's 19.31 / 4.83 / 11.58 (docs/testbed.md, "Report
    intervals", for the steps themselves)."""
    toml = 'duration = "18s"\nwindow = "3s:18s"\n[topology]\nbottleneck = "20Mbps"\nrtt = "40ms"\nbuffer = "1bdp"\n' \
        'bottleneck_schedule = [["6s", "5Mbps"], ["12s", "12Mbps"]]\n[[flows]]\nvariant = "cubic"\n'
    tb, sim = _on_both_backends(tmp_path, "schedule", toml)
    router = tb.meta["backend_info"]["router"]
    assert router["rate_schedule"] == [[6 * 10**9, 5_000_000], [12 * 10**9, 12_000_000]] and router["rate_changes"] == 2, router
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            series = r.intervals.set_index("t_s")["throughput_mbps"]
            for seconds, rate in (([4, 5], 20), ([9, 10, 11], 5), ([15, 16, 17], 12)):
                ceiling = rate * 1448 / 1500
                mean = series.loc[seconds].mean()
                # iperf3's seconds are its timer's: one a stall stretched holds a little more.
                assert 0.85 * ceiling < mean <= 1.02 * ceiling, (name, rate, list(series.loc[seconds]))
    _assert_nothing_left()


def test_after_an_outage_the_kernel_undoes_its_timeouts_and_so_does_the_simulator(tmp_path: Path) -> None:
    """The kernel's CUBIC on 20 Mb/s, 40 ms, 1 BDP, the link down (rate 0) from 8 s to 9.5 s: the
    router holds what its queue held and drops the rest, the sender times out, and when the link
    is back the queued originals' ACKs show the timeouts were spurious (their echoed timestamps
    are older than the first retransmission): Linux undoes them and repairs only what was
    dropped. The simulator with `undo` (the default for CUBIC) does the same; without it, it
    resends the whole window and overflows the queue again. 2026-12-02, 0.1-s reports: the
    kernel 17.38 Mb/s over 3–18 s, 2 timeouts, 38 drops at the router (11 without the outage);
    the simulator 17.38 Mb/s, 2 timeouts, 42 drops; without undo 17.31 Mb/s, 98 drops and 165
    retransmissions against 42."""
    toml = 'duration = "18s"\nwindow = "3s:18s"\n[topology]\nbottleneck = "20Mbps"\nrtt = "40ms"\nbuffer = "1bdp"\n' \
        'bottleneck_schedule = [["8s", "0Mbps"], ["9.5s", "20Mbps"]]\n[[flows]]\nvariant = "cubic"\n'
    tb, sim = _on_both_backends(tmp_path, "outage", toml)
    without = tcplab.simulate(sim.scenario.override({"tcp.undo": False}))
    drops = {name: int(r.queues.iloc[0]["dropped_pkts"]) for name, r in (("testbed", tb), ("simulator", sim), ("without undo", without))}
    assert drops["without undo"] > 80 and drops["simulator"] < 60, drops
    with _kernel(tb):
        series = tb.intervals.set_index("t_s")["throughput_mbps"]
        assert series.loc[9] < 1.0, list(series)  # the second 8–9 s: nothing crosses
        assert tb.flows["rto_count"].iloc[0] >= 1
        # The kernel counted its undo (TcpExt.TCPLossUndo) as the simulator counts its own.
        assert tb.flows["loss_undos"].iloc[0] >= 1 and sim.flows["loss_undos"].iloc[0] >= 1 and without.flows["loss_undos"].iloc[0] == 0
        assert drops["testbed"] < 60, drops
        total = {name: r.summary()["throughput_mbps"].iloc[0] for name, r in (("testbed", tb), ("simulator", sim))}
        assert abs(total["testbed"] - total["simulator"]) < 0.03 * total["simulator"], total
    _assert_nothing_left()


@pytest.mark.parametrize("queue", ["csfq", "fq_pie"])
def test_a_fair_queue_in_the_router_shares_the_link_between_the_kernels_cubic_and_bbr(tmp_path: Path, queue: str) -> None:
    """The kernel's CUBIC and BBR into a 400-packet buffer through the router's CSFQ or FQ-PIE:
    each gets half the link, and the discipline drops before the buffer is full (DRR and FRED run
    beside a CBR flow below; ``scripts/queues_testbed.py --second bbr`` runs this case for every
    discipline). Through DropTail CUBIC takes more (30-s runs, window 8–30 s, 2026-11-28, router
    and simulator: DropTail 12.10 / 7.20 and 11.89 / 7.42 Mb/s, JFI 0.94 and
    0.95; DRR 9.87 / 9.44 in both, JFI 0.9995; FRED 9.34 / 9.95 and 9.67 / 9.63, JFI 0.999 and
    1.000, mean queue 83.5 and 82.7 packets; CSFQ 9.49 / 9.82 (9.25 / 10.06 in a second run) and
    9.31 / 9.99, JFI 0.9997 (0.9982) and 0.9988, mean queue 258.1 (264.6) and 255.4 packets;
    FQ-PIE 9.64 / 9.51 and 9.66 / 9.53, JFI 1.0000 in both, mean queue 25.8 and 25.4 packets).
    DRR drops only at the limit; FRED, CSFQ and FQ-PIE drop before it (every drop, in those runs).
    BBR paces at about its share (its pacing rate at each second's end, the testbed's as ``ss``
    shows it, its median over the window against its throughput; CUBIC does not pace), and both
    backends report each flow's bytes in flight every second but the testbed's last. The samples
    can lock onto one phase of PROBE_BW's eight-round gain cycle (1.25, 0.75, then 1): with a
    minimum RTT near 41.7 ms a second is three cycles, and a kernel run (FQ-PIE, 2026-12-03) read
    0.75 × its bandwidth in 6 of 11 seconds (median 7.49 Mb/s at 9.52 Mb/s), hence the bounds."""
    tb, sim = _cubic_and(tmp_path, queue, queue, "bbr")
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            x = r.summary()["throughput_mbps"]
            assert r.jain() > 0.97 and x.sum() > 17, (name, list(x))
            fwd = r.queues.iloc[0]
            assert fwd["early_drop_pkts"] > 0, (name, fwd)
            iv = r.intervals[r.intervals.t_s > 8]
            pacing = iv[iv.flow == 1]["pacing_rate_bps"] / 1e6
            assert iv[iv.flow == 0]["pacing_rate_bps"].isna().all() and pacing.notna().sum() >= len(pacing) - 1, (name, pacing.tolist())
            assert 0.7 < pacing.median() / x.iloc[1] < 1.35, (name, pacing.median(), x.iloc[1])
            assert iv["in_flight_bytes"].notna().sum() >= len(iv) - 2 and (iv["in_flight_bytes"] > 0).any(), (name, iv["in_flight_bytes"].tolist())
    _assert_nothing_left()


def test_ecn_the_routers_codel_marks_the_kernels_segments_instead_of_dropping(tmp_path: Path) -> None:
    """Two kernel CUBIC flows with ECN (the senders' net.ipv4.tcp_ecn = 1) through the router's
    CoDel with ECN, 20 Mb/s, 40 ms, 400 packets, 20 s: the router writes CE into the segments' IP
    headers instead of dropping them, and the kernels answer the echoes. Nothing is dropped or
    retransmitted, in either backend, and the queue stays at CoDel's target (2026-11-28, router
    and simulator: 35 marks in both, mean queue 6.3 and 7.0 packets, 19.23 Mb/s in both;
    docs/ecn.md)."""
    tb, sim = _on_both_backends(
        tmp_path,
        "ecn",
        'duration = "20s"\nwindow = "8s:20s"\n[topology]\nbottleneck = "20Mbps"\nrtt = "40ms"\nbuffer = "400pkt"\n'
        'queue = "codel"\n[topology.codel]\necn = true\n[tcp]\necn = true\n[[flows]]\nvariant = "cubic"\n[[flows]]\nvariant = "cubic"\nstart = "1s"\n',
    )
    assert all(h["net.ipv4.tcp_ecn"] == "1" for name, h in tb.meta["backend_info"]["hosts"].items() if "-s" in name), tb.meta["backend_info"]["hosts"]
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            q = r.queues.iloc[0]
            assert q["dropped_pkts"] == 0 and q["marked_pkts"] > 10, (name, q)
            assert r.flows["marked_pkts"].sum() == q["marked_pkts"], (name, list(r.flows["marked_pkts"]))
            # The marks per interval (the testbed's: the router's count at each interval's end)
            # add up to each flow's, where no interval's count is missing.
            per_interval = r.intervals.groupby("flow")["marked_pkts"]
            assert per_interval.sum().tolist() == r.flows["marked_pkts"].tolist() or per_interval.apply(lambda m: m.isna().any()).any(), name
            assert r.summary()["retrans_pkts"].sum() == 0 and r.flows["recoveries"].sum() == 0, name
            assert q["mean_pkts"] < 15 and r.summary()["throughput_mbps"].sum() > 17, (name, q["mean_pkts"])
    _assert_nothing_left()


def test_the_routers_ce_threshold_marks_what_waited_longer_and_the_kernels_answer(tmp_path: Path) -> None:
    """Two kernel CUBIC flows with ECN through the router's CoDel with ``ce_threshold = "5ms"``
    (CoDel's own marking off), 100 Mb/s, 20 ms, 20 s: the router marks the segments that waited
    over 5 ms, nothing is dropped or retransmitted, and the queue and the link's use agree with
    the simulator's (2026-12-03, 30 s: 976 and 1,312 marks, mean queue 11.0 and 11.7 packets,
    91.0 and 90.3 Mb/s over 10–30 s; docs/algorithms/dctcp.md, where a 1-ms threshold is the
    hosts' timing noise's)."""
    tb, sim = _on_both_backends(
        tmp_path,
        "ce-threshold",
        'duration = "20s"\nwindow = "8s:20s"\n[topology]\nbottleneck = "100Mbps"\nrtt = "20ms"\nbuffer = "1000pkt"\n'
        'queue = "codel"\n[topology.codel]\nce_threshold = "5ms"\n[tcp]\necn = true\nsack_compression = true\n'
        '[[flows]]\nvariant = "cubic"\n[[flows]]\nvariant = "cubic"\nstart = "1s"\n',
    )
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            q = r.queues.iloc[0]
            assert q["dropped_pkts"] == 0 and q["marked_pkts"] > 100, (name, q)
            assert r.summary()["retrans_pkts"].sum() == 0, name
            assert 4 < q["mean_pkts"] < 25 and r.summary()["throughput_mbps"].sum() > 80, (name, q["mean_pkts"], r.summary()["throughput_mbps"])
    _assert_nothing_left()


_DCTCP = (
    '[topology]\nbottleneck = "100Mbps"\nrtt = "20ms"\nbuffer = "1000pkt"\nqueue = "codel"\n[topology.codel]\nce_threshold = "5ms"\n'
    '[tcp]\nsack_compression = true\n[[flows]]\nvariant = "dctcp"\n'
)


def test_dctcp_runs_in_the_kernel_as_tcplabs_bpf_program_and_fills_the_link_as_simulated(tmp_path: Path) -> None:
    """One DCTCP flow through CoDel's ``ce_threshold = "5ms"``, 100 Mb/s, 20 ms, 20 s. The kernel
    has no tcp_dctcp, so the testbed registers tcplab's BPF DCTCP (tcplab.testbed.bpf) and the
    run says so; the kernel negotiates ECN for it (no drop), and in both backends the link stays
    full with the queue near the threshold (2026-12-03, 30 s, 10–30 s: 96.33 and 96.53 Mb/s,
    7,150 and 6,168 marks, mean queue 33.0 and 34.8 packets; docs/algorithms/dctcp.md). Both
    report α at each second's end (the testbed's from the BPF program's map), and in both its
    mean over the window follows the flow's marked fraction (2026-12-03, 20 s, 8–20 s: kernel α
    0.053 with 5.3% marked, on a run marked invalid; simulator 0.030 with 2.5%)."""
    tb, sim = _on_both_backends(tmp_path, "dctcp", 'duration = "20s"\nwindow = "8s:20s"\n' + _DCTCP)
    assert tb.meta["backend_info"]["congestion_control"] == ["dctcp"]
    # tcplab's program, unless this kernel has its own DCTCP (then nothing was registered).
    assert tb.meta["backend_info"].get("bpf_congestion_controls", []) == (["dctcp"] if "dctcp" in testbed.bpf.registered() else [])
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            q = r.queues.iloc[0]
            assert q["dropped_pkts"] == 0 and q["marked_pkts"] > 1000, (name, q)
            assert 20 < q["mean_pkts"] < 50, (name, q["mean_pkts"])
            assert r.summary()["throughput_mbps"].sum() > 93, (name, r.summary()["throughput_mbps"])
            inside = r.intervals[r.intervals.t_s > 8]
            alpha, marked = inside["dctcp_alpha"], inside["marked_pkts"].sum() / inside["sent_pkts"].sum()
            assert alpha.notna().all() and alpha.between(0, 1).all(), (name, alpha.tolist())
            assert 0.5 < alpha.mean() / marked < 2, (name, alpha.mean(), marked)
    _assert_nothing_left()


def test_two_unpaced_dctcp_flows_do_not_converge_in_the_kernel_either(tmp_path: Path) -> None:
    """Two DCTCP flows, the second from 5 s, unpaced (Linux's TSO bursts), through the same 5-ms
    marking, 30 s: the late flow's packets come back marked more often than the first's, and it
    stays behind over 10–30 s in both backends (2026-12-03: kernel 62.5 / 33.7, 75.7 / 20.8 and
    77.2 / 19.3 Mb/s, JFI 0.70–0.92, its marked fraction 1.6–3.4 times the first's; simulator
    88.3 / 8.2, JFI 0.59, 8.6 times; docs/algorithms/dctcp.md)."""
    toml = 'duration = "30s"\nwindow = "10s:30s"\n' + _DCTCP + '[[flows]]\nvariant = "dctcp"\nstart = "5s"\n'
    tb, sim = _on_both_backends(tmp_path, "dctcp-pair", toml)
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            marked = (r.flows["marked_pkts"] / r.flows["sent_pkts"]).tolist()
            x = r.summary()["throughput_mbps"].tolist()
            assert marked[1] > 1.3 * marked[0] and x[1] < x[0], (name, marked, x)
            assert r.jain() < 0.95, (name, x)
    _assert_nothing_left()


def test_newreno_starves_vegas_in_the_kernel_as_in_the_simulator(tmp_path: Path) -> None:
    """Paper 002's finding through the real stack: SACK Reno fills a 1-BDP buffer (100 Mb/s,
    50 ms) and Vegas, from 5 s, sees the queue as congestion and keeps backing off. The kernel
    has no tcp_vegas, so the testbed registers tcplab's BPF Vegas (tcplab.testbed.bpf) and the
    run says so (2026-12-03, 30 s, 10–30 s: kernel 94.74 / 1.79 Mb/s, simulator 94.73 / 1.80, 845
    and 840 drops; docs/validation.md, "Linux's other congestion controls on both backends")."""
    toml = (
        'duration = "30s"\nwindow = "10s:30s"\n[topology]\nbottleneck = "100Mbps"\nrtt = "50ms"\nbuffer = "1bdp"\n'
        '[tcp]\nsack_compression = true\n[[flows]]\nvariant = "sack"\n[[flows]]\nvariant = "vegas"\nstart = "5s"\n'
    )
    tb, sim = _on_both_backends(tmp_path, "vegas", toml)
    assert tb.meta["backend_info"]["congestion_control"] == ["reno", "vegas"]
    # tcplab's program, unless this kernel has its own Vegas (then nothing was registered).
    assert tb.meta["backend_info"].get("bpf_congestion_controls", []) == (["vegas"] if "vegas" in testbed.bpf.registered() else [])
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            x = r.summary()["throughput_mbps"].tolist()
            assert x[1] < 0.05 * x[0] and sum(x) > 90, (name, x)
    _assert_nothing_left()


def test_lp_yields_to_reno_only_without_timestamp_offsets_in_the_kernel_as_in_the_simulator(tmp_path: Path) -> None:
    """TCP-LP takes its one-way delay from TSval - TSecr; with Linux's default random timestamp
    offsets (net.ipv4.tcp_timestamps = 1) the receiver's offset is in it and LP, after its first
    early indication, never backs off again: it shares as Reno does. With tcp_timestamps = 2 it
    yields. tcplab's BPF port of tcp_lp.c in the kernel (2026-12-03, 100 Mb/s, 50 ms, 1 BDP, LP
    from 5 s, 10-30 s: without offsets kernel 96.43 / 0.10 Mb/s, simulator 93.58 / 0.15, and in
    five more kernel runs LP 0.10, 0.11, 3.78, 4.74, 11.92; with them 52.69 / 43.70 and
    43.82 / 52.71; docs/validation.md, "TCP-LP and the timestamp offsets")."""
    for offsets in (False, True):
        toml = (
            'duration = "30s"\nwindow = "10s:30s"\n[topology]\nbottleneck = "100Mbps"\nrtt = "50ms"\nbuffer = "1bdp"\n'
            f'[tcp]\nsack_compression = true\ntimestamp_offsets = {str(offsets).lower()}\n'
            '[[flows]]\nvariant = "sack"\n[[flows]]\nvariant = "lp"\nstart = "5s"\n'
        )
        tb, sim = _on_both_backends(tmp_path, f"lp-{offsets}", toml)
        hosts = tb.meta["backend_info"]["hosts"]
        assert hosts["tcplab-s2"]["net.ipv4.tcp_timestamps"] == hosts["tcplab-r2"]["net.ipv4.tcp_timestamps"] == ("1" if offsets else "2")
        for name, r in (("simulator", sim), ("testbed", tb)):
            with _kernel(r):
                x = r.summary()["throughput_mbps"].tolist()
                assert sum(x) > 90, (name, offsets, x)
                if offsets:
                    assert r.jain() > 0.9, (name, offsets, x)
                else:
                    # Yielding: LP crawls at ~0.1 Mb/s, but a missed early indication lets it
                    # slow-start once in a while (4-12 Mb/s over the window in kernel runs); sharing
                    # as Reno would be half the link.
                    assert x[1] < 0.25 * x[0], (name, offsets, x)
    _assert_nothing_left()


def test_scalable_takes_a_small_buffer_from_newreno_in_the_kernel_as_in_the_simulator(tmp_path: Path) -> None:
    """Paper 000's finding through the real stack: with a 0.2-BDP buffer (100 Mb/s, 50 ms)
    Scalable TCP, from 5 s, grows back 1% a round trip after each loss and takes the link from
    SACK Reno, which grows one segment a round trip. tcplab's BPF Scalable in the kernel
    (2026-12-03, 30 s, 10–30 s: kernel 6.24 / 89.35 Mb/s, 670 drops; simulator 4.42 / 91.88, 677;
    docs/validation.md, "Linux's other congestion controls on both backends")."""
    toml = (
        'duration = "30s"\nwindow = "10s:30s"\n[topology]\nbottleneck = "100Mbps"\nrtt = "50ms"\nbuffer = "0.2bdp"\n'
        '[tcp]\nsack_compression = true\n[[flows]]\nvariant = "sack"\n[[flows]]\nvariant = "scalable"\nstart = "5s"\n'
    )
    tb, sim = _on_both_backends(tmp_path, "scalable", toml)
    assert tb.meta["backend_info"]["congestion_control"] == ["reno", "scalable"]
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            x = r.summary()["throughput_mbps"].tolist()
            assert x[1] > 5 * x[0] and sum(x) > 85, (name, x)
    _assert_nothing_left()


def test_without_sack_the_kernel_and_the_simulator_repair_one_hole_per_round_trip(tmp_path: Path) -> None:
    """One flow without SACK (``variant = "sack"``, ``sack = false``: on the testbed the kernel's
    reno with net.ipv4.tcp_sack = 0; in the simulator Linux's SACK-less recovery, with Linux's
    send buffer) whose slow start overflows a 1-BDP buffer at 100 Mb/s, 50 ms: ~835 segments
    lost, and the sender, which learns of one hole per round trip, holds cwnd at ssthresh and
    repairs one a round trip (2026-11-28, kernel and simulator: 834 and 835 drops, 238 and 240
    retransmissions over 8–20 s, 0.46 Mb/s in both; docs/tcp.md).

    The overshoot leaves about as many holes as ssthresh (half the window it lost them from), and
    the kernel's run stays in that crawl only when it is not a few holes more: otherwise PRR's
    proportional part runs out within a few round trips and a timeout ends the recovery, or the
    first repair meets the full queue and is dropped. Then the go-back-N resends everything above
    snd_una and the flow fills the link (2026-12-01, 46 runs: 32 crawled; 14 escaped, at 67–97
    Mb/s over 8–20 s, with 851–1,260 drops and, in the six counted, 2,350–2,700 retransmissions
    in all). The simulator, whose overshoot here leaves one hole fewer than ssthresh,
    always crawls. Both outcomes are the kernel's, and both are told apart from a recovery with
    SACK, which repairs every hole in a few round trips and resends nothing else."""
    tb, sim = _on_both_backends(
        tmp_path,
        "nosack",
        'duration = "20s"\nwindow = "8s:20s"\n[topology]\nbottleneck = "100Mbps"\nrtt = "50ms"\nbuffer = "1bdp"\n'
        '[tcp]\nsack = false\nprr = true\ntso = true\nsndbuf_autotuning = true\n[[flows]]\nvariant = "sack"\n',
    )
    assert {h["net.ipv4.tcp_sack"] for h in tb.meta["backend_info"]["hosts"].values()} == {"0"}, tb.meta["backend_info"]["hosts"]
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            flow, whole = r.summary().iloc[0], r.flows.iloc[0]
            assert 700 <= whole["dropped_pkts"] <= 1500, (name, whole)
            if name == "testbed" and flow["throughput_mbps"] > 50:
                # Escaped by a timeout: go-back-N resent what the receiver already held.
                assert whole["rto_count"] >= 1 and whole["retrans_pkts"] >= 1500 and flow["retrans_pkts"] < 100, (name, whole, flow)
            else:
                assert flow["throughput_mbps"] < 1.0 and 200 <= flow["retrans_pkts"] <= 260 and whole["recoveries"] == 1, (name, flow, whole)
    _assert_nothing_left()


def test_without_sack_a_long_recovery_runs_the_send_buffer_dry_in_both_backends(tmp_path: Path) -> None:
    """One CUBIC flow without SACK, 20 Mb/s, 40 ms, 1 BDP, 10 s: a recovery without SACK keeps
    everything above its holes queued, Linux's send buffer (2 · cwnd · 2304 bytes) fills, the
    sender stalls, and the writer's refill leaves as one burst that overflows the queue. The
    simulator does the same with ``sndbuf_autotuning`` (2026-11-28, kernel in three runs 18.34,
    17.30, 17.08 Mb/s over 2–10 s with 37, 38, 41 drops; simulator 17.59 Mb/s, 39 drops; both
    with SACK about 19.3 Mb/s and 10 drops; docs/tcp.md)."""
    tb, sim = _on_both_backends(
        tmp_path,
        "sndbuf",
        'duration = "10s"\nwindow = "2s:10s"\n[topology]\nbottleneck = "20Mbps"\nrtt = "40ms"\nbuffer = "1bdp"\n'
        '[tcp]\nsack = false\nsndbuf_autotuning = true\n[[flows]]\nvariant = "cubic"\n',
    )
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            flow = r.summary().iloc[0]
            assert flow["throughput_mbps"] < 18.8 and r.flows["dropped_pkts"].iloc[0] >= 25, (name, flow, r.flows.iloc[0])
    _assert_nothing_left()


@pytest.mark.parametrize(("queue", "udp_mbps", "cubic_above"), [("drr", (9.5, 10.5), 9.0), ("fred", (6.0, 9.0), 10.5)])
def test_a_udp_cbr_flow_against_the_kernels_cubic_through_a_fair_queue(tmp_path: Path, queue: str, udp_mbps: tuple[float, float], cubic_above: float) -> None:
    """A UDP CBR flow (iperf3 -u) of 15 Mb/s against the kernel's CUBIC on 20 Mb/s, 40 ms, a
    400-packet buffer: through DropTail the CBR flow keeps what it sends (20-s runs, window 8–20 s,
    2026-11-28, router and simulator: CUBIC 4.87 and 4.84 Mb/s, CBR 14.95 and 14.99); DRR gives
    each half (9.65 / 10.00 in both), dropping only at the buffer's limit; FRED holds the CBR flow
    below half (11.71 / 7.87 and 11.61 / 7.97), dropping before it. ``scripts/queues_testbed.py
    --second cbr`` runs this case for every discipline: CSFQ holds the CBR flow well below what it
    sends (2026-11-28, 8.17 / 11.54 and 8.86 / 10.69), and its split wanders from run to run in both
    backends: the CBR flow kept 11.13–12.51 Mb/s in 11 router runs (median 11.49; 12.64 in one
    more) and 10.69–12.61 in the simulator's seeds 1–30 (median 11.07; seed 1 10.69);
    over 8–60 s, 11.28 and 12.40 in two router runs, 11.80–13.16 in seeds 1–5 (docs/queues/csfq.md)."""
    tb, sim = _cubic_and(tmp_path, f"udp-{queue}", queue, "cbr")
    assert tb.meta["backend_info"]["flow_stacks"][1] == {"cc": "udp", "udp_payload_bps": 14_580_000, "udp_payload_bytes": 972}
    for name, r in (("simulator", sim), ("testbed", tb)):
        with _kernel(r):
            cubic, udp = r.summary()["throughput_mbps"]
            assert udp_mbps[0] < udp < udp_mbps[1] and cubic > cubic_above, (name, cubic, udp)
            fwd = r.queues.iloc[0]
            assert fwd["dropped_pkts"] > 0 and (fwd["early_drop_pkts"] == 0 if queue == "drr" else fwd["early_drop_pkts"] == fwd["dropped_pkts"]), (name, fwd)
    _assert_nothing_left()


def test_calibration_judges_both_tolerances() -> None:
    good = Calibration(50.0, PingStats(2, 50.4, 50.5, 50.6), 100_000_000, 99_000_000)
    assert good.ok and good.problems() == []
    slow = Calibration(50.0, PingStats(2, 51.0, 51.1, 51.2), 100_000_000, 99_000_000)
    assert not slow.ok and "ping RTT 51.100 ms" in slow.problems()[0]
    unlimited = Calibration(50.0, PingStats(1, 50.0, 50.0, 50.0), 100_000_000, 103_000_000)
    assert not unlimited.ok and "UDP rate 103.000 Mb/s" in unlimited.problems()[0]


def test_ping_runs_combine_into_the_statistics_of_all_their_pings() -> None:
    runs = [PingStats(50, 25.1, 25.2, 25.9), PingStats(50, 25.05, 29.7, 56.0), PingStats(100, 25.2, 25.3, 25.4)]
    assert PingStats.combine(runs) == PingStats(200, 25.05, 26.375, 56.0)
    assert PingStats.combine(runs[:1]) == runs[0]


def test_each_flows_series_starts_with_its_data(quick: tcplab.Result, quick_pcap: Path) -> None:
    """iperf3 counts its seconds from its data's start, five round trips (control connection,
    cookie, parameters, data connection, its cookie) after the client's launch; the series are
    placed at each flow's first full-size segment at the router. Its router capture has the same
    clock: the two flows' first segments of 1000 bytes or more are as far apart there."""
    info = quick.meta["backend_info"]
    launches, starts = info["flow_starts_ns"], info["data_starts_ns"]
    assert all(s is not None for s in starts), starts
    for launch, start in zip(launches, starts):
        assert launch + 5 * 50_000_000 < start < launch + 2_000_000_000, (launch, start)
    tshark = shutil.which("tshark")
    assert tshark is not None, "tshark is not installed (make deps installs it)"
    firsts = []
    for sender in ("10.201.1.2", "10.201.2.2"):
        out = subprocess.run([tshark, "-r", str(quick_pcap), "-Y", f"ip.src=={sender} && ip.len>=1000", "-T", "fields", "-e", "frame.time_epoch"],
                             capture_output=True, text=True, check=True).stdout
        firsts.append(loss_split.epoch_ns(out.split()[0]))
    assert abs((firsts[1] - firsts[0]) - (starts[1] - starts[0])) <= 1_000, (firsts, starts)
    # Nothing of flow 2 arrives in the intervals that end before its data started.
    second = quick.intervals[quick.intervals["flow"] == 1]
    assert (second.loc[second["t_ns"] <= starts[1], "goodput_bytes"] == 0).all()
    assert second.loc[second["t_ns"] > starts[1] + 1_000_000_000, "goodput_bytes"].gt(0).all()


def test_both_flows_deliver_and_fill_the_bottleneck(quick: tcplab.Result) -> None:
    s = quick.summary()
    assert list(s["variant"]) == ["reno", "cubic"]
    total = s["throughput_mbps"].sum()
    with _kernel(quick):
        assert (s["throughput_mbps"] > 5).all(), s
        # Goodput (TCP payload) of a full 100 Mb/s link of 1500-byte packets is at most 96.5 Mb/s.
        assert 85 < total < 97, total
    assert (quick.flows["goodput_bytes"] > 0).all()
    # The router saw every sender and the bottleneck queue filled: DropTail at 1 BDP (417 pkt) dropped.
    fwd = quick.queues.iloc[0]
    assert fwd["max_pkts"] == 417 and fwd["dropped_pkts"] > 0
    assert (quick.flows["sent_pkts"] > 1000).all()


def test_result_has_simulates_schema_and_the_testbed_record(quick: tcplab.Result) -> None:
    reno_only = quick.scenario.override({"flows[1].variant": "reno"})
    sim = tcplab.simulate(reno_only)
    for table in ("flows", "intervals", "queues"):
        assert list(getattr(quick, table).columns) == list(getattr(sim, table).columns), table
    assert len(quick.intervals) == len(sim.intervals)
    assert list(quick.queues["link"]) == list(sim.queues["link"])
    # What the testbed cannot measure is NaN, not zero: the one-way delays, the pacing rate of flows
    # that do not pace, α of flows that are not DCTCP, and ss's state at the last interval's end,
    # when the connections have closed (before it, each flow's ssthresh after its first loss).
    assert quick.flows["owd_mean_ns"].isna().all()
    assert quick.intervals[["pacing_rate_bps", "dctcp_alpha"]].isna().all().all()
    last = quick.intervals["t_ns"] == quick.intervals["t_ns"].max()
    assert quick.intervals.loc[last, ["ssthresh_bytes", "in_flight_bytes"]].isna().all().all()
    for flow, rows in quick.intervals[~last].groupby("flow"):
        measured = rows["ssthresh_bytes"].notna() & (rows["in_flight_bytes"] > 0)
        assert measured.iloc[-5:].all(), (flow, rows[["t_s", "ssthresh_bytes", "in_flight_bytes"]].to_string())
    info = quick.meta["backend_info"]
    assert quick.meta["backend"] == info["backend"] == "testbed"
    assert info["kernel"] == os.uname().release
    assert info["congestion_control"] == ["reno", "cubic"]
    # The router's delay makes the round trip 50 ms: 25 ms a direction less half of what the path
    # itself added to the pings made with the router at 25 ms before the run.
    cal = quick.meta["calibration"]
    overhead = info["router"]["path_overhead_ns"]
    assert overhead == round(cal["path_overhead_ms"] * 1e6) == round((statistics.median(cal["uncorrected_run_means_ms"]) - 50) * 1e6)
    assert len(cal["uncorrected_run_means_ms"]) == testbed.experiment.OVERHEAD_RUNS == 6
    assert 0 < overhead < 5_000_000, overhead
    assert info["router"]["rate_bps"] == 100_000_000 and info["router"]["delay_ns"] == (50_000_000 - overhead) // 2
    # Validity follows the rules: ping within 1 ms, lateness p99.9 within 1 ms.
    directions = quick.meta["router"]["directions"]
    p999 = max(d["lateness"]["p999_ns"] for d in directions)
    rtt_ok = abs(quick.meta["calibration"]["rtt_mean_ms"] - 50) <= 1
    # (Whether it IS valid depends on the machine's other load: see docs/testbed.md.)
    assert quick.meta["valid"] == (p999 <= 1_000_000 and rtt_ok), quick.meta["invalid_reason"]
    assert (quick.meta["invalid_reason"] is None) == quick.meta["valid"]
    # The router keeps time: half the packets leave within 200 µs of their deadline, unless the
    # machine held it up (an invalid run: on 2026-12-02 one's p99.9 was 12-51 ms and its p50 over
    # 200 µs).
    assert not quick.meta["valid"] or all(d["lateness"]["p50_ns"] < 200_000 for d in directions), directions
    # It counts its stalls (wake-ups over 1 ms late); its clock runs on through them.
    for d in directions:
        assert d["stall_limit_ns"] == 1_000_000 and d["stops_clock_on_stall"] is False
        stalls = d["stalls"]
        assert stalls["max_ns"] <= stalls["total_ns"] and (stalls["count"] == 0) == (stalls["total_ns"] == 0), stalls
        assert stalls["max_ns"] == 0 or stalls["max_ns"] > 1_000_000, stalls
    assert info["router_stalls"] == {"forward": directions[0]["stalls"], "reverse": directions[1]["stalls"]}
    # cwnd and RTT come from the sender: RTT at least the 50 ms base.
    srtt = quick.intervals["srtt_ns"].dropna()
    assert len(srtt) > 20 and srtt.min() >= 50e6
    # Each sender namespace's stack counters over the run: it sent the segments the router saw,
    # give or take a few packets of the control connection and the calibration (Linux's OutSegs
    # leaves retransmissions out, as RFC 1213's tcpOutSegs does: they are RetransSegs), the drops
    # were repaired by retransmissions (all but those in the last RTTs before iperf3 stops: a run
    # once counted 859 drops and 858 retransmissions), and the flows table's RTOs and recoveries
    # are those counters.
    counters = info["kernel_counters"]
    assert len(counters) == 2
    for i, c in enumerate(counters):
        sent = quick.flows["sent_pkts"].iloc[i]
        stack = c["Tcp.OutSegs"] + c.get("Tcp.RetransSegs", 0)
        assert abs(stack - sent) <= 100, (c["Tcp.OutSegs"], c.get("Tcp.RetransSegs", 0), sent)
        dropped = quick.flows["dropped_pkts"].iloc[i]
        assert c.get("Tcp.RetransSegs", 0) >= dropped - 20 and dropped > 0, (c.get("Tcp.RetransSegs", 0), dropped)
        assert quick.flows["rto_count"].iloc[i] == c.get("TcpExt.TCPTimeouts", 0)
        assert quick.flows["recoveries"].iloc[i] == c.get("TcpExt.TCPSackRecovery", 0) + c.get("TcpExt.TCPRenoRecovery", 0) >= 1


def test_what_the_kernel_does_unasked_is_what_the_testbed_writes_when_asked(quick: tcplab.Result) -> None:
    # The quick scenario leaves PRR, RACK-TLP, SACK compression and receive-buffer autotuning
    # unset, so its namespaces hold the kernel's own values. Asking for them
    # (tcplab.experiment.KERNEL_DEFAULT_TCP, which testbed run keys take as unset) writes exactly
    # those values: the same run.
    hosts = quick.meta["backend_info"]["hosts"]
    available = testbed.available_cc()
    unasked = stack.plan(quick.scenario, available=available)
    written = {}
    for field, value in KERNEL_DEFAULT_TCP.items():
        where = "flows[1]" if field in ("rack", "undo") else "tcp"  # RACK and undo need SACK recovery: the cubic flow
        asked = stack.plan(quick.scenario.override({f"{where}.{field}": value}), available=available)
        for i, (before, after) in enumerate(zip(unasked, asked), start=1):
            for ns, old, new in ((f"tcplab-s{i}", before.sender_sysctls, after.sender_sysctls), (f"tcplab-r{i}", before.receiver_sysctls, after.receiver_sysctls)):
                for name, text in new.items():
                    if old.get(name) != text:
                        written[field, ns, name] = text
                        assert hosts[ns][name] == text, (field, ns, name)
    assert {name for _, _, name in written} == {"net.ipv4.tcp_recovery", "net.ipv4.tcp_early_retrans", "net.ipv4.tcp_comp_sack_nr", "net.ipv4.tcp_moderate_rcvbuf"}, written
    assert not [key for key in written if key[0] in ("prr", "undo")]  # nothing to write: Linux always does them


def test_a_run_leaves_nothing(quick: tcplab.Result) -> None:
    assert quick is not None
    _assert_nothing_left()


def test_clean_removes_what_a_killed_run_left() -> None:
    runner = subprocess.Popen([sys.executable, "-m", "tcplab", "testbed", "run", str(QUICK), "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not processes("iperf3 -c"):
        time.sleep(0.1)
    assert processes("iperf3 -c"), "the run never started its flows"
    assert len(netns()) == 5
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    p = subprocess.run([sys.executable, "-m", "tcplab", "testbed", "clean"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    deadline = time.monotonic() + 5  # processes signalled on their parent's death may take a moment
    while time.monotonic() < deadline and (netns() or processes("tcplab-router", "iperf3")):
        time.sleep(0.1)
    _assert_nothing_left()


def test_clean_refuses_while_a_run_is_live_and_sigterm_stops_the_run_cleanly() -> None:
    runner = subprocess.Popen([sys.executable, "-m", "tcplab", "testbed", "run", str(QUICK), "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not processes("iperf3 -c"):
            time.sleep(0.1)
        assert processes("iperf3 -c"), "the run never started its flows"
        p = subprocess.run([sys.executable, "-m", "tcplab", "testbed", "clean"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 1
        assert f"a testbed run is active (pid {runner.pid})" in p.stderr and "--force" in p.stderr, p.stderr
        assert len(netns()) == 5 and processes("iperf3 -c"), "clean touched the live run"
        runner.send_signal(signal.SIGTERM)
        _, err = runner.communicate(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    _assert_nothing_left()


def test_missing_tools_are_named_with_the_install_command() -> None:
    env = {**os.environ, "PATH": "/nonexistent"}
    p = subprocess.run([sys.executable, "-m", "tcplab", "testbed", "run", str(QUICK)], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 1
    assert "apt-get install iproute2 iperf3 iputils-ping ethtool" in p.stderr


def test_unsupported_scenarios_are_refused_before_anything_starts() -> None:
    lossy = tcplab.Scenario(
        name="lossy",
        duration="5s",
        topology=tcplab.Dumbbell(bottleneck="10Mbps", rtt="20ms", loss=0.01),
        flows=[tcplab.TcpFlow(variant="reno")],
    )
    with pytest.raises(tcplab.ScenarioError, match="topology.loss"):
        testbed.run(lossy)
    dccp = lossy.override({"topology.loss": 0.0, "flows": [{"kind": "dccp"}]})
    with pytest.raises(tcplab.ScenarioError, match=r"flows\[0\].kind"):
        testbed.run(dccp)
    stepped = lossy.override({"topology.loss": 0.0, "flows": [{"kind": "cbr", "schedule": [["0s", "1Mbps"], ["2s", "2Mbps"]]}]})
    with pytest.raises(tcplab.ScenarioError, match=r"flows\[0\].schedule = '2 rates': expected a constant 'rate'"):
        testbed.run(stepped)
    tiny = lossy.override({"topology.loss": 0.0, "flows": [{"kind": "cbr", "rate": "1Mbps", "packet_size": "40B"}]})
    with pytest.raises(tcplab.ScenarioError, match=r"flows\[0\].packet_size"):
        testbed.run(tiny)
    jittered = lossy.override({"topology.loss": 0.0, "flows": [{"kind": "cbr", "rate": "1Mbps", "random": True}]})
    with pytest.raises(tcplab.ScenarioError, match=r"flows\[0\].random = true: expected false or unset on the testbed"):
        testbed.run(jittered)
    fixed = lossy.override({"topology.loss": 0.0, "tcp.sndbuf_autotuning": False})
    with pytest.raises(tcplab.ScenarioError, match=r"sndbuf_autotuning = false: expected true or unset on the testbed"):
        testbed.run(fixed)
    assert netns() == []


def test_without_root_the_message_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(testbed.MissingTool, match="needs root"):
        testbed.require()


def _second_round_span_ms(scenario: tcplab.Scenario, workdir: Path) -> tuple[float, dict]:
    """Run ``scenario`` (one flow) while dumpcap records its sender's data segments; return how
    long the second round of slow start took to leave the sender, and the run's sender stack as
    read back. Rounds are told apart by the idle time between them (at least a quarter of the
    round trip, paced or not), not by counting segments: once in CI dumpcap missed some of the
    initial window on a stalling machine, and segments 11-30 spanned two rounds."""
    from tcplab.testbed import topology

    result: dict[str, tcplab.Result] = {}
    runner = threading.Thread(target=lambda: result.setdefault("r", testbed.run(scenario)))
    runner.start()
    ns, pcap = topology.sender_ns(1), workdir / "sender.pcapng"
    dev = ""
    deadline = time.monotonic() + 30
    while not dev and time.monotonic() < deadline:
        links = subprocess.run(["ip", "-n", ns, "-o", "link", "show", "type", "veth"], capture_output=True, text=True).stdout
        dev = links.split(":")[1].strip().split("@")[0] if links else ""
        time.sleep(0.02)
    assert dev, "the sender's namespace never got its link"
    cap = subprocess.Popen(
        ["ip", "netns", "exec", ns, "dumpcap", "-q", "-i", dev, "-s", "96", "-f", f"tcp and src host {topology.sender_addr(1)} and greater 1000", "-a", "duration:60", "-w", str(pcap)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    runner.join(timeout=60)
    cap.send_signal(signal.SIGINT)  # the run is over (its calibration pings, then the flow)
    cap.wait(timeout=30)
    times = subprocess.run(["tshark", "-r", str(pcap), "-T", "fields", "-e", "frame.time_epoch"], capture_output=True, text=True, check=True).stdout.split()
    sent = np.array([float(t) for t in times])
    starts = np.flatnonzero(np.diff(sent) > scenario.topology.rtt.ns / 4e9) + 1
    assert len(starts) >= 2, f"{len(sent)} data segments captured in fewer than three rounds"
    second = sent[starts[0] : starts[1]]
    assert len(second) >= 10, f"the second round has {len(second)} segments: {np.round((sent - sent[0]) * 1e3, 1)}"
    return (second[-1] - second[0]) * 1e3, result["r"].meta["backend_info"]["hosts"][ns]


def test_loss_based_flows_leave_in_ack_clocked_bursts_unless_paced(tmp_path: Path) -> None:
    # The host's default congestion control (often bbr) must not leak into a flow: a reno socket
    # in a namespace whose default is bbr keeps BBR's pacing. Unpaced, slow start's second round
    # (20 segments released by the initial window's ACKs) leaves in ACK-clocked bursts within a
    # few ms; paced at Linux's 200% of cwnd/RTT it takes about half an RTT (100 ms here).
    one = tcplab.Scenario(name="ss", duration="3s", topology=tcplab.Dumbbell(bottleneck="100Mbps", rtt="200ms"), flows=[tcplab.TcpFlow(variant="sack")])
    for variant in ("sack", "cubic"):
        span, host = _second_round_span_ms(one.override({"flows[0].variant": variant}), tmp_path)
        assert host["net.ipv4.tcp_congestion_control"] == "reno"
        assert span < 20, f"{variant}: second round took {span:.1f} ms: the flow is paced"
    paced, _ = _second_round_span_ms(one.override({"tcp.pacing": True}), tmp_path)
    assert 50 < paced < 200, f"second round took {paced:.1f} ms with pacing on"
    _assert_nothing_left()


def test_the_paths_overhead_is_smaller_under_a_runs_packet_rate(capsys: pytest.CaptureFixture[str]) -> None:
    # scripts/ping_overhead.py: on the idle path pinged 10 times a second the overhead is larger
    # than under the load the testbed pings under (measured 0.58-0.75 ms against 0.13-0.16 ms on
    # 2026-11-26; 0.21-0.35 against 0.10-0.13 ms in six passes on 2026-11-27, the ratio 1.95-3.0
    # over its 11 pings), which is why the correction is measured under load. The minimum shows
    # it; the mean also carries the machine's stalls, a few ms each (2026-12-01, four passes:
    # minimum 0.27-0.44 idle against 0.10-0.12 ms under load at 10 pings/s, 0.06-0.09 under load
    # at 100; means 0.26-0.89 under load at 100, and 4.3 under load at 10 in one pass).
    spec = importlib.util.spec_from_file_location("ping_overhead", ROOT / "scripts" / "ping_overhead.py")
    assert spec is not None and spec.loader is not None
    ping_overhead = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ping_overhead)
    with pytest.raises(SystemExit) as e:
        ping_overhead.main(["0"])
    assert e.value.code == 2 and "rtt_ms: 0 is not allowed" in capsys.readouterr().err
    assert ping_overhead.main(["25"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6, lines
    least = {(line.split()[0], line.split("pings/s")[0].split()[-1]): float(line.split("min")[1].split()[0]) for line in lines}
    assert least[("idle", "10")] > 1.5 * least[("run", "10")] > 0, lines
    assert 0 < least[("run", "100")] < 0.3, lines
    _assert_nothing_left()


def test_the_senders_state_is_read_from_ss_of_its_data_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ss -ti`` of a flow's sender: iperf3's control connection and its data connection go to the
    same port; the data connection (the most acknowledged) gives the series' ssthresh, packets in
    flight (Linux's: unacknowledged less SACKed and lost, plus retransmissions out) and pacing
    rate, whatever unit ss prints it in; ssthresh left out (infinite) is NaN."""
    from tcplab.testbed import experiment, tools

    out = (
        "0 0 10.201.1.2:40000 10.202.1.2:5201\n"
        "\t cubic wscale:7,7 rto:244 rtt:40.1/0.2 mss:1448 cwnd:10 bytes_acked:184 segs_out:7 pacing_rate 2.9Mbps unacked:0\n"
        "0 0 10.201.1.2:40002 10.202.1.2:5201\n"
        "\t bbr wscale:7,7 rto:244 rtt:41.2/0.3 mss:1448 cwnd:120 ssthresh:80 bytes_acked:9000000 pacing_rate 19183000bps unacked:110 retrans:2/40 sacked:5 lost:3\n"
    )
    calls = []
    monkeypatch.setattr(tools, "run", lambda cmd, ns=None, **kw: calls.append((cmd, ns)) or out)
    state = experiment._ss_state("tcplab-s1", "10.202.1.2", 5201)
    assert calls[0][1] == "tcplab-s1" and calls[0][0][-5:] == ["dst", "10.202.1.2", "dport", "=", ":5201"]
    assert state is not None
    assert state["ssthresh_bytes"] == 80 * 1448 and state["in_flight_bytes"] == (110 - 5 - 3 + 2) * 1448 and state["pacing_rate_bps"] == 19_183_000
    monkeypatch.setattr(tools, "run", lambda cmd, ns=None, **kw: out.split("0 0 10.201.1.2:40002")[0])
    state = experiment._ss_state("tcplab-s1", "10.202.1.2", 5201)
    assert state is not None and np.isnan(state["ssthresh_bytes"]) and state["in_flight_bytes"] == 0 and state["pacing_rate_bps"] == 2.9e6
    monkeypatch.setattr(tools, "run", lambda cmd, ns=None, **kw: "")
    assert experiment._ss_state("tcplab-s1", "10.202.1.2", 5201) is None
