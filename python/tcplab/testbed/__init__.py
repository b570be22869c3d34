"""The emulated testbed: the scenario ``tcplab.simulate`` runs, on the real Linux TCP stack.

Three layers, as NeST has them, none of which hides a tool's stderr:

* :mod:`.tools` — ``ip``, ``sysctl``, ``ethtool``, ``iperf3``, ``ping``; a failure raises
  :class:`ToolError` with the command line and its stderr.
* :mod:`.topology` — the scenario's dumbbell as ``tcplab-`` network namespaces, veth pairs and
  policy routing into the router's two TUN devices; :func:`clean` removes every trace.
* :mod:`.stack` — each flow's kernel congestion control and ``[tcp]`` settings as sysctls and
  route attributes of its namespaces.
* :mod:`.experiment` — the router (``crates/tcplab-router``: the simulator's queue discipline in
  real time), iperf3 servers and clients per flow, calibration, and the :class:`tcplab.Result`.

>>> import tcplab.testbed
>>> result = tcplab.testbed.run("scenarios/testbed-quick.toml")   # doctest: +SKIP (needs root)
>>> result.meta["valid"], result.summary()                         # doctest: +SKIP
"""

from __future__ import annotations

from .experiment import LATENESS_LIMIT_NS, PROFILES, Calibration, available_cc, calibrate, check, load, router_binary, run, sweep_calibration
from .tools import MissingTool, ToolError, require
from .topology import clean, namespaces

__all__ = [
    "run",
    "check",
    "sweep_calibration",
    "available_cc",
    "load",
    "calibrate",
    "clean",
    "namespaces",
    "require",
    "router_binary",
    "Calibration",
    "PROFILES",
    "LATENESS_LIMIT_NS",
    "ToolError",
    "MissingTool",
]
