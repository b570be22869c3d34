"""Layer 3: run a scenario on the testbed and return a :class:`tcplab.Result` with simulate's columns.

The router (``tcplab-router``) applies the scenario's bottleneck: rate (IP bytes), DropTail limit
(the same limit the engine gets), and a one-way delay in each direction that makes the round trip
the scenario's rtt: rtt/2 less half the path's own overhead (the veths, the router's wake-ups and
writes), which pings through the router at rtt/2 measure as the testbed opens. The dumbbell's
access delays are folded in: the veths add none. Each TCP flow is an iperf3 client in its sender
namespace (``-C`` its congestion control, ``-J -i 0.1``) started at the flow's start, against an
iperf3 server in its receiver namespace (``-J -i 0.1``): goodput is the RECEIVER's bytes, cwnd
and RTT are the sender's ``tcp_info`` samples. A CBR flow is an iperf3 UDP client at the flow's
rate and packet size (its goodput counted in IP bytes, as the simulator's). What the testbed
cannot measure is NaN.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..config import CbrFlow, Dumbbell as DumbbellTopology, Scenario, TcpFlow
from ..errors import ScenarioError, TcplabError
from ..result import Result
from .. import variants
from . import bpf, stack as stacks_, tools, topology
from .stack import FlowStack
from .topology import FWD_TUN, REV_TUN, ROUTER_NS

__all__ = ["run", "check", "calibrate", "clean", "sweep_calibration", "Calibration", "PROFILES", "router_binary", "LATENESS_LIMIT_NS", "STALL_LIMIT_NS", "FLOW_PORT_BASE", "LOCK_PATH"]

#: A run whose router released packets later than this at the 99.9th percentile is invalid.
LATENESS_LIMIT_NS = 1_000_000
#: A router wake-up later than this is a stall, which the router counts (docs/testbed.md, "Stalls").
STALL_LIMIT_NS = LATENESS_LIMIT_NS
#: Ping RTT must be within this of the setting (the papers' validation, 1 ms netem resolution).
RTT_TOLERANCE_MS = 1.0
#: UDP throughput must be within this fraction of the bottleneck.
RATE_TOLERANCE = 0.02
#: Testbed pings: 100 a second while the path carries a run's packet rate (:meth:`_Testbed.ping`).
#: The path's own overhead falls as its packet rate rises, and a run sends thousands of packets a
#: second. Measured at 100 ms (``scripts/ping_overhead.py``; docs/testbed.md, "The overhead and the
#: packet rate"): on the idle path 0.65-0.75 ms above the setting at 10 pings a second, 0.32 at
#: 100, 0.25-0.27 at 1000; under the load 0.12-0.16 ms at any of these rates. Measured on the
#: idle path at 10 a second, the overhead left the kernel's loaded round trip, at its smallest,
#: 0.2-0.35 ms below the simulator's.
PING_INTERVAL_S = 0.01
#: Pings that measure the path's own overhead (``_Testbed._correct_delay``): three seconds of them,
#: in this many runs of ping, whose means' median is the overhead: a burst of the machine's stalls
#: (4.5 ms on the mean of 300 pings once in CI, 2026-12-01, the next 200 pings 0.5) moves one or
#: two runs' means and not their median.
OVERHEAD_PINGS = 300
OVERHEAD_RUNS = 6
#: The load under which the testbed pings: a UDP flow each way (``iperf3 -u --bidir``) of
#: datagrams this small, as many a second as the bottleneck carries 1500-byte packets (8333 at
#: 100 Mb/s): a run's packet rate in 6% of the bottleneck, so the pings barely queue behind it.
LOAD_PAYLOAD = 64
LOAD_PORT = 5300
#: Flow i's iperf3 (1-based) listens on this port + i - 1.
FLOW_PORT_BASE = 5201
#: Seconds between a flow's iperf3 reports (``-i``, client and server; iperf3's smallest). The
#: reports are spread over the scenario's intervals by overlap, and they do not line up with them
#: (they count from each flow's data start): with 1-s reports a change inside one leaked into the
#: interval before, a step in the bottleneck's rate showed 0.14 s early at 40 ms (docs/testbed.md).
REPORT_INTERVAL_S = "0.1"
#: Seconds the load runs before the pings start.
LOAD_SETTLE_S = 1.0
#: One testbed at a time on a machine: the namespace names are fixed.
LOCK_PATH = Path("/run/lock/tcplab-testbed.lock")

_IP_UDP_HEADERS = 28
_MTU = 1500

#: Stack profiles: sysctls set in every sender and receiver namespace (all per-namespace ones;
#: the host is never touched) and their links' txqueuelen.
PROFILES: dict[str, dict[str, Any]] = {
    # The kernel as it is: the namespace's own defaults.
    "default": {"sysctls": {}, "txqueuelen": None},
    # Large buffers for high-speed TCP: paper 001, Table 1 (senders and receivers). The table's
    # net.core.{r,w}mem_max and netdev_max_backlog are host-wide, not per namespace: not set (the
    # TCP autotuning maxima below do not depend on them); tcp_wmem's minimum, missing in the
    # table, is Linux's 4096.
    "tuned": {
        "sysctls": {
            "net.ipv4.tcp_rmem": "4096 104857600 524288000",
            "net.ipv4.tcp_wmem": "4096 104857600 524288000",
            "net.ipv4.tcp_timestamps": "1",
            "net.ipv4.tcp_window_scaling": "1",
            "net.ipv4.tcp_sack": "1",
            "net.ipv4.tcp_no_metrics_save": "1",
            "net.ipv4.tcp_rfc1337": "1",
        },
        "txqueuelen": 100_000,
    },
}

#: Sysctls read back from the hosts for the record.
_RECORDED = ("net.ipv4.tcp_congestion_control", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_sack", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_no_metrics_save", "net.ipv4.tcp_recovery", "net.ipv4.tcp_early_retrans", "net.ipv4.tcp_comp_sack_nr", "net.ipv4.tcp_moderate_rcvbuf", "net.ipv4.tcp_ecn") + (
    ("net.ipv4.tcp_rto_max_ms",) if Path("/proc/sys/net/ipv4/tcp_rto_max_ms").exists() else ()
)


def router_binary() -> str:
    """The ``tcplab-router`` executable: ``$TCPLAB_ROUTER``, this source tree's
    ``target/release/tcplab-router``, or one on PATH."""
    env = os.environ.get("TCPLAB_ROUTER")
    if env:
        if not os.access(env, os.X_OK):
            raise tools.MissingTool(f"tcplab testbed: TCPLAB_ROUTER = {env!r} is not an executable")
        return env
    built = Path(__file__).resolve().parents[3] / "target" / "release" / "tcplab-router"
    if os.access(built, os.X_OK):
        return str(built)
    found = shutil.which("tcplab-router")
    if found:
        return found
    raise tools.MissingTool("tcplab testbed: the router is not built: run 'cargo build --release -p tcplab-router' in the tcplab source tree (or set TCPLAB_ROUTER)")


# --- the pieces of a run ------------------------------------------------------------------------


@contextlib.contextmanager
def _lock(busy: str = "another testbed run is active (pid {pid}); wait for it or stop it and run 'tcplab testbed clean'") -> Iterator[None]:
    """Hold the testbed's lock (one run at a time), writing our pid into it; ``busy`` (with
    ``{pid}``, the holder's) is the error when another process keeps it for 10 s."""
    LOCK_PATH.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK_PATH, "a+") as f:
        deadline = time.monotonic() + 10  # a killed run's clean-up may still hold it briefly
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    f.seek(0)
                    holder = f.read().strip() or "?"
                    raise TcplabError(busy.format(pid=holder)) from None
                time.sleep(0.1)
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()
            fcntl.flock(f, fcntl.LOCK_UN)


def clean(*, force: bool = False) -> list[str]:
    """Remove what a killed run left (:func:`topology.clean`), holding the testbed's lock so no
    run starts meanwhile. While a live run holds the lock this refuses: removing its namespaces
    would kill its iperf3 and the run would be stored as invalid. ``force`` cleans regardless."""
    if force:
        return topology.clean()
    busy = ("a testbed run is active (pid {pid}): stop it with SIGTERM or Ctrl-C and it removes its own testbed; "
            "'tcplab testbed clean --force' removes it under the run, which then records that run as invalid")
    with _lock(busy):
        return topology.clean()


class _Watchdog:
    """A process in its own session that outlives a killed runner: it waits for EOF on its stdin
    (the runner's end of the pipe closes however the runner dies) and, unless told ``done``
    first, removes the testbed (:func:`topology.clean`)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tcplab.testbed.watchdog"],
            stdin=subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]) + os.pathsep + os.environ.get("PYTHONPATH", "")},
        )

    def done(self) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.write(b"done\n")
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)


class _Router:
    """The router process in the router namespace; its report comes on SIGTERM."""

    def __init__(
        self, workdir: Path, rate_bps: int, delay_ns: int, queue: dict[str, Any], overhead_bytes: int = 0, pcap: bool = False, seed: int = 1, rate_schedule: list[tuple[int, int]] | None = None
    ) -> None:
        self.report_path = workdir / "router.json"
        #: The forward direction's arrivals (``--pcap-fwd``), when asked for.
        self.pcap_path = workdir / "router-fwd.pcap" if pcap else None
        self.stderr_path = workdir / "router.stderr"
        if rate_schedule:
            # In a file: a long schedule (a trace's) outgrows a command-line argument.
            schedule_path = workdir / "rate-schedule.json"
            schedule_path.write_text(json.dumps(rate_schedule))
        self.cmd = [
            router_binary(),
            "--fwd", FWD_TUN,
            "--rev", REV_TUN,
            "--rate-bps", str(rate_bps),
            "--delay-ns", str(delay_ns),
            "--queue", json.dumps(queue),
            "--seed", str(seed),
            "--overhead-bytes", str(overhead_bytes),
            "--stall-us", str(STALL_LIMIT_NS // 1000),
            "--report", str(self.report_path),
        ] + (["--pcap-fwd", str(self.pcap_path)] if self.pcap_path else []) + (["--rate-schedule", f"@{schedule_path}"] if rate_schedule else [])  # fmt: skip
        self.config = {"rate_bps": rate_bps, "delay_ns": delay_ns, "queue": queue, "overhead_bytes": overhead_bytes} | ({"rate_schedule": rate_schedule} if rate_schedule else {})
        self._stderr = open(self.stderr_path, "wb")
        # SIGTERM on the runner's death: the router stops cleanly and its TUNs disappear.
        self.proc = tools.spawn(self.cmd, ROUTER_NS, stdout=subprocess.PIPE, stderr=self._stderr, death_signal=signal.SIGTERM)
        assert self.proc.stdout is not None
        line = self._readline(10.0)
        if line != "ready":
            self.proc.kill()
            self.proc.wait()
            raise tools.ToolError(tools.ns_cmd(ROUTER_NS, self.cmd), self.proc.returncode, self.stderr(), "tcplab-router")

    def _readline(self, timeout_s: float) -> str:
        out: list[str] = []
        reader = threading.Thread(target=lambda: out.append(self.proc.stdout.readline().decode().strip()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(timeout_s)
        return out[0] if out else ""

    def start(self) -> int:
        """Mark the run's start (SIGUSR2): the time its rate schedule counts from. Returns that
        time as the router read it (CLOCK_MONOTONIC ns)."""
        self.proc.send_signal(signal.SIGUSR2)
        line = self._readline(5.0)
        if not line.startswith("started "):
            raise tools.ToolError(tools.ns_cmd(ROUTER_NS, self.cmd), self.proc.poll(), f"no start time from the router (got {line!r})\n{self.stderr()}", "tcplab-router")
        return int(line.split()[1])

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> dict[str, Any]:
        """SIGTERM, wait, and the final report."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()
        if self.proc.returncode != 0:
            raise tools.ToolError(tools.ns_cmd(ROUTER_NS, self.cmd), self.proc.returncode, self.stderr(), "tcplab-router")
        return tools.read_json(self.report_path, "tcplab-router", self.stderr_path)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()


def _lateness_p999(report: dict[str, Any]) -> int:
    """A router report's timer lateness p99.9, ns, the worse direction's."""
    return max(d["lateness"]["p999_ns"] for d in report["directions"])


def _wait_listening(ns: str, port: int, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if tools.run(["ss", "-Hltn", f"sport = :{port}"], ns=ns).strip():
            return
        time.sleep(0.02)
    raise tools.ToolError(tools.ns_cmd(ns, ["iperf3", "-s", "-p", str(port)]), None, "server not listening", "iperf3")


@dataclass
class _Testbed:
    """Topology + router for a dumbbell of ``pairs`` pairs; ``close`` removes everything."""

    pairs: int
    rate_bps: int
    rtt_ns: int
    queue: dict[str, Any]
    profile: str
    workdir: Path
    stacks: list[FlowStack] = field(default_factory=list)
    router_pcap: bool = False
    #: Round-trip time the path adds by itself, taken out of the router's delay; with
    #: ``measure_overhead`` it is measured when the testbed opens (:meth:`_correct_delay`).
    overhead_ns: int = 0
    measure_overhead: bool = False
    #: The pings that measured the overhead (router at rtt/2), when it was measured here: all of
    #: them, and each of the :data:`OVERHEAD_RUNS` runs of ping.
    uncorrected: tools.PingStats | None = None
    uncorrected_runs: list[tools.PingStats] = field(default_factory=list)
    #: The router's timer lateness p99.9 while they ran (a machine that held it up moved them).
    uncorrected_lateness_ns: int | None = None
    #: The run's seed: the router's queue discipline draws from it (RED's early drops).
    seed: int = 1
    #: The bottleneck's rate changes, ``(time_ns, rate_bps)`` from the run's start.
    rate_schedule: list[tuple[int, int]] = field(default_factory=list)
    topo: topology.Dumbbell = field(init=False)
    router: _Router | None = None

    def __post_init__(self) -> None:
        prof = PROFILES[self.profile]
        self.topo = topology.Dumbbell(self.pairs, host_sysctls=dict(prof["sysctls"]), host_txqueuelen=prof["txqueuelen"])

    def open(self) -> None:
        leftovers = topology.namespaces()
        if leftovers:
            raise TcplabError(f"testbed namespaces from an earlier run exist ({', '.join(leftovers)}): run 'tcplab testbed clean'")
        self.topo.create()
        # Each flow's own settings over the profile's (docs/testbed.md, "[tcp] settings").
        for i, flow_stack in enumerate(self.stacks, start=1):
            tools.sysctl_set(topology.sender_ns(i), flow_stack.sender_sysctls)
            tools.sysctl_set(topology.receiver_ns(i), flow_stack.receiver_sysctls)
            self.topo.set_default_route(topology.sender_ns(i), topology.sender_gateway(i), flow_stack.sender_route)
            self.topo.set_default_route(topology.receiver_ns(i), topology.receiver_gateway(i), flow_stack.receiver_route)
        self.router = self._new_router()
        self.topo.attach_router()
        if self.measure_overhead:
            self._correct_delay()

    def _correct_delay(self) -> None:
        """Ping through the router at rtt/2 a direction, then replace it by one whose delay is
        shorter by half the RTT's excess over the setting, so that the round trip is the setting.
        The excess is the path's own: veth hops, the router's wake-up on each arrival, its release
        lateness (0.13–0.18 ms on this project's machine under :meth:`ping`'s load;
        docs/testbed.md). It is the median of :data:`OVERHEAD_RUNS` runs' means: stalls spread
        over the three seconds raise every run's mean, as they do the flows' round trips; a burst
        of them raises one or two."""
        assert self.router is not None
        self.uncorrected_runs = self.ping_runs(OVERHEAD_PINGS, OVERHEAD_RUNS)
        self.uncorrected = tools.PingStats.combine(self.uncorrected_runs)
        overhead_ns = round(statistics.median(r.mean_ms for r in self.uncorrected_runs) * 1e6) - self.rtt_ns
        self.overhead_ns = min(max(0, overhead_ns), self.rtt_ns)
        self.uncorrected_lateness_ns = _lateness_p999(self.renew_router())

    def renew_router(self) -> dict[str, Any]:
        """Replace the router by a new one (delay from :attr:`overhead_ns`, counters at zero);
        the old one's report."""
        assert self.router is not None
        report = self.router.stop()
        self.router = self._new_router()
        self.topo.attach_router(rules=False)  # the new router's TUNs: routes again, same rules
        return report

    def ping(self, count: int) -> tools.PingStats:
        """``count`` pings from the first sender to its receiver, one every :data:`PING_INTERVAL_S`,
        while the path carries a run's packet rate (:func:`_path_load`)."""
        return self.ping_runs(count, 1)[0]

    def ping_runs(self, count: int, runs: int) -> list[tools.PingStats]:
        """:meth:`ping`'s ``count`` pings as ``runs`` runs of ping one after the other, under one
        load; each run's statistics."""
        sender, dst = topology.sender_ns(1), topology.receiver_addr(1)
        tools.ping(sender, dst, count=1)  # warm-up: ARP on every hop
        each = [count // runs + (i < count % runs) for i in range(runs)]
        with _path_load(self.workdir, self.rate_bps, count * PING_INTERVAL_S + runs * self.rtt_ns / 1e9):
            return [tools.ping(sender, dst, count=k, interval_s=PING_INTERVAL_S, preload=_preload(PING_INTERVAL_S, self.rtt_ns)) for k in each]

    def _new_router(self) -> _Router:
        """A router delaying each direction by rtt/2 less half the path's overhead."""
        return _Router(self.workdir, self.rate_bps, (self.rtt_ns - self.overhead_ns) // 2, self.queue, pcap=self.router_pcap, seed=self.seed, rate_schedule=self.rate_schedule)

    def close(self) -> None:
        try:
            if self.router is not None:
                self.router.kill()
        finally:
            self.topo.destroy()


@contextlib.contextmanager
def _session(
    pairs: int,
    rate_bps: int,
    rtt_ns: int,
    queue: dict[str, Any],
    profile: str,
    stacks: list[FlowStack] | None = None,
    router_pcap: bool = False,
    overhead_ns: int = 0,
    measure_overhead: bool = False,
    seed: int = 1,
    rate_schedule: list[tuple[int, int]] | None = None,
) -> Iterator[_Testbed]:
    """Everything a run needs, removed afterwards whatever happens (SIGTERM becomes
    KeyboardInterrupt for the duration; a SIGKILL is left to the watchdog and ``tcplab testbed clean``)."""
    tools.require()
    if profile not in PROFILES:
        raise ScenarioError("profile", profile, f"expected one of {', '.join(PROFILES)}")
    router_binary()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        with _lock(), tempfile.TemporaryDirectory(prefix="tcplab-testbed-") as tmp:
            watchdog = _Watchdog()
            bed = _Testbed(pairs, rate_bps, rtt_ns, queue, profile, Path(tmp), list(stacks or []), router_pcap, overhead_ns, measure_overhead, seed=seed, rate_schedule=list(rate_schedule or []))
            try:
                bed.open()
                yield bed
            finally:
                try:
                    bed.close()
                finally:
                    watchdog.done()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


# --- calibration --------------------------------------------------------------------------------


@dataclass
class Calibration:
    """The papers' validation of the testbed: ping RTT vs the setting, UDP rate vs the bottleneck."""

    rtt_setting_ms: float
    rtt: tools.PingStats
    rate_setting_bps: int
    udp_rate_bps: float | None
    udp_lost: int | None = None
    router: dict[str, Any] = field(default_factory=dict)
    #: The path's own round trip taken out of the router's delay (``_Testbed._correct_delay``),
    #: and the pings that measured it (router at rtt/2), all and each run of ping; 0, None and []
    #: when uncorrected.
    overhead_ns: int = 0
    uncorrected: tools.PingStats | None = None
    uncorrected_runs: list[tools.PingStats] = field(default_factory=list)
    uncorrected_lateness_ns: int | None = None

    @property
    def rtt_mean_ms(self) -> float:
        return self.rtt.mean_ms

    @property
    def rtt_ok(self) -> bool:
        return abs(self.rtt_mean_ms - self.rtt_setting_ms) <= RTT_TOLERANCE_MS

    @property
    def rate_error(self) -> float | None:
        return None if self.udp_rate_bps is None else self.udp_rate_bps / self.rate_setting_bps - 1

    @property
    def rate_ok(self) -> bool:
        return self.rate_error is None or abs(self.rate_error) <= RATE_TOLERANCE

    @property
    def ok(self) -> bool:
        return self.rtt_ok and self.rate_ok

    def problems(self) -> list[str]:
        out = []
        if not self.rtt_ok:
            out.append(f"ping RTT {self.rtt_mean_ms:.3f} ms is not within {RTT_TOLERANCE_MS:g} ms of {self.rtt_setting_ms:g} ms")
        if not self.rate_ok:
            out.append(f"UDP rate {self.udp_rate_bps / 1e6:.3f} Mb/s is not within {RATE_TOLERANCE:.0%} of {self.rate_setting_bps / 1e6:g} Mb/s")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "rtt_setting_ms": self.rtt_setting_ms,
            "rtt_mean_ms": self.rtt_mean_ms,
            "rtt_min_ms": self.rtt.min_ms,
            "rtt_max_ms": self.rtt.max_ms,
            "pings": self.rtt.count,
            "ping_interval_ms": PING_INTERVAL_S * 1e3,
            "rate_setting_bps": self.rate_setting_bps,
            "udp_rate_bps": self.udp_rate_bps,
            "udp_lost": self.udp_lost,
            "path_overhead_ms": self.overhead_ns / 1e6,
            "uncorrected_rtt_mean_ms": None if self.uncorrected is None else self.uncorrected.mean_ms,
            # The overhead is the median of these runs' means less the setting.
            "uncorrected_run_means_ms": [r.mean_ms for r in self.uncorrected_runs],
            "uncorrected_lateness_p999_ns": self.uncorrected_lateness_ns,
            "ok": self.ok,
        }


def _preload(interval_s: float, rtt_ns: int) -> int:
    """ping's ``-l`` for one ping every ``interval_s`` on a path of ``rtt_ns`` (tools.ping)."""
    return max(1, math.ceil(rtt_ns / 1e9 / interval_s / 10) + 1)


@contextlib.contextmanager
def _path_load(workdir: Path, rate_bps: int, seconds: float) -> Iterator[None]:
    """A run's packet rate on the first pair's path, both ways, for the body (at most ``seconds``
    after :data:`LOAD_SETTLE_S`): a UDP flow each way (``iperf3 -u --bidir``) of
    :data:`LOAD_PAYLOAD`-byte datagrams, as many a second as the bottleneck carries 1500-byte
    packets. Raises if the load stopped before the body ended (what it measured was not loaded)."""
    sender, receiver, dst = topology.sender_ns(1), topology.receiver_ns(1), topology.receiver_addr(1)
    pps = max(1, round(rate_bps / (_MTU * 8)))
    cmd = ["iperf3", "-c", dst, "-p", str(LOAD_PORT), "-u", "--bidir", "-l", str(LOAD_PAYLOAD), "-b", str(pps * LOAD_PAYLOAD * 8)]
    cmd += ["--pacing-timer", "20", "-t", str(math.ceil(LOAD_SETTLE_S + seconds) + 10)]
    server_err, client_err = workdir / "load-server.stderr", workdir / "load-client.stderr"
    with open(server_err, "wb") as e:
        server = tools.spawn(["iperf3", "-s", "-1", "-p", str(LOAD_PORT)], receiver, subprocess.DEVNULL, e)
    client = None
    try:
        _wait_listening(receiver, LOAD_PORT)
        with open(client_err, "wb") as e:
            client = tools.spawn(cmd, sender, subprocess.DEVNULL, e)
        time.sleep(LOAD_SETTLE_S)
        yield
        if client.poll() is not None:
            raise tools.ToolError(tools.ns_cmd(sender, cmd), client.returncode, client_err.read_text(errors="replace"), "iperf3 load")
    finally:
        for proc in (client, server):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def _udp_rate(rate_bps: int, duration_s: int, workdir: Path) -> tuple[float, int]:
    """IP-level rate (bit/s) the receiver got from a UDP flow offered at 1.05 × ``rate_bps`` in
    1500-byte packets, over every whole second but the first (the queue filling)."""
    port = 5301
    payload = _MTU - _IP_UDP_HEADERS
    server_out, server_err = workdir / "udp-server.json", workdir / "udp-server.stderr"
    with open(server_out, "wb") as out, open(server_err, "wb") as err:
        server = tools.spawn(["iperf3", "-s", "-1", "-J", "-p", str(port)], topology.receiver_ns(1), out, err)
    try:
        _wait_listening(topology.receiver_ns(1), port)
        offered = int(rate_bps * 1.05 * payload / _MTU)
        cmd = ["iperf3", "-c", topology.receiver_addr(1), "-p", str(port), "-u", "-b", str(offered), "-l", str(payload), "-t", str(duration_s), "-J"]
        tools.run(cmd, ns=topology.sender_ns(1), timeout=duration_s + 20, what="iperf3 UDP client")
        server.wait(timeout=10)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    data = tools.read_json(server_out, "iperf3 UDP server", server_err)
    seconds = [iv["sum"] for iv in data["intervals"] if iv["sum"]["end"] - iv["sum"]["start"] > 0.99][1:]
    if not seconds:
        raise tools.ToolError(["iperf3", "-s"], 1, "the UDP server reported no whole second", "iperf3 UDP server")
    payload_bytes = sum(s["bytes"] for s in seconds)
    span = sum(s["end"] - s["start"] for s in seconds)
    lost = int(data.get("end", {}).get("sum", {}).get("lost_packets", 0))
    return payload_bytes * 8 / span * _MTU / payload, lost


def calibrate(
    rtt_ns: int,
    rate_bps: int,
    buffer_pkts: int | None = None,
    udp_seconds: int = 5,
    profile: str = "default",
    ping_count: int = 200,
    compensate: bool = True,
) -> Calibration:
    """Build a one-pair testbed, measure ping RTT and UDP throughput, remove it. With
    ``compensate`` the path's own overhead is measured first and taken out of the router's delay
    (``_Testbed._correct_delay``), and the pings judged are those of the corrected path."""
    bdp_pkts = max(1, round(rate_bps * rtt_ns / 8e9 / _MTU))
    queue = {"kind": "droptail", "limit_pkts": buffer_pkts or bdp_pkts}
    with _session(1, rate_bps, rtt_ns, queue, profile, measure_overhead=compensate) as bed:
        rtts = bed.ping(ping_count)
        rate, lost = _udp_rate(rate_bps, udp_seconds, bed.workdir)
        assert bed.router is not None
        report = bed.router.stop()
    return Calibration(rtt_ns / 1e6, rtts, rate_bps, rate, lost, report, bed.overhead_ns, bed.uncorrected, bed.uncorrected_runs, bed.uncorrected_lateness_ns)


# --- a scenario ---------------------------------------------------------------------------------


def check(scenario: Scenario, profile: str = "default") -> tuple[DumbbellTopology, list[FlowStack]]:
    """Refuse, with one :class:`ScenarioError`, what the testbed cannot run (a graph, random loss,
    DCCP flows, CBR flows with a schedule, a variant this kernel lacks, a ``[tcp]`` setting it
    cannot apply, an unknown profile); otherwise the dumbbell and each flow's
    :class:`~.stack.FlowStack`. Builds nothing."""
    if profile not in PROFILES:
        raise ScenarioError("profile", profile, f"expected one of {', '.join(PROFILES)}")
    topo = scenario.topology
    if not isinstance(topo, DumbbellTopology):
        raise ScenarioError("topology.kind", "graph", "expected 'dumbbell' (the testbed builds dumbbells only)")
    if topo.loss or topo.reverse_loss:
        raise ScenarioError("topology.loss", topo.loss or topo.reverse_loss, "expected 0 (the testbed router has no random loss)")
    for i, flow in enumerate(scenario.flows):
        if isinstance(flow, CbrFlow):
            continue
        if not isinstance(flow, TcpFlow):
            raise ScenarioError(f"flows[{i}].kind", getattr(flow, "kind", "?"), "expected 'tcp' or 'cbr' (the testbed runs TCP flows and UDP CBR flows only)")
        if flow.drop_segments:
            raise ScenarioError(f"flows[{i}].drop_segments", flow.drop_segments, "expected [] (a test hook of the simulator)")
    return topo, stacks_.plan(scenario, PROFILES[profile]["sysctls"])


def kernel_cc(variant: str) -> str:
    """The Linux congestion control of a variant (:func:`.stack.kernel_cc`)."""
    return stacks_.kernel_cc(variant)


def available_cc() -> set[str]:
    return set(stacks_.available_cc())


def _iperf_version() -> str:
    out = tools.run(["iperf3", "--version"], check=False)
    return out.splitlines()[0].strip() if out else "?"


#: Calibrations of the sweeps of this process: (sweep, RTT ns, bottleneck bit/s, profile) → the
#: calibration, or the message of the error that stopped it.
_SWEEP_CALIBRATIONS: dict[tuple[str, int, int, str], Calibration | str] = {}
#: A sweep's calibration: pings and seconds of UDP at the bottleneck rate.
SWEEP_PINGS = 200
SWEEP_UDP_SECONDS = 3


def sweep_calibration(sweep: str, scenario: Scenario, profile: str = "default") -> Calibration | str:
    """The calibration of ``scenario``'s path (RTT, bottleneck) in sweep ``sweep``: measured by
    :func:`calibrate` the first time this process asks, then reused for every run of the sweep on
    that path (its routers take out the path overhead it measured). A calibration that could not
    be made at all comes back as its error message."""
    topo = scenario.topology
    assert isinstance(topo, DumbbellTopology)
    key = (sweep, topo.rtt.ns, topo.bottleneck.bps, profile)
    if key not in _SWEEP_CALIBRATIONS:
        try:
            cal: Calibration | str = calibrate(topo.rtt.ns, topo.bottleneck.bps, udp_seconds=SWEEP_UDP_SECONDS, profile=profile, ping_count=SWEEP_PINGS)
        except tools.MissingTool:
            raise
        except TcplabError as e:
            cal = f"{type(e).__name__}: {e}"
        _SWEEP_CALIBRATIONS[key] = cal
    return _SWEEP_CALIBRATIONS[key]


def run(
    scenario: Scenario | str | os.PathLike[str],
    seed: int | None = None,
    profile: str = "default",
    calibration: Calibration | str | None = None,
    router_pcap: str | os.PathLike[str] | None = None,
    compensate: bool = True,
) -> Result:
    """Run ``scenario`` on the emulated testbed (real Linux TCP, iperf3, the tcplab router) and
    return a :class:`Result` with :func:`tcplab.simulate`'s tables (unmeasurable columns NaN).

    ``calibration``: the path's calibration made beforehand (:func:`sweep_calibration`; a string
    is the error of one that failed, and the run is not made); without it the run pings its path
    itself, after measuring the path's own overhead when ``compensate``. The router's delay is
    (rtt + rtt_offset)/2 less half the overhead, the calibration's or the run's own (a sweep
    calibrates at the rtt alone: the offset is a few microseconds of the loop's phase). ``meta["valid"]`` is False,
    with ``meta["invalid_reason"]``, when the calibration is off (ping RTT more than 1 ms off the
    setting, UDP rate more than 2 % off the bottleneck), the router's timer lateness p99.9
    exceeds 1 ms, or the router lost packets outside the queue.

    ``router_pcap``: also write every packet the bottleneck's queue receives (the senders' side
    of the bottleneck: data toward the receivers), its first 96 bytes stamped with the router's
    arrival time, to this pcap file (nanosecond libpcap, raw IPv4), once the run has finished.
    """
    if not isinstance(scenario, Scenario):
        scenario = load(scenario)
    if seed is not None:
        scenario = scenario.model_copy(update={"seed": int(seed)})
    topo, stacks = check(scenario, profile)
    if isinstance(calibration, str):
        raise TcplabError(f"calibration failed at RTT {topo.rtt}, bottleneck {topo.bottleneck}: {calibration}")
    n = len(scenario.flows)
    queue = topo.queue_spec(topo.buffer.limit(topo.bottleneck.bps, topo.rtt.ns))
    rng = random.Random(scenario.seed)
    starts_ns = [flow.start.ns + int(rng.random() * scenario.start_jitter.ns) for flow in scenario.flows]
    duration_ns = scenario.duration.ns
    overhead_ns = 0 if calibration is None else calibration.overhead_ns
    measure = calibration is None and compensate
    with _session(n, topo.bottleneck.bps, topo.loop_rtt.ns, queue, profile, stacks, router_pcap is not None, overhead_ns, measure, seed=scenario.seed, rate_schedule=topo.rate_points()) as bed:
        rtts = None
        if calibration is None:
            rtts = bed.ping(100)
            bed.renew_router()  # the pings' load is not the flows' traffic: the router counts from zero
        hosts = _read_back(n)
        assert bed.router is not None
        flows, sampler, t0_ns = _run_flows(scenario, stacks, starts_ns, bed.workdir, bed.router)
        report = bed.router.stop()
        if router_pcap is not None:
            assert bed.router.pcap_path is not None
            shutil.move(bed.router.pcap_path, router_pcap)
    if calibration is None:
        assert rtts is not None
        calibration = Calibration(topo.loop_rtt.ns / 1e6, rtts, topo.bottleneck.bps, None, None, {}, bed.overhead_ns, bed.uncorrected, bed.uncorrected_runs, bed.uncorrected_lateness_ns)
        source = "this run (ping)"
    else:
        source = "the sweep's calibration of this RTT and bottleneck"
    return _result(scenario, flows, sampler.snapshots, sampler.alphas, sampler.states, report, calibration, source, hosts, stacks, profile, queue, starts_ns, duration_ns, t0_ns)


def _read_back(pairs: int) -> dict[str, Any]:
    """Each host's TCP sysctls and default route as the kernel reports them."""
    out: dict[str, Any] = {}
    for i in range(1, pairs + 1):
        for ns in (topology.sender_ns(i), topology.receiver_ns(i)):
            host = tools.sysctl_get(ns, list(_RECORDED))
            host["route"] = " ".join(tools.ip("route", "show", "default", ns=ns).split())
            out[ns] = host
    return out


def load(path: str | os.PathLike[str]) -> Scenario:
    """A scenario file whose TCP variants may also be any congestion control this kernel offers."""
    from ..config import read_toml

    data = read_toml(path)
    data.setdefault("name", Path(path).stem)
    return Scenario.model_validate(data, context={"variants": sorted(available_cc())})


_SS_FIELDS = re.compile(r"\b(mss|ssthresh|unacked|sacked|lost|bytes_acked):(\d+)")
_SS_RETRANS = re.compile(r"\bretrans:(\d+)/")
_SS_PACING = re.compile(r"\bpacing_rate ([\d.]+)([KMG]?)bps")
_SS_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}


def _ss_state(ns: str, dst: str, port: int) -> dict[str, float] | None:
    """The sender's TCP state as ``ss -ti`` shows it now, of its connection to ``dst``:``port``
    that has had the most acknowledged (iperf3's data connection, not its control connection):
    ``ssthresh_bytes`` (NaN while infinite: ss leaves it out), ``in_flight_bytes`` (Linux's
    ``tcp_packets_in_flight``: unacknowledged less SACKed and lost, plus retransmissions out, ×
    MSS) and ``pacing_rate_bps``. None when there is no such connection."""
    text = tools.run(["ss", "-H", "-t", "-i", "-n", "state", "established", "dst", dst, "dport", "=", f":{port}"], ns=ns, timeout=5, what="ss", check=False) or ""
    best: dict[str, float] | None = None
    for info in (line for line in text.splitlines() if line[:1].isspace()):
        fields = {k: int(v) for k, v in _SS_FIELDS.findall(info)}
        retrans = _SS_RETRANS.search(info)
        pacing = _SS_PACING.search(info)
        mss = fields.get("mss", 0)
        state = {
            "acked": float(fields.get("bytes_acked", 0)),
            "ssthresh_bytes": float(fields["ssthresh"] * mss) if "ssthresh" in fields else np.nan,
            "in_flight_bytes": float((fields.get("unacked", 0) - fields.get("sacked", 0) - fields.get("lost", 0) + (int(retrans.group(1)) if retrans else 0)) * mss),
            "pacing_rate_bps": float(pacing.group(1)) * _SS_UNITS[pacing.group(2)] if pacing else np.nan,
        }
        if best is None or state["acked"] > best["acked"]:
            best = state
    return best


class _Sampler(threading.Thread):
    """Asks the router for its report (SIGUSR1) at every interval end and keeps each sender's
    cumulative packet, drop and CE-mark counts: the per-interval ``sent_pkts``/``dropped_pkts``/
    ``marked_pkts``; with ``alpha``, also the BPF DCTCP connections' α (``dctcp_alpha``); for each
    TCP flow of ``tcp`` (flow index → sender namespace, receiver address, port), its sender's
    state as ``ss`` shows it (``ssthresh_bytes``, ``in_flight_bytes``, ``pacing_rate_bps``)."""

    def __init__(self, router: _Router, t0_ns: int, interval_ns: int, count: int, alpha: bool = False, tcp: dict[int, tuple[str, str, int]] | None = None) -> None:
        super().__init__(daemon=True)
        self.router, self.t0_ns, self.interval_ns, self.count, self.alpha = router, t0_ns, interval_ns, count, alpha
        self.tcp = tcp or {}
        self.snapshots: dict[int, dict[str, tuple[int, int, int]]] = {}
        self.alphas: dict[int, dict[str, float]] = {}
        self.states: dict[int, dict[int, dict[str, float]]] = {}
        self.halt = threading.Event()

    def sample_alpha(self, k: int) -> None:
        """α of each BPF DCTCP connection opened in this run, as it is now: interval ``k``'s end."""
        if self.alpha:
            self.alphas[k] = bpf.dctcp_alphas(self.t0_ns)

    def run(self) -> None:
        path = self.router.report_path
        for k in range(1, self.count):
            if self.halt.wait(max(0.0, (self.t0_ns + k * self.interval_ns - time.monotonic_ns()) / 1e9)):
                return
            path.unlink(missing_ok=True)
            self.router.proc.send_signal(signal.SIGUSR1)
            self.sample_alpha(k)
            states = {i: _ss_state(ns, dst, port) for i, (ns, dst, port) in self.tcp.items()}
            self.states[k] = {i: state for i, state in states.items() if state is not None}
            deadline = time.monotonic() + 0.5
            while not path.exists() and time.monotonic() < deadline and not self.halt.is_set():
                time.sleep(0.005)
            with contextlib.suppress(OSError, ValueError, KeyError, IndexError):
                fwd = json.loads(path.read_text())["directions"][0]
                self.snapshots[k] = {s["addr"]: (s["pkts"], s["dropped"], s.get("marked", 0)) for s in fwd["sources"]}

    def stop(self) -> None:
        self.halt.set()
        self.join(timeout=2)


@dataclass
class _FlowRun:
    start_ns: int
    client: dict[str, Any]
    server: dict[str, Any]
    #: The sender namespace's stack counters over the run (after − before; nonzero ones only):
    #: its one data connection's timeouts, recoveries, loss probes, undos …
    counters: dict[str, int]


def _run_flows(scenario: Scenario, stacks: list[FlowStack], starts_ns: list[int], workdir: Path, router: _Router) -> tuple[list[_FlowRun], _Sampler, int]:
    """Each flow's iperf3 run, what the sampler kept at each interval's end (the router's counts,
    the senders' state from ss, BPF DCTCP's α), and the run's time origin (CLOCK_MONOTONIC ns, the
    router's clock too)."""
    duration_ns = scenario.duration.ns
    sampler: _Sampler | None = None
    servers: list[subprocess.Popen[bytes]] = []
    clients: list[subprocess.Popen[bytes] | None] = [None] * len(scenario.flows)
    files = []
    try:
        for i in range(len(scenario.flows)):
            port = FLOW_PORT_BASE + i
            out, err = workdir / f"server{i + 1}.json", workdir / f"server{i + 1}.stderr"
            files.append((out, err, workdir / f"client{i + 1}.json", workdir / f"client{i + 1}.stderr"))
            with open(out, "wb") as o, open(err, "wb") as e:
                servers.append(tools.spawn(["iperf3", "-s", "-1", "-J", "-i", REPORT_INTERVAL_S, "-p", str(port)], topology.receiver_ns(i + 1), o, e))
        for i in range(len(scenario.flows)):
            _wait_listening(topology.receiver_ns(i + 1), FLOW_PORT_BASE + i)
        before = [tools.kernel_counters(topology.sender_ns(i + 1)) for i in range(len(scenario.flows))]
        order = sorted(range(len(scenario.flows)), key=lambda i: starts_ns[i])
        t0 = router.start()
        count = len(_bins(duration_ns, scenario.interval.ns))
        tcp = {i: (topology.sender_ns(i + 1), topology.receiver_addr(i + 1), FLOW_PORT_BASE + i) for i, flow in enumerate(scenario.flows) if isinstance(flow, TcpFlow)}
        sampler = _Sampler(router, t0, scenario.interval.ns, count, alpha="dctcp" in {s.cc for s in stacks} and "dctcp" in bpf.registered(), tcp=tcp)
        sampler.start()
        actual = list(starts_ns)
        for i in order:
            flow = scenario.flows[i]
            assert isinstance(flow, (TcpFlow, CbrFlow))
            stop_ns = flow.stop.ns if flow.stop is not None else duration_ns
            seconds = max(1, math.ceil((stop_ns - starts_ns[i]) / 1e9))  # iperf3 -t takes whole seconds
            delay = (t0 + starts_ns[i] - time.monotonic_ns()) / 1e9
            if delay > 0:
                time.sleep(delay)
            cmd = ["iperf3", "-c", topology.receiver_addr(i + 1), "-p", str(FLOW_PORT_BASE + i), *stacks[i].iperf3_args(), "-t", str(seconds), "-i", REPORT_INTERVAL_S, "-J"]
            _, _, out, err = files[i]
            with open(out, "wb") as o, open(err, "wb") as e:
                actual[i] = time.monotonic_ns() - t0
                clients[i] = tools.spawn(cmd, topology.sender_ns(i + 1), o, e)
        deadline = time.monotonic() + duration_ns / 1e9 + 30
        for proc in [*clients, *servers]:
            assert proc is not None
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        sampler.stop()
        sampler.sample_alpha(count)  # as the flows ended: the map keeps closed connections' last α
        runs = []
        for i, (s_out, s_err, c_out, c_err) in enumerate(files):
            client = tools.read_json(c_out, f"iperf3 client of flow {i + 1}", c_err)
            server = tools.read_json(s_out, f"iperf3 server of flow {i + 1}", s_err)
            after = tools.kernel_counters(topology.sender_ns(i + 1))
            counters = {k: v - before[i].get(k, 0) for k, v in after.items() if v != before[i].get(k, 0)}
            runs.append(_FlowRun(actual[i], client, server, counters))
        return runs, sampler, t0
    finally:
        if sampler is not None:
            sampler.stop()
        for proc in [*clients, *servers]:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


# --- the result ---------------------------------------------------------------------------------


def _bins(duration_ns: int, interval_ns: int) -> np.ndarray:
    """Interval end times, as the engine reports them: interval, 2·interval, …, the duration."""
    count = -(-duration_ns // interval_ns)
    return np.minimum(np.arange(1, count + 1, dtype=np.int64) * interval_ns, duration_ns)


def _spread(ends: np.ndarray, spans: list[tuple[float, float, float]]) -> np.ndarray:
    """Add each (start_ns, end_ns, amount) to the bins by the fraction of it each bin overlaps."""
    out = np.zeros(len(ends))
    starts = np.concatenate(([0], ends[:-1])).astype(float)
    for a, b, v in spans:
        if b <= a:
            continue
        overlap = np.clip(np.minimum(ends, b) - np.maximum(starts, a), 0, None)
        out += v * overlap / (b - a)
    return out


def _sample(ends: np.ndarray, spans: list[tuple[float, float, float]]) -> np.ndarray:
    """At each bin end, the value of the span containing it (NaN where none does)."""
    out = np.full(len(ends), np.nan)
    for a, b, v in spans:
        out[(ends > a) & (ends <= b)] = v
    return out


def _result(
    scenario: Scenario,
    runs: list[_FlowRun],
    snapshots: dict[int, dict[str, tuple[int, int, int]]],
    alphas: dict[int, dict[str, float]],
    states: dict[int, dict[int, dict[str, float]]],
    report: dict[str, Any],
    calibration: Calibration,
    calibration_source: str,
    hosts: dict[str, Any],
    stacks: list[FlowStack],
    profile: str,
    queue: dict[str, Any],
    starts_ns: list[int],
    duration_ns: int,
    t0_ns: int,
) -> Result:
    n = len(runs)
    ends = _bins(duration_ns, scenario.interval.ns)
    fwd, rev = report["directions"]
    by_source = {s["addr"]: s for s in fwd["sources"]}
    nan = np.full(n, np.nan)

    rows: dict[str, list[Any]] = {k: [] for k in ("flow", "t_ns", "goodput_bytes", "cwnd_bytes", "ssthresh_bytes", "srtt_ns", "retrans_pkts", "sent_pkts", "dropped_pkts", "in_flight_bytes", "marked_pkts", "pacing_rate_bps", "dctcp_alpha")}
    sent_pkts, sent_bytes, dropped, marked, goodput, retrans = [], [], [], [], [], []
    data_starts = _data_starts(runs, by_source, t0_ns)
    for i, r in enumerate(runs):
        # iperf3's reports count from its test's start, when its data starts: after the preamble
        # (control connection, data connection, cookie: five round trips, 0.5 s at 100 ms). The
        # client's are placed at the flow's first data segment at the router, else at the
        # client's launch. The server starts its clock when it sends TEST_START, which reaches
        # the client half a round trip later, through the router's reverse delay (a capture at
        # the receiver: TEST_START, then the first data one round trip later): its reports are
        # placed half the round trip earlier, so that the receiver's bytes land when they arrived.
        at = data_starts[i] if data_starts[i] is not None else r.start_ns
        server_at = at - scenario.topology.loop_rtt.ns // 2 if data_starts[i] is not None else at
        # A CBR flow counts IP bytes, as the simulator's does: iperf3 counts UDP payload.
        flow = scenario.flows[i]
        udp = isinstance(flow, CbrFlow)
        scale = flow.packet_size.bytes / (flow.packet_size.bytes - stacks_.UDP_IP_HEADERS) if udp else 1.0
        recv = [(server_at + iv["sum"]["start"] * 1e9, server_at + iv["sum"]["end"] * 1e9, scale * float(iv["sum"]["bytes"])) for iv in r.server["intervals"]]
        streams = [iv["streams"][0] for iv in r.client["intervals"] if iv.get("streams")]
        cwnd = [(at + s["start"] * 1e9, at + s["end"] * 1e9, float(s.get("snd_cwnd", np.nan))) for s in streams]
        rtt = [(at + s["start"] * 1e9, at + s["end"] * 1e9, float(s["rtt"]) * 1e3 if "rtt" in s else np.nan) for s in streams]
        rtx = [(at + s["start"] * 1e9, at + s["end"] * 1e9, float(s.get("retransmits", 0))) for s in streams]
        rows["flow"].extend([i] * len(ends))
        rows["t_ns"].extend(ends.tolist())
        rows["goodput_bytes"].extend(np.round(_spread(ends, recv)).tolist())
        rows["cwnd_bytes"].extend(_sample(ends, cwnd).tolist())
        rows["srtt_ns"].extend(_sample(ends, rtt).tolist())
        rows["retrans_pkts"].extend(np.round(_spread(ends, rtx)).tolist())
        # ssthresh, in-flight and the pacing rate as ss showed them at each interval's end but the
        # last (the flows have closed by then); the pacing rate only of a flow that paces (the
        # kernel computes one for every socket, and uses it with pacing on or under BBR).
        paced = stacks[i].pacing or stacks[i].cc == "bbr"
        for column in ("ssthresh_bytes", "in_flight_bytes", "pacing_rate_bps"):
            keep = column != "pacing_rate_bps" or paced
            rows[column].extend([states.get(k, {}).get(i, {}).get(column, np.nan) if keep else np.nan for k in range(1, len(ends) + 1)])
        # DCTCP's α from tcplab's BPF DCTCP at each interval's end (none before the flow's
        # connection opened).
        addr = topology.sender_addr(i + 1)
        rows["dctcp_alpha"].extend([alphas.get(k, {}).get(addr, np.nan) if stacks[i].cc == "dctcp" else np.nan for k in range(1, len(ends) + 1)])
        source = by_source.get(addr, {})
        # Cumulative counts at each interval end (the last from the final report), differenced.
        cumulative = {k: snap.get(addr, (0, 0, 0)) for k, snap in snapshots.items()}
        cumulative[len(ends)] = (source.get("pkts", 0), source.get("dropped", 0), source.get("marked", 0))
        for column, j in (("sent_pkts", 0), ("dropped_pkts", 1), ("marked_pkts", 2)):
            at = np.array([np.nan, *(cumulative[k][j] if k in cumulative else np.nan for k in range(1, len(ends) + 1))], dtype=float)
            at[0] = 0.0
            rows[column].extend(np.diff(at).tolist())
        sent_pkts.append(float(source.get("pkts", np.nan)))
        sent_bytes.append(float(source.get("bytes", np.nan)))
        dropped.append(float(source.get("dropped", np.nan)))
        marked.append(float(source.get("marked", np.nan)))
        end = r.server.get("end", {})
        goodput.append(scale * float(end.get("sum_received", end.get("sum", {})).get("bytes", np.nan)))
        retrans.append(0.0 if udp else float(r.client.get("end", {}).get("sum_sent", {}).get("retransmits", np.nan)))

    flows = {
        "flow": np.arange(n, dtype=np.uint64),
        "sent_pkts": np.array(sent_pkts),
        "sent_bytes": np.array(sent_bytes),
        "retrans_pkts": np.array(retrans),
        "dropped_pkts": np.array(dropped),
        "delivered_pkts": nan,
        "in_flight_pkts": nan,
        "goodput_bytes": np.array(goodput),
        # The sender's stack counters: RTOs, and entries into SACK (or NewReno) fast recovery.
        "rto_count": np.array([float(r.counters.get("TcpExt.TCPTimeouts", 0)) for r in runs]),
        # Timeouts undone as spurious (the simulator's `undo`).
        "loss_undos": np.array([float(r.counters.get("TcpExt.TCPLossUndo", 0)) for r in runs]),
        "recoveries": np.array([float(r.counters.get("TcpExt.TCPSackRecovery", 0) + r.counters.get("TcpExt.TCPRenoRecovery", 0)) for r in runs]),
        "recovery_ns": nan,
        # ECN: the router's CE marks on the flow's packets; the kernel counts no window reductions.
        "marked_pkts": np.array(marked),
        "ecn_reductions": nan,
        **{f"owd_{k}_ns": nan for k in ("mean", "min", "p50", "p99", "max")},
    }
    intervals = {k: np.asarray(v, dtype=np.uint64 if k in ("flow", "t_ns") else float) for k, v in rows.items()}
    intervals["t_ns"] = intervals["t_ns"].astype(np.int64)
    queues = _queues(n, fwd, rev)
    lateness_p999 = _lateness_p999(report)
    reasons = [f"calibration failed: {problem}" for problem in calibration.problems()]
    if lateness_p999 > LATENESS_LIMIT_NS:
        reasons.append(f"router timer lateness p99.9 {lateness_p999 / 1e3:.0f} µs exceeds {LATENESS_LIMIT_NS / 1e3:.0f} µs")
    overflow = fwd["overflow_pkts"] + rev["overflow_pkts"] + fwd["write_errors"] + rev["write_errors"]
    if overflow:
        reasons.append(f"the router lost {overflow} packets outside the queue discipline (slab full or write errors)")
    raw = {
        "flows": flows,
        "intervals": intervals,
        "queues": queues,
        "meta": {"transmissions": float("nan"), "events": float("nan"), "end_ns": duration_ns, "node_names": scenario.node_names},
    }
    result = Result.from_engine(scenario, raw, engine_version=None)
    cal = {**calibration.as_dict(), "source": calibration_source}
    result.meta.update(
        backend="testbed",
        valid=not reasons,
        invalid_reason="; ".join(reasons) if reasons else None,
        calibration=cal,
        router=report,
        backend_info={
            "backend": "testbed",
            "kernel": os.uname().release,
            "profile": profile,
            "stack": hosts[topology.sender_ns(1)],
            "hosts": hosts,
            "flow_stacks": [s.as_dict() for s in stacks],
            "profile_sysctls": PROFILES[profile]["sysctls"],
            "congestion_control": [s.cc for s in stacks],
            # Congestion controls that were tcplab's BPF programs, not the kernel's (DCTCP here).
            **({"bpf_congestion_controls": bpf_ccs} if (bpf_ccs := sorted(set(bpf.registered()) & {s.cc for s in stacks})) else {}),
            "calibration": cal,
            "lateness_p999_ns": lateness_p999,
            # Each direction's whole lateness summary (count, mean, p50, p99, p99.9, max): how
            # much timing noise the run had, not only whether it stayed under the limit.
            "router_lateness": {"forward": fwd["lateness"], "reverse": rev["lateness"]},
            # The router's stalls, wake-ups more than STALL_LIMIT_NS late (count, total_ns, max_ns).
            "router_stalls": {"forward": fwd["stalls"], "reverse": rev["stalls"]},
            "overflow_pkts": overflow,
            "iperf3": _iperf_version(),
            "router": {
                "rate_bps": fwd["rate_bps"],
                "delay_ns": fwd["delay_ns"],
                "path_overhead_ns": calibration.overhead_ns,
                "queue": queue,
                "realtime": bool(fwd["realtime"] and rev["realtime"]),
                # With a rate schedule: the steps it took, as the forward direction counted them.
                **({"rate_schedule": fwd["rate_schedule"], "rate_changes": fwd["rate_changes"]} if fwd.get("rate_schedule") else {}),
            },
            "flow_starts_ns": [r.start_ns for r in runs],
            # When each flow's data reached the router (its first full-size segment), from the
            # run's start: where its per-second series begins (None: at its launch).
            "data_starts_ns": data_starts,
            "kernel_counters": [r.counters for r in runs],
            "planned_starts_ns": starts_ns,
            "offloads": "tso gso gro off on every veth",
            "not_applied": "access links are unshaped veths, their delay folded into the router's (rtt - path overhead)/2; Linux recovers with PRR and (SACK off) NewReno partial ACKs whatever the variant",
        },
    )
    return result


def _data_starts(runs: list[_FlowRun], by_source: dict[str, dict[str, Any]], t0_ns: int) -> list[int | None]:
    """Each flow's first data segment at the router (its report's ``first_data_ns``, on the run's
    clock), from the run's start; None for a flow the router saw no data of, or one that began
    before its launch (not its own)."""
    out: list[int | None] = []
    for i, r in enumerate(runs):
        first = by_source.get(topology.sender_addr(i + 1), {}).get("first_data_ns")
        out.append(first - t0_ns if first is not None and first - t0_ns >= r.start_ns else None)
    return out


def _queues(n: int, fwd: dict[str, Any], rev: dict[str, Any]) -> dict[str, np.ndarray]:
    """Simulate's queue rows: the bottleneck's two directions measured by the router; the access
    links (unshaped veths) all NaN."""
    links, src, dst = [0, 1], [2 * n, 2 * n + 1], [2 * n + 1, 2 * n]
    for i in range(n):
        links += [2 + 4 * i, 3 + 4 * i, 4 + 4 * i, 5 + 4 * i]
        src += [i, 2 * n, 2 * n + 1, n + i]
        dst += [2 * n, i, n + i, 2 * n + 1]
    rows = len(links)

    def col(f: Any) -> np.ndarray:
        return np.array([f(fwd), f(rev)] + [np.nan] * (rows - 2), dtype=float)

    return {
        "link": np.array(links, dtype=np.uint64),
        "from": np.array(src, dtype=np.uint64),
        "to": np.array(dst, dtype=np.uint64),
        # Offered to the queue, dropped there or not, as the simulator counts (the router's
        # overflows never reached it).
        "enqueued_pkts": col(lambda d: d["received_pkts"] - d["overflow_pkts"]),
        "dropped_pkts": col(lambda d: d["dropped_pkts"] + d["overflow_pkts"]),
        "early_drop_pkts": col(lambda d: d.get("early_drop_pkts", 0)),
        "marked_pkts": col(lambda d: d.get("marked_pkts", 0)),
        "random_loss_pkts": col(lambda d: 0),
        "max_pkts": col(lambda d: d["max_pkts"]),
        "mean_pkts": col(lambda d: d["mean_pkts"]),
        "sojourn_mean_ns": col(lambda d: d["sojourn"]["mean_ns"]),
        "sojourn_p50_ns": col(lambda d: d["sojourn"]["p50_ns"]),
        "sojourn_p99_ns": col(lambda d: d["sojourn"]["p99_ns"]),
        "sojourn_max_ns": col(lambda d: d["sojourn"]["max_ns"]),
        "final_pkts": col(lambda d: d["final_pkts"]),
    }
