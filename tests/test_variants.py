"""The variant family: ``tcplab variants`` lists the engine's registry, and a scenario's ``[cc]``
table and flows' ``cc_params`` reach the engine (or stop with one line naming the user's field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tcplab
from tcplab import ScenarioError, _core, variants
from tcplab.cli import build_parser, main, scenario_from_args
from tcplab.config import Scenario

REGISTRY = _core.congestion_controls()
CLASSIC = ["tahoe", "reno", "newreno", "sack"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _line(out: str, name: str) -> str:
    return next(line for line in out.splitlines() if line.split()[:1] == [name])


# --- tcplab variants -------------------------------------------------------------------------


def test_listing_holds_the_classic_four_and_every_engine_algorithm(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["variants"], capsys)
    assert code == 0, err
    for name, reference in zip(CLASSIC, ["Jacobson 1988", "RFC 5681", "RFC 6582", "RFC 6675"]):
        assert reference in _line(out, name)
    for a in REGISTRY:
        # Each engine algorithm's own line (after the classic section, which also has "reno").
        engine_part = out.split("Congestion controls", 1)[1]
        line = _line(engine_part, a["name"])
        assert a["about"] in line and a["reference"] in line
        for alias in a["aliases"]:
            assert alias in line


@pytest.mark.parametrize("entry", REGISTRY, ids=[a["name"] for a in REGISTRY])
def test_one_algorithm_by_name_or_alias_lists_its_parameters_and_linux_file(entry: dict, capsys: pytest.CaptureFixture[str]) -> None:
    for name in [entry["name"], *entry["aliases"]]:
        code, out, err = run(["variants", name.upper()], capsys)
        assert code == 0, err
        assert entry["linux"] in out
        target = entry if name not in CLASSIC else variants.ENGINE[variants.CLASSIC[name].cc]
        if not target["params"]:
            assert "parameters: none" in out
        for p in target["params"]:
            line = _line(out, p["name"])
            assert f"{p['default']:g}" in line and f"{p['min']:g} to {p['max']:g}" in line and p["help"] in line


def test_reno_is_the_classic_variant_with_renos_congestion_control(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["variants", "reno"], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "reno: Reno CC; fast retransmit and fast recovery [RFC 5681]"
    assert "loss recovery reno, SACK off, PRR off" in out
    assert "Linux: net/ipv4/tcp_cong.c" in out and "parameters: none" in out


def test_unknown_name_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["variants", "no-such-cc"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("tcplab: error: variant = 'no-such-cc': expected a TCP variant or congestion control: one of tahoe, reno, newreno, sack")
    for a in REGISTRY:
        assert a["name"] in err


def test_aliases_name_variants_in_scenarios(reference_data: dict) -> None:
    for a in REGISTRY:
        if a["name"] in CLASSIC:
            continue
        for alias in a["aliases"]:
            s = Scenario.model_validate(reference_data).override({"flows[1].variant": alias})
            flow = s.to_engine_spec()["flows"][1]
            assert (flow["cc"], flow["recovery"], flow["prr"]) == (a["name"], "sack", True)


# --- [cc] and cc_params ----------------------------------------------------------------------

SCENARIO = """
duration = "6s"
window = "2s:6s"
[topology]
bottleneck = "10Mbps"
rtt = "40ms"
buffer = "0.2bdp"
[cc]
profile = "linux"
[cc.compound]
gamma = 20
pace_dwnd = false
[[flows]]
variant = "newreno"
[[flows]]
variant = "compound"
[[flows]]
variant = "ctcp"
cc_params = { gamma = 10, eta = 2 }
"""


def test_cc_table_lowers_to_each_flows_profile_and_params(tmp_path: Path) -> None:
    path = tmp_path / "cc.toml"
    path.write_text(SCENARIO)
    s = tcplab.load_scenario(path)
    flows = s.to_engine_spec()["flows"]
    assert [f["cc"] for f in flows] == ["reno", "compound", "compound"]
    assert [f["cc_profile"] for f in flows] == ["linux"] * 3
    # [cc.compound] applies to every compound flow, not to Reno; a flow's own cc_params win.
    assert flows[0]["cc_params"] == {}
    assert flows[1]["cc_params"] == {"gamma": 20.0, "pace_dwnd": 0.0}
    assert flows[2]["cc_params"] == {"gamma": 10.0, "pace_dwnd": 0.0, "eta": 2.0}
    assert all(isinstance(v, float) for f in flows for v in f["cc_params"].values())
    # A changed copy keeps the table (dumped as written: [cc.compound]).
    s2 = s.override({"cc.compound.gamma": 25})
    assert s2.to_engine_spec()["flows"][1]["cc_params"]["gamma"] == 25.0
    # The engine runs it.
    r = tcplab.simulate(s)
    assert (r.summary()["throughput_mbps"] > 0).all()


def test_alias_tables_and_defaults() -> None:
    data = tomllib_loads(SCENARIO)
    data["cc"] = {"ctcp": {"gamma": 15}}
    s = Scenario.model_validate(data)
    assert s.cc.profile == "linux"
    assert s.to_engine_spec()["flows"][1]["cc_params"] == {"gamma": 15.0}
    del data["cc"]
    assert Scenario.model_validate(data).to_engine_spec()["flows"][1]["cc_params"] == {}


def tomllib_loads(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)


def test_set_flag_reaches_cc_tables(tmp_path: Path) -> None:
    path = tmp_path / "cc.toml"
    path.write_text(SCENARIO)
    args = build_parser().parse_args(["sim", str(path), "--set", "cc.compound.gamma=8", "--set", "flows[1].cc_params.k=0.8"])
    flows = scenario_from_args(args).to_engine_spec()["flows"]
    assert flows[1]["cc_params"] == {"gamma": 8.0, "pace_dwnd": 0.0, "k": 0.8}
    assert flows[2]["cc_params"]["gamma"] == 10.0


BAD = [
    ("[cc.compound]\nbeta = 2.0", "cc.compound.beta = 2.0", "expected 0.1 to 0.9 (β"),
    ("[cc.ctcp]\nalpha = 0", "cc.ctcp.alpha = 0", "expected 0.01 to 1 ("),
    ("[cc.compound]\ngama = 5", "cc.compound.gama = 5", "expected a parameter of compound: one of k, alpha, beta"),
    ("[cc.compound]\ngamma = 'x'", "cc.compound.gamma = 'x'", "expected a number 1 to 1000"),
    ("[cc.reno]\nbeta = 0.5", "cc.reno.beta = 0.5", "expected a parameter of reno: no parameters"),
    ("[cc.nosuchcc]\nbeta = 0.5", "cc.nosuchcc = {'beta': 0.5}", "expected 'profile' or a congestion control: one of " + ", ".join(a["name"] for a in _core.congestion_controls())),
    ("[cc]\nprofile = 'linux-1.0'", "cc.profile = 'linux-1.0'", "expected one of linux"),
]


@pytest.mark.parametrize(("table", "head", "allowed"), BAD)
def test_bad_cc_table_is_one_line_exit_2_nothing_written(table: str, head: str, allowed: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = SCENARIO.split("[cc]")[0] + table + "\n" + SCENARIO.split("pace_dwnd = false\n")[1]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    csv = tmp_path / "out.csv"
    code, out, err = run(["sim", str(path), "--csv", str(csv)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"tcplab: error: {head}: {allowed}"), err
    assert not csv.exists()


def test_bad_flow_cc_params_name_the_flow(reference_data: dict) -> None:
    base = Scenario.model_validate(reference_data).override({"flows[1].variant": "compound"})
    with pytest.raises(ScenarioError, match=r"^flows\[1\]\.cc_params\.eta = 9: expected 0\.1 to 4 \("):
        base.override({"flows[1].cc_params.eta": 9})
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.cc_params\.beta = 0\.5: expected a parameter of reno"):
        base.override({"flows[0].cc_params.beta": 0.5})


@pytest.mark.parametrize("entry", [a for a in REGISTRY if a["params"]], ids=lambda a: a["name"])
def test_python_and_engine_agree_on_every_parameter_range(entry: dict, reference_data: dict) -> None:
    short = {"flows[1].variant": entry["name"], "flows[1].start": "0s", "duration": "2s", "window": "1s:2s"}
    s = Scenario.model_validate(reference_data).override(short)
    for p in entry["params"]:
        for value in (p["min"], p["max"]):
            ok = s.override({f"flows[1].cc_params.{p['name']}": value}).to_engine_spec()
            _core.simulate(json.dumps(ok))  # accepted by the engine too
        for value in (p["min"] - 1, p["max"] + 1):
            with pytest.raises(ScenarioError, match=rf"^flows\[1\]\.cc_params\.{p['name']} = "):
                s.override({f"flows[1].cc_params.{p['name']}": value})
            bad = s.to_engine_spec()
            bad["flows"][1]["cc_params"] = {p["name"]: value}
            with pytest.raises(_core.SpecError):
                _core.simulate(json.dumps(bad))
