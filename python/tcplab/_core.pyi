"""Types of the engine extension (``crates/tcplab-py``); the contract is ``docs/engine-spec.md``."""

from typing import Any

class SpecError(ValueError):
    """A spec the engine cannot run; ``args`` are ``(field, value, allowed)``."""

def simulate(spec_json: str) -> dict[str, Any]:
    """Run one engine spec (JSON text). Returns ``{"flows", "intervals", "queues"}`` as dicts of
    equal-length numpy arrays, and ``"meta"``. Releases the GIL while it runs."""

def version() -> str: ...
def congestion_controls() -> list[dict[str, Any]]:
    """Every congestion control: name, aliases, about, reference, linux, params (name, default,
    min, max, help)."""

def cc_profiles() -> list[str]: ...
