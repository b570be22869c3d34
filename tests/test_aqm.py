"""CoDel, PIE, FQ-CoDel and FQ-PIE (``queue = "codel"``, ``"pie"``, ``"fq_codel"``,
``"fq_pie"``): what they do to a deep buffer's delay and to flows that share it, their keys and
their errors. CAKE keeps the deep buffer short here too; its own tests are in test_cake.py."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.config import Scenario


def _deep_buffer(queue: str) -> Scenario:
    """Two CUBIC flows on 20 Mb/s, 40 ms, a 500-packet buffer (7.5 BDP), 30 s."""
    return Scenario.model_validate(
        {
            "name": "codel",
            "duration": "30s",
            "seed": 3,
            "topology": {"bottleneck": "20Mbps", "rtt": "40ms", "buffer": "500pkt", "queue": queue},
            "flows": [{"variant": "cubic"}, {"variant": "cubic", "start": "1s"}],
        }
    )


@pytest.mark.parametrize(("queue", "delay_ms"), [("codel", (2, 10)), ("pie", (12, 19)), ("fq_codel", (2, 10)), ("fq_pie", (12, 19)), ("cake", (2, 10))])
def test_aqm_keeps_a_deep_buffer_short_and_the_link_busy(queue: str, delay_ms: tuple[float, float]) -> None:
    # RFC 8289's and RFC 8033's point: the buffer's size no longer sets the delay. DropTail lets
    # CUBIC fill the 500 packets (0.6 ms each); CoDel holds the head's sojourn about its 5-ms
    # target, PIE the mean delay about its 15-ms one, and the link stays as busy.
    runs = {q: tcplab.simulate(_deep_buffer(q)) for q in ("droptail", queue)}
    sojourn = {q: r.queues.iloc[0].sojourn_mean_ns / 1e6 for q, r in runs.items()}
    total = {q: r.summary((10, 30)).throughput_mbps.sum() for q, r in runs.items()}
    assert sojourn["droptail"] > 150, sojourn
    assert delay_ms[0] < sojourn[queue] < delay_ms[1], sojourn
    assert total[queue] > 0.95 * total["droptail"] and total[queue] > 18, total
    q = runs[queue].queues.iloc[0]
    # Every drop the discipline's, none at the limit: the queue never came near 500 packets.
    assert q.dropped_pkts > 0 and q.early_drop_pkts == q.dropped_pkts and q.max_pkts < 200
    assert runs["droptail"].queues.iloc[0].early_drop_pkts == 0


def test_fq_codel_lets_a_sparse_flow_pass_the_bulk_flows_queue() -> None:
    # RFC 8290's point: a flow that sends less than its share (a 0.2 Mb/s stream of 200-byte
    # packets) is served from the new list as it arrives, not behind the bulk flows' queues.
    # Mean one-way delay on a 20-ms path: DropTail 257.7 ms, CoDel 24.3 ms, FQ-CoDel 20.45 ms.
    def owd_ms(queue: str) -> float:
        scenario = Scenario.model_validate(
            {
                "name": "sparse",
                "duration": "30s",
                "topology": {"bottleneck": "20Mbps", "rtt": "40ms", "buffer": "500pkt", "queue": queue},
                "flows": [
                    {"variant": "cubic"},
                    {"variant": "cubic", "start": "1s"},
                    {"kind": "cbr", "rate": "0.2Mbps", "packet_size": "200B", "start": "2s"},
                ],
            }
        )
        flows = tcplab.simulate(scenario).flows
        assert queue != "fq_codel" or flows.dropped_pkts[2] == 0
        return flows.owd_mean_ns[2] / 1e6

    droptail, codel, fq_codel = (owd_ms(q) for q in ("droptail", "codel", "fq_codel"))
    assert droptail > 150 and 22 < codel < 30 and fq_codel < 21, (droptail, codel, fq_codel)


def test_fq_pie_shares_the_link_between_cubic_and_bbr_where_pie_does_not() -> None:
    # FQ-PIE's point over PIE: each flow's own PIE and the round robin between their queues. One
    # PIE for both lets BBR, which ignores its drops, take most of the link (2.60 against 16.33
    # Mb/s); FQ-PIE gives each half (9.66 and 9.53), each flow's queue held about the 15-ms target.
    def run(queue: str) -> tcplab.Result:
        return tcplab.simulate(Scenario.model_validate(
            {"name": "fq_pie", "duration": "30s", "seed": 1, "window": "8s:30s",
             "topology": {"bottleneck": "20Mbps", "rtt": "40ms", "buffer": "400pkt", "queue": queue},
             "flows": [{"variant": "cubic"}, {"variant": "bbr", "start": "1s"}]}
        ))

    pie, fq_pie = run("pie"), run("fq_pie")
    assert pie.jain() < 0.8 and fq_pie.jain() > 0.99, (pie.jain(), fq_pie.jain())
    x = fq_pie.summary().throughput_mbps
    assert x.sum() > 18.5 and abs(x[0] - x[1]) < 1, list(x)
    q = fq_pie.queues.iloc[0]
    assert 12 < q.sojourn_mean_ns / 1e6 < 19 and q.dropped_pkts == q.early_drop_pkts > 0, q


def test_codel_lowers_to_the_engine_spec(reference_data: dict) -> None:
    data = copy.deepcopy(reference_data)
    data["topology"]["queue"] = "codel"
    spec = Scenario.model_validate(data).to_engine_spec()["topology"]
    assert spec["queue"] == {"kind": "codel", "limit_pkts": 833, "codel": {"target_ns": 5_000_000, "interval_ns": 100_000_000, "mtu_bytes": 1500}}
    assert spec["access_queue"]["kind"] == "droptail"
    data["topology"]["codel"] = {"target": "10ms", "interval": "200ms", "mtu": "9000B"}
    codel = Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["codel"]
    assert codel == {"target_ns": 10_000_000, "interval_ns": 200_000_000, "mtu_bytes": 9000}


def test_pie_lowers_to_the_engine_spec(reference_data: dict) -> None:
    data = copy.deepcopy(reference_data)
    data["topology"]["queue"] = "pie"
    spec = Scenario.model_validate(data).to_engine_spec()["topology"]
    # α and β go to the engine in Linux's sixteenths (tc's "alpha 2 beta 20").
    defaults = {"target_ns": 15_000_000, "tupdate_ns": 15_000_000, "alpha": 2, "beta": 20, "mtu_bytes": 1500}
    assert spec["queue"] == {"kind": "pie", "limit_pkts": 833, "pie": defaults}
    data["topology"]["pie"] = {"target": "20ms", "tupdate": "30ms", "alpha": 0.25, "beta": 2}
    pie = Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["pie"]
    assert pie == {"target_ns": 20_000_000, "tupdate_ns": 30_000_000, "alpha": 4, "beta": 32, "mtu_bytes": 1500}


def test_fq_codel_lowers_to_the_engine_spec(reference_data: dict) -> None:
    data = copy.deepcopy(reference_data)
    data["topology"]["queue"] = "fq_codel"
    spec = Scenario.model_validate(data).to_engine_spec()["topology"]
    defaults = {"target_ns": 5_000_000, "interval_ns": 100_000_000, "quantum_bytes": 1500, "drop_batch": 64, "mtu_bytes": 1500}
    assert spec["queue"] == {"kind": "fq_codel", "limit_pkts": 833, "fq_codel": defaults}
    data["topology"]["fq_codel"] = {"quantum": "300B", "drop_batch": 8, "target": "2ms"}
    fq = Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["fq_codel"]
    assert fq == {**defaults, "quantum_bytes": 300, "drop_batch": 8, "target_ns": 2_000_000}


def test_fq_pie_lowers_to_the_engine_spec(reference_data: dict) -> None:
    data = copy.deepcopy(reference_data)
    data["topology"]["queue"] = "fq_pie"
    spec = Scenario.model_validate(data).to_engine_spec()["topology"]
    defaults = {"target_ns": 15_000_000, "tupdate_ns": 15_000_000, "alpha": 2, "beta": 20, "quantum_bytes": 1500, "mtu_bytes": 1500, "ecn_prob": 10}
    assert spec["queue"] == {"kind": "fq_pie", "limit_pkts": 833, "fq_pie": defaults}
    data["topology"]["fq_pie"] = {"quantum": "300B", "target": "5ms", "ecn": True, "ecn_prob": 20}
    fq = Scenario.model_validate(data).to_engine_spec()["topology"]["queue"]["fq_pie"]
    assert fq == {**defaults, "quantum_bytes": 300, "target_ns": 5_000_000, "ecn": True, "ecn_prob": 20}


def test_codel_on_a_graph_link() -> None:
    scenario = Scenario.model_validate(
        {
            "name": "chain",
            "duration": "20s",
            "topology": {
                "kind": "graph",
                "nodes": ["a", "b"],
                "links": [
                    {"from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms", "buffer": "300pkt", "queue": "codel", "codel": {"target": "2ms"}},
                    {"from": "b", "to": "a", "rate": "10Mbps", "delay": "10ms"},
                ],
            },
            "flows": [{"variant": "reno", "src": "a", "dst": "b"}],
        }
    )
    links = scenario.to_engine_spec()["topology"]["links"]
    assert [link["queue"]["kind"] for link in links] == ["codel", "droptail"]
    assert links[0]["queue"]["codel"]["target_ns"] == 2_000_000
    q = tcplab.simulate(scenario).queues
    assert q.iloc[0].early_drop_pkts == q.iloc[0].dropped_pkts > 0


@pytest.mark.parametrize(
    ("topology", "field", "allowed"),
    [
        ({"codel": {"target": "5ms"}}, "topology.codel", "a [codel] table only with queue = 'codel'"),
        ({"queue": "red", "codel": {"target": "5ms"}}, "topology.codel", "a [codel] table only with queue = 'codel'"),
        ({"queue": "codel", "red": {"max_p": 0.2}}, "topology.red", "a [red] table only with queue = 'red'"),
        ({"queue": "codel", "codel": {"target": "0ms"}}, "topology.codel.target", "positive time"),
        ({"queue": "codel", "codel": {"interval": "-5ms"}}, "topology.codel.interval", "positive time"),
        ({"queue": "codel", "codel": {"mtu": "0B"}}, "topology.codel.mtu", "positive size"),
        ({"queue": "codel", "codel": {"ecn": "maybe"}}, "topology.codel.ecn", "expected true or false"),
        ({"queue": "codel", "codel": {"ce_threshold": "0ms"}}, "topology.codel.ce_threshold", "positive time"),
        ({"pie": {"target": "5ms"}}, "topology.pie", "a [pie] table only with queue = 'pie'"),
        ({"queue": "pie", "codel": {"target": "5ms"}}, "topology.codel", "a [codel] table only with queue = 'codel'"),
        ({"queue": "pie", "pie": {"tupdate": "0s"}}, "topology.pie.tupdate", "positive time"),
        ({"queue": "pie", "pie": {"alpha": 0.1}}, "topology.pie.alpha", "expected a number in [0, 2] in steps of 1/16 (0.0625) like 0.125"),
        ({"queue": "pie", "pie": {"beta": 2.5}}, "topology.pie.beta", "expected a number in [0, 2] in steps of 1/16 (0.0625) like 1.25"),
        ({"queue": "pie", "pie": {"alpha": True}}, "topology.pie.alpha", "in steps of 1/16"),
        ({"queue": "pie", "pie": {"bytemode": True}}, "topology.pie.bytemode", "unknown key"),
        ({"fq_codel": {"quantum": "300B"}}, "topology.fq_codel", "a [fq_codel] table only with queue = 'fq_codel'"),
        ({"queue": "fq_codel", "fq_codel": {"drop_batch": 0}}, "topology.fq_codel.drop_batch", "expected an integer >= 1"),
        ({"queue": "fq_codel", "fq_codel": {"quantum": "0B"}}, "topology.fq_codel.quantum", "positive size"),
        ({"queue": "fq_codel", "fq_codel": {"flows": 1024}}, "topology.fq_codel.flows", "unknown key"),
        ({"fq_pie": {"quantum": "300B"}}, "topology.fq_pie", "a [fq_pie] table only with queue = 'fq_pie'"),
        ({"queue": "fq_pie", "fq_pie": {"ecn_prob": 101}}, "topology.fq_pie.ecn_prob", "expected an integer >= 0 and <= 100"),
        ({"queue": "fq_pie", "fq_pie": {"tupdate": "0s"}}, "topology.fq_pie.tupdate", "positive time"),
        ({"queue": "fq_pie", "fq_pie": {"beta": 3}}, "topology.fq_pie.beta", "in steps of 1/16"),
        ({"queue": "fq_pie", "fq_pie": {"memory_limit": "32MB"}}, "topology.fq_pie.memory_limit", "unknown key"),
    ],
)
def test_bad_aqm_settings_name_the_field(topology_error: Callable[[dict], ScenarioError], topology: dict, field: str, allowed: str) -> None:
    e = topology_error(topology)
    assert e.field == field and allowed in str(e), str(e)


def test_aqm_from_the_command_line(cli_refuses: Callable[[str], str], capsys: pytest.CaptureFixture[str]) -> None:
    from tcplab.cli import main

    argv = ["sim", "--rtt", "40ms", "--bottleneck", "10Mbps", "--buffer", "300pkt", "--flow", "cubic", "--duration", "20s"]
    assert main([*argv, "--queue", "codel", "--set", "topology.codel.target=10ms"]) == 0
    assert "JFI" in capsys.readouterr().out
    assert main([*argv, "--queue", "pie", "--set", "topology.pie.target=20ms"]) == 0
    assert "JFI" in capsys.readouterr().out
    assert main([*argv, "--queue", "fq_codel", "--set", "topology.fq_codel.quantum=300B"]) == 0
    assert "JFI" in capsys.readouterr().out
    assert main([*argv, "--queue", "fq_pie", "--set", "topology.fq_pie.target=10ms"]) == 0
    assert "JFI" in capsys.readouterr().out
    stderr = cli_refuses('duration = "5s"\n[topology]\nbottleneck = "10Mbps"\nrtt = "40ms"\nqueue = "codel"\n[topology.codel]\ninterval = "0s"\n[[flows]]\nvariant = "reno"\n')
    assert stderr.startswith("tcplab: error: topology.codel.interval = ")


def test_each_discipline_is_another_run(reference_data: dict) -> None:
    from tcplab.experiment import run_id

    plain = Scenario.model_validate(reference_data)
    data = copy.deepcopy(reference_data)
    data["topology"]["queue"] = "codel"
    codel = Scenario.model_validate(data)
    data["topology"]["codel"] = {"target": "10ms"}
    tuned = Scenario.model_validate(data)
    data["topology"].pop("codel")
    data["topology"]["queue"] = "pie"
    pie = Scenario.model_validate(data)
    assert len({run_id(s, "sim", 1) for s in (plain, codel, tuned, pie)}) == 4


def test_the_disciplines_from_python(reference_data: dict) -> None:
    base = Scenario.model_validate(reference_data)
    codel = base.override({"topology.queue": "codel", "topology.codel.target": "10ms"})
    assert codel.to_engine_spec()["topology"]["queue"]["codel"]["target_ns"] == 10_000_000
    pie = tcplab.Dumbbell(bottleneck="20Mbps", rtt="40ms", queue="pie", pie=tcplab.Pie(target="20ms"))
    assert pie.queue_spec({"limit_pkts": 67}) == {"kind": "pie", "limit_pkts": 67, "pie": {**tcplab.Pie().engine(), "target_ns": 20_000_000}}
    with pytest.raises(ScenarioError) as e:
        base.override({"topology.queue": "red", "topology.codel.target": "10ms"})
    assert e.value.field == "topology.codel"


def test_tcplab_queues_lists_every_discipline_and_its_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    import typing
    from pathlib import Path

    from tcplab.cli import main
    from tcplab.config import QUEUES, QueueKind

    root = Path(__file__).resolve().parent.parent
    assert list(QUEUES) == list(typing.get_args(QueueKind))
    assert all((root / doc).is_file() for _, doc in QUEUES.values())
    assert main(["queues"]) == 0
    out = capsys.readouterr().out
    assert all(f"  {name} " in out for name in QUEUES), out
    assert main(["queues", "fq_pie"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("fq_pie: FQ-PIE as Linux's sch_fq_pie")
    assert any(line.split()[:2] == ["ecn_prob", "10"] for line in lines) and any(line.split()[:2] == ["target", "15ms"] for line in lines)
    assert main(["queues", "droptail"]) == 0
    assert "parameters: none" in capsys.readouterr().out
    assert main(["queues", "sfq"]) == 2
    assert capsys.readouterr().err == "tcplab: error: queue = 'sfq': expected one of droptail, red, codel, pie, drr, fq_codel, fq_pie, fred, csfq, cake, dualpi2\n"
