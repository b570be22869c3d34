"""The HTML report of a results store: one self-contained file per experiment, its parameters,
tables and figures. (tests/test_workflow.py opens a report of a real store in headless Chromium,
with tests/browser.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tcplab import analysis, report
from tcplab.analysis import Frames
from tcplab.cli import main
from conftest import run_store

from browser import assert_self_contained


@pytest.fixture(scope="module")
def sweep(tiny_store: Path) -> Frames:
    return analysis.load_frames(tiny_store)


def test_report_is_self_contained(sweep: Frames, tmp_path: Path) -> None:
    path = report.write_report(sweep, tmp_path / "tiny.html")
    text = path.read_text()
    assert_self_contained(text)
    assert "tcplab report: tiny" in text
    # the experiment's definition: the base scenario's fields, as written
    assert re.search(r"<th class='key'>topology.bottleneck</th><td class='key'>10Mbps</td>", text)
    assert re.search(r"<th class='key'>host_jitter</th><td class='key'>1ms</td>", text)
    assert "0.2bdp, 1bdp" in text and "20ms, 80ms" in text  # the axes and their values
    assert "mean queueing delay at the bottleneck" in text and "link utilisation" in text
    assert text.count("class='figure'") == 7


def test_report_tables_are_the_analysis_tables(sweep: Frames) -> None:
    text = report.render(sweep)
    cells = analysis.aggregate(analysis.per_run(sweep))
    for value in analysis.table(cells, "jfi").stack():
        assert f"<td>{value}</td>" in text


def test_report_command(tiny_store: Path, cbr_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "reports"
    out.mkdir()
    assert main(["report", str(cbr_store), "--out", str(out / "cbr.html")]) == 0
    assert capsys.readouterr().out == f"wrote {out / 'cbr.html'}\n"
    assert main(["report", str(tiny_store), "--out", str(out), "--figures", str(tmp_path / "figs")]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["cbr.html", "tiny.html"]
    assert "TCP against UDP CBR cross traffic" in (out / "cbr.html").read_text()
    assert (tmp_path / "figs" / "tiny-jfi-heatmap.png").exists() and (tmp_path / "figs" / "tiny-jfi-surface.svg").exists()
    assert (tmp_path / "figs" / "tiny-window.png").exists() and (tmp_path / "figs" / "tiny-window.svg").exists()
    capsys.readouterr()
    assert main(["report", str(tmp_path / "missing.duckdb")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["report", str(tiny_store), "--out", str(tmp_path / "nowhere" / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere does not exist" in err


def test_a_constant_cbr_rate_draws_no_curve_against_it(tmp_path: Path) -> None:
    # 004's unresponsive flow: one CBR rate in every run gives a single point, so the report
    # leaves out 002's figure against the CBR rate (and keeps the per-flow one).
    exp = tmp_path / "steady.toml"
    exp.write_text(
        'name = "steady"\nreplications = 1\nwindow = "2s:6s"\n[scenario]\nduration = "6s"\n'
        '[scenario.topology]\nbottleneck = "10Mbps"\nrtt = "20ms"\nbuffer = "50pkt"\n'
        '[[scenario.flows]]\nkind = "cbr"\nrate = "8Mbps"\n[[scenario.flows]]\nvariant = "reno"\n[[scenario.flows]]\nvariant = "reno"\n'
        '[sweep]\n"topology.queue" = ["droptail", "drr"]\n'
    )
    store = tmp_path / "steady.duckdb"
    assert main(["run", str(exp), "--store", str(store)]) == 0
    frames = analysis.load_frames(store)
    assert analysis.cbr_curve(frames)["cbr_mbps"].nunique() == 1
    page = report.render(frames)
    assert "004 Fig. 3" in page and "against the CBR rate" not in page


def test_the_window_figure_shows_each_flows_cwnd_and_rtt_and_dctcps_alpha(tiny_store: Path, tmp_path: Path) -> None:
    # The example run's window and smoothed RTT, as sampled at each interval's end, one panel
    # each; a third panel holds DCTCP's α, only for a run that has a DCTCP flow.
    from tcplab import plots

    tiny = analysis.load_frames(tiny_store)
    run_id = tiny.runs["run_id"].iloc[0]
    fig = plots.window_plotly(tiny, run_id)
    assert [fig.layout.yaxis.title.text, fig.layout.yaxis2.title.text] == ["cwnd (kB)", "smoothed RTT (ms)"] and "yaxis3" not in fig.layout
    iv = tiny.intervals[(tiny.intervals.run_id == run_id) & (tiny.intervals.flow == 0)].sort_values("t_s")
    first = fig.data[0]
    assert list(first.y) == pytest.approx((iv["cwnd_bytes"] / 1e3).tolist()) and first.yaxis == "y"
    exp = tmp_path / "dctcp.toml"
    exp.write_text(
        'name = "dctcp"\nreplications = 1\nwindow = "2s:6s"\n[scenario]\nduration = "6s"\n'
        '[scenario.topology]\nbottleneck = "20Mbps"\nrtt = "20ms"\nbuffer = "200pkt"\nqueue = "codel"\n[scenario.topology.codel]\nce_threshold = "1ms"\n'
        '[[scenario.flows]]\nvariant = "dctcp"\n[[scenario.flows]]\nvariant = "reno"\n[sweep]\n"topology.rtt" = ["20ms"]\n'
    )
    frames = analysis.load_frames(run_store(exp, tmp_path / "dctcp.duckdb"))
    fig = plots.window_plotly(frames, frames.runs["run_id"].iloc[0])
    assert fig.layout.yaxis3.title.text == "DCTCP α"
    alpha = [trace for trace in fig.data if trace.yaxis == "y3"]
    assert len(alpha) == 1 and alpha[0].name.startswith("flow1") and 0 <= min(alpha[0].y) <= max(alpha[0].y) <= 1
    assert "(with DCTCP&#x27;s α)" in report.render(frames)
    # Per run, the DCTCP flow's mean α over the window's intervals (2–6 s); none for Reno.
    runs = analysis.per_run(frames)
    iv = frames.intervals[(frames.intervals.flow == 0) & (frames.intervals.t_s > 2)]
    assert runs["flow1_dctcp_alpha"].iloc[0] == pytest.approx(iv["dctcp_alpha"].mean()) and "flow2_dctcp_alpha" not in runs
