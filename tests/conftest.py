"""Shared fixtures: small scenarios that simulate in well under a second."""

from __future__ import annotations

from pathlib import Path

import pytest

import tcplab

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


@pytest.fixture
def short_dumbbell() -> tcplab.Scenario:
    """Two NewReno flows on a 10 Mb/s, 40 ms dumbbell for 8 s; flow 2 starts at 2 s."""
    return tcplab.Scenario(
        name="short",
        duration="8s",
        window="4s:8s",
        topology=tcplab.Dumbbell(bottleneck="10Mbps", rtt="40ms", buffer="1bdp"),
        flows=[tcplab.TcpFlow(variant="newreno"), tcplab.TcpFlow(variant="newreno", start="2s")],
    )


@pytest.fixture
def reference_data() -> dict:
    """The reference experiment as the table a TOML file holds."""
    return {
        "name": "reference",
        "duration": "300s",
        "seed": 1,
        "interval": "1s",
        "window": "120s:300s",
        "topology": {"kind": "dumbbell", "bottleneck": "100Mbps", "rtt": "100ms", "buffer": "1bdp", "access_rate": "1Gbps", "loss": 0.0},
        "flows": [{"variant": "newreno", "start": "0s"}, {"variant": "newreno", "start": "60s"}],
    }
