"""The tcplab command: runs, outputs, and one clear line (exit 2, nothing written) for bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tcplab.cli import main

ROOT = Path(__file__).resolve().parents[1]
QUICK = str(ROOT / "scenarios" / "quick.toml")

# A short common-case run: two NewReno flows on a 10 Mb/s, 40 ms dumbbell for 8 s.
SHORT = ["sim", "--duration", "8s", "--bottleneck", "10Mbps", "--rtt", "40ms", "--flow", "newreno", "--flow", "newreno@2s", "--window", "4s:8s"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.startswith("tcplab ") and "engine" in out


def test_sim_prints_the_table_and_jfi(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(SHORT, capsys)
    assert code == 0, err
    assert "flow1" in out and "flow2" in out and "newreno" in out
    assert "JFI" in out and "4–8 s" in out


def test_sim_writes_csv_and_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv, parquet = tmp_path / "run.csv", tmp_path / "run.parquet"
    code, _, err = run([*SHORT, "--csv", str(csv), "--parquet", str(parquet), "--quiet"], capsys)
    assert code == 0, err
    summary = pd.read_csv(csv)
    assert list(summary["flow"]) == ["flow1", "flow2"]
    assert {"variant", "throughput_mbps", "retrans_pkts", "dropped_pkts"} <= set(summary.columns)
    series = pd.read_csv(tmp_path / "run.intervals.csv")
    assert len(series) == 2 * 8 and {"name", "t_ns", "goodput_bytes"} <= set(series.columns)
    pd.testing.assert_frame_equal(pd.read_parquet(parquet), summary, check_dtype=False)
    assert len(pd.read_parquet(tmp_path / "run.intervals.parquet")) == 2 * 8
    # Nothing but the four outputs (no temporary files left behind).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "run.intervals.csv", "run.intervals.parquet", "run.parquet"]


def test_flags_override_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "q.csv"
    argv = ["sim", QUICK, "--duration", "6s", "--window", "2s:6s", "--bottleneck", "10Mbps", "--set", "flows[1].start=1s", "--set", "tcp.rwnd=64KB", "--csv", str(csv)]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert "quick" in out and "2–6 s" in out
    assert len(pd.read_csv(tmp_path / "q.intervals.csv")) == 2 * 6


def test_flow_flags_replace_the_files_flows(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["sim", QUICK, "--duration", "4s", "--window", "1s:4s", "--bottleneck", "10Mbps", "--flow", "tahoe", "--flow", "reno@1s:3s", "--flow", "sack"], capsys)
    assert code == 0, err
    assert all(v in out for v in ("tahoe", "reno", "sack", "flow3"))


def graph_file(path: Path, links: str, flow: str = 'src = "a"\ndst = "c"') -> str:
    path.write_text(
        f"""
duration = "5s"
[topology]
kind = "graph"
nodes = ["a", "b", "c"]
links = [{links}]
[[flows]]
variant = "reno"
{flow}
"""
    )
    return str(path)


UNCONNECTED = '{from = "a", to = "b", rate = "10Mbps", delay = "10ms"}, {from = "b", to = "a", rate = "10Mbps", delay = "10ms"}'
ZERO_RATE = '{from = "a", to = "b", rate = "0Mbps", delay = "10ms"}, {from = "b", to = "a", rate = "10Mbps"}'


def bad_cases(tmp_path: Path) -> list[tuple[list[str], str]]:
    unknown_key = tmp_path / "unknown.toml"
    unknown_key.write_text(Path(QUICK).read_text().replace('rtt = "100ms"', 'rtt = "100ms"\nrttt = "5ms"'))
    return [
        (["sim", str(unknown_key)], "topology.rttt = '5ms': unknown key; allowed keys: kind, bottleneck, rtt"),
        ([*SHORT, "--rtt", "-5ms"], "topology.rtt = '-5ms': expected a positive time like '25ms'"),
        ([*SHORT, "--rtt", "100"], "topology.rtt = '100': expected a time with a unit (ns, us, ms, s, min) like '25ms'"),
        (["sim", graph_file(tmp_path / "zero.toml", ZERO_RATE, 'src = "a"\ndst = "b"')], "topology.links[0].rate = '0Mbps': expected a positive rate"),
        (["sim", graph_file(tmp_path / "apart.toml", UNCONNECTED)], "flows[0].dst = 'c': expected"),
        ([*SHORT, "--flow", "nosuchcc"], "flows[2].variant = 'nosuchcc': expected a TCP variant: one of tahoe, reno, newreno, sack"),
        ([*SHORT, "--window", "400s:500s"], "window = '400s:500s': expected a window that starts before the run ends (duration = 8s)"),
        ([*SHORT, "--buffer", "lots"], "topology.buffer = 'lots': expected a buffer size"),
        ([*SHORT, "--flow", "newreno@"], "--flow = 'newreno@': expected VARIANT[@START[:STOP]]"),
        ([*SHORT, "--flow", "newreno@soon"], "flows[2].start = 'soon': expected a time with a unit"),
        (["sim", "--duration", "8s"], "--flow: missing; expected at least one --flow"),
        (["sim", str(tmp_path / "nothing.toml")], "scenario = "),
        ([*SHORT, "--set", "topology.loss"], "--set = 'topology.loss': expected PATH=VALUE"),
        ([*SHORT, "--set", "topology.loss=2"], "topology.loss = 2: expected a probability in [0, 1)"),
        ([*SHORT, "--host-stall", "1ms"], "host_stall = '1ms': expected host_stall_probability with it"),
    ]


N_BAD = 15


def test_every_bad_case_is_run(tmp_path: Path) -> None:
    assert len(bad_cases(tmp_path)) == N_BAD


@pytest.mark.parametrize("case", range(N_BAD))
def test_bad_input_is_one_line_exit_2_nothing_written(case: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, message = bad_cases(tmp_path)[case]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = run([*argv, "--csv", str(out_dir / "run.csv"), "--parquet", str(out_dir / "run.parquet")], capsys)
    assert code == 2
    assert err.startswith(f"tcplab: error: {message}")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert out == ""
    assert list(out_dir.iterdir()) == []


def test_output_into_a_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([*SHORT, "--csv", str(tmp_path / "no" / "run.csv")], capsys)
    assert code == 2 and err.startswith(f"tcplab: error: --csv = '{tmp_path / 'no' / 'run.csv'}': expected a file in an existing directory")
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("argv", [["sim", "--seed", "one", "--flow", "reno"], ["sim", "--flow", "reno", "--frobnicate"], [], ["simulate"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(argv, capsys)
    assert code == 2
    assert "tcplab: error:" in err and "Traceback" not in err


def test_the_installed_command(tmp_path: Path) -> None:
    # As a user runs it: a separate process, an error on stderr, exit status 2, no traceback.
    csv = tmp_path / "run.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "tcplab.cli", *SHORT, "--rtt", "-5ms", "--csv", str(csv)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert proc.returncode == 2
    assert proc.stderr == "tcplab: error: topology.rtt = '-5ms': expected a positive time like '25ms'\n"
    assert not csv.exists()
    ok = subprocess.run([sys.executable, "-m", "tcplab.cli", *SHORT], capture_output=True, text=True)
    assert ok.returncode == 0 and "JFI" in ok.stdout


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    # `tcplab variants | head -1`: the reader closes the pipe before tcplab writes.
    p = subprocess.Popen([sys.executable, "-m", "tcplab", "variants"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait() == 1 and err == "", err
