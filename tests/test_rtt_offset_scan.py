"""scripts/rtt_offset_scan.py: one flow's round trip made longer than the other's, on a cell of an
experiment."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest

from tcplab.experiment import load_experiment

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("rtt_offset_scan", ROOT / "scripts" / "rtt_offset_scan.py")
assert _spec is not None and _spec.loader is not None
scan_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scan_script)

EXPERIMENT = """
name = "offset"
seed = 3
replications = 1
window = "4s:8s"

[scenario]
duration = "8s"

[scenario.topology]
kind = "dumbbell"
bottleneck = "10Mbps"
rtt = "20ms"
buffer = "1bdp"

[[scenario.flows]]
variant = "sack"

[[scenario.flows]]
variant = "sack"

[sweep]
"topology.buffer" = ["0.5bdp", "1bdp"]
"""


@pytest.fixture()
def experiment(tmp_path: Path) -> Path:
    path = tmp_path / "offset.toml"
    path.write_text(EXPERIMENT)
    return path


def _rtt_ns(spec: dict, flow: int) -> int:
    pair = spec["flows"][flow]["src"]
    return 2 * spec["topology"]["bottleneck_delay_ns"] + 4 * spec["topology"]["access_delay_ns"][pair]


@pytest.mark.parametrize("offset_us", [40, -40, 4000, -120])
def test_the_offset_is_flow_1s_rtt_minus_flow_2s(experiment: Path, offset_us: int) -> None:
    spec = load_experiment(experiment).runs("sim")[0].scenario.to_engine_spec()
    before = (_rtt_ns(spec, 0), _rtt_ns(spec, 1))
    shifted = scan_script.offset_spec(spec, offset_us)
    assert _rtt_ns(shifted, 0) - _rtt_ns(shifted, 1) == offset_us * 1000
    assert min(_rtt_ns(shifted, 0), _rtt_ns(shifted, 1)) == min(before)  # one flow's path grows
    assert (_rtt_ns(spec, 0), _rtt_ns(spec, 1)) == before  # the input is left as it was


def test_the_longer_round_trip_gets_less(experiment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 20 ms more round trip (twice the base RTT) for one flow: Reno's share falls with its RTT.
    assert scan_script.main([str(experiment), "--cell", "topology.buffer=1bdp", "--offsets=-20000:20000:20000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "topology.buffer': '1bdp'" in out[0]
    rows = {int(line.split()[0]): [float(line.split()[i]) for i in (4, 9)] for line in out[1:]}
    assert sorted(rows) == [-20000, 0, 20000]
    (f1_short, f2_long), (f1_long, f2_short) = rows[-20000], rows[20000]
    assert f1_short > f2_long and f2_short > f1_long


def test_a_cell_must_be_chosen_and_exist(experiment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert scan_script.main([str(experiment), "--offsets=0:0:1"]) == 2
    assert "they select 2" in capsys.readouterr().err
    assert scan_script.main([str(experiment), "--cell", "topology.rtt=20ms", "--offsets=0:0:1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--cell = 'topology.rtt=20ms'" in err and "topology.buffer" in err


def test_each_run_is_printed_sorted_when_asked(experiment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(experiment), "--cell", "topology.buffer=1bdp", "--offsets=0:0:1", "--replications", "3"]
    assert scan_script.main(args) == 0
    plain = capsys.readouterr().out.splitlines()
    assert scan_script.main([*args, "--each"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == plain[:2] and len(out) == 3
    each = [float(x) for x in out[2].split(":")[1].split()]
    assert len(each) == 3 and each == sorted(each)
    mean = float(out[1].split()[4])
    assert abs(sum(each) / 3 - mean) < 0.01


@pytest.mark.parametrize("offset_us", [0, 1, 250_000])
def test_a_start_offset_delays_flow_2_alone_and_drops_the_jitter(experiment: Path, offset_us: int) -> None:
    spec = load_experiment(experiment).runs("sim")[0].scenario.to_engine_spec()
    before = copy.deepcopy(spec)
    assert spec["start_jitter_ns"] > 0
    shifted = scan_script.start_spec(spec, offset_us)
    assert shifted["start_jitter_ns"] == 0
    assert shifted["flows"][1]["start_ns"] == spec["flows"][1]["start_ns"] + offset_us * 1000
    assert shifted["flows"][0] == spec["flows"][0] and shifted["topology"] == spec["topology"]
    assert spec == before  # the input is left as it was


def test_a_start_scan_prints_each_offset_and_their_mean(experiment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Flow 2 delayed past the run's end (8 s) leaves flow 1 the whole 10 Mb/s link.
    args = [str(experiment), "--cell", "topology.buffer=1bdp", "--shift", "start", "--offsets=0:9000000:4500000"]
    assert scan_script.main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert "flow 2's start delayed by" in out[0]
    rows = {int(line.split()[0]): (float(line.split()[4]), float(line.split()[9])) for line in out[1:4]}
    assert sorted(rows) == [0, 4_500_000, 9_000_000]
    assert rows[9_000_000][1] == 0 and rows[9_000_000][0] > 9.0
    assert rows[0][1] > 2.0  # started with flow 1, flow 2 has its share
    summary = out[4].split()
    assert summary[:3] == ["all", "3", "offsets"]
    assert abs(float(summary[5]) - sum(f1 for f1, _ in rows.values()) / 3) < 0.01


def test_a_start_scan_refuses_a_negative_offset(experiment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        scan_script.main([str(experiment), "--cell", "topology.buffer=1bdp", "--shift", "start", "--offsets=-1000:0:1000"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--offsets: -1000" in err and "must be 0 or more" in err and "Traceback" not in err
