"""The HTML report: one self-contained file per experiment that opens offline in headless
Chromium with every figure rendered, no console error and no network request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tcplab import report
from tcplab.analysis import Frames
from tcplab.cli import main

import fake_store
from browser import open_page
from results_frames import cbr_sweep, dumbbell_sweep, frames_of


@pytest.fixture(scope="module")
def sweep() -> Frames:
    return dumbbell_sweep(rtts=("20ms", "50ms", "80ms"), buffers=("0.2bdp", "1bdp"))


def test_report_is_self_contained(sweep: Frames, tmp_path: Path) -> None:
    path = report.write_report(sweep, tmp_path / "tiny.html")
    text = path.read_text()
    # nothing fetched: no script, style sheet or image from elsewhere (plotly.js is inlined)
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text)
    assert "Plotly.newPlot" in text and text.count("plotly.js v") >= 1
    assert "tcplab report: tiny" in text and "topology.bottleneck" in text and "10Mbps" in text
    assert "0.2bdp, 1bdp" in text and "20ms, 50ms, 80ms" in text  # the axes and their values
    assert text.count("class='figure'") == 6


def test_report_renders_offline_in_chromium(sweep: Frames, tmp_path: Path) -> None:
    path = report.write_report(sweep, tmp_path / "tiny.html")
    page = open_page(path)
    assert page.plots == 6 and page.rendered == page.plots
    assert page.errors == []
    assert page.requests == []
    shot = tmp_path / "report.png"
    shot.write_bytes(page.screenshot)
    assert page.screenshot[:8] == b"\x89PNG\r\n\x1a\n" and len(page.screenshot) > 50_000


def test_report_command_one_file_per_experiment(sweep: Frames, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake_store.install(monkeypatch)
    cbr = cbr_sweep(rates=("2Mbps", "8Mbps"), variants=("reno",))
    both = Frames(*(__import__("pandas").concat([getattr(sweep, n), getattr(cbr, n)], ignore_index=True) for n in ("runs", "flows", "intervals")))
    store = fake_store.write(both, tmp_path / "results.store")
    assert main(["report", str(store), "--out", str(tmp_path / "one.html")]) == 2
    assert "expected a directory: the store holds 2 experiments" in capsys.readouterr().err
    out = tmp_path / "reports"
    out.mkdir()
    assert main(["report", str(store), "--out", str(out), "--figures", str(tmp_path / "figs")]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["cbr.html", "tiny.html"]
    assert "TCP against UDP CBR cross traffic" in (out / "cbr.html").read_text()
    assert (tmp_path / "figs" / "tiny-jfi-heatmap.png").exists() and (tmp_path / "figs" / "tiny-jfi-surface.svg").exists()
    assert main(["report", str(tmp_path / "missing.store")]) == 2
    assert "no such file" in capsys.readouterr().err
