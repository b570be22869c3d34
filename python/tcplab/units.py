"""Quantities written the way people write them: ``"100Mbps"``, ``"25ms"``, ``"96KB"``, ``"0.2bdp"``.

Every quantity is held as an exact integer in the engine's base unit (nanoseconds, bit/s, bytes,
packets), so lowering a scenario to the engine spec (``docs/engine-spec.md``) never rounds twice.
A number without a unit is always an error: ``25`` could be seconds or milliseconds, and a scenario
file must say which.

Units
-----
time
    ``ns``, ``us`` (also ``µs``), ``ms``, ``s``, ``min``. ``"1.5s"`` is 1 500 000 000 ns.
rate
    ``bps``, ``kbps``, ``Mbps``, ``Gbps``, ``Tbps``, also written ``b/s``, ``kb/s``, ``Mb/s`` … and
    ``bit/s``. Decimal prefixes (1 Mb/s = 10⁶ bit/s), as for link rates. The prefix is read without
    regard to case (``"100mbps"`` is 100 Mb/s); a capital ``B`` (bytes) is refused.
size
    ``B``; ``KB``, ``MB``, ``GB`` are **binary** multiples (1 KB = 1024 B) as Linux users mean them
    in ``sysctl`` and ``ip``; ``kB``/``KiB``, ``MiB``, ``GiB`` are accepted as the same.
    ``pkt`` (also ``pkts``, ``packet``, ``packets``) counts packets.
buffer
    a size, or a multiple of the bandwidth-delay product: ``"0.2bdp"`` (see :meth:`Buffer.limit`).

Fractional values are rounded to the nearest whole base unit (half to even); packets must be whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from collections.abc import Callable
from typing import Any, ClassVar, Literal

__all__ = [
    "UnitError",
    "Time",
    "Rate",
    "Size",
    "Buffer",
    "Window",
    "MTU_BYTES",
    "parse_time",
    "parse_rate",
    "parse_size",
    "parse_buffer",
]

#: Packet size used to turn a bandwidth-delay product into a packet count (Ethernet MTU).
MTU_BYTES = 1500

_NUMBER = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([^\d\s].*?)?\s*$")

TIME_UNITS: dict[str, int] = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "min": 60_000_000_000}
_RATE_PREFIX: dict[str, int] = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_RATE_UNIT = re.compile(r"^([kKmMgGtT]?)(bps|b/s|bit/s|bits/s)$")
SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "KB": 1024, "kB": 1024, "KiB": 1024,
    "MB": 1024**2, "MiB": 1024**2,
    "GB": 1024**3, "GiB": 1024**3,
}
PACKET_UNITS = ("pkt", "pkts", "packet", "packets")

ALLOWED_TIME = "a time with a unit (ns, us, ms, s, min) like '25ms'"
ALLOWED_RATE = "a rate with a unit (bps, kbps, Mbps, Gbps, Tbps or b/s, kb/s, Mb/s, Gb/s) like '100Mbps'"
ALLOWED_SIZE = "a size with a unit (B, KB, MB, GB; 1 KB = 1024 B) like '64KB'"
ALLOWED_WINDOW = "a window 'START:STOP' like '120s:300s' ('120s:' runs to the end)"
ALLOWED_BUFFER = "a buffer size like '834pkt', '96KB' or '0.2bdp' (fraction of the bandwidth-delay product)"


class UnitError(ValueError):
    """A quantity that could not be read; ``allowed`` says what would have been."""

    def __init__(self, text: object, allowed: str) -> None:
        super().__init__(f"{text!r}: expected {allowed}")
        self.text = text
        self.allowed = allowed


def _split(text: object, allowed: str) -> tuple[Decimal, str]:
    """Split ``"1.5 Mbps"`` into ``(Decimal("1.5"), "Mbps")``; a bare number is refused."""
    if not isinstance(text, str):
        raise UnitError(text, allowed)
    m = _NUMBER.match(text)
    if m is None or m.group(2) is None:
        raise UnitError(text, allowed)
    try:
        number = Decimal(m.group(1))
    except InvalidOperation:  # pragma: no cover - the pattern only admits valid decimals
        raise UnitError(text, allowed) from None
    return number, m.group(2)


def _to_int(value: Decimal) -> int:
    """Nearest integer, half to even (exact: Decimal arithmetic, no binary floats)."""
    return int(value.to_integral_value())


def _format(value: int, units: list[tuple[str, int]]) -> str:
    """Write ``value`` in the largest unit it reaches, as an exact decimal: ``1_500_000_000 ns`` → ``1.5s``."""
    if value == 0:
        return f"0{units[0][0]}"
    for name, scale in units:
        if abs(value) >= scale or scale == units[-1][1]:
            number = Decimal(value) / Decimal(scale)
            return f"{format(number.normalize(), 'f')}{name}"
    raise AssertionError("unreachable")  # pragma: no cover


class _Quantity:
    """Shared pydantic plumbing: validate from a string (or an instance), serialise back to a string."""

    allowed: ClassVar[str]
    parse: ClassVar[Callable[[object], Any]]  # each quantity's reader

    @classmethod
    def coerce(cls, value: object) -> Any:
        """Return ``value`` if it already is one of these, else parse it from a string."""
        if isinstance(value, cls):
            return value
        return cls.parse(value)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            cls.coerce,
            serialization=core_schema.plain_serializer_function_ser_schema(str),
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> dict[str, Any]:
        return {"type": "string", "description": f"{cls.allowed}"}


@dataclass(frozen=True, order=True)
class Time(_Quantity):
    """A duration in integer nanoseconds (the engine's clock)."""

    ns: int
    allowed: ClassVar[str] = ALLOWED_TIME

    @classmethod
    def parse(cls, text: object) -> Time:
        """Read ``"25ms"``, ``"1.5s"``, ``"500us"``; refuse a number without a unit."""
        number, unit = _split(text, ALLOWED_TIME)
        if unit not in TIME_UNITS:
            raise UnitError(text, ALLOWED_TIME)
        return cls(_to_int(number * TIME_UNITS[unit]))

    @property
    def seconds(self) -> float:
        return self.ns / 1e9

    def __str__(self) -> str:
        return _format(self.ns, [("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1)])


@dataclass(frozen=True, order=True)
class Rate(_Quantity):
    """A bit rate in integer bit/s."""

    bps: int
    allowed: ClassVar[str] = ALLOWED_RATE

    @classmethod
    def parse(cls, text: object) -> Rate:
        """Read ``"100Mbps"``, ``"1.5Mb/s"``, ``"64kbps"``; decimal prefixes (k = 1000)."""
        number, unit = _split(text, ALLOWED_RATE)
        m = _RATE_UNIT.match(unit)
        if m is None:
            raise UnitError(text, ALLOWED_RATE)
        return cls(_to_int(number * _RATE_PREFIX[m.group(1).lower()]))

    @property
    def mbps(self) -> float:
        return self.bps / 1e6

    def __str__(self) -> str:
        return _format(self.bps, [("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3), ("bps", 1)])


@dataclass(frozen=True, order=True)
class Size(_Quantity):
    """A size in integer bytes. ``KB``/``MB``/``GB`` are binary (1 KB = 1024 B), as in Linux."""

    bytes: int
    allowed: ClassVar[str] = ALLOWED_SIZE

    @classmethod
    def parse(cls, text: object) -> Size:
        """Read ``"1500B"``, ``"64KB"`` (65 536 B), ``"6MB"``."""
        number, unit = _split(text, ALLOWED_SIZE)
        if unit not in SIZE_UNITS:
            raise UnitError(text, ALLOWED_SIZE)
        return cls(_to_int(number * SIZE_UNITS[unit]))

    def __str__(self) -> str:
        # The largest binary unit that divides exactly, so "64KB" stays "64KB" and 1 250 000 B stays bytes.
        for name, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
            if self.bytes and self.bytes % scale == 0:
                return f"{self.bytes // scale}{name}"
        return f"{self.bytes}B"


BufferKind = Literal["bytes", "pkts", "bdp"]


@dataclass(frozen=True)
class Buffer(_Quantity):
    """A queue limit: bytes (``"96KB"``), packets (``"834pkt"``) or a fraction of the BDP (``"0.2bdp"``).

    ``value`` is an ``int`` for bytes and packets and an exact ``Decimal`` for a BDP fraction.
    """

    kind: BufferKind
    value: int | Decimal
    allowed: ClassVar[str] = ALLOWED_BUFFER

    @classmethod
    def parse(cls, text: object) -> Buffer:
        """Read ``"834pkt"``, ``"1.2MB"`` or ``"0.2bdp"``."""
        number, unit = _split(text, ALLOWED_BUFFER)
        if unit in PACKET_UNITS:
            if number != number.to_integral_value():
                raise UnitError(text, "a whole number of packets like '64pkt'")
            return cls("pkts", int(number))
        if unit.lower() == "bdp":
            return cls("bdp", number.normalize())
        if unit in SIZE_UNITS:
            return cls("bytes", _to_int(number * SIZE_UNITS[unit]))
        raise UnitError(text, ALLOWED_BUFFER)

    @property
    def positive(self) -> bool:
        return self.value > 0

    def limit(self, rate_bps: int | None = None, rtt_ns: int | None = None) -> dict[str, int]:
        """The engine's DropTail limit: ``{"limit_pkts": n}`` or ``{"limit_bytes": n}``.

        A BDP fraction *f* becomes packets: round(f · rate · RTT / 8 / MTU), at least 1, with
        MTU = 1500 B, the way the papers size router buffers (RB as a percentage of BDP, BDP =
        bottleneck rate × base RTT). Rounding is to the nearest packet, halves up: 1 BDP at
        100 Mb/s × 100 ms = 1 250 000 B = 833.3 → 833 packets.
        """
        if self.kind == "pkts":
            return {"limit_pkts": int(self.value)}
        if self.kind == "bytes":
            return {"limit_bytes": int(self.value)}
        if rate_bps is None or rtt_ns is None:
            raise ValueError("a BDP-relative buffer needs a rate and an RTT")
        bdp_bytes = Fraction(rate_bps) * rtt_ns / (8 * 10**9)
        pkts = int(Fraction(self.value) * bdp_bytes / MTU_BYTES + Fraction(1, 2))
        return {"limit_pkts": max(1, pkts)}

    def __str__(self) -> str:
        if self.kind == "pkts":
            return f"{self.value}pkt"
        if self.kind == "bytes":
            return str(Size(int(self.value)))
        return f"{format(Decimal(self.value).normalize(), 'f')}bdp"


@dataclass(frozen=True)
class Window(_Quantity):
    """A measurement window ``"START:STOP"`` (``"120s:300s"``); ``"120s:"`` runs to the end of the run.

    Summaries use the per-interval rows whose interval lies inside the window, as the papers use
    iperf's 1 s reports from 120 s to 300 s.
    """

    start: Time
    stop: Time | None = None
    allowed: ClassVar[str] = ALLOWED_WINDOW

    @classmethod
    def parse(cls, text: object) -> Window:
        """Read ``"120s:300s"`` or ``"120s:"``; also a pair ``("120s", "300s")``."""
        if isinstance(text, (tuple, list)) and len(text) == 2:
            start, stop = text
        elif isinstance(text, str) and text.count(":") == 1:
            start, stop = (part.strip() for part in text.split(":"))
        else:
            raise UnitError(text, ALLOWED_WINDOW)
        try:
            window = cls(Time.parse(start), Time.parse(stop) if stop not in ("", None) else None)
        except UnitError:
            raise UnitError(text, ALLOWED_WINDOW) from None
        if window.start.ns < 0 or (window.stop is not None and window.stop <= window.start):
            raise UnitError(text, "a window 'START:STOP' with 0 <= START < STOP, like '120s:300s'")
        return window

    def bounds(self, duration: Time) -> tuple[Time, Time]:
        """``(start, stop)`` with an open end closed at ``duration``."""
        return self.start, self.stop if self.stop is not None else duration

    def __str__(self) -> str:
        return f"{self.start}:{self.stop if self.stop is not None else ''}"


def parse_time(text: object) -> Time:
    """``"25ms"`` → ``Time(ns=25_000_000)``."""
    return Time.parse(text)


def parse_rate(text: object) -> Rate:
    """``"100Mbps"`` → ``Rate(bps=100_000_000)``."""
    return Rate.parse(text)


def parse_size(text: object) -> Size:
    """``"64KB"`` → ``Size(bytes=65536)``."""
    return Size.parse(text)


def parse_buffer(text: object) -> Buffer:
    """``"0.2bdp"`` → ``Buffer("bdp", Decimal("0.2"))``."""
    return Buffer.parse(text)
