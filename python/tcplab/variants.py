"""The TCP variants users name, and what each means to the engine.

A variant is a loss recovery plus a congestion control (the engine keeps them apart, as ns-3's
``TcpRecoveryOps`` and Linux's ``tcp_congestion_ops`` do):

* ``tahoe``, ``reno``, ``newreno``, ``sack`` are the classic variants of the ns-2 studies: Reno
  congestion control (RFC 5681) with Tahoe (slow start after every loss), Reno fast recovery
  (RFC 5681 §3.2), NewReno partial-ACK recovery (RFC 6582) or SACK scoreboard recovery (RFC 6675).
  The first three run with SACK off, so their recovery is the classic one.
* Any other name is a congestion control the engine implements (listed in :data:`LINUX_CC`, read
  from the engine's registry ``tcplab._core.congestion_controls()``) and runs the way Linux runs
  it: SACK recovery (RFC 6675) with Proportional Rate Reduction (RFC 6937). An algorithm's aliases
  (``ctcp`` for ``compound``) name it too.

Names are read the way people type them: case, ``-``/``_``/spaces and a leading ``tcp`` are ignored
(``"TCP NewReno"``, ``"new-reno"`` → ``newreno``).

``ccid2`` (also ``dccp``, ``DCCP/CCID2``) is not TCP: it names a DCCP flow with CCID 2, TCP-like
congestion control (RFC 4340, RFC 4341), which the engine runs as its own kind of flow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Variant", "CLASSIC", "ENGINE", "LINUX_CC", "DCCP", "resolve", "algorithm", "names", "tcp_names", "normalise", "is_dccp"]

Recovery = Literal["tahoe", "reno", "newreno", "sack"]


@dataclass(frozen=True)
class Variant:
    """What a variant name lowers to: the engine flow's ``cc``, ``recovery``, ``prr``, ``sack``,
    ``rack`` (RACK-TLP loss detection, RFC 8985: Linux's default since 4.18) and ``tso`` (Linux's
    TSO/GSO bursts), and ``needs_ecn`` (the algorithm runs only with ECN: DCTCP)."""

    name: str
    cc: str
    recovery: Recovery
    prr: bool
    sack: bool
    about: str
    reference: str = ""
    rack: bool = False
    tso: bool = False
    needs_ecn: bool = False


#: The classic loss-recovery variants, all with Reno congestion control.
CLASSIC: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("tahoe", "reno", "tahoe", prr=False, sack=False, about="Reno CC; slow start after every loss", reference="Jacobson 1988"),
        Variant("reno", "reno", "reno", prr=False, sack=False, about="Reno CC; fast retransmit and fast recovery", reference="RFC 5681"),
        Variant("newreno", "reno", "newreno", prr=False, sack=False, about="Reno CC; NewReno partial-ACK recovery", reference="RFC 6582"),
        Variant("sack", "reno", "sack", prr=False, sack=True, about="Reno CC; SACK scoreboard recovery", reference="RFC 6675"),
    )
}


def _engine_registry() -> dict[str, dict[str, Any]]:
    from . import _core

    return {a["name"]: a for a in _core.congestion_controls()}


#: Every congestion control of the engine, name → its registry entry: ``name``, ``aliases``,
#: ``about``, ``reference``, ``linux`` and ``params`` (each ``name``, ``default``, ``min``,
#: ``max``, ``help``), in the engine's order.
ENGINE: dict[str, dict[str, Any]] = _engine_registry()

#: Congestion controls the engine implements beyond Reno, each run Linux-like (SACK + PRR):
#: name → one-line description.
LINUX_CC: dict[str, str] = {name: a["about"] for name, a in ENGINE.items() if name not in CLASSIC}


#: DCCP variants: name → description. Users may also type ``dccp`` or ``dccp/ccid2`` for ``ccid2``.
DCCP: dict[str, str] = {"ccid2": "DCCP with CCID 2, TCP-like congestion control (RFC 4340, RFC 4341)"}
_DCCP_ALIASES = {"ccid2": "ccid2", "dccp": "ccid2", "dccpccid2": "ccid2"}


def is_dccp(name: str) -> bool:
    """Whether ``name`` is a DCCP variant (``ccid2``, ``dccp``, ``DCCP/CCID2`` …)."""
    return normalise(name).replace("/", "") in _DCCP_ALIASES


def normalise(name: str) -> str:
    """``"TCP New-Reno"`` → ``"newreno"``."""
    key = re.sub(r"[\s_\-]+", "", name.strip().lower())
    if key.startswith("tcp") and len(key) > 3:
        key = key[3:]
    return key


def names() -> list[str]:
    """Every variant name accepted, classic ones first, DCCP last."""
    return [*CLASSIC, *LINUX_CC, *DCCP]


def tcp_names() -> list[str]:
    """The TCP variant names, classic ones first."""
    return [*CLASSIC, *LINUX_CC]


def algorithm(name: str) -> dict[str, Any]:
    """The engine's registry entry for a congestion control named by its name or an alias
    (``"CTCP"`` → compound's); ``KeyError`` if there is none."""
    key = normalise(name)
    for entry in ENGINE.values():
        if key == entry["name"] or key in (normalise(a) for a in entry["aliases"]):
            return entry
    raise KeyError(name)


def resolve(name: str) -> Variant:
    """The TCP :class:`Variant` for a user's name; ``KeyError`` if there is none (or it is DCCP)."""
    key = normalise(name)
    if key in CLASSIC:
        return CLASSIC[key]
    if key not in LINUX_CC:
        key = algorithm(name)["name"]  # an alias
        if key not in LINUX_CC:
            raise KeyError(name)
    reference = ENGINE[key]["reference"] if key in ENGINE else ""
    needs_ecn = bool(ENGINE[key].get("needs_ecn", False)) if key in ENGINE else False
    return Variant(key, key, "sack", prr=True, sack=True, about=LINUX_CC[key], reference=reference, rack=True, tso=True, needs_ecn=needs_ecn)
