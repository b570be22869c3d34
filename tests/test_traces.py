"""Mahimahi link traces as rate schedules (``tcplab schedule``): the bins' rates, the trace's
repetition, a link that follows the printed schedule carrying the trace's bytes, and bad input
refused with exit status 2."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import tcplab
from tcplab.errors import ScenarioError
from tcplab.traces import mahimahi_schedule, read_mahimahi

MS = 1_000_000


def _trace(path: Path, times_ms: list[int]) -> Path:
    path.write_text("".join(f"{t}\n" for t in times_ms))
    return path


def test_each_bin_carries_its_opportunities_and_the_trace_repeats(tmp_path: Path) -> None:
    # Ten opportunities at 5 ms and one at 100 ms (the period): in 50-ms bins over 200 ms the
    # first bin holds 10 (10 × 1500 B in 50 ms: 2.4 Mb/s), the third the one at 100 ms and the
    # repeated ten at 105 ms (2.64 Mb/s), the others none (rate 0: down).
    times = read_mahimahi(_trace(tmp_path / "t", [5] * 10 + [100]))
    s = mahimahi_schedule(times, 50 * MS, 200 * MS)
    assert s.points == [(0, 2_400_000), (50 * MS, 0), (100 * MS, 2_640_000), (150 * MS, 0)]
    assert (s.period_ms, s.offered_bytes, s.down_bins, s.bins) == (100, 21 * 1500, 2, 4)
    # Equal neighbours merge: one opportunity every millisecond from 1 ms is 12 Mb/s once the
    # first bin (no opportunity at 0 ms: 9 of 10) is past.
    steady = mahimahi_schedule(read_mahimahi(_trace(tmp_path / "u", list(range(1, 101)))), 10 * MS, 1000 * MS)
    assert steady.points == [(0, 10_800_000), (10 * MS, 12_000_000)]


def test_a_link_following_the_printed_schedule_carries_the_traces_bytes(tmp_path: Path) -> None:
    # A trace of 0 to 3 opportunities a millisecond (0 to 36 Mb/s), with a 300-ms gap, period 2 s;
    # 40 Mb/s of CBR keeps the link's queue full (and overflowing), so each second the link
    # delivers what the trace offered in the second before the packets' one-way trip.
    rng = np.random.default_rng(7)
    per_ms = rng.integers(0, 4, 2000)
    per_ms[700:1000] = 0
    times = [t for t in range(1, 2001) for _ in range(per_ms[t - 1])] + [2000]
    trace = _trace(tmp_path / "cell.down", times)
    out = subprocess.run([sys.executable, "-m", "tcplab", "schedule", str(trace), "--bin", "10ms", "--duration", "4s"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"# 4s of {trace} (Mahimahi, period 2000 ms) in 10ms bins")
    schedule = tomllib.loads(out.stdout)["bottleneck_schedule"]
    scenario = tcplab.Scenario.model_validate(
        {
            "name": "trace",
            "duration": "4s",
            "topology": {"bottleneck": "20Mbps", "rtt": "20ms", "buffer": "2000pkt", "bottleneck_schedule": schedule},
            "flows": [{"kind": "cbr", "rate": "40Mbps", "packet_size": "1500B"}],
        }
    )
    r = tcplab.simulate(scenario)
    delivered = r.intervals.set_index("t_s")["goodput_bytes"]
    offered = mahimahi_schedule(read_mahimahi(trace), 1000 * MS, 4000 * MS)
    # The trace's bytes per second, from its 1-s bins' rates.
    per_second = {t // (1000 * MS) + 1: rate / 8 for t, rate in offered.points}
    for second in (2, 3, 4):
        expected = per_second.get(second, per_second[max(k for k in per_second if k < second)])
        # Delivered in (second - 1, second], shifted by the 10-ms trip: within 2 % of that second's offer.
        assert delivered.loc[second] == pytest.approx(expected, rel=0.02), (second, delivered.loc[second], expected)


@pytest.mark.parametrize(
    ("lines", "args", "field", "message"),
    [
        ("1\nx\n", [], "trace line 2", "expected a whole number of milliseconds"),
        ("5\n3\n", [], "trace line 2", "no earlier than the line before"),
        ("0\n", [], "trace", "ending after 0 ms"),
        ("1\n2\n", ["--bin", "2.5ms"], "--bin", "whole number of milliseconds"),
        ("1\n2\n", ["--bin", "10ms", "--duration", "15ms"], "--duration", "whole number of bins"),
        ("1\n2\n", ["--duration", "soon"], "--duration", "expected a time"),
    ],
)
def test_bad_traces_and_arguments_are_refused_with_status_2(tmp_path: Path, lines: str, args: list[str], field: str, message: str) -> None:
    trace = tmp_path / "bad"
    trace.write_text(lines)
    out = subprocess.run([sys.executable, "-m", "tcplab", "schedule", str(trace), *args], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stdout == "", out.stderr
    assert f"tcplab: error: {field} = " in out.stderr and message in out.stderr, out.stderr


def test_a_missing_trace_names_the_file() -> None:
    with pytest.raises(ScenarioError) as e:
        read_mahimahi(Path("/nonexistent/trace.down"))
    assert e.value.field == "trace" and "readable Mahimahi trace" in str(e.value)
