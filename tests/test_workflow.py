"""The whole path on a tiny experiment, through the installed command: tcplab run → a rerun that
skips every run → tcplab table → tcplab report (self-contained, rendered offline in Chromium) →
tcplab export --parquet, read back with pandas."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tcplab.store import TABLES, Store

from browser import assert_self_contained, open_page
from conftest import DATA

TCPLAB = [sys.executable, "-m", "tcplab"]


def tcplab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([*TCPLAB, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def test_run_rerun_table_report_export(tmp_path: Path) -> None:
    experiment = shutil.copy(DATA / "tiny.toml", tmp_path / "tiny.toml")

    # tcplab run: the default store results/tiny.duckdb, the across-replication JFI table at the end
    first = tcplab("run", str(experiment), "--jobs", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    store = tmp_path / "results" / "tiny.duckdb"
    assert "tiny: JFI, eq. (1), mean (std) over 2 replications" in first.stdout
    assert "8 runs: 8 run now, 0 already in the store" in first.stdout
    with Store(store) as db:
        before = db.sql("SELECT run_id, finished_at, jfi FROM runs ORDER BY run_id")
    assert len(before) == 8 and before["jfi"].between(0.5, 1.0).all()

    # the same command again: every run is in the store, nothing runs, the same table is printed
    again = tcplab("run", str(experiment), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "8 runs: 0 run now, 8 already in the store" in again.stdout
    assert again.stdout.split("\n\n")[0] == first.stdout.split("\n\n")[0]
    with Store(store) as db:
        pd.testing.assert_frame_equal(db.sql("SELECT run_id, finished_at, jfi FROM runs ORDER BY run_id"), before)

    # tcplab table: the table tcplab run printed
    table = tcplab("table", str(store), cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert table.stdout.strip() == first.stdout.split("\n\n")[0].strip()

    # tcplab report: one file that fetches nothing and renders every figure offline
    html = tmp_path / "tiny.html"
    written = tcplab("report", str(store), "--out", str(html), cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert_self_contained(html.read_text())
    page = open_page(html)
    assert page.plots == 7 and page.rendered == page.plots
    assert page.errors == []
    assert page.requests == []
    assert page.screenshot[:8] == b"\x89PNG\r\n\x1a\n" and len(page.screenshot) > 50_000

    # tcplab export --parquet: every table, with the store's row counts
    out = tmp_path / "parquet"
    exported = tcplab("export", str(store), "--parquet", str(out), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    with Store(store) as db:
        counts = {t: int(db.sql(f"SELECT count(*) AS n FROM {t}")["n"].iloc[0]) for t in TABLES}
    assert counts["runs"] == 8 and counts["flows"] == 16 and counts["queues"] == 80 and counts["intervals"] == 8 * 2 * 15
    for name in TABLES:
        frame = pd.read_parquet(out / f"{name}.parquet")
        assert len(frame) == counts[name], name
    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(runs["run_id"]) == sorted(before["run_id"])
