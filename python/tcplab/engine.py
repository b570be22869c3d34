"""Running a scenario on the engine (``tcplab._core``, the Rust simulator built by maturin)."""

from __future__ import annotations

import json
from os import PathLike
from types import ModuleType
from typing import Any

from .config import Scenario, load_scenario
from .errors import EngineError, from_spec_error
from .result import Result

__all__ = ["simulate", "engine_version"]


def _core() -> ModuleType:
    try:
        from . import _core
    except ImportError as e:
        raise EngineError(f"the tcplab engine is not built ({e}); build it with 'pip install -e .' in the tcplab source tree") from None
    return _core


def engine_version() -> str | None:
    """The engine's version, or ``None`` when it is not built."""
    try:
        return str(_core().version())
    except EngineError:
        return None


def simulate(scenario: Scenario | str | PathLike[str], seed: int | None = None, capture: dict[str, Any] | None = None) -> Result:
    """Run ``scenario`` (a :class:`Scenario` or the path of a scenario file) and return its :class:`Result`.

    ``seed`` overrides the scenario's seed. A scenario the engine rejects (e.g. a flow between
    unconnected nodes) raises :class:`~tcplab.errors.ScenarioError`; the engine releases the GIL
    while it runs. ``capture`` (``{"flow": i, "links": [...]}``, the engine spec's ``capture``)
    records that flow's packets on those links into :attr:`Result.capture`.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    if seed is not None:
        scenario = scenario.override({"seed": seed})
    core = _core()
    spec = scenario.to_engine_spec()
    if capture is not None:
        spec["capture"] = capture
    try:
        raw = core.simulate(json.dumps(spec))
    except core.SpecError as e:
        raise from_spec_error(e, scenario) from None
    return Result.from_engine(scenario, raw, engine_version=str(core.version()))
