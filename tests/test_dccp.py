"""DCCP/CCID 2 flows from the front: `variant = "ccid2"` (alias `dccp`) lowers to an engine
`dccp` flow and shows up in the same tables as TCP."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import tcplab
from tcplab.cli import main


def test_cli_runs_ccid2_against_newreno(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "run.csv"
    argv = ["sim", "--flow", "ccid2", "--flow", "newreno@3s", "--duration", "12s", "--window", "6s:12s",
            "--bottleneck", "10Mbps", "--rtt", "40ms", "--csv", str(csv)]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "ccid2" in out and "newreno" in out and "JFI" in out
    summary = pd.read_csv(csv)
    assert list(summary["variant"]) == ["ccid2", "newreno"]
    ccid2 = summary.iloc[0]
    # No retransmission in DCCP; both flows carry traffic and the link is shared.
    assert ccid2["retrans_pkts"] == 0
    assert (summary["throughput_mbps"] > 1.0).all()
    assert summary["throughput_mbps"].sum() > 8.0
    series = pd.read_csv(tmp_path / "run.intervals.csv")
    cwnd = series[series["name"] == "flow1"]["cwnd_bytes"]
    assert cwnd.notna().all() and (cwnd % 1424 == 0).all()


def test_variant_names_and_lowering() -> None:
    s = tcplab.Scenario(
        duration="10s",
        topology=tcplab.Dumbbell(bottleneck="10Mbps", rtt="20ms"),
        flows=[{"variant": "DCCP/CCID2"}, {"variant": "dccp", "packet_size": "1000B", "ack_ratio": "linux"}, {"variant": "newreno"}],
    )
    assert s.flow_variants == ["ccid2", "ccid2", "newreno"]
    assert isinstance(s.flows[0], tcplab.DccpFlow)
    spec = s.to_engine_spec()
    f0, f1, f2 = spec["flows"]
    assert (f0["kind"], f0["ccid"], f0["packet_bytes"], f0["header_bytes"], f0["ack_ratio_policy"]) == ("dccp", 2, 1500, 76, "rfc4341")
    assert (f1["packet_bytes"], f1["ack_ratio_policy"]) == (1000, "linux")
    assert f2["kind"] == "tcp"
    r = tcplab.simulate(s)
    # Goodput is 1424 B (924 B) of payload per datagram delivered.
    assert r.flows["goodput_bytes"][0] == r.flows["delivered_pkts"][0] * 1424
    assert r.flows["goodput_bytes"][1] == r.flows["delivered_pkts"][1] * 924
    assert r.flows["sent_pkts"][0] == r.flows["delivered_pkts"][0] + r.flows["dropped_pkts"][0] + r.flows["in_flight_pkts"][0]


@pytest.mark.parametrize(
    ("flow", "field", "allowed"),
    [
        ({"variant": "ccid2", "rwnd": "64KB"}, "flows[0].rwnd", "unknown key"),
        ({"variant": "ccid2", "packet_size": "64B"}, "flows[0].packet_size", "expected more than 76 B"),
        ({"variant": "ccid2", "ack_ratio": "half"}, "flows[0].ack_ratio", "rfc4341"),
        ({"kind": "dccp", "variant": "cubic"}, "flows[0].variant", "expected a DCCP variant: one of ccid2"),
        ({"variant": "ccid3"}, "flows[0].variant", "or ccid2 for DCCP"),
    ],
)
def test_bad_dccp_flows_name_the_field(flow: dict[str, str], field: str, allowed: str) -> None:
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.Scenario(duration="10s", topology=tcplab.Dumbbell(bottleneck="10Mbps", rtt="20ms"), flows=[flow])
    assert e.value.field == field and allowed in str(e.value), str(e.value)
