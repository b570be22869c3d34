"""Scenario validation and lowering to the engine spec (docs/engine-spec.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tcplab
from tcplab import ScenarioError, experiment, variants
from tcplab.config import Scenario, load_scenario, set_path

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"

MS = 1_000_000
S = 1_000_000_000

LINUX_TCP = {
    "mss_bytes": 1448,
    "header_bytes": 52,
    "init_cwnd_pkts": 10,
    "rwnd_bytes": 6 * 1024**2,
    "sndbuf_bytes": 4 * 1024**2,
    "delayed_ack": True,
    "delack_timeout_ns": 40 * MS,
    "timestamps": True,
    "timestamp_offsets": True,
    "preamble": "none",
    "min_rto_ns": 200 * MS,
    "initial_rto_ns": S,
    "max_rto_ns": 120 * S,
    "pacing": False,
    "fq_pacing": False,
    "drop_segments": [],
}


def test_reference_scenario_lowers_to_the_engine_spec(reference_data: dict) -> None:
    spec = Scenario.model_validate(reference_data).to_engine_spec()
    newreno = {"kind": "tcp", "cc": "reno", "cc_profile": "linux", "cc_params": {}, "recovery": "newreno", "prr": False, "rack": False, "tso": False, "sack": False, "sack_compression": False, "rcvbuf_autotuning": False, "stop_ns": None, **LINUX_TCP}
    assert spec == {
        "seed": 1,
        "duration_ns": 300 * S,
        "interval_ns": S,
        "start_jitter_ns": 5 * MS,
        "host_jitter_ns": 0,
        "host_stall_ns": 0,
        "host_stall_prob": 0.0,
        "topology": {
            "kind": "dumbbell",
            "pairs": 2,
            "bottleneck_rate_bps": 100_000_000,
            # Base RTT 100 ms with no access delay: all of it on the bottleneck, rtt/2 each way.
            "bottleneck_delay_ns": 50 * MS,
            "access_rate_bps": 1_000_000_000,
            "access_delay_ns": [0, 0],
            # 1 BDP = 100 Mb/s × 100 ms = 1 250 000 B = 833.3 packets of 1500 B → 833 (nearest).
            "queue": {"kind": "droptail", "limit_pkts": 833},
            "access_queue": {"kind": "droptail", "limit_pkts": 1000},
            "loss": 0.0,
            "reverse_loss": 0.0,
        },
        "flows": [
            {**newreno, "src": 0, "dst": 2, "start_ns": 0},
            {**newreno, "src": 1, "dst": 3, "start_ns": 60 * S},
        ],
    }
    json.dumps(spec)  # plain JSON


def test_reference_file_is_the_reference_experiment(reference_data: dict) -> None:
    from_file = load_scenario(SCENARIOS / "reference.toml")
    assert from_file == Scenario.model_validate(reference_data)
    assert from_file.measurement_window == (tcplab.Time(120 * S), tcplab.Time(300 * S))


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_shipped_scenario_loads_and_lowers_to_an_engine_spec(path: Path) -> None:
    scenario = load_scenario(path)
    spec = scenario.to_engine_spec()
    assert scenario.name == path.stem and len(spec["flows"]) == len(scenario.flows) >= 1
    json.dumps(spec)


def test_quick_file() -> None:
    quick = load_scenario(SCENARIOS / "quick.toml")
    assert quick.duration == tcplab.Time(30 * S)
    assert quick.measurement_window == (tcplab.Time(10 * S), tcplab.Time(30 * S))
    assert quick.flow_variants == ["newreno", "newreno"]
    assert quick.to_engine_spec()["topology"]["queue"] == {"kind": "droptail", "limit_pkts": 833}


def test_built_in_python_equals_toml(reference_data: dict) -> None:
    built = tcplab.Scenario(
        name="reference",
        duration="300s",
        window="120s:300s",
        topology=tcplab.Dumbbell(bottleneck="100Mbps", rtt="100ms", buffer="1bdp"),
        flows=[tcplab.TcpFlow(variant="newreno"), tcplab.TcpFlow(variant="newreno", start="60s")],
    )
    assert built.to_engine_spec() == Scenario.model_validate(reference_data).to_engine_spec()


def test_file_name_is_the_default_name(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text((SCENARIOS / "quick.toml").read_text().replace('name = "quick"\n', ""))
    assert load_scenario(path).name == "mine"


def test_dump_round_trips(reference_data: dict) -> None:
    s = Scenario.model_validate(reference_data)
    assert Scenario.model_validate(s.model_dump(mode="json", by_alias=True)) == s
    assert Scenario.model_validate(s.model_dump(mode="json", by_alias=True, exclude_unset=True)) == s


def test_access_delay_comes_off_the_bottleneck(reference_data: dict) -> None:
    s = Scenario.model_validate(reference_data).override({"topology.access_delay": "10ms"})
    topo = s.to_engine_spec()["topology"]
    assert topo["bottleneck_delay_ns"] == 30 * MS
    assert topo["access_delay_ns"] == [10 * MS, 10 * MS]
    # Base RTT of a pair = 2·(bottleneck delay + 2·access delay) = the scenario's rtt.
    assert 2 * (topo["bottleneck_delay_ns"] + 2 * topo["access_delay_ns"][0]) == 100 * MS


@pytest.mark.parametrize(
    ("buffer", "queue"),
    [("834pkt", {"limit_pkts": 834}), ("1.2MB", {"limit_bytes": 1_258_291}), ("0.2bdp", {"limit_pkts": 167}), ("96KB", {"limit_bytes": 98_304})],
)
def test_buffer_forms(reference_data: dict, buffer: str, queue: dict) -> None:
    s = Scenario.model_validate(reference_data).override({"topology.buffer": buffer})
    assert s.to_engine_spec()["topology"]["queue"] == {"kind": "droptail", **queue}


@pytest.mark.parametrize(
    ("name", "recovery", "sack", "prr"),
    [("tahoe", "tahoe", False, False), ("reno", "reno", False, False), ("newreno", "newreno", False, False),
     ("sack", "sack", True, False), ("TCP NewReno", "newreno", False, False), ("New-Reno", "newreno", False, False)],
)
def test_variants(reference_data: dict, name: str, recovery: str, sack: bool, prr: bool) -> None:
    s = Scenario.model_validate(reference_data).override({"flows[0].variant": name})
    flow = s.to_engine_spec()["flows"][0]
    assert (flow["cc"], flow["recovery"], flow["sack"], flow["prr"]) == ("reno", recovery, sack, prr)


def test_other_congestion_controls_run_like_linux(monkeypatch: pytest.MonkeyPatch, reference_data: dict) -> None:
    # A congestion control beyond Reno slots in with one entry and gets SACK recovery with PRR.
    monkeypatch.setitem(variants.LINUX_CC, "cubic", "CUBIC (RFC 9438)")
    s = Scenario.model_validate(reference_data).override({"flows[1].variant": "cubic"})
    flow = s.to_engine_spec()["flows"][1]
    assert (flow["cc"], flow["recovery"], flow["sack"], flow["prr"]) == ("cubic", "sack", True, True)
    assert s.flow_variants == ["newreno", "cubic"]


def test_variant_table_matches_the_engine() -> None:
    from tcplab import _core

    engine = {a["name"] for a in _core.congestion_controls()}
    assert {v.cc for v in variants.CLASSIC.values()} <= engine
    assert set(variants.LINUX_CC) <= engine


def test_tcp_defaults_and_per_flow_overrides(reference_data: dict) -> None:
    data = {**reference_data, "tcp": {"rwnd": "1MB", "delayed_ack": False}}
    data["flows"] = [{"variant": "newreno"}, {"variant": "newreno", "start": "60s", "rwnd": "64KB", "timestamps": False, "init_cwnd": 4}]
    flows = Scenario.model_validate(data).to_engine_spec()["flows"]
    assert (flows[0]["rwnd_bytes"], flows[0]["delayed_ack"], flows[0]["init_cwnd_pkts"]) == (1024**2, False, 10)
    assert (flows[1]["rwnd_bytes"], flows[1]["delayed_ack"], flows[1]["init_cwnd_pkts"]) == (65_536, False, 4)
    # Without timestamps the header is 40 B and the MSS of a 1500 B MTU is 1460 B.
    assert (flows[0]["header_bytes"], flows[0]["mss_bytes"]) == (52, 1448)
    assert (flows[1]["header_bytes"], flows[1]["mss_bytes"]) == (40, 1460)


def test_pacing_is_a_tcp_setting_lowered_to_the_spec(reference_data: dict) -> None:
    data = {**reference_data, "tcp": {"pacing": True}}
    data["flows"] = [{"variant": "sack"}, {"variant": "sack", "start": "60s", "pacing": False}, {"variant": "bbr"}]
    flows = Scenario.model_validate(data).to_engine_spec()["flows"]
    assert [f["pacing"] for f in flows] == [True, False, True]
    # BBR runs Linux-like: SACK recovery (its cong_control owns cwnd, so PRR is moot).
    assert (flows[2]["cc"], flows[2]["recovery"], flows[2]["sack"]) == ("bbr", "sack", True)


def test_sack_and_prr_overrides(reference_data: dict) -> None:
    s = Scenario.model_validate(reference_data).override({"flows[0].sack": True, "flows[0].prr": True})
    flow = s.to_engine_spec()["flows"][0]
    assert (flow["recovery"], flow["sack"], flow["prr"]) == ("newreno", True, True)


def test_rack_defaults_to_the_variant_and_needs_sack(reference_data: dict) -> None:
    # Linux's congestion controls detect losses with RACK-TLP, as Linux does by default; the
    # classic RFC variants with their RFCs' duplicate-ACK threshold unless told otherwise.
    data = {**reference_data, "flows": [{"variant": "sack"}, {"variant": "cubic", "start": "60s"}, {"variant": "sack", "rack": True}, {"variant": "bbr", "rack": False}]}
    flows = Scenario.model_validate(data).to_engine_spec()["flows"]
    assert [f["rack"] for f in flows] == [False, True, True, False]
    assert not any(f["sack_compression"] for f in flows)
    # The papers' kernel had no RACK.
    old = Scenario.model_validate({**data, "cc": {"profile": "linux-2.6.22"}}).to_engine_spec()["flows"]
    assert [f["rack"] for f in old] == [False, False, True, False]
    with pytest.raises(ScenarioError) as e:
        Scenario.model_validate({**reference_data, "tcp": {"rack": True}})
    assert e.value.field == "flows[0].rack" and "RACK-TLP needs SACK recovery" in str(e.value)
    # Without SACK blocks Linux marks losses NewReno's way: no RACK unless asked (and then refused).
    plain = {**data, "flows": [f for f in data["flows"] if not f.get("rack")], "tcp": {"sack": False}}
    nosack = Scenario.model_validate(plain).to_engine_spec()["flows"]
    assert [(f["recovery"], f["sack"], f["prr"], f["rack"]) for f in nosack] == [("sack", False, False, False), ("sack", False, True, False), ("sack", False, True, False)]
    with pytest.raises(ScenarioError) as e:
        Scenario.model_validate({**data, "tcp": {"sack": False}})
    assert e.value.field == "flows[2].rack" and "RACK-TLP needs SACK blocks" in str(e.value)


def test_undo_defaults_to_the_variant_and_needs_a_sack_connection(reference_data: dict) -> None:
    # Linux's congestion controls undo a spurious timeout, as Linux does; the classic variants and
    # the papers' profile (ns-2's TCP-Linux recovery) do not. The engine spec says so only when on.
    data = {**reference_data, "flows": [{"variant": "sack"}, {"variant": "cubic", "start": "60s"}, {"variant": "bbr", "undo": False}, {"variant": "cubic", "sack": False}]}
    flows = Scenario.model_validate(data).to_engine_spec()["flows"]
    assert [f.get("undo", False) for f in flows] == [False, True, False, False]
    assert "undo" not in flows[0]
    old = Scenario.model_validate({**data, "cc": {"profile": "linux-2.6.22"}}).to_engine_spec()["flows"]
    assert not any(f.get("undo") for f in old)
    with pytest.raises(ScenarioError) as e:
        Scenario.model_validate({**reference_data, "tcp": {"undo": True}})
    assert e.value.field == "flows[0].undo" and "modelled for SACK recovery" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        Scenario.model_validate({**data, "flows": [{"variant": "cubic", "sack": False, "undo": True}]})
    assert e.value.field == "flows[0].undo" and "this flow's sack is false" in str(e.value)


def test_timestamp_offsets_are_linuxs_default_and_need_timestamps(reference_data: dict) -> None:
    # Today's Linux offsets each connection's TSvals (tcp_timestamps = 1); the papers' kernel did
    # not. The engine spec says so only when on, and the scenario (so every run's key) only when set.
    plain = Scenario.model_validate(reference_data)
    assert [f["timestamp_offsets"] for f in plain.to_engine_spec()["flows"]] == [True, True]
    assert "timestamp_offsets" not in experiment.scenario_json(plain)["tcp"]
    for override in ({"cc.profile": "linux-2.6.22"}, {"tcp.timestamp_offsets": False}, {"tcp.timestamps": False}):
        assert all("timestamp_offsets" not in f for f in plain.override(override).to_engine_spec()["flows"]), override
    old = plain.override({"cc.profile": "linux-2.6.22", "tcp.timestamp_offsets": True})
    assert all(f["timestamp_offsets"] for f in old.to_engine_spec()["flows"])
    with pytest.raises(ScenarioError) as e:
        plain.override({"tcp.timestamps": False, "tcp.timestamp_offsets": True})
    assert e.value.field == "flows[0].timestamp_offsets" and "this flow's timestamps is false" in str(e.value)


def test_send_buffer_autotuning_is_asked_for_and_keeps_other_run_keys(reference_data: dict) -> None:
    # Off unless asked: the engine spec (and so every existing run's key) leaves it out.
    plain = Scenario.model_validate(reference_data)
    assert all("sndbuf_autotuning" not in f for f in plain.to_engine_spec()["flows"])
    tuned = plain.override({"tcp.sndbuf_autotuning": True})
    assert all(f["sndbuf_autotuning"] is True for f in tuned.to_engine_spec()["flows"])
    short = tuned.override({"duration": "5s", "window": None, "flows": [{"variant": "cubic"}]})
    assert tcplab.simulate(short).flows["sent_pkts"].iloc[0] > 0


def test_tso_bursts_default_to_the_variant(reference_data: dict) -> None:
    # Linux's congestion controls send TSO bursts, as Linux's TCP always does; the classic
    # variants and the papers' kernel one segment at a time unless told otherwise.
    data = {**reference_data, "flows": [{"variant": "sack"}, {"variant": "cubic"}, {"variant": "sack", "tso": True}, {"variant": "bbr", "tso": False}]}
    assert [f["tso"] for f in Scenario.model_validate(data).to_engine_spec()["flows"]] == [False, True, True, False]
    old = Scenario.model_validate({**data, "cc": {"profile": "linux-2.6.22"}}).to_engine_spec()["flows"]
    assert [f["tso"] for f in old] == [False, False, True, False]
    every = Scenario.model_validate({**data, "tcp": {"tso": True}}).to_engine_spec()["flows"]
    assert [f["tso"] for f in every] == [True, True, True, False]


def test_paced_flows_pace_themselves_unless_fq_paces_them(reference_data: dict) -> None:
    # Linux's TCP paces with its own timer under the default qdiscs (and on the testbed);
    # fq_pacing models the fq qdisc, in [tcp] or per flow.
    data = {**reference_data, "flows": [{"variant": "bbr"}, {"variant": "bbr", "fq_pacing": True}]}
    assert [f["fq_pacing"] for f in Scenario.model_validate(data).to_engine_spec()["flows"]] == [False, True]
    every = Scenario.model_validate({**data, "tcp": {"fq_pacing": True}}).to_engine_spec()["flows"]
    assert [f["fq_pacing"] for f in every] == [True, True]
    with pytest.raises(ScenarioError) as e:
        Scenario.model_validate({**data, "tcp": {"fq_pacing": "sometimes"}})
    assert e.value.field == "tcp.fq_pacing"


def test_flow_names(reference_data: dict) -> None:
    s = Scenario.model_validate(reference_data)
    assert s.flow_names == ["flow1", "flow2"]
    assert s.override({"flows[1].name": "late"}).flow_names == ["flow1", "late"]


def test_default_window_is_the_papers(reference_data: dict) -> None:
    # 120 s to the end for the papers' 300 s and 600 s runs; the last 60 % of a shorter run.
    data = {k: v for k, v in reference_data.items() if k != "window"}
    assert Scenario.model_validate(data).measurement_window == (tcplab.Time(120 * S), tcplab.Time(300 * S))
    assert Scenario.model_validate({**data, "duration": "600s"}).measurement_window == (tcplab.Time(120 * S), tcplab.Time(600 * S))
    assert Scenario.model_validate({**data, "duration": "200s"}).measurement_window == (tcplab.Time(80 * S), tcplab.Time(200 * S))
    short = Scenario.model_validate({**data, "duration": "25s", "flows": [{"variant": "reno"}]})
    assert short.measurement_window == (tcplab.Time(10 * S), tcplab.Time(25 * S))
    assert Scenario.model_validate({**reference_data, "window": "100s:"}).measurement_window[1] == tcplab.Time(300 * S)


GRAPH = {
    "name": "graph",
    "duration": "10s",
    "topology": {
        "kind": "graph",
        "nodes": ["n1", "n2", "n3"],
        "links": [
            {"from": "n1", "to": "n2", "rate": "10Mbps", "delay": "10ms", "buffer": "50pkt"},
            {"from": "n2", "to": "n1", "rate": "10Mbps", "delay": "10ms", "buffer": "50pkt"},
            {"from": "n2", "to": "n3", "rate": "10Mbps", "delay": "10ms", "buffer": "64KB", "loss": 0.01},
            {"from": "n3", "to": "n2", "rate": "10Mbps", "delay": "10ms"},
        ],
    },
    "flows": [
        {"variant": "sack", "src": "n1", "dst": "n3"},
        {"kind": "cbr", "src": "n2", "dst": "n3", "start": "2s", "schedule": {"from": "1Mbps", "to": "10Mbps", "step": "0.1Mbps", "every": "10s"}},
        {"kind": "cbr", "src": "n1", "dst": "n2", "rate": "1Mbps", "packet_size": "500B", "stop": "8s"},
        {"kind": "cbr", "src": "n3", "dst": "n2", "start": "1s", "schedule": [["1s", "2Mbps"], ["0s", "1Mbps"]]},
    ],
}


def test_graph_lowering() -> None:
    spec = Scenario.model_validate(GRAPH).to_engine_spec()
    topo = spec["topology"]
    assert topo["nodes"] == ["n1", "n2", "n3"]
    assert topo["links"][2] == {"from": 1, "to": 2, "rate_bps": 10**7, "delay_ns": 10 * MS, "queue": {"kind": "droptail", "limit_bytes": 65_536}, "loss": 0.01}
    assert topo["links"][3]["queue"] == {"kind": "droptail", "limit_pkts": 1000}
    tcp, steps, const, points = spec["flows"]
    assert (tcp["src"], tcp["dst"], tcp["recovery"]) == (0, 2, "sack")
    # Stepped CBR: 1, 1.1, …, 10 Mb/s, a step every 10 s from the flow's start (absolute engine times).
    assert steps["kind"] == "cbr" and steps["packet_bytes"] == 1000
    assert len(steps["schedule"]) == 91
    assert steps["schedule"][:2] == [[2 * S, 1_000_000], [12 * S, 1_100_000]]
    assert steps["schedule"][-1] == [(2 + 900) * S, 10_000_000]
    assert const == {"kind": "cbr", "src": 0, "dst": 1, "start_ns": 0, "stop_ns": 8 * S, "packet_bytes": 500, "schedule": [[0, 1_000_000]]}
    assert points["schedule"] == [[S, 1_000_000], [2 * S, 2_000_000]]


def test_random_cbr_gaps_break_the_phase_of_two_sources() -> None:
    # Two 6 Mb/s CBR sources into a 10 Mb/s link with a 20-packet DropTail buffer. Evenly spaced,
    # their fixed phase decides every overflow: one keeps all it sends, the other loses 2 Mb/s
    # (which one, the start jitter of the seed). With ns-2's random_ gaps (each [0.5, 1.5) of the
    # mean) they share the drops and the link, 5 Mb/s each within 1%; the rate is kept.
    def shares(random: bool, seed: int) -> list[float]:
        s = Scenario.model_validate({"name": "cbr", "duration": "20s", "seed": seed, "window": "2s:20s",
                                     "topology": {"bottleneck": "10Mbps", "rtt": "20ms", "buffer": "20pkt"},
                                     "flows": [{"kind": "cbr", "rate": "6Mbps", "random": random}, {"kind": "cbr", "rate": "6Mbps", "start": "0.3ms", "random": random}]})
        r = tcplab.simulate(s)
        assert r.flows.sent_bytes.sum() == pytest.approx(2 * 6e6 / 8 * 20, rel=0.01)
        return sorted(r.summary().throughput_mbps)

    for seed in (1, 2, 3):
        assert shares(False, seed) == pytest.approx([4.0, 6.0], abs=0.01)
        assert shares(True, seed) == pytest.approx([5.0, 5.0], abs=0.05)
    spec = Scenario.model_validate(GRAPH).override({"flows[1].random": True}).to_engine_spec()["flows"]
    assert spec[1]["random"] is True and "random" not in spec[2]


def test_stepped_cbr_can_step_down() -> None:
    s = Scenario.model_validate(GRAPH).override({"flows[1].schedule": {"from": "10Mbps", "to": "1Mbps", "step": "4Mbps", "every": "1s"}})
    assert [r for _, r in s.to_engine_spec()["flows"][1]["schedule"]] == [10_000_000, 6_000_000, 2_000_000, 1_000_000]


def test_override_returns_a_validated_copy(reference_data: dict) -> None:
    s = Scenario.model_validate(reference_data)
    t = s.override({"topology.rtt": "50ms", "flows[1].start": "30s", "seed": 7})
    assert (t.topology.rtt, t.flows[1].start, t.seed) == (tcplab.Time(50 * MS), tcplab.Time(30 * S), 7)
    assert s.topology.rtt == tcplab.Time(100 * MS)
    with pytest.raises(Exception):
        s.seed = 3  # type: ignore[misc]
    with pytest.raises(ScenarioError, match=r"^topology\.rtt = '-5ms': expected a positive time like '25ms'$"):
        s.override({"topology.rtt": "-5ms"})


def test_set_path() -> None:
    data: dict[str, Any] = {"flows": [{"variant": "reno"}]}
    set_path(data, "topology.rtt", "10ms")
    set_path(data, "flows[0].start", "1s")
    set_path(data, "flows[1]", {"variant": "sack"})
    assert data == {"flows": [{"variant": "reno", "start": "1s"}, {"variant": "sack"}], "topology": {"rtt": "10ms"}}
    with pytest.raises(ScenarioError):
        set_path(data, "flows[5].start", "1s")


# (change, field, the allowed text's start) — every bad input names the field, the value and what is allowed.
BAD: list[tuple[dict[str, Any], str, str]] = [
    ({"topology.rtt": "-5ms"}, "topology.rtt = '-5ms'", "expected a positive time like '25ms'"),
    ({"topology.rtt": "100"}, "topology.rtt = '100'", "expected a time with a unit (ns, us, ms, s, min)"),
    ({"topology.rtt": 0.1}, "topology.rtt = 0.1", "expected a time with a unit"),
    ({"topology.rtt": "0ms"}, "topology.rtt = '0ms'", "expected a positive time"),
    ({"topology.rtt_offset": "-1us"}, "topology.rtt_offset = '-1us'", "expected a non-negative time"),
    ({"topology.rttt": "100ms"}, "topology.rttt = '100ms'", "unknown key; allowed keys: kind, bottleneck, rtt"),
    ({"colour": "red"}, "colour = 'red'", "unknown key; allowed keys: name, duration"),
    ({"flows[0].colour": "red"}, "flows[0].colour = 'red'", "unknown key"),
    ({"topology.bottleneck": "0Mbps"}, "topology.bottleneck = '0Mbps'", "expected a positive rate"),
    ({"topology.bottleneck": "100MBps"}, "topology.bottleneck = '100MBps'", "expected a rate with a unit"),
    ({"topology.buffer": "0pkt"}, "topology.buffer = '0pkt'", "expected a positive buffer"),
    ({"topology.buffer": "100"}, "topology.buffer = '100'", "expected a buffer size like '834pkt'"),
    ({"topology.kind": "star"}, "topology.kind = 'star'", "expected one of 'dumbbell', 'graph'"),
    ({"topology.loss": 1.5}, "topology.loss = 1.5", "expected a probability in [0, 1)"),
    ({"topology.access_delay": "30ms"}, "topology.rtt = '100ms'", "expected a base RTT of at least 4 × access_delay = 120ms"),
    ({"flows[0].variant": "fast"}, "flows[0].variant = 'fast'", "expected a TCP variant: one of tahoe, reno, newreno, sack"),
    ({"flows[0].kind": "udp"}, "flows[0].kind = 'udp'", "expected one of 'tcp', 'cbr'"),
    ({"flows[1].start": "400s"}, "flows[1].start = '400s'", "expected a start before the end of the run"),
    ({"flows[1].stop": "30s"}, "flows[1].stop = '30s'", "expected a stop after the flow's start (60s)"),
    ({"flows[1].rwnd": "64"}, "flows[1].rwnd = '64'", "expected a size with a unit"),
    ({"flows[1].src": "a"}, "flows[1].src = 'a'", "expected no src/dst in a dumbbell"),
    ({"flows[0].variant": "cubic", "flows[0].sack": False, "flows[0].rack": True}, "flows[0].rack = true", "expected false or unset: RACK-TLP needs SACK blocks"),
    ({"flows[1].name": "flow1"}, "flows[1].name = 'flow1'", "expected a flow name not used before"),
    ({"flows": []}, "flows = []", "expected at least 1 entry"),
    ({"window": "400s:500s"}, "window = '400s:500s'", "expected a window that starts before the run ends (duration = 300s)"),
    ({"window": "200s:500s"}, "window = '200s:500s'", "expected a window that ends by the end of the run"),
    ({"window": "200s:100s"}, "window = '200s:100s'", "expected a window 'START:STOP' with 0 <= START < STOP"),
    ({"window": "120s"}, "window = '120s'", "expected a window 'START:STOP'"),
    ({"interval": "400s"}, "interval = '400s'", "expected an interval no longer than the run"),
    ({"seed": -1}, "seed = -1", "expected an integer >= 0"),
    ({"seed": "one"}, "seed = 'one'", "expected an integer >= 0"),
    ({"tcp.init_cwnd": 0}, "tcp.init_cwnd = 0", "expected an integer >= 1"),
    ({"tcp.mss": "100000B"}, "tcp.mss = '100000B'", "expected a segment size from 64B to 65000B"),
    ({"tcp.delayed_ack": "maybe"}, "tcp.delayed_ack = 'maybe'", "expected true or false"),
    ({"tcp.preamble": "syn"}, "tcp.preamble = 'syn'", "expected 'none', 'handshake' or 'iperf3'"),
    ({"duration": "5"}, "duration = '5'", "expected a time with a unit"),
    ({"host_stall": "1ms"}, "host_stall = '1ms'", "expected host_stall_probability with it"),
    ({"host_stall_probability": 0.01}, "host_stall_probability = 0.01", "expected host_stall with it"),
    ({"host_stall": "1ms", "host_stall_probability": 1.0}, "host_stall_probability = 1.0", "expected a probability in [0, 1)"),
    ({"host_stall": "0ms", "host_stall_probability": 0.01}, "host_stall = '0ms'", "expected a positive time"),
    ({"host_ack_holds": ["10us"]}, "host_ack_holds = '[10us]'", "expected at least 2 holds"),
    ({"host_data_holds": ["10us", "5us"]}, "host_data_holds = '[10us, 5us]'", "expected holds in increasing order"),
    ({"host_ack_holds": ["1us", "2s"]}, "host_ack_holds = '[1us, 2s]'", "expected holds of at most 1s"),
    ({"host_data_holds": ["1us", "-2us"]}, "host_data_holds[1] = '-2us'", "expected a non-negative time"),
    ({"host_holds_in_rtt": "maybe"}, "host_holds_in_rtt = 'maybe'", "expected true or false"),
    ({"host_holds_in_rtt": True, "host_jitter": "1s", "topology.rtt": "400ms"}, "topology.rtt = '400ms'", "expected a base RTT of at least 4 × access_delay plus the hosts' mean holds = 1s"),
]


def test_host_stalls_lower_to_the_spec(reference_data: dict) -> None:
    base = Scenario.model_validate(reference_data)
    assert (base.to_engine_spec()["host_stall_ns"], base.to_engine_spec()["host_stall_prob"]) == (0, 0.0)
    spec = base.override({"host_stall": "1ms", "host_stall_probability": 0.003}).to_engine_spec()
    assert (spec["host_stall_ns"], spec["host_stall_prob"]) == (1_000_000, 0.003)


def test_host_holds_lower_to_the_spec_and_only_when_given(reference_data: dict) -> None:
    # Without tables the engine spec is what it was (no key), so every stored run keeps its key.
    base = Scenario.model_validate(reference_data)
    assert not {"host_data_holds_ns", "host_ack_holds_ns"} & set(base.to_engine_spec())
    spec = base.override({"host_data_holds": ["6.4us", "17.1us", "55.8us"], "host_ack_holds": ["6us", "111.7us"]}).to_engine_spec()
    assert (spec["host_data_holds_ns"], spec["host_ack_holds_ns"]) == ([6_400, 17_100, 55_800], [6_000, 111_700])


def test_holds_in_the_rtt_shorten_the_bottleneck_by_half_their_mean_loop(reference_data: dict) -> None:
    base = Scenario.model_validate(reference_data)
    one_way = base.to_engine_spec()["topology"]["bottleneck_delay_ns"]
    # Tables: the mean of straight lines between the quantiles. Data (0, 10, 50 µs): 17.5 µs; ACK
    # (20, 40 µs): 30 µs. A stall (1%, up to 1 ms, 0.5 ms on average) replaces a draw.
    held = base.override({"host_data_holds": ["0us", "10us", "50us"], "host_ack_holds": ["20us", "40us"], "host_stall": "1ms", "host_stall_probability": 0.01})
    assert held.mean_loop_hold_ns() == round(0.99 * (17_500 + 30_000) + 0.01 * 2 * 500_000)
    assert held.to_engine_spec()["topology"]["bottleneck_delay_ns"] == one_way  # by default the holds add to the rtt
    inside = held.override({"host_holds_in_rtt": True})
    assert inside.to_engine_spec()["topology"]["bottleneck_delay_ns"] == one_way - held.mean_loop_hold_ns() // 2
    # The buffer stays the rtt's BDP, as on the testbed.
    assert inside.to_engine_spec()["topology"]["queue"] == held.to_engine_spec()["topology"]["queue"]
    # Uniform jitter: half of it per send, a data send and an ACK around the loop.
    jittery = base.override({"host_jitter": "90us", "host_holds_in_rtt": True})
    assert jittery.mean_loop_hold_ns() == 90_000
    assert jittery.to_engine_spec()["topology"]["bottleneck_delay_ns"] == one_way - 45_000


def test_an_rtt_offset_lengthens_the_loop_but_not_the_buffer(reference_data: dict) -> None:
    """``rtt_offset`` goes half each way on the bottleneck: a simulated flow's one-way delay
    grows by half of it, while a buffer in BDP stays the rtt's (an experiment's ``rtt_spread``
    moves replications along the loop's phase, not their buffers)."""
    base = Scenario.model_validate(reference_data).override({"duration": "2s", "window": "1s:2s", "flows[1].start": "0s", "topology.buffer": "0.6bdp"})
    moved = base.override({"topology.rtt_offset": "60us"})
    assert moved.topology.loop_rtt == tcplab.Time(100 * MS + 60_000)
    spec, was = moved.to_engine_spec()["topology"], base.to_engine_spec()["topology"]
    assert (spec["bottleneck_delay_ns"], spec["queue"]) == (was["bottleneck_delay_ns"] + 30_000, was["queue"])
    owd = [tcplab.simulate(s, seed=1).flows["owd_min_ns"].min() for s in (base, moved)]
    assert owd[1] - owd[0] == 30_000


def test_holds_in_the_rtt_need_a_dumbbell() -> None:
    with pytest.raises(ScenarioError, match=r"^host_holds_in_rtt = true: expected a dumbbell"):
        Scenario.model_validate(GRAPH).override({"host_holds_in_rtt": True})


@pytest.mark.parametrize(("change", "head", "allowed"), BAD)
def test_bad_input_names_field_value_and_allowed(reference_data: dict, change: dict, head: str, allowed: str) -> None:
    with pytest.raises(ScenarioError) as e:
        Scenario.model_validate(reference_data).override(change)
    assert str(e.value).startswith(f"{head}: {allowed}")


def test_missing_field_is_named(reference_data: dict) -> None:
    del reference_data["topology"]["rtt"]
    with pytest.raises(ScenarioError, match=r"^topology\.rtt: missing"):
        Scenario.model_validate(reference_data)


BAD_GRAPH: list[tuple[dict[str, Any], str, str]] = [
    ({"topology.links[0].rate": "0Mbps"}, "topology.links[0].rate = '0Mbps'", "expected a positive rate"),
    ({"topology.links[0].to": "n9"}, "topology.links[0].to = 'n9'", "expected one of the nodes: n1, n2, n3"),
    ({"topology.links[0].buffer": "1bdp"}, "topology.links[0].buffer = '1bdp'", "expected packets or bytes"),
    ({"topology.links[0].delay": "-1ms"}, "topology.links[0].delay = '-1ms'", "expected a non-negative time"),
    ({"topology.nodes[2]": "n1"}, "topology.nodes[2] = 'n1'", "expected a node name not used before"),
    ({"flows[0].dst": "n7"}, "flows[0].dst = 'n7'", "expected one of the nodes: n1, n2, n3"),
    ({"flows[0].dst": "n1"}, "flows[0].dst = 'n1'", "expected a node other than the flow's src"),
    ({"flows[2].schedule": [["0s", "1Mbps"]]}, "flows[2].rate = '1Mbps'", "expected exactly one of 'rate' or 'schedule'"),
    ({"flows[1].schedule.step": "1bps"}, "flows[1].schedule.step = '1bps'", "expected at most 100000 steps"),
    ({"flows[1].schedule.every": "10"}, "flows[1].schedule.every = '10'", "expected a time with a unit"),
    ({"flows[3].schedule[0]": ["1s"]}, "flows[3].schedule[0][1]", "missing"),
]


@pytest.mark.parametrize(("change", "head", "allowed"), BAD_GRAPH)
def test_bad_graph_input(change: dict, head: str, allowed: str) -> None:
    with pytest.raises(ScenarioError) as e:
        Scenario.model_validate(GRAPH).override(change)
    assert str(e.value).startswith(head) and allowed in str(e.value)


def test_graph_flow_needs_endpoints() -> None:
    data = json.loads(json.dumps(GRAPH))
    del data["flows"][0]["dst"]
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.dst: missing; expected a node name"):
        Scenario.model_validate(data)


def test_python_construction_raises_scenario_errors() -> None:
    with pytest.raises(ScenarioError, match=r"^topology\.rtt = '-5ms': expected a positive time"):
        tcplab.Scenario(duration="10s", topology={"bottleneck": "10Mbps", "rtt": "-5ms"}, flows=[{"variant": "reno"}])
    with pytest.raises(ScenarioError, match=r"^rtt = 25: expected a time with a unit"):
        tcplab.Dumbbell(bottleneck="10Mbps", rtt=25)


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="expected an existing TOML file"):
        load_scenario(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("duration = \n")
    with pytest.raises(ScenarioError, match="expected valid TOML"):
        load_scenario(bad)


def test_unconnected_nodes_are_refused_by_the_engine() -> None:
    # Routing is the engine's to check: a flow towards a node no link reaches.
    data = json.loads(json.dumps(GRAPH))
    data["topology"]["links"] = data["topology"]["links"][:2]
    data["flows"] = [{"variant": "reno", "src": "n1", "dst": "n3"}]
    with pytest.raises(ScenarioError) as e:
        tcplab.simulate(Scenario.model_validate(data))
    assert e.value.field == "flows[0].dst"
    assert e.value.value == "n3"
    assert str(e.value).startswith("flows[0].dst = 'n3': expected")


def test_engine_fields_map_to_scenario_fields() -> None:
    from tcplab import _core
    from tcplab.errors import from_spec_error

    s = Scenario.model_validate(GRAPH)
    e = from_spec_error(_core.SpecError("topology.links[0].rate_bps", "0", "a positive rate"), s)
    assert str(e) == "topology.links[0].rate = '0': expected a positive rate"
    e = from_spec_error(_core.SpecError("flows[1].src", "2", "a node index below 3"), s)
    assert (e.field, e.value) == ("flows[1].src", "n3")
    assert from_spec_error(_core.SpecError("topology.bottleneck_rate_bps", "0", "a positive rate")).field == "topology.bottleneck"


@given(st.integers(min_value=2, max_value=10**12))
def test_any_positive_rtt_puts_half_on_the_bottleneck(rtt_ns: int) -> None:
    s = tcplab.Scenario(duration="1s", topology={"bottleneck": "10Mbps", "rtt": f"{rtt_ns}ns"}, flows=[{"variant": "reno"}])
    assert s.to_engine_spec()["topology"]["bottleneck_delay_ns"] == rtt_ns // 2


@given(st.one_of(st.integers(max_value=0).map(lambda n: f"{n}ms"), st.integers(), st.floats(allow_nan=False), st.text(max_size=6)))
def test_bad_rtts_are_always_refused_with_the_field_named(rtt: object) -> None:
    try:
        tcplab.Scenario(duration="1s", topology={"bottleneck": "10Mbps", "rtt": rtt}, flows=[{"variant": "reno"}])
    except ScenarioError as e:
        assert e.field == "topology.rtt"
        assert "expected" in e.allowed
    else:
        # Only a positive time with a unit gets through.
        assert isinstance(rtt, str) and tcplab.Time.parse(rtt).ns > 0
