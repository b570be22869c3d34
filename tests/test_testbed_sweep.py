"""The testbed as a backend of sweeps, end to end: ``tcplab run experiments/testbed-quick.toml
--backend testbed`` into a store, resumed, redone, compared with the simulator; each flow's
``[tcp]`` settings and variant as sysctls and routes of its namespaces; what cannot run refused
before anything starts.

Needs root, iperf3, ping, ethtool and the router (``make install``), as tests/test_testbed.py.
About 100 s: two 20 s runs and a path calibration, one redone run, one 4 s run.

Whether a run is valid depends on the rest of the machine (a loaded machine delays the router:
docs/testbed.md): the tests check the rule — invalid if and only if the router's timer lateness
p99.9 exceeds 1 ms, the calibration failed or the router lost packets outside its queue — and
never that runs are valid.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import duckdb
import pytest

import tcplab
from leftovers import netns, processes
import tcplab.testbed as testbed
from tcplab.experiment import load_experiment
from tcplab.runner import execute
from tcplab.testbed import Calibration, stack
from tcplab.testbed.tools import PingStats

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "experiments" / "testbed-quick.toml"


def _tcplab(*args: Any, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tcplab", *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _runs(store: Path) -> list[dict[str, Any]]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        frame = con.sql("SELECT run_id, backend, versions, valid, invalid_reason, jfi, finished_at, point FROM runs ORDER BY run_id").df()
        flows = con.sql("SELECT run_id, count(*) AS n FROM flows GROUP BY run_id").df()
    finally:
        con.close()
    rows = frame.to_dict("records")
    counts = dict(zip(flows["run_id"], flows["n"]))
    for row in rows:
        row["versions"] = json.loads(row["versions"])
        row["point"] = json.loads(row["point"])
        row["flow_rows"] = int(counts.get(row["run_id"], 0))
        if not isinstance(row["invalid_reason"], str):
            row["invalid_reason"] = None  # NULL comes back as NaN
    return rows


def _follows_the_rule(run: dict[str, Any]) -> bool:
    v = run["versions"]
    should_be_valid = v["lateness_p999_ns"] <= testbed.LATENESS_LIMIT_NS and v["calibration"]["ok"] and v["overflow_pkts"] == 0
    return bool(run["valid"]) == should_be_valid and (run["invalid_reason"] is None) == should_be_valid


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """The experiment run on the testbed, then run again (nothing to do)."""
    d = tmp_path_factory.mktemp("testbed-sweep")
    store = d / "testbed.duckdb"
    first = _tcplab("run", EXPERIMENT, "--backend", "testbed", "--store", store)
    after_first = _runs(store) if store.exists() else []
    second = _tcplab("run", EXPERIMENT, "--backend", "testbed", "--store", store)
    valid = sum(bool(r["valid"]) for r in after_first)
    print(f"\ntestbed sweep: {valid} of {len(after_first)} runs valid; lateness p99.9 (µs): "
          f"{[round(r['versions']['lateness_p999_ns'] / 1e3) for r in after_first]}")  # fmt: skip
    return SimpleNamespace(dir=d, store=store, first=first, second=second, runs=after_first)


def test_the_sweep_stores_every_run_once_tagged_with_backend_kernel_and_stack(sweep: SimpleNamespace) -> None:
    exp = load_experiment(EXPERIMENT, tuple(stack.available_cc()))
    expected = {run.run_id for run in exp.runs("testbed")}
    assert sweep.first.returncode == (1 if any(not r["valid"] for r in sweep.runs) else 0), sweep.first.stderr
    assert [r["run_id"] for r in sweep.runs] == sorted(expected)  # each once (run_id is the key)
    assert "2 runs to do" in sweep.first.stderr and "[2/2]" in sweep.first.stderr  # the progress lines of a log
    for run in sweep.runs:
        v = run["versions"]
        assert run["backend"] == v["backend"] == "testbed"
        assert v["kernel"] == os.uname().release
        assert v["profile"] == "default"
        assert v["congestion_control"] == ["reno", "cubic"]
        # The stack as the kernel reports it: reno runs with SACK off (the variant's), cubic with
        # SACK on; both with the scenario's initial window and minimum RTO on the sender's route.
        hosts = v["hosts"]
        assert hosts["tcplab-s1"]["net.ipv4.tcp_sack"] == hosts["tcplab-r1"]["net.ipv4.tcp_sack"] == "0"
        assert hosts["tcplab-s2"]["net.ipv4.tcp_sack"] == hosts["tcplab-r2"]["net.ipv4.tcp_sack"] == "1"
        assert "initcwnd 10" in hosts["tcplab-s1"]["route"] and "rto_min lock 200ms" in hosts["tcplab-s1"]["route"]
        assert hosts["tcplab-r1"]["net.ipv4.tcp_rmem"] == "4096 131072 6291456"  # rwnd = 6 MiB
        # A run that finished has its flows, valid or not.
        assert run["flow_rows"] == 2
        # The router's timing noise in both directions, of which the validity rule reads p99.9.
        late = v["router_lateness"]
        assert max(late["forward"]["p999_ns"], late["reverse"]["p999_ns"]) == v["lateness_p999_ns"]
        for d in (late["forward"], late["reverse"]):
            assert d["count"] > 0 and d["p50_ns"] <= d["p99_ns"] <= d["p999_ns"] <= d["max_ns"], d
    # One calibration of the path for the whole sweep, recorded with every run.
    calibrations = [r["versions"]["calibration"] for r in sweep.runs]
    assert calibrations[0]["source"].startswith("the sweep's calibration")
    assert calibrations[0]["pings"] == testbed.experiment.SWEEP_PINGS and calibrations[0]["udp_rate_bps"] > 0
    assert all(c == calibrations[0] for c in calibrations)


def test_a_run_is_invalid_exactly_when_the_router_was_late_or_calibration_failed(sweep: SimpleNamespace) -> None:
    for run in sweep.runs:
        assert _follows_the_rule(run), (run["valid"], run["invalid_reason"], run["versions"]["lateness_p999_ns"], run["versions"]["calibration"])
        if run["versions"]["lateness_p999_ns"] > testbed.LATENESS_LIMIT_NS:
            assert "lateness p99.9" in run["invalid_reason"]


def test_running_again_runs_nothing(sweep: SimpleNamespace) -> None:
    assert sweep.second.returncode == sweep.first.returncode, sweep.second.stderr
    assert "2 runs: 0 run now, 2 already in the store" in sweep.second.stdout
    assert _runs(sweep.store) == sweep.runs  # not one row rewritten


def test_the_sweep_leaves_no_namespace_or_process(sweep: SimpleNamespace) -> None:
    assert sweep.runs
    assert netns() == []
    assert processes("tcplab-router", "iperf3", "tcplab.testbed.watchdog") == []


def test_redo_invalid_reruns_the_invalid_runs_only(sweep: SimpleNamespace) -> None:
    store = sweep.dir / "redo.duckdb"
    shutil.copy(sweep.store, store)
    redo, keep = sweep.runs[0]["run_id"], sweep.runs[1]["run_id"]
    con = duckdb.connect(str(store))
    con.execute("UPDATE runs SET valid = (run_id <> ?), invalid_reason = CASE WHEN run_id = ? THEN 'marked invalid' END", [redo, redo])
    con.close()
    p = _tcplab("run", EXPERIMENT, "--backend", "testbed", "--store", store, "--redo-invalid")
    after = {r["run_id"]: r for r in _runs(store)}
    before = {r["run_id"]: r for r in sweep.runs}
    assert "2 runs: 1 run now, 1 already in the store" in p.stdout, p.stdout + p.stderr
    assert after[keep]["finished_at"] == before[keep]["finished_at"]
    assert after[redo]["finished_at"] > before[redo]["finished_at"]
    assert after[redo]["invalid_reason"] != "marked invalid" and _follows_the_rule(after[redo])
    assert p.returncode == (0 if after[redo]["valid"] and after[keep]["valid"] else 1)
    assert netns() == []


def test_the_simulator_runs_the_same_experiment_and_compare_reports_mean_delta_jfi(sweep: SimpleNamespace) -> None:
    sim_store = sweep.dir / "sim.duckdb"
    p = _tcplab("run", EXPERIMENT, "--backend", "sim", "--store", sim_store, "--jobs", "1")
    assert p.returncode == 0, p.stderr
    sim = _runs(sim_store)
    assert len(sim) == 2 and {r["backend"] for r in sim} == {"sim"}
    c = _tcplab("compare", sim_store, sweep.store)
    valid = [r["jfi"] for r in sweep.runs if r["valid"]]
    print(f"\nJFI sim {[round(r['jfi'], 4) for r in sim]}, testbed {[round(r['jfi'], 4) for r in sweep.runs]} (valid: {len(valid)}); {c.stdout}")
    if not valid:  # a loaded machine: nothing to compare, and compare says why
        assert c.returncode == 2 and "are all invalid" in c.stderr, c.stderr
        return
    assert c.returncode == 0, c.stderr
    m = re.search(r"mean \|ΔJFI\| (\d\.\d{3}) here; paper 001 reports 0\.087", c.stdout)
    assert m, c.stdout
    expected = abs(sum(r["jfi"] for r in sim) / len(sim) - sum(valid) / len(valid))  # one cell
    assert float(m.group(1)) == pytest.approx(expected, abs=5e-4)


def _experiment(tmp_path: Path, flow2: str, tcp: str = "") -> Path:
    text = EXPERIMENT.read_text().replace('flow2 = "cubic"', f'flow2 = "{flow2}"')
    if tcp:
        text = text.replace("[scenario.topology]", f"[scenario.tcp]\n{tcp}\n\n[scenario.topology]")
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("variant", ["compound", "tahoe"])  # neither is a Linux congestion control
def test_a_variant_the_kernel_lacks_is_one_line_naming_it_and_the_kernels_list(tmp_path: Path, variant: str) -> None:
    store = tmp_path / "s.duckdb"
    p = _tcplab("run", _experiment(tmp_path, variant), "--backend", "testbed", "--store", store, timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip() == (
        f"tcplab: error: pairs.flow2 = '{variant}': expected a congestion control this kernel offers "
        # Read now: an earlier run may have registered tcplab's BPF programs (tcplab.testbed.bpf).
        f"(net.ipv4.tcp_available_congestion_control = {' '.join(stack.available_cc())}; newreno and sack run as its reno)"
    )
    assert not store.exists() and netns() == []


def test_tcp_settings_the_testbed_cannot_apply_are_refused_before_anything_runs(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    p = _tcplab("run", _experiment(tmp_path, "cubic", 'delack_timeout = "100ms"'), "--backend", "testbed", "--store", store, timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "tcplab: error: scenario.tcp.delack_timeout = '100ms': expected 40ms on the testbed "
        "(Linux's delayed-ACK timer adapts from 40 ms to 200 ms and has no setting)"
    ]
    assert not store.exists()
    p = _tcplab("run", EXPERIMENT, "--backend", "testbed", "--store", store, "--jobs", "2", timeout=60)
    assert p.returncode == 2 and "--jobs = 2: expected 1 with --backend testbed" in p.stderr
    p = _tcplab("run", EXPERIMENT, "--backend", "sim", "--store", store, "--profile", "tuned", timeout=60)
    assert p.returncode == 2 and "--profile = 'tuned': expected --profile only with --backend testbed" in p.stderr
    assert not store.exists() and netns() == []


def test_the_profile_is_part_of_a_testbed_runs_identity(tmp_path: Path) -> None:
    path = tmp_path / "tuned.toml"
    path.write_text(EXPERIMENT.read_text().replace('profile = "default"', 'profile = "tuned"'))
    default = load_experiment(EXPERIMENT, tuple(stack.available_cc()))
    tuned = load_experiment(path, tuple(stack.available_cc()))
    assert tuned.profile == "tuned"
    assert {r.run_id for r in default.runs("testbed")}.isdisjoint(r.run_id for r in tuned.runs("testbed"))
    assert [r.run_id for r in default.runs("sim")] == [r.run_id for r in tuned.runs("sim")]  # the simulator has no profile


# --- each flow's stack --------------------------------------------------------------------------

KERNEL = ["reno", "cubic", "bbr"]


def _scenario(variant: str = "cubic", **tcp: Any) -> tcplab.Scenario:
    return tcplab.Scenario.model_validate(
        {"name": "s", "duration": "5s", "topology": {"bottleneck": "100Mbps", "rtt": "50ms"}, "tcp": tcp, "flows": [{"variant": variant}]},
        context={"variants": KERNEL},
    )


def test_newreno_and_sack_are_linux_reno_with_sack_off_and_on() -> None:
    for variant, sack in (("newreno", "0"), ("sack", "1"), ("reno", "0"), ("cubic", "1"), ("bbr", "1")):
        (flow,) = stack.plan(_scenario(variant), available=KERNEL)
        assert flow.cc == ("reno" if variant in ("newreno", "sack") else variant)
        assert flow.sender_sysctls["net.ipv4.tcp_sack"] == flow.receiver_sysctls["net.ipv4.tcp_sack"] == sack, variant
    (flow,) = stack.plan(_scenario("newreno", sack=True), available=KERNEL)  # [tcp] sack wins
    assert flow.cc == "reno" and flow.sack


def test_a_flows_dscp_is_iperf3s_dscp() -> None:
    # iperf3 --dscp marks the data connection's data only (not the handshake, not the receiver's
    # ACKs: checked on this kernel with tshark, 2026-12-02), as the simulator marks its flows.
    marked = tcplab.Scenario.model_validate(
        {"name": "s", "duration": "5s", "topology": {"bottleneck": "100Mbps", "rtt": "50ms"},
         "flows": [{"variant": "cubic", "dscp": "CS1"}, {"kind": "cbr", "rate": "1Mbps", "dscp": 46}, {"variant": "bbr"}]},
        context={"variants": KERNEL},
    )
    tcp, cbr, plain = stack.plan(marked, available=KERNEL)
    assert tcp.iperf3_args()[-2:] == ["--dscp", "8"] and cbr.iperf3_args()[-2:] == ["--dscp", "46"]
    assert "--dscp" not in plain.iperf3_args() and "dscp" not in plain.as_dict() and tcp.as_dict()["dscp"] == 8


def test_tcp_settings_map_to_sysctls_and_routes() -> None:
    (flow,) = stack.plan(
        _scenario(init_cwnd=4, rwnd="64KB", sndbuf="1MB", timestamps=False, delayed_ack=False, min_rto="300ms", max_rto="60s"), available=KERNEL
    )
    assert flow.sender_route == ("initcwnd", "4", "rto_min", "300ms")
    assert flow.receiver_route == ("quickack", "1")
    assert flow.receiver_sysctls["net.ipv4.tcp_rmem"] == "4096 65536 65536"
    assert flow.sender_sysctls["net.ipv4.tcp_wmem"] == "4096 16384 1048576"
    assert flow.sender_sysctls["net.ipv4.tcp_timestamps"] == flow.receiver_sysctls["net.ipv4.tcp_timestamps"] == "0"
    assert flow.sender_sysctls["net.ipv4.tcp_rto_max_ms"] == "60000"
    # Timestamps: 1 with the receivers' random offsets (Linux's default), 2 without; an explicit
    # choice wins over the tuned profile's 1.
    for settings, value in (({}, "1"), ({"timestamp_offsets": True}, "1"), ({"timestamp_offsets": False}, "2")):
        for profile in ({}, testbed.PROFILES["tuned"]["sysctls"]):
            (flow,) = stack.plan(_scenario(**settings), profile, available=KERNEL)
            assert flow.sender_sysctls["net.ipv4.tcp_timestamps"] == flow.receiver_sysctls["net.ipv4.tcp_timestamps"] == value, settings
    # The tuned profile's 500 MB buffers stay unless the scenario sets rwnd or sndbuf itself.
    tuned = testbed.PROFILES["tuned"]["sysctls"]
    (flow,) = stack.plan(_scenario(), tuned, available=KERNEL)
    assert "net.ipv4.tcp_rmem" not in flow.receiver_sysctls and "net.ipv4.tcp_wmem" not in flow.sender_sysctls
    (flow,) = stack.plan(_scenario(rwnd="2MB"), tuned, available=KERNEL)
    assert flow.receiver_sysctls["net.ipv4.tcp_rmem"] == "4096 131072 2097152"
    # RACK-TLP: the sender's tcp_recovery and tcp_early_retrans when the scenario says; else the kernel's.
    assert "net.ipv4.tcp_recovery" not in stack.plan(_scenario(), available=KERNEL)[0].sender_sysctls
    (on,) = stack.plan(_scenario("cubic", rack=True), available=KERNEL)
    (off,) = stack.plan(_scenario("cubic", rack=False), available=KERNEL)
    assert (on.sender_sysctls["net.ipv4.tcp_recovery"], on.sender_sysctls["net.ipv4.tcp_early_retrans"]) == ("1", "3")
    assert (off.sender_sysctls["net.ipv4.tcp_recovery"], off.sender_sysctls["net.ipv4.tcp_early_retrans"]) == ("0", "0")
    (flow,) = stack.plan(_scenario("cubic", sack_compression=False), available=KERNEL)
    assert flow.receiver_sysctls["net.ipv4.tcp_comp_sack_nr"] == "0"
    # Receive-buffer autotuning: the kernel's unless the scenario says; off fixes the buffer at rwnd.
    assert "net.ipv4.tcp_moderate_rcvbuf" not in stack.plan(_scenario(rwnd="2MB"), tuned, available=KERNEL)[0].receiver_sysctls
    (on,) = stack.plan(_scenario(rwnd="2MB", rcvbuf_autotuning=True), tuned, available=KERNEL)
    (off,) = stack.plan(_scenario(rwnd="2MB", rcvbuf_autotuning=False), tuned, available=KERNEL)
    assert (on.receiver_sysctls["net.ipv4.tcp_moderate_rcvbuf"], on.receiver_sysctls["net.ipv4.tcp_rmem"]) == ("1", "4096 131072 2097152")
    assert (off.receiver_sysctls["net.ipv4.tcp_moderate_rcvbuf"], off.receiver_sysctls["net.ipv4.tcp_rmem"]) == ("0", "4096 2097152 2097152")


@pytest.mark.parametrize(
    ("tcp", "field", "allowed"),
    [
        ({"mss": "1000B"}, "tcp.mss", "expected unset on the testbed"),
        ({"initial_rto": "3s"}, "tcp.initial_rto", "expected 1s on the testbed"),
        ({"prr": False}, "tcp.prr", "Linux always recovers with PRR"),
        ({"tso": False}, "tcp.tso", "always sends TSO/GSO bursts"),
        ({"undo": False}, "tcp.undo", "Linux always undoes a timeout its timestamps show was spurious"),
        ({"fq_pacing": True}, "tcp.fq_pacing", "its kernel has no fq qdisc"),
        ({"ecn": True, "ect1": True}, "tcp.ect1", "negotiates AccECN"),
        ({"min_rto": "200500us"}, "tcp.min_rto", "expected whole milliseconds"),
        ({"max_rto": "200s"}, "tcp.max_rto", "from 1s to 120s"),
        ({"preamble": "none"}, "tcp.preamble", "expected 'iperf3' or unset on the testbed"),
        ({"preamble": "handshake"}, "tcp.preamble", "its flows are iperf3's"),
    ],
)
def test_what_cannot_be_applied_is_refused(tcp: dict[str, Any], field: str, allowed: str) -> None:
    with pytest.raises(tcplab.ScenarioError, match=re.escape(allowed)) as e:
        stack.plan(_scenario(**tcp), available=KERNEL)
    assert e.value.field == field


def test_a_sweep_run_whose_path_could_not_be_calibrated_is_invalid_and_builds_nothing() -> None:
    scenario = _scenario("cubic")
    topo = scenario.topology
    key = ("sweep-x", topo.rtt.ns, topo.bottleneck.bps, "default")
    testbed.experiment._SWEEP_CALIBRATIONS[key] = "ToolError: 'ping' failed (exit status 1): no reply"
    try:
        payload = execute("testbed", scenario, 7, {"profile": "default", "sweep": "sweep-x"})
    finally:
        del testbed.experiment._SWEEP_CALIBRATIONS[key]
    assert payload["error"] == "TcplabError: calibration failed at RTT 50ms, bottleneck 100Mbps: ToolError: 'ping' failed (exit status 1): no reply"
    assert payload["flows"] is None and payload["versions"]["backend"] == "testbed"
    assert netns() == []


def test_tcp_settings_are_applied_in_the_namespaces() -> None:
    # One reno flow limited by a 64 KB receive buffer: at most 64 KB per 50 ms RTT (10.5 Mb/s),
    # a tenth of the bottleneck; its hosts report the settings.
    scenario = tcplab.Scenario.model_validate(
        {
            "name": "rwnd",
            "duration": "4s",
            "window": "1s:4s",
            "topology": {"bottleneck": "100Mbps", "rtt": "50ms"},
            "tcp": {"rwnd": "64KB", "delayed_ack": False, "init_cwnd": 4, "min_rto": "300ms", "timestamps": False},
            "flows": [{"variant": "newreno"}],
        }
    )
    # Measured with a calibration that failed (ping 2 ms over the setting): the run is made, its
    # data kept, and it is invalid for that reason.
    off = Calibration(50.0, PingStats(20, 51.9, 52.0, 52.1), 100_000_000, 99_900_000.0)
    result = testbed.run(scenario, calibration=off)
    assert not result.meta["valid"]
    assert result.meta["invalid_reason"].startswith("calibration failed: ping RTT 52.000 ms is not within 1 ms of 50 ms")
    assert result.meta["backend_info"]["calibration"]["rtt_mean_ms"] == 52.0
    hosts = result.meta["backend_info"]["hosts"]
    assert hosts["tcplab-r1"]["net.ipv4.tcp_rmem"] == "4096 65536 65536"
    assert hosts["tcplab-s1"]["net.ipv4.tcp_timestamps"] == hosts["tcplab-r1"]["net.ipv4.tcp_timestamps"] == "0"
    assert hosts["tcplab-s1"]["net.ipv4.tcp_sack"] == "0"
    assert "initcwnd 4" in hosts["tcplab-s1"]["route"] and "rto_min lock 300ms" in hosts["tcplab-s1"]["route"]
    assert "quickack 1" in hosts["tcplab-r1"]["route"]
    mbps = result.summary()["throughput_mbps"].iloc[0]
    assert 1 < mbps < 65_536 * 8 / 0.050 / 1e6, mbps
    assert netns() == []
