"""Backends: what runs one scenario. A name → a callable ``(scenario, seed, **options) -> Result``.

* ``sim``: the packet-level simulator, :func:`tcplab.simulate` (no options).
* ``testbed``: real Linux TCP in network namespaces, ``tcplab.testbed.run(scenario, seed=seed,
  profile=profile, calibration=...)``, imported only when asked for. Options: ``profile`` (the
  stack profile) and ``sweep`` (an identifier of the sweep: each path (RTT, bottleneck) is
  calibrated once per sweep and process, and every run on it carries that calibration).

Both return the same :class:`~tcplab.Result`, so nothing downstream knows which produced a run.
:func:`versions` tags a run with what produced it: the tcplab and engine versions, plus anything
the backend reports in ``Result.meta["backend_info"]`` (a testbed adds its kernel version).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from .config import Scenario
from .errors import ScenarioError
from .result import Result

__all__ = ["BACKENDS", "get", "check", "check_scenario", "variants", "versions"]

Backend = Callable[..., Result]


def _sim(scenario: Scenario, seed: int, **options: Any) -> Result:
    from .engine import simulate

    return simulate(scenario, seed=seed)


def _testbed(scenario: Scenario, seed: int, profile: str = "default", sweep: str | None = None) -> Result:
    module = _testbed_module()
    calibration = None
    if sweep is not None:
        calibration = module.sweep_calibration(sweep, scenario, profile)
    return module.run(scenario, seed=seed, profile=profile, calibration=calibration)


def _testbed_module() -> Any:
    try:
        return importlib.import_module("tcplab.testbed")
    except ImportError as e:
        raise ScenarioError("--backend", "testbed", f"the testbed backend is not available in this installation ({e})") from None


#: Backend name → callable(scenario, seed) → Result.
BACKENDS: dict[str, Backend] = {"sim": _sim, "testbed": _testbed}


def get(name: str) -> Backend:
    """The backend called ``name``; an unknown name is a ScenarioError."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise ScenarioError("--backend", name, f"expected one of {', '.join(BACKENDS)}") from None


def check(name: str) -> None:
    """Fail now, with one line, if backend ``name`` cannot run here (before a sweep starts)."""
    get(name)
    if name == "testbed":
        module = _testbed_module()
        if not callable(getattr(module, "run", None)):
            raise ScenarioError("--backend", "testbed", "the testbed backend is not available: tcplab.testbed has no run(scenario, seed=...)")
        module.require()  # root, iperf3, ping, ethtool: a MissingTool says what to install
        module.router_binary()
    elif name == "sim":
        from .engine import engine_version

        if engine_version() is None:
            raise ScenarioError("--backend", "sim", "the sim backend is not available: the engine is not built (pip install -e .)")


def check_scenario(name: str, scenario: Scenario, profile: str = "default") -> None:
    """Raise a ScenarioError, before anything runs, if backend ``name`` cannot run ``scenario``
    (the testbed: a variant this kernel lacks, a ``[tcp]`` setting it cannot apply …)."""
    if name == "testbed":
        _testbed_module().check(scenario, profile)


def variants(name: str) -> list[str]:
    """Variant names backend ``name`` runs beyond the simulator's (the testbed: the kernel's
    congestion controls), for validating scenarios."""
    if name == "testbed":
        return sorted(_testbed_module().available_cc())
    return []


def versions(name: str, result: Result | None = None) -> dict[str, Any]:
    """What produced ``result``: backend name, tcplab and engine versions, and the backend's own
    ``meta["backend_info"]`` (e.g. a testbed's kernel version)."""
    from . import __version__
    from .engine import engine_version

    meta = result.meta if result is not None else {}
    out: dict[str, Any] = {
        "backend": name,
        "tcplab": __version__,
        "engine": meta.get("engine_version") or engine_version(),
    }
    info = meta.get("backend_info")
    if isinstance(info, dict):
        out.update({str(k): v for k, v in info.items()})
    return out
