"""bench/engine_cost.py's --cc: the specs it writes and the input it refuses (no valgrind run)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPT = BENCH / "engine_cost.py"


def _module():
    sys.path.insert(0, str(BENCH))  # engine_cost imports reference.py from beside itself
    try:
        spec = importlib.util.spec_from_file_location("engine_cost", SCRIPT)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_each_spec_differs_from_its_base_in_every_flows_cc_only(tmp_path: Path) -> None:
    base = BENCH / "engine_reno_4bdp.json"
    paths = _module().with_cc(base, ["cubic", "bbr", "hstcp"], tmp_path)
    assert [p.name for p in paths] == ["engine_reno_4bdp_cubic.json", "engine_reno_4bdp_bbr.json", "engine_reno_4bdp_hstcp.json"]
    want = json.loads(base.read_text())
    for path, cc in zip(paths, ["cubic", "bbr", "hstcp"]):
        got = json.loads(path.read_text())
        assert [f["cc"] for f in got["flows"]] == [cc, cc]
        for f in got["flows"]:
            f["cc"] = "reno"
        assert got == want


def test_bad_input_is_one_line_and_exit_2() -> None:
    r = _run("--cc", "cubic", "nosuchcc")
    assert r.returncode == 2
    assert r.stderr.startswith("engine_cost: --cc = 'nosuchcc': not a congestion control; expected one of ")
    assert "cubic" in r.stderr and "bbr" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = _run("--cc", "reno", "--variants", "reno")
    assert (r.returncode, r.stderr.strip()) == (2, "engine_cost: give --variants or --cc, not both")
    r = _run(str(BENCH / "engine_reno.json"), str(BENCH / "engine_bbr.json"), "--cc", "reno")
    assert (r.returncode, r.stderr.strip()) == (2, "engine_cost: --cc takes one spec to change, not 2")
    assert "Traceback" not in r.stderr
