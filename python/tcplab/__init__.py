"""tcplab: how do congestion-control variants share a path?

A packet-level simulator (the Rust engine, ``tcplab._core``) driven by scenarios written with units
people use, measured the way the papers measure: per-flow mean throughput over a window and Jain's
fairness index (:mod:`tcplab.metrics`).

>>> import tcplab
>>> scenario = tcplab.load_scenario("scenarios/quick.toml")      # doctest: +SKIP
>>> result = tcplab.simulate(scenario, seed=2)                     # doctest: +SKIP
>>> result.summary()                                               # doctest: +SKIP
>>> result.jain()                                                  # doctest: +SKIP
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from . import metrics, units, variants
from .config import CbrFlow, CbrSteps, CcSettings, Codel, Csfq, DccpFlow, Drr, Dualpi2, Dumbbell, FqCodel, FqPie, Fred, Graph, Link, Pie, Red, Scenario, TcpFlow, TcpSettings, load_scenario
from .engine import engine_version, simulate
from .errors import EngineError, ScenarioError, TcplabError
from .result import Result
from .units import Buffer, Rate, Size, Time, Window

try:
    __version__ = version("tcplab")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "Scenario",
    "Dumbbell",
    "Graph",
    "Link",
    "Red",
    "Codel",
    "Pie",
    "Drr",
    "Dualpi2",
    "FqCodel",
    "FqPie",
    "Fred",
    "Csfq",
    "TcpSettings",
    "CcSettings",
    "TcpFlow",
    "CbrFlow",
    "DccpFlow",
    "CbrSteps",
    "load_scenario",
    "simulate",
    "engine_version",
    "Result",
    "TcplabError",
    "ScenarioError",
    "EngineError",
    "Time",
    "Rate",
    "Size",
    "Buffer",
    "Window",
    "metrics",
    "units",
    "variants",
]
