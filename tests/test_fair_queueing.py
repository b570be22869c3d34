"""FRED and CSFQ (``queue = "fred"``, ``"csfq"``): paper 004's findings through the Python API and
the bundled experiment, their keys, their errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.config import Scenario
from tcplab.experiment import load_experiment, run_id

ROOT = Path(__file__).resolve().parent.parent


def _udp_mix(queue: str, fred: dict | None = None) -> Scenario:
    """Paper 004 §2.1: 32 UDP flows on 10 Mb/s, flow i sending i + 1 times its fair share
    (0.3125 Mb/s), 1000-byte packets, a 64-packet buffer, 20 s."""
    topology: dict = {"bottleneck": "10Mbps", "rtt": "6ms", "access_rate": "10Mbps", "access_delay": "1ms", "buffer": "64pkt", "queue": queue}
    if fred is not None:
        topology["fred"] = fred
    return Scenario.model_validate(
        {
            "name": "udp-mix",
            "duration": "20s",
            "window": "10s:20s",
            "topology": topology,
            "flows": [{"kind": "cbr", "rate": f"{0.3125 * (i + 1)}Mbps"} for i in range(32)],
        }
    )


def test_csfq_and_fredl_share_out_the_link_where_fifo_red_and_fred_do_not() -> None:
    # Paper 004's Fig. 3a: DRR and CSFQ give each flow about its fair share, FIFO and RED do not.
    # FRED holds each flow to 16 packets, so four flows fill the 64-packet buffer; the variant for
    # many flows (FREDL) keeps two packets for every flow and shares far better.
    jfi = {}
    for queue, fred in (("droptail", None), ("red", None), ("fred", None), ("fred", {"many_flows": True}), ("csfq", None)):
        r = tcplab.simulate(_udp_mix(queue, fred))
        x = r.summary().throughput_mbps
        jfi["fredl" if fred else queue] = r.jain()
        assert abs(x.sum() - 10) < 0.3, (queue, x.sum())
        if queue == "csfq":
            assert ((x / 0.3125 - 1).abs() < 0.3).all(), list(x)
    assert jfi["csfq"] > 0.99 and jfi["fredl"] > 0.9, jfi
    assert max(jfi["droptail"], jfi["red"], jfi["fred"]) < 0.8, jfi


def test_the_bundled_experiment_reproduces_the_protection_finding(tmp_path: Path) -> None:
    # experiments/paper004.toml (Fig. 3b), one replication of 12 s: the UDP flow takes ten times
    # its share and more of a FIFO or RED link (through the FIFO 4.4 Mb/s here, 7.7 ± 3.2 over the
    # experiment's 5 replications: the TCP flows' phases decide), FRED holds it to a few times its
    # share, DRR and CSFQ to about it.
    exp = load_experiment(ROOT / "experiments" / "paper004.toml")
    scenarios = {p["topology.queue"]: exp.scenario(p).override({"duration": "12s", "window": "4s:12s"}) for p in exp.points()}
    assert sorted(scenarios) == ["csfq", "droptail", "drr", "fred", "red"]
    udp = {q: tcplab.simulate(s).summary().throughput_mbps.iloc[0] for q, s in scenarios.items()}
    fair = 10 / 32
    assert udp["droptail"] > 10 * fair and udp["red"] > 10 * fair, udp
    assert udp["fred"] < 6 * fair and udp["drr"] < 2 * fair and udp["csfq"] < 2 * fair, udp
    red = scenarios["red"].to_engine_spec()["topology"]["queue"]["red"]
    assert (red["min_thresh_pkts"], red["max_thresh_pkts"]) == (16, 32)


def test_the_disciplines_lower_to_the_engine_spec(reference_data: dict) -> None:
    base = Scenario.model_validate(reference_data)
    fred = base.override({"topology.queue": "fred", "topology.fred.min_thresh": 10, "topology.fred.many_flows": True})
    spec = fred.to_engine_spec()["topology"]["queue"]
    assert spec["kind"] == "fred" and spec["fred"] == {**tcplab.Fred().engine(), "min_thresh_pkts": 10.0, "many_flows": True}
    csfq = tcplab.Dumbbell(bottleneck="10Mbps", rtt="6ms", queue="csfq", csfq=tcplab.Csfq(kc="200ms"))
    assert csfq.queue_spec({"limit_pkts": 64}) == {"kind": "csfq", "limit_pkts": 64, "csfq": {"k_ns": 100_000_000, "kc_ns": 200_000_000, "threshold": 0.75}}
    keys = {run_id(s, "sim", 1) for s in (base, fred, base.override({"topology.queue": "fred"}), base.override({"topology.queue": "csfq"}))}
    assert len(keys) == 4


@pytest.mark.parametrize(
    ("topology", "field", "allowed"),
    [
        ({"fred": {"max_p": 0.1}}, "topology.fred", "a [fred] table only with queue = 'fred'"),
        ({"queue": "fred", "fred": {"min_thresh": 20, "max_thresh": 10}}, "topology.fred.max_thresh", "expected more than min_thresh (20)"),
        ({"queue": "fred", "fred": {"weight": 1}}, "topology.fred.weight", "expected a number in (0, 1) like 0.002"),
        ({"queue": "fred", "fred": {"min_q": 0}}, "topology.fred.min_q", "expected an integer >= 1"),
        ({"queue": "fred", "fred": {"strikes": 2}}, "topology.fred.strikes", "unknown key"),
        ({"csfq": {"k": "50ms"}}, "topology.csfq", "a [csfq] table only with queue = 'csfq'"),
        ({"queue": "csfq", "csfq": {"kc": "0ms"}}, "topology.csfq.kc", "positive time"),
        ({"queue": "csfq", "csfq": {"threshold": 1.5}}, "topology.csfq.threshold", "expected a number in (0, 1] like 0.75"),
        ({"queue": "csfq", "csfq": {"weight": 2}}, "topology.csfq.weight", "unknown key"),
    ],
)
def test_bad_settings_name_the_field(topology_error: Callable[[dict], ScenarioError], topology: dict, field: str, allowed: str) -> None:
    e = topology_error(topology)
    assert e.field == field and allowed in str(e), str(e)


def test_from_the_command_line(cli_refuses: Callable[[str], str], capsys: pytest.CaptureFixture[str]) -> None:
    from tcplab.cli import main

    argv = ["sim", "--rtt", "20ms", "--bottleneck", "10Mbps", "--buffer", "64pkt", "--flow", "reno", "--flow", "cubic", "--duration", "10s"]
    assert main([*argv, "--queue", "fred", "--set", "topology.fred.many_flows=true"]) == 0
    assert "JFI" in capsys.readouterr().out
    assert main([*argv, "--queue", "csfq", "--set", "topology.csfq.k=50ms"]) == 0
    assert "JFI" in capsys.readouterr().out
    stderr = cli_refuses('duration = "5s"\n[topology]\nbottleneck = "10Mbps"\nrtt = "20ms"\nqueue = "csfq"\n[topology.csfq]\nthreshold = 0\n[[flows]]\nvariant = "reno"\n')
    assert stderr.startswith("tcplab: error: topology.csfq.threshold = 0")


def test_the_papers_other_studies_script() -> None:
    # scripts/paper004.py, a few of its points (one 10-s run each): a TCP flow against 7 UDP
    # flows at twice their share keeps most of its share through DRR and CSFQ, next to nothing
    # through a FIFO; a TCP flow across two congested links, likewise.
    import importlib.util

    spec = importlib.util.spec_from_file_location("paper004", ROOT / "scripts" / "paper004.py")
    assert spec is not None and spec.loader is not None
    paper004 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(paper004)
    single = {q: paper004.one_tcp_against_udp(q, 8, 10, 1) for q in ("droptail", "drr", "csfq")}
    assert single["droptail"] < 0.1 and single["drr"] > 0.8 and single["csfq"] > 0.6, single
    chain = {q: paper004.across_links(q, 2, "tcp", 10, 1) for q in ("droptail", "drr", "csfq")}
    assert chain["droptail"] < 0.1 and chain["drr"] > 0.7 and chain["csfq"] > 0.5, chain
