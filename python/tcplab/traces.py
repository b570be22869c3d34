"""Link traces as rate schedules: a Mahimahi packet-delivery trace (``mm-link``'s format) turned
into the ``[time, rate]`` steps a scenario's ``bottleneck_schedule`` or a graph link's
``rate_schedule`` takes (docs/scenario.md, "Rate schedules").

A Mahimahi trace has one line per delivery opportunity: the millisecond at which the link may
deliver 1500 bytes; several lines may name the same millisecond, and the trace repeats with the
period of its last timestamp. Here the opportunities are counted in bins of ``bin`` and each bin
becomes a step at the rate that carries its opportunities' bytes over the bin (a bin without one
is a rate of 0: the link is down); equal neighbours merge into one step. The link then
serialises packets at that rate within each bin, instead of releasing them at the trace's
milliseconds: bins of a few milliseconds keep the trace's detail, longer ones smooth it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import ScenarioError
from .units import Rate, Time

#: Bytes a Mahimahi delivery opportunity carries (mm-link(1)).
MAHIMAHI_OPPORTUNITY_BYTES = 1500


def read_mahimahi(path: Path) -> np.ndarray:
    """The trace's delivery opportunities (milliseconds, in order), checked: whole non-negative
    numbers that never decrease, a last one above 0 (the trace's period)."""
    try:
        lines = Path(path).read_text().split("\n")
    except OSError as e:
        raise ScenarioError("trace", str(path), f"expected a readable Mahimahi trace file ({e.strerror})") from None
    times: list[int] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        if not text.isdigit():
            raise ScenarioError(f"trace line {number}", text, "expected a whole number of milliseconds (one delivery opportunity per line)")
        if times and int(text) < times[-1]:
            raise ScenarioError(f"trace line {number}", text, f"expected no earlier than the line before ({times[-1]} ms)")
        times.append(int(text))
    if not times or times[-1] == 0:
        raise ScenarioError("trace", str(path), "expected delivery opportunities ending after 0 ms (the last one is the trace's period)")
    return np.asarray(times, dtype=np.int64)


@dataclass(frozen=True)
class TraceSchedule:
    """A trace as a rate schedule: ``points`` are ``(time_ns, rate_bps)`` from 0, each a change."""

    points: list[tuple[int, int]]
    bin_ns: int
    duration_ns: int
    period_ms: int
    #: bytes the trace offers over the duration
    offered_bytes: int
    #: bins without a delivery opportunity
    down_bins: int

    @property
    def bins(self) -> int:
        return self.duration_ns // self.bin_ns

    @property
    def mean_bps(self) -> float:
        return self.offered_bytes * 8 * 1e9 / self.duration_ns

    def toml(self, key: str = "bottleneck_schedule") -> str:
        """``key = [[time, rate], …]``, one step a line."""
        rows = ",\n".join(f'  ["{Time(t)}", "{Rate(r) if r else "0Mbps"}"]' for t, r in self.points)
        return f"{key} = [\n{rows},\n]\n"


def mahimahi_schedule(times_ms: np.ndarray, bin_ns: int, duration_ns: int) -> TraceSchedule:
    """The rate schedule of a Mahimahi trace's opportunities ``times_ms`` (repeated with the
    period of the last) over ``duration_ns``, in bins of ``bin_ns``."""
    if bin_ns <= 0 or bin_ns % 1_000_000:
        raise ScenarioError("--bin", str(Time(bin_ns)), "expected a whole number of milliseconds above 0, like '10ms' (a trace's clock counts milliseconds)")
    if duration_ns <= 0 or duration_ns % bin_ns:
        raise ScenarioError("--duration", str(Time(duration_ns)), f"expected a whole number of bins ({Time(bin_ns)}) above 0, like '60s'")
    period_ms = int(times_ms[-1])
    repeats = -(-duration_ns // (period_ms * 1_000_000)) + 1
    at_ns = (times_ms[None, :] + period_ms * np.arange(repeats, dtype=np.int64)[:, None]).ravel() * 1_000_000
    at_ns = at_ns[at_ns < duration_ns]
    bins = duration_ns // bin_ns
    counts = np.bincount(at_ns // bin_ns, minlength=bins)
    rates = np.rint(counts * (MAHIMAHI_OPPORTUNITY_BYTES * 8 * 1e9) / bin_ns).astype(np.int64)
    points: list[tuple[int, int]] = []
    for i, rate in enumerate(rates.tolist()):
        if not points or points[-1][1] != rate:
            points.append((i * bin_ns, rate))
    return TraceSchedule(points, bin_ns, duration_ns, period_ms, int(counts.sum()) * MAHIMAHI_OPPORTUNITY_BYTES, int((counts == 0).sum()))
