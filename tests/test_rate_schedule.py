"""A bottleneck whose rate changes over the run (``bottleneck_schedule``, a graph link's
``rate_schedule``): the scenario keys, what reaches the engine, the flows following the rate, the
utilisation against the schedule's mean, a link down at rate 0, and bad schedules refused with
their field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tcplab
from tcplab import analysis
from tcplab.errors import ScenarioError

from conftest import run_store

S = 1_000_000_000


def _scenario(**topology: object) -> tcplab.Scenario:
    return tcplab.Scenario.model_validate(
        {
            "name": "step",
            "duration": "18s",
            "window": "3s:18s",
            "topology": {"bottleneck": "20Mbps", "rtt": "40ms", "buffer": "1bdp", **topology},
            "flows": [{"variant": "cubic"}],
        }
    )


def test_the_schedule_reaches_the_engine_only_when_set() -> None:
    plain = _scenario()
    assert "bottleneck_schedule" not in plain.to_engine_spec()["topology"]
    points = _scenario(bottleneck_schedule=[["12s", "12Mbps"], ["6s", "5Mbps"]])
    assert points.to_engine_spec()["topology"]["bottleneck_schedule"] == [(6 * S, 5_000_000), (12 * S, 12_000_000)]
    steps = _scenario(bottleneck_schedule={"from": "20Mbps", "to": "5Mbps", "step": "5Mbps", "every": "2s"})
    assert steps.to_engine_spec()["topology"]["bottleneck_schedule"] == [(0, 20_000_000), (2 * S, 15_000_000), (4 * S, 10_000_000), (6 * S, 5_000_000)]
    # The buffer in BDP stays sized by `bottleneck`.
    assert points.to_engine_spec()["topology"]["queue"] == plain.to_engine_spec()["topology"]["queue"]
    graph = tcplab.Scenario.model_validate(
        {
            "name": "g",
            "duration": "2s",
            "topology": {
                "kind": "graph",
                "nodes": ["a", "b"],
                "links": [{"from": "a", "to": "b", "rate": "10Mbps", "rate_schedule": [["1s", "2Mbps"]]}, {"from": "b", "to": "a", "rate": "10Mbps"}],
            },
            "flows": [{"kind": "cbr", "src": "a", "dst": "b", "rate": "1Mbps"}],
        }
    )
    links = graph.to_engine_spec()["topology"]["links"]
    assert links[0]["rate_schedule"] == [(S, 2_000_000)] and "rate_schedule" not in links[1]


@pytest.mark.parametrize(
    ("schedule", "field", "message"),
    [
        ([["6s", "-1Mbps"]], "topology.bottleneck_schedule", "rate"),
        ([["6s", "5Mbps"], ["6s", "8Mbps"]], "topology.bottleneck_schedule", "expected one rate per time"),
        ([["6s"]], "topology.bottleneck_schedule", ""),
        ("5Mbps", "topology.bottleneck_schedule", ""),
    ],
)
def test_bad_schedules_name_their_field(schedule: object, field: str, message: str) -> None:
    with pytest.raises(ScenarioError) as e:
        _scenario(bottleneck_schedule=schedule)
    assert str(e.value).startswith(field) and message in str(e.value), str(e.value)


def test_the_command_line_refuses_a_bad_schedule_with_status_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('duration = "5s"\n[topology]\nbottleneck = "20Mbps"\nrtt = "40ms"\nbottleneck_schedule = [["2s", "5Mbps"], ["2s", "6Mbps"]]\n[[flows]]\nvariant = "cubic"\n')
    out = subprocess.run([sys.executable, "-m", "tcplab", "sim", str(path)], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "topology.bottleneck_schedule" in out.stderr and "one rate per time" in out.stderr, out.stderr


def test_cubic_follows_the_rate_down_and_up() -> None:
    # 20 Mb/s, 5 from 6 s, 12 from 12 s: each phase's last seconds at its rate's goodput ceiling.
    r = tcplab.simulate(_scenario(bottleneck_schedule=[["6s", "5Mbps"], ["12s", "12Mbps"]]))
    iv = r.intervals.set_index("t_s")["throughput_mbps"]
    for (start, stop), rate in (((3, 6), 20), ((9, 12), 5), ((15, 18), 12)):
        ceiling = rate * 1448 / 1500
        phase = iv.loc[start + 1 : stop]
        assert (phase > 0.85 * ceiling).all() and (phase <= ceiling * 1.001).all(), (rate, list(phase))


def test_utilisation_is_against_the_schedules_mean_over_the_window(tmp_path: Path) -> None:
    path = tmp_path / "step.toml"
    path.write_text(
        'name = "step"\nreplications = 1\nwindow = "3s:18s"\n[scenario]\nduration = "18s"\n[scenario.topology]\nbottleneck = "20Mbps"\nrtt = "40ms"\n'
        'bottleneck_schedule = [["6s", "5Mbps"], ["12s", "12Mbps"]]\n[[scenario.flows]]\nvariant = "cubic"\n[sweep]\n"flows[0].variant" = ["cubic", "reno"]\n'
    )
    frames = analysis.load_frames(run_store(path, tmp_path / "step.duckdb"))
    runs = analysis.per_run(frames)
    capacity = (3 * 20 + 6 * 5 + 6 * 12) / 15  # 10.8 Mb/s over 3–18 s
    for row in runs.itertuples():
        assert row.utilisation == pytest.approx(row.total_mbps / capacity, rel=1e-9)
        # The goodput ceiling, 1448/1500, give or take the 20 ms by which the receiver sees each step late.
        assert 0.85 < row.utilisation < 0.975, row.utilisation
    queues = analysis.bottleneck_queues(frames)
    assert queues is not None and queues["rate_mbps"].tolist() == pytest.approx([capacity] * 2)
    # Over a window given explicitly, that window's mean rate.
    queues = analysis.bottleneck_queues(frames, (6.0, 12.0))
    assert queues is not None and queues["rate_mbps"].tolist() == pytest.approx([5.0] * 2)


def test_a_graphs_bottleneck_rate_is_its_schedules_mean_over_the_window(tmp_path: Path) -> None:
    # A graph's bottleneck is its busiest link; its rate, with a schedule, the mean over the run's
    # window or over one given to per_run (which utilisation divides by).
    path = tmp_path / "graph.toml"
    path.write_text(
        'name = "graph-step"\nreplications = 1\nwindow = "2s:8s"\n[scenario]\nduration = "8s"\n[scenario.topology]\nkind = "graph"\nnodes = ["a", "b"]\n'
        'links = [{from = "a", to = "b", rate = "20Mbps", delay = "10ms", rate_schedule = [["4s", "5Mbps"]]}, {from = "b", to = "a", rate = "20Mbps", delay = "10ms"}]\n'
        '[[scenario.flows]]\nvariant = "cubic"\nsrc = "a"\ndst = "b"\n[sweep]\n"flows[0].variant" = ["cubic"]\n'
    )
    frames = analysis.load_frames(run_store(path, tmp_path / "graph.duckdb"))
    own, given = analysis.bottleneck_queues(frames), analysis.bottleneck_queues(frames, (5.0, 8.0))
    assert own is not None and given is not None
    assert own["link"].tolist() == [0] and own["rate_mbps"].tolist() == pytest.approx([(2 * 20 + 4 * 5) / 6])
    assert given["rate_mbps"].tolist() == pytest.approx([5.0])
    runs = analysis.per_run(frames, window=(5.0, 8.0))
    assert runs["utilisation"].iloc[0] == pytest.approx(runs["total_mbps"].iloc[0] / 5.0)


def test_a_rate_of_zero_takes_the_link_down_and_tcp_comes_back() -> None:
    # Down from 8 s to 9.5 s: nothing arrives in the second after 8 s (the last packets in flight
    # land by 8.05 s), CUBIC's retransmission timer brings it back, and by 13 s it fills the link again.
    scenario = _scenario(bottleneck_schedule=[["8s", "0Mbps"], ["9.5s", "20Mbps"]])
    assert scenario.to_engine_spec()["topology"]["bottleneck_schedule"] == [(8 * S, 0), (9_500_000_000, 20_000_000)]
    r = tcplab.simulate(scenario)
    iv = r.intervals.set_index("t_s")["throughput_mbps"]
    assert iv.loc[9] < 1.5, list(iv)
    assert (iv.loc[14:18] > 0.9 * 20 * 1448 / 1500).all(), list(iv)
    assert int(r.summary()["rto_count"].iloc[0]) >= 1
    # Utilisation's capacity is the window's mean rate, the outage counting as 0 (3–18 s: 13.5 s
    # at 20 Mb/s); a window inside the outage has none.
    link = {"bottleneck": "20Mbps", "bottleneck_schedule": [["8s", "0Mbps"], ["9.5s", "20Mbps"]]}
    assert analysis._link_rate_mbps(link, "bottleneck", "bottleneck_schedule", (3.0, 18.0)) == pytest.approx(13.5 * 20 / 15)
    assert analysis._link_rate_mbps(link, "bottleneck", "bottleneck_schedule", (8.0, 9.0)) == 0.0
