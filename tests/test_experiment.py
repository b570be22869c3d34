"""Experiment files: the grid, ranges with units, pairs, seeds, run keys and the errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tcplab.cli import main
from tcplab.errors import ScenarioError
from tcplab.experiment import load_experiment, parse_experiment, replication_seed, run_id, scenario_json

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
EXPERIMENTS = ROOT / "experiments"


def small() -> dict:
    return tomllib.loads((DATA / "small.toml").read_text())


def with_existing_variants(path: Path, variants: list[str]) -> dict:
    """A bundled experiment with its flow 2 variants replaced by ones every engine has."""
    data = tomllib.loads(path.read_text())
    data["pairs"]["flow2"] = variants
    return data


def test_paper000_grid_is_the_papers() -> None:
    # 000 §III: RTT 25–400 ms in 25 ms steps × RB 20–100 % of BDP in 20 % steps, 4 variants, 5 runs.
    exp = parse_experiment(with_existing_variants(EXPERIMENTS / "paper000.toml", ["newreno", "sack", "reno", "tahoe"]))
    axes = {a.key: a.values for a in exp.axes}
    assert axes["topology.rtt"] == tuple(f"{25 * k}ms" for k in range(1, 17))
    assert axes["topology.buffer"] == ("0.2bdp", "0.4bdp", "0.6bdp", "0.8bdp", "1.0bdp")
    assert exp.replications == 5
    runs = exp.runs()
    assert len(runs) == len(exp) == 4 * 16 * 5 * 5 == 1600
    assert len({r.run_id for r in runs}) == 1600
    first = runs[0].scenario
    assert str(first.duration) == "300s" and first.measurement_window[0].seconds == 120
    assert str(first.flows[1].start) == "60s"
    # 0.2 BDP at 100 Mb/s × 25 ms = 0.2 · 312 500 B / 1500 B = 41.7 → 42 packets.
    assert first.to_engine_spec()["topology"]["queue"] == {"kind": "droptail", "limit_pkts": 42}
    # 1.0 BDP at 400 ms: 5 000 000 B / 1500 B = 3333.3 → 3333 packets.
    last = [r for r in runs if r.point["topology.rtt"] == "400ms" and r.point["topology.buffer"] == "1.0bdp"][0]
    assert last.scenario.to_engine_spec()["topology"]["queue"]["limit_pkts"] == 3333


def test_paper003_runs_both_flow_orders() -> None:
    data = tomllib.loads((EXPERIMENTS / "paper003.toml").read_text())
    data["pairs"] = {"flow1": "reno", "flow2": ["newreno", "sack", "reno"], "both_orders": True}
    exp = parse_experiment(data)
    # (reno, x) and (x, reno) for x ≠ reno; (reno, reno) once.
    assert exp.pairs == (("reno", "newreno"), ("newreno", "reno"), ("reno", "sack"), ("sack", "reno"), ("reno", "reno"))
    assert [a.values for a in exp.axes] == [tuple(f"{25 * k}ms" for k in range(1, 9))]
    scenario = exp.runs()[0].scenario
    assert str(scenario.flows[1].start) == "30s" and scenario.measurement_window[0].seconds == 60


def test_paper001_is_tuned_and_long() -> None:
    exp = parse_experiment(with_existing_variants(EXPERIMENTS / "paper001.toml", ["sack"]))
    assert [a.values for a in exp.axes] == [("50ms", "100ms", "200ms", "300ms", "400ms")]
    s = exp.runs()[0].scenario
    assert str(s.duration) == "600s" and s.topology.bottleneck.bps == 10**9
    assert s.tcp.rwnd.bytes == 524_288_000  # Table 1: tcp_rmem max, 500 MB
    assert s.to_engine_spec()["topology"]["queue"] == {"kind": "droptail", "limit_pkts": 420_000}  # netem limit


def test_small_points_and_values_as_written() -> None:
    exp = load_experiment(DATA / "small.toml")
    runs = exp.runs()
    assert len(runs) == 12
    assert runs[0].point == {"flow1": "newreno", "flow2": "newreno", "topology.rtt": "20ms", "replication": 1}
    assert runs[-1].point == {"flow1": "newreno", "flow2": "sack", "topology.rtt": "60ms", "replication": 2}
    assert runs[-1].scenario.flow_variants == ["newreno", "sack"]
    assert runs[-1].scenario.topology.rtt.ns == 60_000_000
    assert exp.axis_keys == ["flow1", "flow2", "topology.rtt", "replication"]


def test_ranges_are_exact_and_keep_the_unit() -> None:
    data = small()
    data["sweep"] = {
        "topology.buffer": {"from": "0.1bdp", "to": "0.35bdp", "step": "0.1bdp"},  # 0.35 not reached
        "tcp.rwnd": ["64KB", "6MB"],
        "topology.loss": {"from": 0.0, "to": 0.002, "step": 0.001},
    }
    exp = parse_experiment(data)
    assert [a.values for a in exp.axes] == [("0.1bdp", "0.2bdp", "0.3bdp"), ("64KB", "6MB"), (0.0, 0.001, 0.002)]
    assert len(exp) == 2 * 3 * 2 * 3 * 2


def test_replication_seeds() -> None:
    runs = load_experiment(DATA / "small.toml").runs()
    by_rep = {r.replication: r.seed for r in runs}
    assert by_rep == {1: replication_seed(7, 1), 2: replication_seed(7, 2)}
    assert by_rep[1] != by_rep[2]
    assert all(r.scenario.seed == r.seed for r in runs)
    # Another experiment seed changes every seed.
    data = small()
    data["seed"] = 8
    assert {r.seed for r in parse_experiment(data).runs()}.isdisjoint(by_rep.values())


def test_run_ids_follow_the_parameters_only() -> None:
    runs = load_experiment(DATA / "small.toml").runs()
    r = runs[0]
    assert run_id(r.scenario, "sim", r.seed) == r.run_id
    assert run_id(r.scenario, "testbed", r.seed) != r.run_id
    assert run_id(r.scenario.override({"tcp.rwnd": "64KB"}), "sim", r.seed) != r.run_id
    # The simulator's host jitter is another simulation, but the same testbed run (real hosts).
    jittery = r.scenario.override({"host_jitter": "0.2ms"})
    assert run_id(jittery, "sim", r.seed) != r.run_id
    assert run_id(jittery, "testbed", r.seed, "tuned") == run_id(r.scenario, "testbed", r.seed, "tuned")
    assert run_id(jittery.override({"tcp.rwnd": "64KB"}), "testbed", r.seed, "tuned") != run_id(r.scenario, "testbed", r.seed, "tuned")
    # So are the hosts' measured holds.
    held = r.scenario.override({"host_data_holds": ["6us", "56us"], "host_ack_holds": ["6us", "112us"]})
    assert run_id(held, "sim", r.seed) != r.run_id
    assert run_id(held, "testbed", r.seed, "tuned") == run_id(r.scenario, "testbed", r.seed, "tuned")
    # And where their mean goes: the testbed takes its path's measured overhead out of its router.
    inside = held.override({"host_holds_in_rtt": True})
    assert run_id(inside, "sim", r.seed) != run_id(held, "sim", r.seed)
    assert run_id(inside, "testbed", r.seed, "tuned") == run_id(r.scenario, "testbed", r.seed, "tuned")
    # Unset, the key is not in the scenario a run's key is made of, so stored runs keep theirs.
    assert "host_holds_in_rtt" not in scenario_json(held) and scenario_json(inside)["host_holds_in_rtt"] is True
    # So are its TSO bursts: the kernel always sends them.
    bursty = r.scenario.override({"tcp.tso": True})
    assert run_id(bursty, "sim", r.seed) != r.run_id
    assert run_id(bursty, "testbed", r.seed, "tuned") == run_id(r.scenario, "testbed", r.seed, "tuned")
    # So are the access links' rate and queue: the testbed's are unshaped veths. Their delay is
    # applied (folded into the router's), and so is another run.
    for setting, value in (("topology.access_rate", "15Gbps"), ("topology.access_buffer", "100pkt")):
        fast = r.scenario.override({setting: value})
        assert run_id(fast, "sim", r.seed) != r.run_id, setting
        assert run_id(fast, "testbed", r.seed, "tuned") == run_id(r.scenario, "testbed", r.seed, "tuned"), setting
    far = r.scenario.override({"topology.access_delay": "1ms"})
    assert run_id(far, "testbed", r.seed, "tuned") != run_id(r.scenario, "testbed", r.seed, "tuned")
    # And so, on the testbed only, is asking for what its kernel does unasked: PRR, RACK-TLP, SACK
    # compression, receive-buffer autotuning written out as true, in [tcp] or in a flow; false is
    # another run.
    # (RACK needs SACK recovery: flow 2 of this run is `sack`.)
    sack = next(x for x in runs if x.scenario.flows[1].variant == "sack")
    testbed = run_id(sack.scenario, "testbed", sack.seed, "tuned")
    for setting in ("tcp.prr", "tcp.sack_compression", "tcp.rcvbuf_autotuning", "flows[0].prr", "flows[1].rack", "flows[1].sack_compression"):
        asked = sack.scenario.override({setting: True})
        assert run_id(asked, "sim", sack.seed) != sack.run_id, setting
        assert run_id(asked, "testbed", sack.seed, "tuned") == testbed, setting
        assert run_id(asked, "testbed", sack.seed, "tuned", kernel_defaults_unset=False) != testbed, setting
    for setting in ("tcp.sack_compression", "tcp.rcvbuf_autotuning", "flows[1].rack"):
        assert run_id(sack.scenario.override({setting: False}), "testbed", sack.seed, "tuned") != testbed, setting
    # TCP's own pacing (no fq qdisc) is how the testbed's kernel paces: fq_pacing written out as
    # false is another simulation but the same testbed run.
    for setting in ("tcp.fq_pacing", "flows[1].fq_pacing"):
        internal = sack.scenario.override({setting: False})
        assert run_id(internal, "sim", sack.seed) != sack.run_id, setting
        assert run_id(internal, "testbed", sack.seed, "tuned") == testbed, setting
    # iperf3's preamble is what every testbed flow sends first; another one is another run.
    for setting in ("tcp.preamble", "flows[0].preamble"):
        iperf3 = sack.scenario.override({setting: "iperf3"})
        assert run_id(iperf3, "sim", sack.seed) != sack.run_id, setting
        assert run_id(iperf3, "testbed", sack.seed, "tuned") == testbed, setting
        assert run_id(sack.scenario.override({setting: "none"}), "testbed", sack.seed, "tuned") != testbed, setting
    # The same parameters written another way (a list instead of a range) give the same keys.
    data = small()
    data["sweep"] = {"topology.rtt": ["20ms", "40ms", "60ms"]}
    assert [x.run_id for x in parse_experiment(data).runs()] == [x.run_id for x in runs]
    assert parse_experiment(data).definition_hash != load_experiment(DATA / "small.toml").definition_hash


@pytest.mark.parametrize(
    ("axis", "values", "scenario"),
    [("topology.access_rate", ["1Gbps", "10Gbps"], {}), ("host_jitter", ["0us", "60us"], {}), ("host_stall", ["1ms", "2ms"], {"host_stall_probability": 0.01})],
)
def test_a_sweep_the_testbed_cannot_tell_apart_is_refused_there(axis: str, values: list[str], scenario: dict) -> None:
    data = small()
    data["scenario"] |= scenario
    data["sweep"] = {axis: values}
    experiment = parse_experiment(data)
    assert len(experiment.runs("sim")) == 8  # 2 pairs x 2 values x 2 replications: all different
    with pytest.raises(ScenarioError) as err:
        experiment.runs("testbed")
    message = str(err.value)
    first = "flow1=newreno, flow2=newreno"
    assert message.startswith(f"sweep = '{first}, {axis}={values[1]}, replication=1': expected points that differ: it resolves to the same run as {first}, {axis}={values[0]}, replication=1"), message
    assert message.endswith("(on the testbed, which does not apply host_jitter, host_stall, host_stall_probability, host_data_holds, host_ack_holds, host_holds_in_rtt, tcp.tso, topology.access_rate, topology.access_buffer)"), message


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sweep": {"topology.rtx": ["20ms"]}}, "sweep = 'topology.rtx': expected a field of the scenario"),
        ({"sweep": {"tcp.cwnd_clamp": ["20ms"]}}, "sweep = 'tcp.cwnd_clamp': expected a field of the scenario"),
        ({"sweep": {"topology.rtt": []}}, "sweep.topology.rtt = []: expected at least one value"),
        ({"replications": 0}, "replications = 0: expected an integer >= 1"),
        ({"sweep": {"topology.rtt": ["20ms", "fast"]}}, "sweep.topology.rtt = 'fast': expected a time with a unit"),
        ({"sweep": {"topology.rtt": {"from": "20ms", "to": "0.1s", "step": "20ms"}}}, "sweep.topology.rtt.to = '0.1s': expected the unit of 'from' (ms)"),
        ({"sweep": {"topology.rtt": {"from": "20ms", "to": "10ms", "step": "5ms"}}}, "sweep.topology.rtt.to = '10ms': expected 'to' >= 'from'"),
        ({"sweep": {"topology.rtt": {"from": "20ms", "to": "40ms"}}}, "sweep.topology.rtt.step: missing"),
        ({"sweep": {"topology.rtt": ["20ms", "20ms"]}}, "sweep.topology.rtt = '20ms': expected each value once"),
        ({"sweep": {"seed": [1, 2]}}, "sweep = 'seed': expected a scenario field other than seed"),
        ({"pairs": {"flow1": "newreno", "flow2": ["cubik"]}}, "pairs.flow2 = 'cubik': expected a TCP variant"),
        ({"metrics": ["jfi", "fairness"]}, "metrics[1] = 'fairness': expected one of jfi, mean_jt"),
        ({"runs": 5}, "runs = 5: unknown key; allowed keys: name, description, seed, replications"),
        ({"window": "300s:120s"}, "window = '300s:120s': expected a window"),
        ({"rtt_spread": "0us"}, "rtt_spread = '0us': expected a time above 0 like '120us'"),
        ({"rtt_spread": 120}, "rtt_spread = 120: expected a time above 0 like '120us'"),
        ({"rtt_spread": "-5us"}, "rtt_spread = '-5us': expected a time above 0 like '120us'"),
        ({"cells": [{"where": {"topology.rtt": "45ms"}, "set": {"tcp.rwnd": "64KB"}}]}, "cells[0].where.topology.rtt = '45ms': expected one of the axis's values: 20ms, 40ms, 60ms"),
        ({"cells": [{"where": {"topology.buffer": "1bdp"}, "set": {"tcp.rwnd": "64KB"}}]}, "cells[0].where = 'topology.buffer': expected an axis of the grid: flow1, flow2, topology.rtt"),
        ({"cells": [{"where": {"topology.rtt": "40ms"}, "set": {"tcp.rwnd": "lots"}}]}, "cells[0].set.tcp.rwnd = 'lots': expected a size with a unit"),
        ({"cells": [{"where": {"flow2": "sack"}, "set": {"topology.rtt": "41ms"}}]}, "cells[0].set = 'topology.rtt': expected a field no axis sets"),
        ({"cells": [{"where": {"topology.rtt": "40ms"}}]}, "cells[0].set: missing; expected a table of scenario fields and values"),
        ({"cells": [{"where": {"topology.rtt": "40ms"}, "set": {"tcp": {"rwnd": "64KB"}}}]}, "cells[0].set.tcp = {'rwnd': '64KB'}: expected a value, not a table: quote a dotted path, e.g. set = { \"tcp.rwnd\" = … }"),
        ({"cells": [{"where": {"topology.rtt": "40ms"}, "set": {"tcp.rwnd": "64KB"}, "when": 1}]}, "cells[0].when = 1: unknown key; allowed keys: where, set"),
    ],
)
def test_bad_experiments_name_field_value_and_allowed(tmp_path: Path, capsys, change: dict, message: str) -> None:
    data = small()
    data.update(change)
    with pytest.raises(ScenarioError) as err:
        parse_experiment(data)
    assert str(err.value).startswith(message), str(err.value)
    # The command says it in one line and exits 2, writing nothing.
    path = tmp_path / "bad.toml"
    path.write_text(_toml(data))
    store = tmp_path / "bad.duckdb"
    assert main(["run", str(path), "--store", str(store), "-q"]) == 2
    err_text = capsys.readouterr().err
    assert err_text.count("\n") == 1 and err_text.startswith("tcplab: error: ") and message in err_text
    assert not store.exists()


def test_cells_set_scenario_fields_at_their_points_only() -> None:
    """``[[cells]]`` sets scenario fields at the points whose axes take every value in ``where``
    (as validation-phased-holds sets the hosts' holds measured at each round trip): those runs
    change and no other; the definition hash sees the cells; the testbed, which applies no holds,
    runs the same runs with or without them."""
    data = small()
    plain = parse_experiment(data)
    holds = ["10us", "20us", "30us"]
    data["cells"] = [{"where": {"topology.rtt": "40ms", "flow2": "sack"}, "set": {"host_data_holds": holds, "host_ack_holds": holds}}]
    cells = parse_experiment(data)
    assert cells.definition_hash != plain.definition_hash
    hits = 0
    for run, was in zip(cells.runs(), plain.runs(), strict=True):
        assert (run.point, run.seed) == (was.point, was.seed)
        hit = run.point["topology.rtt"] == "40ms" and run.point["flow2"] == "sack"
        assert [str(h) for h in run.scenario.host_data_holds or []] == (holds if hit else []), run.point
        assert run.scenario.model_copy(update={"host_data_holds": None, "host_ack_holds": None}) == was.scenario
        assert (run.run_id != was.run_id) == hit
        hits += hit
    assert hits == 2  # one point, two replications
    assert [r.run_id for r in cells.runs("testbed")] == [r.run_id for r in plain.runs("testbed")]


def test_a_window_the_run_cannot_hold_names_the_point() -> None:
    data = small()
    data["sweep"] = {"duration": ["20s", "5s"]}  # the window 8s:20s does not fit a 5 s run
    with pytest.raises(ScenarioError, match=r"^scenario.window = '8s:20s': expected a window that starts before the run ends \(duration = 5s\) \(with sweep.duration = '5s'\)$"):
        parse_experiment(data)


def test_pairs_need_two_flows() -> None:
    data = small()
    data["scenario"]["flows"] = data["scenario"]["flows"][:1]
    with pytest.raises(ScenarioError, match=r"^scenario.flows = .*expected at least two flows"):
        parse_experiment(data)


def test_base_scenario_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text((ROOT / "scenarios" / "quick.toml").read_text())
    data = small()
    data["scenario"] = "base.toml"
    path = tmp_path / "e.toml"
    path.write_text(_toml(data))
    exp = load_experiment(path)
    assert exp.runs()[0].scenario.topology.bottleneck.bps == 100 * 10**6
    assert exp.definition["scenario"]["topology"]["bottleneck"] == "100Mbps"  # inlined: the hash sees it


def _toml(data: dict) -> str:
    """A small TOML writer for the tables these tests build."""
    lines: list[str] = []

    def value(v: object) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f'"{k}" = {value(x)}' for k, x in v.items()) + "}"
        return repr(v)

    for key, v in data.items():
        lines.append(f'"{key}" = {value(v)}')
    return "\n".join(lines) + "\n"


# The fidelity grid's cells run again on the testbed: experiment -> (replications, runs).
MORE_RUNS = {
    "validation-c50": (6, 6),  # one cell next to CUBIC
    "validation-long": (5, 30),  # six cells next to CUBIC
    "validation-bbr": (5, 10),  # two cells next to BBR
    "validation-400": (12, 12),  # one cell next to CUBIC
    "validation-c25": (8, 8),  # one cell next to CUBIC
    "validation-mid": (4, 16),  # four cells next to CUBIC
    "validation-far": (3, 12),  # four cells next to CUBIC
    "validation-check": (2, 16),  # eight cells, run after the simulator's stalls were fitted
    "validation-b02": (4, 8),  # two cells next to BBR
    "validation-timed": (2, 24),  # the 200 and 400 ms cells, series placed at the data
    "validation-timed-near": (3, 54),  # the 25, 50 and 100 ms cells, series placed at the data
    "validation-spread": (3, 18),  # six cells next to CUBIC, on validation-timed-near's machine
    "validation-phased-cubic": (4, 24),  # six cells next to CUBIC, at four more round-trip offsets
    "validation-phased-cubic25": (6, 18),  # the three 25 ms cells next to CUBIC, at six more offsets
    "validation-phased-400": (2, 8),  # the four 400 ms cells at 0.6 and 1.0 BDP, at two more offsets
    "validation-phased-c25-06": (8, 8),  # Reno next to CUBIC at 25 ms / 0.6 BDP, at eight more offsets
    "validation-phased-c400": (10, 10),  # Reno next to CUBIC at 400 ms / 1.0 BDP, at ten more offsets
}


@pytest.mark.parametrize("path", sorted(EXPERIMENTS.glob("*.toml")), ids=lambda p: p.stem)
def test_bundled_experiments_are_valid(path: Path) -> None:
    """Every bundled file is valid once its variants exist (here: each unknown one run as 'sack')."""
    from tcplab import variants

    data = tomllib.loads(path.read_text())
    known = set(variants.names())

    def sub(v: str) -> str:
        return v if v in known else "sack"

    for flow in data["scenario"]["flows"]:
        if "variant" in flow:  # not a CBR flow (paper002)
            flow["variant"] = sub(flow["variant"])
    for key in ("flow1", "flow2") if "pairs" in data else ():
        value = data["pairs"][key]
        data["pairs"][key] = sub(value) if isinstance(value, str) else list(dict.fromkeys(sub(v) for v in value))
    exp = parse_experiment(data, name=path.stem)
    assert exp.name == path.stem
    runs = exp.runs()
    assert runs and len({r.run_id for r in runs}) == len(runs)
    if path.stem.endswith("-quick"):  # minutes, not hours
        assert exp.replications <= 2 and runs[0].scenario.duration.seconds <= 120
    elif path.stem in ("validation", "validation-phased", "validation-phased-holds"):  # the fidelity grid: 3 replications of 120 s (docs/validation.md)
        assert exp.replications == 3 and runs[0].scenario.duration.seconds == 120
    elif path.stem == "validation-single":  # its flow 1 alone: one deterministic 30-s run per cell
        assert exp.replications == 1 and runs[0].scenario.duration.seconds == 30 and len(runs[0].scenario.flows) == 1
    elif path.stem == "validation-variants":  # each BPF-supplied variant against Reno: one 60-s run a cell, both backends
        assert exp.replications == 1 and len(runs) == 22 and runs[0].scenario.duration.seconds == 60
    elif path.stem in MORE_RUNS:  # a few cells of the grid run more often (docs/validation.md)
        replications, n_runs = MORE_RUNS[path.stem]
        assert exp.replications == replications and len(runs) == n_runs and runs[0].scenario.duration.seconds == 120
    else:
        assert exp.replications == 5  # every paper ran each point five times


def test_rtt_spread_sets_the_replications_evenly_over_the_span_in_both_backends() -> None:
    """With ``rtt_spread`` replication r of R runs with its round trip longer by (r − ½)·spread/R:
    the same offsets in the simulator and on the testbed, each way half on the bottleneck, the
    buffer still the rtt's BDP; without it nothing changes."""
    data = small()
    data["replications"] = 4
    plain = parse_experiment(data)
    spread = parse_experiment({**data, "rtt_spread": "120us"})
    assert [spread.rtt_offset_ns(r) for r in range(1, 5)] == [15_000, 45_000, 75_000, 105_000]
    assert all(r.scenario.topology.rtt_offset is None for r in plain.runs())
    for backend in ("sim", "testbed"):
        runs = spread.runs(backend)
        for run, unspread in zip(runs, plain.runs(backend), strict=True):
            assert (run.point, run.seed) == (unspread.point, unspread.seed)
            offset = run.scenario.topology.rtt_offset.ns
            assert offset == spread.rtt_offset_ns(run.replication)
            assert run.scenario.topology.loop_rtt.ns == unspread.scenario.topology.rtt.ns + offset
            spec, was = run.scenario.to_engine_spec()["topology"], unspread.scenario.to_engine_spec()["topology"]
            assert spec["bottleneck_delay_ns"] == was["bottleneck_delay_ns"] + offset // 2
            assert spec["queue"] == was["queue"]
            assert run.run_id != unspread.run_id  # another round trip, another run
            assert scenario_json(run.scenario)["topology"]["rtt_offset"] == f"{offset // 1000}us"
        assert "rtt_offset" not in scenario_json(plain.runs(backend)[0].scenario)["topology"]
    # An offset set in the scenario is where the spread starts from.
    data["scenario"]["topology"]["rtt_offset"] = "1ms"
    assert parse_experiment({**data, "rtt_spread": "120us"}).runs()[0].scenario.topology.rtt_offset.ns == 1_015_000


def test_rtt_spread_needs_a_dumbbell() -> None:
    data = small()
    data["scenario"]["topology"] = {"kind": "graph", "nodes": ["a", "b"], "links": [{"from": "a", "to": "b", "rate": "10Mbps"}, {"from": "b", "to": "a", "rate": "10Mbps"}]}
    for flow in data["scenario"]["flows"]:
        flow.update({"src": "a", "dst": "b"})
    data.pop("sweep", None)
    with pytest.raises(ScenarioError, match=r"^rtt_spread = '120us': expected a dumbbell topology"):
        parse_experiment({**data, "rtt_spread": "120us"})
