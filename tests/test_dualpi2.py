"""DualPI2 (``queue = "dualpi2"``, RFC 9332, Linux's ``sch_dualpi2``) and ECT(1) (``[tcp] ect1``):
their keys, defaults and errors, the coupling as the simulator runs it, and the codepoints as
tshark reads them (docs/queues/dualpi2.md, docs/ecn.md)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.config import Scenario
from tcplab.testbed import stack
from test_pcap import scenario_pcap, tshark

LINUX_DEFAULTS = {
    "target_ns": 15_000_000, "tupdate_ns": 16_000_000, "alpha": 41, "beta": 819, "step_thresh_ns": 1_000_000, "min_qlen_step": 0,
    "coupling_factor": 2, "drop_overload": True, "drop_early": False, "c_protection": 10, "ecn_mask": "l4s_ect", "mtu_bytes": 1500,
}  # fmt: skip


def _pair(dctcp: dict | None = None, duration: str = "40s") -> Scenario:
    """DCTCP sending ECT(1) and CUBIC without ECN through DualPI2: 100 Mb/s, 20 ms, 1000 packets."""
    return Scenario.model_validate(
        {"name": "l4s", "duration": duration, "seed": 1, "window": "10s:" + duration,
         "topology": {"bottleneck": "100Mbps", "rtt": "20ms", "buffer": "1000pkt", "queue": "dualpi2"},
         "flows": [{"variant": "dctcp", "ect1": True, **(dctcp or {})}, {"variant": "cubic"}]}
    )  # fmt: skip


def test_dualpi2_lowers_to_the_engine_spec_with_linuxs_defaults(reference_data: dict) -> None:
    data = copy.deepcopy(reference_data)
    data["topology"]["queue"] = "dualpi2"
    spec = Scenario.model_validate(data).to_engine_spec()["topology"]
    assert spec["queue"] == {"kind": "dualpi2", "limit_pkts": 833, "dualpi2": LINUX_DEFAULTS}
    data["topology"]["dualpi2"] = {"alpha": 0.32, "step_thresh": "2ms", "coupling_factor": 3, "c_protection": 50, "ecn_mask": "any_ect", "drop_overload": False}
    table = Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["dualpi2"]
    expect = {"alpha": 82, "step_thresh_ns": 2_000_000, "coupling_factor": 3, "c_protection": 50, "ecn_mask": "any_ect", "drop_overload": False}
    assert table == LINUX_DEFAULTS | expect


@pytest.mark.parametrize(
    ("topology", "field", "allowed"),
    [
        ({"dualpi2": {"alpha": 0.5}}, "topology.dualpi2", "a [dualpi2] table only with queue = 'dualpi2'"),
        ({"queue": "dualpi2", "dualpi2": {"alpha": 0}}, "topology.dualpi2.alpha", "expected a number in [0.00390625, 8.38861e+06] like 0.16"),
        ({"queue": "dualpi2", "dualpi2": {"coupling_factor": 0}}, "topology.dualpi2.coupling_factor", "expected an integer >= 1 and <= 255"),
        ({"queue": "dualpi2", "dualpi2": {"c_protection": 101}}, "topology.dualpi2.c_protection", "expected an integer >= 0 and <= 100"),
        ({"queue": "dualpi2", "dualpi2": {"ecn_mask": "ect1"}}, "topology.dualpi2.ecn_mask", "expected 'l4s_ect', 'cla_ect' or 'any_ect'"),
        ({"queue": "dualpi2", "dualpi2": {"step_thresh": "0ms"}}, "topology.dualpi2.step_thresh", "positive time"),
        ({"queue": "dualpi2", "dualpi2": {"split_gso": True}}, "topology.dualpi2.split_gso", "unknown key"),
    ],
)
def test_bad_dualpi2_settings_name_the_field(topology_error: Callable[[dict], ScenarioError], topology: dict, field: str, allowed: str) -> None:
    e = topology_error(topology)
    assert e.field == field and allowed in str(e), str(e)


def test_ect1_lowers_only_when_set_and_needs_ecn(cli_refuses: Callable[[str], str]) -> None:
    spec = _pair().to_engine_spec()
    assert [f.get("ect1") for f in spec["flows"]] == [True, None]
    assert "ect1" not in _pair({"ect1": False}).to_engine_spec()["flows"][0]
    # A flow that is not ECN-capable has no ECT(1) to send: one line, exit status 2.
    stderr = cli_refuses('duration = "5s"\n[topology]\nbottleneck = "10Mbps"\nrtt = "20ms"\n[tcp]\nect1 = true\n[[flows]]\nvariant = "cubic"\n')
    assert stderr == "tcplab: error: flows[0].ect1 = true: expected false or unset: ECT(1) is an ECN codepoint, and this flow's ecn is false\n", stderr
    ok = Scenario.model_validate({"duration": "5s", "topology": {"bottleneck": "10Mbps", "rtt": "20ms"}, "tcp": {"ecn": True, "ect1": True}, "flows": [{"variant": "cubic"}]})
    assert ok.to_engine_spec()["flows"][0]["ect1"] is True


def test_the_testbed_refuses_ect1() -> None:
    with pytest.raises(ScenarioError, match="negotiates AccECN") as e:
        stack.plan(_pair(), available=["reno", "cubic", "dctcp"])
    assert e.value.field == "flows[0].ect1"


def test_the_l4s_flow_waits_about_the_step_and_the_classic_one_about_pi2s_target() -> None:
    # With α each window's marked fraction (shift_g = 0) the pair shares as RFC 9332's coupling
    # predicts; Linux's DCTCP (shift_g = 4) cannot raise α from so few marks and takes most of
    # the link (crates/tcplab-sim/tests/dualpi2.rs). Either way the L4S flow's packets wait
    # about a millisecond and the classic flow's about 15 ms, of 10 ms propagation.
    coupled = tcplab.simulate(_pair({"cc_params": {"shift_g": 0}}))
    linux = tcplab.simulate(_pair())
    rates = [coupled.summary()["throughput_mbps"].tolist(), linux.summary()["throughput_mbps"].tolist()]
    assert coupled.jain() > 0.9 and linux.jain() < 0.85, rates
    for r in (coupled, linux):
        owd_ms = (r.flows["owd_p50_ns"] / 1e6).tolist()
        assert owd_ms[0] < 12 and 18 < owd_ms[1] < 30, owd_ms
        # The bottleneck's marks all arrived at the L4S flow's receiver, but for those still in
        # flight at the end.
        marked, arrived = int(r.queues.iloc[0]["marked_pkts"]), int(r.flows["marked_pkts"].sum())
        assert arrived == int(r.flows["marked_pkts"].iloc[0]) and 0 <= marked - arrived <= int(r.flows["in_flight_pkts"].iloc[0]), (marked, arrived)
    # The series show why: DCTCP's α, sampled each second, averages its marked fraction with
    # shift_g = 0 and a sixteenth of it with Linux's 4, though Linux's flow sees more marks.
    rate, alpha = {}, {}
    for name, r in (("coupled", coupled), ("linux", linux)):
        rate[name] = float(r.summary()["mark_rate"].iloc[0])
        iv = r.intervals[(r.intervals.t_s > 10) & (r.intervals.flow == 0)]
        alpha[name] = float(iv["dctcp_alpha"].mean())
        assert r.intervals[r.intervals.flow == 1]["dctcp_alpha"].isna().all()
    assert rate["linux"] > rate["coupled"] > 0.005, rate
    assert 0.5 < alpha["coupled"] / rate["coupled"] < 1.5 and alpha["linux"] < rate["linux"] / 8, (alpha, rate)


def test_tcplab_sim_shows_the_share_marked_when_there_are_marks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tcplab.cli import main

    flags = ["sim", "--duration", "6s", "--bottleneck", "20Mbps", "--rtt", "20ms", "--flow", "cubic", "--flow", "dctcp", "--window", "2s:6s"]
    assert main([*flags, "--queue", "dualpi2", "--set", "tcp.ecn=true", "--set", "flows[1].ect1=true"]) == 0
    header, rows = _sim_table(capsys.readouterr().out)
    assert header[-1] == "marked" and all(row[-1].endswith("%") for row in rows) and rows[1][-1] != "0%", (header, rows)
    assert main([*flags[:-4], "--window", "2s:6s"]) == 0
    header, _ = _sim_table(capsys.readouterr().out)
    assert "marked" not in header and header[-1].endswith("rate"), header


def _sim_table(out: str) -> tuple[list[str], list[list[str]]]:
    """The last header row and the flow rows of ``tcplab sim``'s table."""
    header = [line for line in out.splitlines() if line.startswith("┃")][-1]
    rows = [line for line in out.splitlines() if line.startswith("│ flow")]
    cells = lambda line, bar: [cell.strip() for cell in line.strip(bar).split(bar)]  # noqa: E731
    return cells(header, "┃"), [cells(row, "│") for row in rows]


def test_tshark_reads_ect1_on_every_packet_and_the_marks(tmp_path: Path) -> None:
    # A DCTCP flow with ect1 at its receiver: data and ACKs ECT(1) (ECN field 1), or data CE (3)
    # where the step or PI2 marked them; ECE on ACKs.
    path = tmp_path / "l4s.toml"
    path.write_text(
        'name = "l4s"\nduration = "5s"\nseed = 1\n[topology]\nbottleneck = "100Mbps"\nrtt = "20ms"\nbuffer = "1000pkt"\nqueue = "dualpi2"\n'
        '[[flows]]\nvariant = "dctcp"\nect1 = true\n'
    )
    packets = tshark(scenario_pcap(path, tmp_path / "f1.pcap"), "tcp.len", "ip.dsfield.ecn", "tcp.flags.ece")
    data, acks = packets[packets["tcp.len"] != "0"], packets[packets["tcp.len"] == "0"]
    assert set(acks["ip.dsfield.ecn"]) == {"1"} and set(data["ip.dsfield.ecn"]) == {"1", "3"}
    assert (acks["tcp.flags.ece"] == "1").sum() > 0


def test_fq_codels_ce_threshold_selector_lowers_as_tcs_value_and_mask(topology_error: Callable[[dict], ScenarioError]) -> None:
    base = {"name": "x", "duration": "1s", "topology": {"bottleneck": "10Mbps", "rtt": "10ms", "queue": "fq_codel"}, "flows": [{"variant": "cubic"}]}
    plain = Scenario.model_validate(base | {"topology": base["topology"] | {"fq_codel": {"ce_threshold": "1ms"}}})
    assert "ce_threshold_mask" not in plain.to_engine_spec()["topology"]["queue"]["fq_codel"]
    picked = Scenario.model_validate(base | {"topology": base["topology"] | {"fq_codel": {"ce_threshold": "1ms", "ce_threshold_selector": "0x1/0x1"}}})
    table = picked.to_engine_spec()["topology"]["queue"]["fq_codel"]
    assert (table["ce_threshold_ns"], table["ce_threshold_selector"], table["ce_threshold_mask"]) == (1_000_000, 1, 1)
    for fq, allowed in [
        ({"ce_threshold": "1ms", "ce_threshold_selector": "0x3/0x1"}, "a MASK of 1 to 0xff and a VALUE within it"),
        ({"ce_threshold": "1ms", "ce_threshold_selector": "ect1"}, "expected 'VALUE/MASK' like '0x1/0x1'"),
        ({"ce_threshold_selector": "0x1/0x1"}, "expected ce_threshold with it"),
    ]:
        e = topology_error({"queue": "fq_codel", "fq_codel": fq})
        assert e.field == "topology.fq_codel.ce_threshold_selector" and allowed in str(e), str(e)
