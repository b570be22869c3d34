"""Write docs/img/report.png: the HTML report of a small sweep run by tcplab run (tests/data/tiny.toml
over RTT 20/50/80 ms × buffer 0.2/0.6/1 BDP × 2 replications), as headless Chromium shows it.

    python scripts/report_screenshot.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser import open_page  # noqa: E402
from tcplab import analysis, report  # noqa: E402
from tcplab.cli import main as tcplab  # noqa: E402


def main() -> int:
    text = (ROOT / "tests" / "data" / "tiny.toml").read_text()
    text = text.replace('"topology.rtt" = ["20ms", "80ms"]', '"topology.rtt" = ["20ms", "50ms", "80ms"]')
    text = text.replace('"topology.buffer" = ["0.2bdp", "1bdp"]', '"topology.buffer" = ["0.2bdp", "0.6bdp", "1bdp"]')
    with tempfile.TemporaryDirectory() as tmp:
        experiment = Path(tmp) / "tiny.toml"
        experiment.write_text(text)
        if tcplab(["run", str(experiment), "--store", str(Path(tmp) / "tiny.duckdb"), "-q"]) != 0:
            return 1
        path = report.write_report(analysis.load_frames(Path(tmp) / "tiny.duckdb"), Path(tmp) / "tiny.html")
        page = open_page(path)
    if page.rendered != page.plots or page.errors or page.requests:
        print(f"report: {page.rendered}/{page.plots} figures rendered, errors {page.errors}, requests {page.requests}", file=sys.stderr)
        return 1
    target = ROOT / "docs" / "img" / "report.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(page.screenshot)
    print(f"wrote {target} ({page.plots} figures rendered, no console error, no network request)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
