"""ECN (``[tcp] ecn``, a DCCP flow's ``ecn``, DCTCP, ``ecn`` in the RED, CoDel, PIE, FQ-CoDel and
FQ-PIE tables and CoDel's ``ce_threshold``): marks instead of drops in the simulator, its keys and errors, and the marks as tshark
reads them (docs/ecn.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

import tcplab
from conftest import run_store
from tcplab import analysis, report
from tcplab.config import Scenario
from tcplab.experiment import scenario_json
from test_pcap import scenario_pcap, tshark


def _scenario(queue: str, ecn: bool | None, table_ecn: bool | None = None, variant: str = "cubic") -> Scenario:
    """Two flows of ``variant`` on 20 Mb/s, 40 ms, a 400-packet buffer through ``queue``, 20 s."""
    tcp = {"sack_compression": True} | ({} if ecn is None else {"ecn": ecn})
    topology = {"bottleneck": "20Mbps", "rtt": "40ms", "buffer": "400pkt", "queue": queue}
    if table_ecn is not None:
        topology[queue] = {"ecn": table_ecn}
    return Scenario.model_validate(
        {"name": "ecn", "duration": "20s", "seed": 1, "window": "5s:20s", "topology": topology, "tcp": tcp,
         "flows": [{"variant": variant}, {"variant": variant, "start": "1s"}]}
    )


@pytest.mark.parametrize(("queue", "table_ecn"), [("codel", True), ("pie", True), ("red", True), ("fq_codel", None)])
def test_an_aqm_with_ecn_marks_where_it_dropped_and_nothing_is_retransmitted(queue: str, table_ecn: bool | None) -> None:
    # The same discipline with ECN-capable flows: every early drop becomes a mark (FQ-CoDel marks
    # by default, as Linux), the senders reduce on the echoes instead of recovering, no segment is
    # retransmitted, and the queue and the link stay as they were with drops.
    drops = tcplab.simulate(_scenario(queue, None))
    marks = tcplab.simulate(_scenario(queue, True, table_ecn))
    qd, qm = drops.queues.iloc[0], marks.queues.iloc[0]
    assert qd.early_drop_pkts > 10 and qd.marked_pkts == 0
    assert qm.dropped_pkts == 0 and qm.early_drop_pkts == 0 and qm.marked_pkts > 10, qm
    assert marks.flows.retrans_pkts.sum() == 0 and marks.flows.recoveries.sum() == 0
    assert marks.flows.marked_pkts.sum() == qm.marked_pkts
    assert 0.5 * qm.marked_pkts <= marks.flows.ecn_reductions.sum() <= qm.marked_pkts
    assert abs(qm.mean_pkts - qd.mean_pkts) < 0.25 * qd.mean_pkts + 1, (qm.mean_pkts, qd.mean_pkts)
    assert marks.summary().throughput_mbps.sum() > 18


def test_fq_pie_marks_below_its_ecn_prob_and_drops_above_it() -> None:
    # FQ-PIE marks only while a flow's own probability is at most ecn_prob (10%). The first
    # CUBIC flow's slow start, alone, drives its PIE above that: 22 drops in the first 2 s, then
    # marks only (37). With ecn_prob = 100 every early drop is a mark (54), none dropped.
    marks = tcplab.simulate(_scenario("fq_pie", True, True))
    q, iv = marks.queues.iloc[0], marks.intervals
    assert q.marked_pkts > 10 and q.dropped_pkts == q.early_drop_pkts > 0, q
    assert iv[iv.t_s > 2].dropped_pkts.sum() == 0
    # Every marked packet reached its receiver but those still on their way at the end.
    f = marks.flows
    assert f.marked_pkts.sum() <= q.marked_pkts <= f.marked_pkts.sum() + f.in_flight_pkts.sum()
    every = tcplab.simulate(_scenario("fq_pie", True, True).override({"topology.fq_pie.ecn_prob": 100}))
    q = every.queues.iloc[0]
    assert q.dropped_pkts == 0 and q.marked_pkts > 10 and every.flows.retrans_pkts.sum() == 0


def test_the_mark_rate_of_an_experiment(tmp_path: Path) -> None:
    # `mark_rate`: packets that arrived CE-marked / packets sent over the window, all flows (each
    # flow's as `flowN_mark_rate`), a metric of `tcplab run` and a table of the report when any
    # run has marks. The marks are counted per interval, so the window's add up from the series.
    exp = tmp_path / "marks.toml"
    exp.write_text(
        'name = "marks"\nseed = 1\nreplications = 1\nwindow = "5s:10s"\nmetrics = ["drop_rate", "mark_rate"]\n'
        '[scenario]\nduration = "10s"\n[scenario.topology]\nkind = "dumbbell"\nbottleneck = "20Mbps"\nrtt = "40ms"\nbuffer = "400pkt"\nqueue = "fq_codel"\n'
        '[[scenario.flows]]\nvariant = "cubic"\n[[scenario.flows]]\nvariant = "cubic"\nstart = "1s"\n[sweep]\n"tcp.ecn" = [false, true]\n'
    )
    frames = analysis.load_frames(run_store(exp, tmp_path / "marks.duckdb"))
    runs = analysis.per_run(frames).set_index("tcp.ecn")  # axis values as written: "false", "true"
    ids = frames.runs.set_index("tcp.ecn")["run_id"]
    inside = frames.intervals[(frames.intervals.t_s > 5) & (frames.intervals.t_s <= 10) & (frames.intervals.run_id == ids["true"])]
    by_flow = inside.groupby("flow")[["marked_pkts", "sent_pkts"]].sum()
    assert runs.loc["false", "mark_rate"] == 0 < runs.loc["true", "mark_rate"]
    assert runs.loc["true", "mark_rate"] == pytest.approx(by_flow.marked_pkts.sum() / by_flow.sent_pkts.sum())
    for flow in (0, 1):
        assert runs.loc["true", f"flow{flow + 1}_mark_rate"] == pytest.approx(by_flow.marked_pkts[flow] / by_flow.sent_pkts[flow])
        assert runs.loc["false", f"flow{flow + 1}_mark_rate"] == 0
    # The window's marks are fewer than the run's, which the flows table keeps as a total.
    flows = frames.flows.set_index(["run_id", "flow"])
    assert (flows.loc[ids["true"], "marked_pkts"] < flows.loc[ids["true"], "total_marked_pkts"]).all()
    assert "ECN mark rate" in report.render(frames)
    plain_ids = set(frames.runs.loc[frames.runs["tcp.ecn"] == "false", "run_id"])
    plain = dataclasses.replace(frames, **{name: getattr(frames, name)[getattr(frames, name)["run_id"].isin(plain_ids)] for name in ("runs", "flows", "intervals", "queues")})
    assert "ECN mark rate" not in report.render(plain)
    # A store written before marks were counted per interval has only the run's marks, as
    # `marked_pkts`: its mark rate is over the whole run.
    old = frames.flows.drop(columns=["marked_pkts", "mark_rate"]).rename(columns={"total_marked_pkts": "marked_pkts"})
    runs_old = analysis.per_run(dataclasses.replace(frames, flows=old)).set_index("tcp.ecn")
    whole = old[old.run_id == ids["true"]]
    assert runs_old.loc["true", "mark_rate"] == pytest.approx(whole.marked_pkts.sum() / whole.total_sent_pkts.sum())


def test_flows_without_ecn_are_dropped_by_a_marking_aqm() -> None:
    r = tcplab.simulate(_scenario("codel", None, True))
    q = r.queues.iloc[0]
    assert q.marked_pkts == 0 and q.early_drop_pkts > 10
    assert r.flows.marked_pkts.sum() == 0 and r.flows.ecn_reductions.sum() == 0


def test_bbr_ignores_the_marks() -> None:
    # Linux's BBR v1 sets its window itself: the echoes do not slow it, so CoDel marks on and on
    # (with drops it would have dropped as often, and BBR would have retransmitted them).
    r = tcplab.simulate(_scenario("codel", True, True, variant="bbr"))
    q = r.queues.iloc[0]
    assert q.marked_pkts > 1000 and q.dropped_pkts == 0 and r.flows.retrans_pkts.sum() == 0


def test_ecn_lowers_to_the_engine_spec_only_when_set() -> None:
    plain = _scenario("fq_codel", None).to_engine_spec()
    assert "ecn" not in plain["topology"]["queue"]["fq_codel"] and all("ecn" not in f for f in plain["flows"])
    spec = _scenario("fq_codel", True, False).to_engine_spec()
    assert spec["topology"]["queue"]["fq_codel"]["ecn"] is False and all(f["ecn"] is True for f in spec["flows"])
    for queue in ("codel", "pie", "red", "fq_pie"):
        assert _scenario(queue, None, True).to_engine_spec()["topology"]["queue"][queue]["ecn"] is True
        assert "ecn" not in _scenario(queue, None, False).to_engine_spec()["topology"]["queue"][queue]
    # A scenario that does not mention ECN keeps its run key: no ECN key in its resolved JSON.
    def keys(value: object) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {k for v in value.values() for k in keys(v)}
        return {k for v in value for k in keys(v)} if isinstance(value, list) else set()

    assert "ecn" not in keys(scenario_json(_scenario("codel", None)))
    assert "ecn" in keys(scenario_json(_scenario("codel", True)))


@pytest.mark.parametrize(("where", "value"), [({"tcp": {"ecn": "maybe"}}, "'maybe'"), ({"topology": {"queue": "codel", "codel": {"ecn": 2}}}, "2")])
def test_a_bad_ecn_names_the_field(where: dict, value: str) -> None:
    data = {"name": "x", "duration": "1s", "topology": {"bottleneck": "10Mbps", "rtt": "10ms"}, "flows": [{"variant": "cubic"}]}
    for key, table in where.items():
        data[key] = {**data.get(key, {}), **table}
    with pytest.raises(tcplab.ScenarioError) as e:
        Scenario.model_validate(data)
    assert "ecn" in str(e.value) and value in str(e.value), str(e.value)


def test_a_discipline_that_cannot_mark_refuses_ecn(cli_refuses: Callable[[str], str]) -> None:
    # DRR has no ECN: the key is unknown there, one line, exit status 2, nothing written.
    stderr = cli_refuses('name = "x"\nduration = "1s"\n[topology]\nbottleneck = "10Mbps"\nrtt = "10ms"\nqueue = "drr"\n[topology.drr]\necn = true\n[[flows]]\nvariant = "cubic"\n')
    assert stderr.startswith("tcplab: error: topology.drr.ecn = ") and "unknown key" in stderr, stderr


def test_tshark_reads_the_marks_and_the_echo(tmp_path: Path) -> None:
    # The flow's pcap at its receiver: its data ECT(0) (ECN field 2) or CE (3) as CoDel marked it,
    # the receiver's ACKs with ECE after each mark, and the sender's CWR; tshark counts as many CE
    # data packets as the receiver did. (iperf3's preamble: its set-up is in the file too.) The
    # flow is marked AF21 (DSCP 18) too: its data carry it beside their ECN field, its handshake
    # and ACKs do not, as iperf3's --dscp.
    path = tmp_path / "ecn.toml"
    path.write_text(
        'name = "ecn"\nduration = "10s"\nseed = 1\n[topology]\nbottleneck = "20Mbps"\nrtt = "40ms"\nbuffer = "400pkt"\nqueue = "codel"\n'
        '[topology.codel]\necn = true\n[tcp]\necn = true\nsack_compression = true\npreamble = "iperf3"\n[[flows]]\nvariant = "cubic"\ndscp = "AF21"\n[[flows]]\nvariant = "cubic"\nstart = "1s"\n'
    )
    pcap = scenario_pcap(path, tmp_path / "f1.pcap")
    marked = tcplab.simulate(tcplab.load_scenario(path)).flows.marked_pkts[0]
    data = tshark(pcap, "ip.dsfield.ecn", "ip.dsfield.dscp", where="tcp.len > 1000")  # the bulk data, not iperf3's set-up
    assert set(data["ip.dsfield.ecn"]) <= {"2", "3"} and set(data["ip.dsfield.dscp"]) == {"18"}
    assert set(tshark(pcap, "ip.dsfield.dscp", where="tcp.len == 0")["ip.dsfield.dscp"]) == {"0"}
    assert (data["ip.dsfield.ecn"] == "3").sum() == marked > 0
    assert len(tshark(pcap, where="tcp.flags.ece == 1 && tcp.len == 0")) >= marked
    assert len(tshark(pcap, where="tcp.flags.cwr == 1 && tcp.len > 0")) > 0
    # iperf3's two connections open as Linux opens them with ECN: SYN with ECE and CWR (RFC 3168
    # §6.1.1's ECN-setup SYN), SYN-ACK with ECE alone.
    syns = tshark(pcap, "tcp.flags.ack", "tcp.flags.ece", "tcp.flags.cwr", where="tcp.flags.syn == 1")
    assert len(syns) == 4
    assert {tuple(r) for r in syns[["tcp.flags.ack", "tcp.flags.ece", "tcp.flags.cwr"]].to_numpy()} == {("0", "1", "1"), ("1", "1", "0")}


def _dccp(queue: str, ecn: bool | None, rtt: str = "40ms", against: str = "ccid2", duration: str = "20s", rate: str = "20Mbps",
          buffer: str = "400pkt", start: str = "1s", seed: int = 1) -> Scenario:
    """A CCID 2 flow and an ``against`` flow (from ``start``) through ``queue`` with its ``ecn``
    on, both flows ECN-capable or not."""
    flag = {} if ecn is None else {"ecn": ecn}
    return Scenario.model_validate(
        {"name": "dccp-ecn", "duration": duration, "seed": seed, "window": "5s:" + duration,
         "topology": {"bottleneck": rate, "rtt": rtt, "buffer": buffer, "queue": queue, queue: {"ecn": True}},
         "flows": [{"variant": "ccid2"} | flag, {"variant": against, "start": start} | flag]}
    )


@pytest.mark.parametrize("queue", ["codel", "red"])
def test_ccid2_with_ecn_halves_on_the_marks_its_ack_vector_reports(queue: str) -> None:
    # RFC 4341 §5: with ECN the AQM's drops of two CCID 2 flows become marks, the receivers report
    # them in their Ack Vectors (state 1), and each sender halves its window once per window on
    # them: no datagram lost, as many marks counted by the flows as by the queue, and the packets
    # conserved (sent = delivered + dropped + still in the network).
    drops = tcplab.simulate(_dccp(queue, None))
    marks = tcplab.simulate(_dccp(queue, True))
    qd, qm = drops.queues.iloc[0], marks.queues.iloc[0]
    assert qd.early_drop_pkts > 10 and qd.marked_pkts == 0 and drops.flows.recoveries.sum() > 10
    assert drops.flows.marked_pkts.sum() == 0 and drops.flows.ecn_reductions.sum() == 0
    assert qm.dropped_pkts == 0 and qm.marked_pkts > 10, qm
    f = marks.flows
    assert f.dropped_pkts.sum() == 0 and f.recoveries.sum() == 0
    assert f.marked_pkts.sum() == qm.marked_pkts
    assert (f.ecn_reductions > 0).all() and (f.ecn_reductions <= f.marked_pkts).all()
    assert (f.sent_pkts == f.delivered_pkts + f.dropped_pkts + f.in_flight_pkts).all()
    # The link carries as much as with drops (1424 B of payload per 1500 B packet), as fairly.
    assert marks.summary().throughput_mbps.sum() > 0.97 * drops.summary().throughput_mbps.sum() > 17
    assert marks.jain() > 0.9


def test_ccid2_without_ecn_is_dropped_by_a_marking_aqm_and_keeps_its_run_key() -> None:
    r = tcplab.simulate(_dccp("codel", None))
    assert r.queues.iloc[0].marked_pkts == 0 and r.flows.marked_pkts.sum() == 0
    spec = _dccp("codel", None).to_engine_spec()
    assert all("ecn" not in f for f in spec["flows"])
    assert all(f["ecn"] is True for f in _dccp("codel", True).to_engine_spec()["flows"])
    assert "ecn" not in str(scenario_json(_dccp("codel", None))["flows"])


@pytest.mark.parametrize("queue", ["red", "codel"])
def test_ecn_raises_ccid2s_share_against_newreno_at_a_long_rtt(queue: str) -> None:
    # Paper 003's open question (§V), one cell of experiments/paper003-ecn.toml: its set-up (100
    # Mb/s, 1-BDP buffer, NewReno from 30 s, 300 s, throughput over 60-300 s) at 200 ms. Without
    # ECN the AQM's drops cost CCID 2, which never retransmits, more than NewReno; with ECN most
    # drops become marks (RED still drops above max_thresh) and CCID 2 carries more: 25.6-27.5 ->
    # 29.1-31.4 Mb/s through RED, 27.6 -> 31.7-36.1 through CoDel, seeds 1-8.
    def run(ecn: bool) -> tcplab.Result:
        return tcplab.simulate(_dccp(queue, ecn, rtt="200ms", against="newreno", duration="300s", rate="100Mbps", buffer="1bdp", start="30s"))

    plain, ecn = run(False), run(True)
    assert 3 * ecn.flows.dropped_pkts.sum() < plain.flows.dropped_pkts.sum()
    assert ecn.flows.marked_pkts.sum() > 10
    ccid2 = [r.summary("60s:300s").throughput_mbps[0] for r in (plain, ecn)]
    assert ccid2[1] > 1.05 * ccid2[0], ccid2
    assert ecn.jain("60s:300s") > 0.95


def _step(variants: list[str], queue: str = "codel", duration: str = "20s", pacing: bool = False) -> Scenario:
    """``variants`` (the second from 2 s) on 100 Mb/s, 20 ms, through ``queue`` marking every
    ECN-capable packet that waited over 1 ms (its ``ce_threshold``), every flow with ECN."""
    return Scenario.model_validate(
        {"name": "dctcp", "duration": duration, "seed": 1, "window": f"5s:{duration}",
         "topology": {"bottleneck": "100Mbps", "rtt": "20ms", "buffer": "1000pkt", "queue": queue, queue: {"ce_threshold": "1ms"}},
         "tcp": {"ecn": True, "sack_compression": True, "pacing": pacing},
         "flows": [{"variant": v} | ({"start": "2s"} if i else {}) for i, v in enumerate(variants)]}
    )


def test_dctcp_is_ecn_capable_without_asking_and_refuses_ecn_false(cli_refuses: Callable[[str], str]) -> None:
    # Linux negotiates ECN for DCTCP whatever net.ipv4.tcp_ecn says (TCP_CONG_NEEDS_ECN).
    plain = {"name": "x", "duration": "1s", "topology": {"bottleneck": "10Mbps", "rtt": "10ms"}, "flows": [{"variant": "dctcp"}, {"variant": "cubic"}]}
    flows = Scenario.model_validate(plain).to_engine_spec()["flows"]
    assert flows[0]["ecn"] is True and "ecn" not in flows[1]
    assert tcplab.variants.resolve("DCTCP").needs_ecn and not tcplab.variants.resolve("cubic").needs_ecn
    stderr = cli_refuses('name = "x"\nduration = "1s"\n[topology]\nbottleneck = "10Mbps"\nrtt = "10ms"\n[tcp]\necn = false\n[[flows]]\nvariant = "dctcp"\n')
    assert stderr.startswith("tcplab: error: flows[0].ecn = false: expected true or unset: dctcp runs only with ECN"), stderr


@pytest.mark.parametrize("queue", ["codel", "fq_codel"])
def test_ce_threshold_lowers_only_when_set_and_marks_what_waited_longer(queue: str) -> None:
    unset = Scenario.model_validate({"name": "x", "duration": "1s", "topology": {"bottleneck": "10Mbps", "rtt": "10ms", "queue": queue}, "flows": [{"variant": "cubic"}]})
    assert "ce_threshold_ns" not in unset.to_engine_spec()["topology"]["queue"][queue]
    assert "ce_threshold" not in str(scenario_json(unset))
    spec = _step(["reno", "reno"], queue)
    assert spec.to_engine_spec()["topology"]["queue"][queue]["ce_threshold_ns"] == 1_000_000
    # Reno with ECN (RFC 3168) through the marking: marks, no drop, no retransmission, and the
    # owd hardly above the path's 10 ms.
    r = tcplab.simulate(spec)
    q = r.queues.iloc[0]
    assert q.marked_pkts > 10 and q.dropped_pkts == 0 and r.flows.retrans_pkts.sum() == 0
    assert r.summary().owd_mean_ms.max() < 11.5, r.summary()


def test_dctcp_keeps_the_link_full_through_a_shallow_threshold_where_reno_cannot() -> None:
    # DCTCP's claim (Alizadeh et al. 2010, RFC 8257's introduction): a marked window costs it alpha/2, not
    # half, so a 1-ms threshold (8 packets against a BDP of 167) leaves the link full; Reno with
    # ECN halves at each marked window and leaves it idle for much of each cycle. Beside CUBIC in
    # the one queue DCTCP takes nearly all of it; two paced DCTCP flows share it.
    def use(r: tcplab.Result) -> float:
        return float(r.summary().throughput_mbps.sum()) / 100.0

    alone = {v: tcplab.simulate(_step([v], duration="15s")) for v in ("dctcp", "reno")}
    assert use(alone["dctcp"]) > 0.9 > 0.8 > use(alone["reno"]), {v: use(r) for v, r in alone.items()}
    mixed = tcplab.simulate(_step(["cubic", "dctcp"], duration="30s")).summary().throughput_mbps
    assert mixed[1] > 10 * mixed[0], mixed
    pair = tcplab.simulate(_step(["dctcp", "dctcp"], duration="40s", pacing=True))
    assert pair.jain("15s:40s") > 0.95, pair.summary("15s:40s")


def test_tshark_reads_dctcps_ect_acks_and_its_echo_of_each_mark(tmp_path: Path) -> None:
    # A DCTCP flow's pcap at its receiver: data and ACKs all ECT(0) (Linux keeps ECT on every
    # packet of a DCTCP socket) or CE as the queue marked them; ECE on an ACK exactly when the
    # last data segment before it arrived CE, so there are ACKs with ECE, and none carries CWR's
    # end of the echo as RFC 3168's receiver would.
    path = tmp_path / "dctcp.toml"
    path.write_text(
        'name = "dctcp"\nduration = "5s"\nseed = 1\n[topology]\nbottleneck = "100Mbps"\nrtt = "20ms"\nbuffer = "1000pkt"\nqueue = "codel"\n'
        '[topology.codel]\nce_threshold = "1ms"\n[tcp]\nsack_compression = true\n[[flows]]\nvariant = "dctcp"\n'
    )
    pcap = scenario_pcap(path, tmp_path / "f1.pcap")
    packets = tshark(pcap, "frame.time_relative", "tcp.len", "ip.dsfield.ecn", "tcp.flags.ece", "tcp.ack", "tcp.seq")
    data, acks = packets[packets["tcp.len"] != "0"], packets[packets["tcp.len"] == "0"]
    assert set(acks["ip.dsfield.ecn"]) == {"2"} and set(data["ip.dsfield.ecn"]) == {"2", "3"}
    assert (acks["tcp.flags.ece"] == "1").sum() > 0
    # Each ACK's ECE is the CE state of the newest data segment that arrived before it; an ACK
    # for less than that segment (the held ACK sent when the state changed) has the state before.
    state = previous = None
    end, checked = 0, 0
    for length, ecn, ece, ack, seq in packets[["tcp.len", "ip.dsfield.ecn", "tcp.flags.ece", "tcp.ack", "tcp.seq"]].to_numpy():
        if length != "0":
            previous, state, end = state, ecn == "3", int(seq) + int(length)
        elif state is not None:
            assert (ece == "1") == (state if int(ack) >= end else previous), (ack, end, ece, state, previous)
            checked += 1
    assert checked == len(acks) > 100
