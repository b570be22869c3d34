"""Figures: each written as PNG and SVG, titled with the experiment, axes with units, a legend;
plotly versions for the report carry the same."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd
import pytest

from tcplab import analysis, plots
from tcplab.analysis import Frames

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def sweep(tiny_store: Path) -> Frames:
    return analysis.load_frames(tiny_store)


@pytest.fixture(scope="module")
def cells(sweep: Frames) -> pd.DataFrame:
    return analysis.aggregate(analysis.per_run(sweep))


def _texts(fig) -> str:
    parts = [fig._suptitle.get_text() if fig._suptitle else ""]
    for ax in fig.axes:
        parts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        if hasattr(ax, "get_zlabel"):
            parts.append(ax.get_zlabel())
        legend = ax.get_legend()
        if legend is not None:
            parts += [t.get_text() for t in legend.get_texts()]
    return " | ".join(parts)


def _saved(fig, tmp_path: Path, name: str) -> str:
    text = _texts(fig)
    png, svg = plots.save(fig, tmp_path, name)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()[:2000]
    return text


def test_jfi_surface_and_heatmap(cells: pd.DataFrame, tmp_path: Path) -> None:
    text = _saved(plots.jfi_surface_figure(cells), tmp_path, "surface")
    assert "tiny:" in text and "RTT (ms)" in text and "router buffer (BDP)" in text and "JFI" in text
    fig = plots.jfi_heatmap_figure(cells)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert len(labels) == 4  # one per cell: mean ± std
    assert f"{cells['jfi_mean'].iloc[0]:.2f}" in labels[0]
    text = _saved(fig, tmp_path, "heatmap")
    assert "tiny:" in text and "RTT (ms)" in text


def test_difference_surface_marks_significant_cells(sweep: Frames, tiny_other_store: Path, tmp_path: Path) -> None:
    other = analysis.load_frames(tiny_other_store)
    comparison = analysis.compare(analysis.per_run(sweep), analysis.per_run(other))
    fig = plots.difference_figure(comparison, names=("sim", "testbed"))
    hatched = [p for p in fig.axes[0].patches if p.get_hatch() and p.get_width() == 1]
    significant = int(comparison["significant"].sum())
    assert 0 < significant < 4, "the fixtures give significant and other cells"
    assert len(hatched) == significant
    text = _saved(fig, tmp_path, "difference")
    assert "D = sim − testbed" in text and "significant" in text and "tiny:" in text
    pfig = plots.difference_plotly(comparison, experiment="tiny")
    assert len(pfig.data[1].x) == int(comparison["significant"].sum())


def test_time_series(sweep: Frames, tmp_path: Path) -> None:
    run_ids = sweep.runs["run_id"].tolist()
    fig = plots.throughput_figure(sweep, run_ids[0], window=(8, 20))
    assert len(fig.axes[0].lines) == 2
    text = _saved(fig, tmp_path, "throughput")
    assert "flow1 (newreno)" in text and "flow2 (reno)" in text and "throughput (Mb/s)" in text and "time (s)" in text
    fig = plots.jt_figure(sweep, run_ids[:3])
    line = fig.axes[0].lines[0]
    assert list(line.get_ydata()) == pytest.approx(list(plots.jt_series(sweep, run_ids[0])), nan_ok=True)
    assert line.get_ydata()[0] == pytest.approx(0.5)  # flow 2 starts at 2 s: one flow alone, J = 1/N
    assert len({(l.get_color(), l.get_marker(), str(l.get_linestyle())) for l in fig.axes[0].lines}) == 3
    text = _saved(fig, tmp_path, "jt")
    assert "J(t)" in text and "tiny:" in text


def test_jfi_vs_rtt_error_bars_span_min_to_max(cells: pd.DataFrame, tmp_path: Path) -> None:
    fig = plots.jfi_vs_rtt_figure(cells)
    ax = fig.axes[0]
    assert len(ax.containers) == 2  # one series per buffer
    rows = cells[cells["topology.buffer"] == "0.2bdp"]
    segments = ax.containers[0].lines[2][0].get_segments()
    assert [s[0][1] for s in segments] == pytest.approx(list(rows["jfi_min"]))
    assert [s[1][1] for s in segments] == pytest.approx(list(rows["jfi_max"]))
    text = _saved(fig, tmp_path, "jfi_vs_rtt")
    assert "buffer 0.2bdp" in text and "RTT (ms)" in text


def test_cbr_figure(cbr_store: Path, tmp_path: Path) -> None:
    curve = analysis.cbr_curve(analysis.load_frames(cbr_store), axis="flows[1].rate")
    fig = plots.cbr_figure(curve, experiment="cbr")
    assert len(fig.axes) == 3 and all(len(ax.lines) == 2 for ax in fig.axes)
    text = _saved(fig, tmp_path, "cbr")
    assert "CBR rate (Mb/s)" in text and "drop rate" in text and "one-way delay (ms)" in text and "tahoe" in text and "cbr:" in text
    assert plots.cbr_plotly(curve, experiment="cbr").layout.title.text.startswith("cbr:")


def test_plotly_figures_carry_titles_units_and_legends(sweep: Frames, cells: pd.DataFrame) -> None:
    run_ids = sweep.runs["run_id"].tolist()
    figs = [
        plots.jfi_heatmap_plotly(cells),
        plots.jfi_vs_rtt_plotly(cells),
        plots.throughput_plotly(sweep, run_ids[0]),
        plots.jt_plotly(sweep, run_ids[:2]),
    ]
    for fig in figs:
        assert fig.layout.title.text.startswith("tiny:")
        assert "(" in fig.layout.xaxis.title.text  # a unit
    assert {t.name for t in figs[2].data} == {"flow1 (newreno)", "flow2 (reno)"}
    assert plots.jfi_surface_plotly(cells).layout.scene.xaxis.title.text == "RTT (ms)"


def test_bad_axis_is_one_clear_error(cells: pd.DataFrame) -> None:
    with pytest.raises(analysis.ResultsError, match="topology.loss"):
        plots.jfi_heatmap_figure(cells, y="topology.loss")


def test_flow_shares_one_line_per_discipline(tmp_path: Path) -> None:
    # 004 Fig. 3's figure: each flow's mean throughput, one line per cell; in the report once an
    # experiment has three flows or more.
    from tcplab import report
    from tcplab.cli import main

    exp = tmp_path / "shares.toml"
    exp.write_text(
        'name = "shares"\nreplications = 1\nwindow = "2s:6s"\n[scenario]\nduration = "6s"\n'
        '[scenario.topology]\nbottleneck = "10Mbps"\nrtt = "6ms"\nbuffer = "64pkt"\n'
        + "".join(f'[[scenario.flows]]\nkind = "cbr"\nrate = "{r}Mbps"\n' for r in (1, 3, 5, 7))
        + '[sweep]\n"topology.queue" = ["droptail", "drr"]\n'
    )
    store = tmp_path / "shares.duckdb"
    assert main(["run", str(exp), "--store", str(store)]) == 0
    frames = analysis.load_frames(store)
    cells = analysis.aggregate(analysis.per_run(frames))
    fig = plots.flow_shares_figure(cells)
    lines = {line.get_label(): list(line.get_ydata()) for line in fig.axes[0].lines}
    assert set(lines) == {"queue droptail", "queue drr"}
    # DRR: the 1-Mb/s flow keeps all it sends, the other three split the rest equally.
    assert lines["queue drr"] == pytest.approx([0.992, 2.976, 2.976, 2.976], abs=0.05)
    text = _saved(fig, tmp_path, "shares")
    assert "shares:" in text and "Mb/s" in text and "flow" in text
    plotly_fig = plots.flow_shares_plotly(cells)
    assert plotly_fig.layout.title.text.startswith("shares:") and len(plotly_fig.data) == 2
    assert "004 Fig. 3" in report.render(frames)
