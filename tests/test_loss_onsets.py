"""scripts/loss_onsets.py: each flow's loss episodes per run, read from a results store. Every
segment a flow retransmitted in a run is in exactly one of its episodes, an episode starts at
the first second with retransmissions after a quiet gap, and bad input is one line, exit 2."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pandas as pd
import pytest

from tcplab.store import Store

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("loss_onsets", ROOT / "scripts" / "loss_onsets.py")
assert _spec is not None and _spec.loader is not None
loss_onsets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(loss_onsets)


def test_episodes_start_after_a_quiet_gap_and_sum_their_seconds() -> None:
    # Retransmissions per second, indexed by each interval's start.
    r = pd.Series([0, 5, 2, 0, 0, 0, 1, 0, 3, 0, 0, 0, 0, 7], index=range(14), dtype=float)
    assert loss_onsets.onsets(r, 2.0) == [(1, 7), (6, 4), (13, 7)]
    assert loss_onsets.onsets(r, 1.0) == [(1, 7), (6, 1), (8, 3), (13, 7)]
    assert loss_onsets.onsets(pd.Series([0.0, 0.0], index=[0, 1]), 2.0) == []
    # half-second intervals: the gap is in seconds, not intervals
    half = pd.Series([1, 0, 0, 0, 1, 0, 0, 0, 0, 1], index=[i / 2 for i in range(10)], dtype=float)
    assert loss_onsets.onsets(half, 2.0) == [(0.0, 2), (4.5, 1)]
    assert loss_onsets.onsets(half, 1.6) == [(0.0, 1), (2.0, 1), (4.5, 1)]


def test_every_retransmission_of_every_run_is_in_one_episode(tiny_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert loss_onsets.main([str(tiny_store), "--cell", "topology.rtt=20ms"]) == 0
    out = capsys.readouterr().out.splitlines()
    with Store(tiny_store) as store:
        want = store.sql(
            "SELECT r.replication, r.point->>'topology.buffer' AS buffer, i.flow, sum(i.retrans_pkts) AS n "
            "FROM runs r JOIN intervals i USING (run_id) WHERE r.point->>'topology.rtt' = '20ms' GROUP BY ALL"
        )
    # two buffers x two replications, two flows each
    assert len(out) == 8 and len(want) == 8
    got = sorted(sum(int(n) for n in re.findall(r"\((\d+)\)", line)) for line in out)
    assert got == sorted(int(round(n)) for n in want["n"]) and sum(got) > 0
    assert all(re.search(r"flow[12] +\d+\.\d Mb/s", line) for line in out)


def test_bad_input_is_one_line_exit_2(tiny_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert loss_onsets.main([str(tiny_store), "--cell", "topology.bottleneck=10Mbps"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "topology.bottleneck=10Mbps" in err and "topology.rtt, topology.buffer" in err
    assert loss_onsets.main([str(tiny_store), "--cell", "topology.rtt=7ms"]) == 2
    assert "no run of {'topology.rtt': '7ms'}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        loss_onsets.main([str(tiny_store), "--cell", "rtt"])
    assert e.value.code == 2 and "expected AXIS=VALUE" in capsys.readouterr().err
