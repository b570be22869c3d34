"""RED (``queue = "red"``) and Adaptive RED: against ns-2.35's ``Queue/RED``, paper 002's finding, the scenario keys."""

from __future__ import annotations

import copy
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.config import Scenario

DATA = Path(__file__).resolve().parent / "data"


def _cbr_through_red(rate_mbps: float, packet_bytes: int, red: dict[str, Any], seed: int = 1) -> Scenario:
    """The ns-2 script's path: 1 Gb/s access, a 10 Mb/s, 20 ms RED bottleneck, 1000-packet limit."""
    return Scenario.model_validate(
        {
            "name": "red-cbr",
            "duration": "30s",
            "seed": seed,
            "topology": {"bottleneck": "10Mbps", "rtt": "40ms", "buffer": "1000pkt", "queue": "red", "red": red},
            "flows": [{"kind": "cbr", "rate": f"{rate_mbps}Mbps", "packet_size": f"{packet_bytes}B"}],
        }
    )


def _ns2(rate_mbps: float, packet_bytes: int, red: dict[str, Any], seed: int = 1) -> tuple[int, float]:
    flag = lambda key: "true" if red.get(key, True) else "false"  # noqa: E731
    argv = [str(rate_mbps), str(packet_bytes), "30", flag("gentle"), flag("wait"), flag("byte_mode")]
    argv += [str(red.get("min_thresh", 0)), str(red.get("max_thresh", 0)), str(seed), "1" if red.get("adaptive") else "0"]
    out = subprocess.run(["ns", str(DATA / "ns2_red_cbr.tcl"), *argv], capture_output=True, text=True, check=True, timeout=120).stdout.split()
    values = dict(zip(out[::2], out[1::2]))
    return int(values["drops"]), float(values["meanq_pkts"])


# Rates a little off 12 Mb/s etc.: at exactly 12 Mb/s an arrival and a departure fall on the same
# instant every 6 ms, and which of the two the queue sees first differs between the simulators
# (worth 2% of the mean queue with 1500-byte packets).
NS2_CASES = [
    pytest.param(12.0013, 1000, {}, id="defaults-1000B"),
    pytest.param(12.0013, 1500, {}, id="defaults-1500B"),
    pytest.param(15.0013, 500, {}, id="defaults-500B-overload"),
    pytest.param(12.0013, 1000, {"byte_mode": False}, id="packet-mode"),
    pytest.param(12.0013, 1000, {"byte_mode": False, "gentle": False}, id="not-gentle"),
    pytest.param(12.0013, 1000, {"byte_mode": False, "wait": False}, id="no-wait"),
    pytest.param(11.0013, 1000, {"byte_mode": False, "min_thresh": 10, "max_thresh": 30}, id="thresholds-10-30"),
    # Adaptive RED raises max_p until the average sits between the thresholds: the queue is
    # shorter than with the fixed max_p (7.50 against 10.50 packets; 22.60 against 25.67 with
    # thresholds 10 / 30 at 10.5 Mb/s). Above max_thresh ns-2.35's gentle slope keeps the
    # initial max_p, so in packet mode at 12 Mb/s max_p climbs to top (0.5) and the queue is the
    # fixed case's (23.27).
    pytest.param(12.0013, 1000, {"adaptive": True}, id="adaptive"),
    pytest.param(10.5013, 1000, {"byte_mode": False, "min_thresh": 10, "max_thresh": 30, "adaptive": True}, id="adaptive-packet-mode-10-30"),
    pytest.param(12.0013, 1000, {"byte_mode": False, "adaptive": True}, id="adaptive-above-max-thresh"),
]


@pytest.mark.parametrize(("rate_mbps", "packet_bytes", "red"), NS2_CASES)
def test_red_queue_matches_ns2(rate_mbps: float, packet_bytes: int, red: dict[str, Any]) -> None:
    # A CBR stream overloading the bottleneck leaves RED alone to decide how long the queue gets:
    # it settles where RED's drop rate equals the excess. Both simulators drop the same excess
    # (to 0.5%), and their time-mean queues agree to 3% (seed to seed they move by up to 1%).
    assert shutil.which("ns") is not None, "ns-2 is not installed (make deps installs Debian's ns2)"
    ns_drops, ns_queue = _ns2(rate_mbps, packet_bytes, red)
    q = tcplab.simulate(_cbr_through_red(rate_mbps, packet_bytes, red)).queues.iloc[0]
    assert abs(q.dropped_pkts / ns_drops - 1) < 0.005, (q.dropped_pkts, ns_drops)
    assert q.early_drop_pkts == q.dropped_pkts  # the 1000-packet limit is never reached
    assert abs(q.mean_pkts / ns_queue - 1) < 0.03, (q.mean_pkts, ns_queue)


def _red002(variant: str, queue: str) -> Scenario:
    data = tomllib.loads((DATA / "red002.toml").read_text())
    data["flows"][0]["variant"] = variant
    for link in data["topology"]["links"]:
        link["queue"] = queue
    return Scenario.model_validate(data)


@pytest.mark.parametrize("variant", ["reno", "sack"])
def test_paper002_red_trades_throughput_for_latency(variant: str) -> None:
    # Paper 002, experiment 3: with RED the TCP flow's throughput is lower than with DropTail,
    # and its latency lower too (ns-2 defaults: RED keeps a few packets queued).
    runs = {queue: tcplab.simulate(_red002(variant, queue)) for queue in ("droptail", "red")}
    mbps = {q: r.summary((2, 30)).iloc[0].throughput_mbps for q, r in runs.items()}
    owd_ms = {q: r.flows.iloc[0].owd_mean_ns / 1e6 for q, r in runs.items()}
    assert mbps["red"] < 0.95 * mbps["droptail"], mbps
    assert owd_ms["red"] < owd_ms["droptail"] - 15, owd_ms  # base one-way delay: 30 ms
    bottleneck = runs["red"].queues.query("from_name == 'n2' and to_name == 'n3'").iloc[0]
    assert bottleneck.mean_pkts < 3 and bottleneck.dropped_pkts > 0


def test_sack_gets_more_through_red_than_reno() -> None:
    # Paper 002: "TCP SACK with RED was found to have higher stability": SACK recovers RED's
    # scattered drops without Reno's timeouts.
    sack, reno = (tcplab.simulate(_red002(v, "red")).summary((2, 30)).iloc[0].throughput_mbps for v in ("sack", "reno"))
    assert sack > 1.05 * reno, (sack, reno)


def test_red_lowers_to_the_engine_spec(reference_data: dict) -> None:
    data = copy.deepcopy(reference_data)
    data["topology"]["queue"] = "red"
    spec = Scenario.model_validate(data).to_engine_spec()["topology"]
    # Left out: thresholds and weight, which the engine sets from the link as ns-2 does.
    assert spec["queue"] == {
        "kind": "red",
        "limit_pkts": 833,
        "red": {"max_p": 0.1, "gentle": True, "wait": True, "byte_mode": True, "mean_pkt_bytes": 500},
    }
    assert spec["access_queue"]["kind"] == "droptail"
    data["topology"]["red"] = {"min_thresh": 20, "max_thresh": 60, "weight": 0.002, "byte_mode": False, "mean_packet_size": "1KB"}
    red = Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["red"]
    assert red == {"max_p": 0.1, "gentle": True, "wait": True, "byte_mode": False, "mean_pkt_bytes": 1024, "min_thresh_pkts": 20.0, "max_thresh_pkts": 60.0, "weight": 0.002}
    # Adaptive RED: true is its ns-2.35 defaults (bottom left to the engine, from the link's rate).
    data["topology"]["red"] = {"adaptive": True}
    red = Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["red"]
    assert red["adaptive"] == {"alpha": 0.01, "beta": 0.9, "interval_ns": 500_000_000, "top": 0.5}
    data["topology"]["red"] = {"adaptive": {"interval": "1s", "bottom": 0.001}}
    red = Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["red"]
    assert red["adaptive"] == {"alpha": 0.01, "beta": 0.9, "interval_ns": 1_000_000_000, "top": 0.5, "bottom": 0.001}
    data["topology"]["red"] = {"adaptive": False}
    assert "adaptive" not in Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["red"]


@pytest.mark.parametrize(
    ("topology", "field", "allowed"),
    [
        ({"queue": "sfq"}, "topology.queue", "expected 'droptail', 'red', 'codel', 'pie', 'drr', 'fq_codel', 'fq_pie', 'fred', 'csfq', 'cake' or 'dualpi2'"),
        ({"red": {"max_p": 0.2}}, "topology.red", "a [red] table only with queue = 'red'"),
        ({"queue": "red", "red": {"min_thresh": 20, "max_thresh": 10}}, "topology.red.max_thresh", "expected more than min_thresh (20)"),
        ({"queue": "red", "red": {"weight": 1.5}}, "topology.red.weight", "expected a number in (0, 1) like 0.002"),
        # 100 Mb/s: the automatic min_thresh is 0.005 · 25000 / 2 = 62.5 packets of 500 B.
        ({"queue": "red", "red": {"max_thresh": 60}}, "topology.red.max_thresh", "expected more than min_thresh (62.5, set from the link's rate)"),
        ({"queue": "red", "red": {"max_p": 0}}, "topology.red.max_p", "expected a number in (0, 1] like 0.1"),
        ({"queue": "red", "red": {"mean_packet_size": "0B"}}, "topology.red.mean_packet_size", "positive size"),
        ({"queue": "red", "red": {"threshold": 5}}, "topology.red.threshold", ""),
        ({"queue": "red", "red": {"adaptive": {"beta": 1}}}, "topology.red.adaptive.beta", "expected a number in (0, 1) like 0.9"),
        ({"queue": "red", "red": {"adaptive": {"top": 0.1, "bottom": 0.2}}}, "topology.red.adaptive.bottom", "expected less than top (0.1)"),
        ({"queue": "red", "red": {"adaptive": {"interval": "0s"}}}, "topology.red.adaptive.interval", "positive time"),
        ({"queue": "red", "red": {"adaptive": {"gamma": 1}}}, "topology.red.adaptive.gamma", "unknown key"),
        ({"queue": "red", "red": {"adaptive": 3}}, "topology.red.adaptive", ""),
    ],
)
def test_bad_red_settings_name_the_field(topology_error: Callable[[dict], ScenarioError], topology: dict, field: str, allowed: str) -> None:
    e = topology_error(topology)
    assert e.field == field and allowed in str(e)


def test_red_from_the_command_line(cli_refuses: Callable[[str], str]) -> None:
    stderr = cli_refuses('duration = "5s"\n[topology]\nbottleneck = "10Mbps"\nrtt = "40ms"\nqueue = "red"\n[topology.red]\nmax_thresh = 3\nmin_thresh = 5\n[[flows]]\nvariant = "reno"\n')
    assert stderr.startswith("tcplab: error: topology.red.max_thresh = ") and "expected more than min_thresh (5)" in stderr


def test_droptail_keeps_its_run_keys(reference_data: dict) -> None:
    # queue = "droptail" written out is the default left out: the same run, the same store key
    # as before tcplab had RED; a RED scenario is another run.
    from tcplab.experiment import run_id

    plain = Scenario.model_validate(reference_data)
    data = copy.deepcopy(reference_data)
    data["topology"]["queue"] = "droptail"
    explicit = Scenario.model_validate(data)
    assert explicit == plain and run_id(explicit, "sim", 1) == run_id(plain, "sim", 1)
    data["topology"]["queue"] = "red"
    assert run_id(Scenario.model_validate(data), "sim", 1) != run_id(plain, "sim", 1)


def test_red_from_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from tcplab.cli import main

    argv = ["sim", "--rtt", "40ms", "--bottleneck", "10Mbps", "--buffer", "100pkt", "--flow", "reno", "--duration", "20s"]
    assert main([*argv, "--queue", "red", "--set", "topology.red.min_thresh=5", "--set", "topology.red.byte_mode=false"]) == 0
    assert "JFI" in capsys.readouterr().out
    assert main([*argv, "--queue", "sfq"]) == 2
    assert capsys.readouterr().err.endswith("tcplab: error: topology.queue = 'sfq': expected 'droptail', 'red', 'codel', 'pie', 'drr', 'fq_codel', 'fq_pie', 'fred', 'csfq', 'cake' or 'dualpi2'\n")

