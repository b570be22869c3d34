"""Scenarios: what to simulate, validated, and lowered to the engine spec.

A :class:`Scenario` is read from TOML (:func:`load_scenario`) or built in Python; the layout is
documented in ``docs/scenario.md``. Quantities carry units (:mod:`tcplab.units`). Validation
reports the first problem as one :class:`~tcplab.errors.ScenarioError` naming the field, the value
and what is allowed. :meth:`Scenario.to_engine_spec` lowers a valid scenario to exactly the JSON
the engine reads (``docs/engine-spec.md``): integers whose key names the unit.

Models are immutable; :meth:`Scenario.override` returns a changed copy (``{"topology.rtt": "50ms"}``)
that is validated again.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Optional, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    PlainValidator,
    Tag,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from . import variants
from .errors import MISSING, ScenarioError, from_validation_error
from .units import MTU_BYTES, Buffer, Rate, Size, Time, UnitError, Window

__all__ = [
    "Scenario",
    "Dumbbell",
    "Graph",
    "Link",
    "TcpSettings",
    "CcSettings",
    "TcpFlow",
    "CbrFlow",
    "DccpFlow",
    "CbrSteps",
    "RateSteps",
    "load_scenario",
    "read_toml",
    "set_path",
]

#: The papers measure from 120 s to the end of runs of 300 s (and 600 s).
PAPERS_WINDOW_START = Time(120 * 10**9)
PAPERS_RUN = Time(300 * 10**9)

#: IP (20 B) + TCP (20 B) headers; TCP timestamps (RFC 7323) add 12 B.
IP_TCP_HEADER_BYTES = 40
TIMESTAMP_OPTION_BYTES = 12


# --- field types -------------------------------------------------------------------------------


def _invalid(allowed: str, **ctx: Any) -> PydanticCustomError:
    """A tcplab validation error; ``at`` (a path below the model) and ``value`` may be given."""
    return PydanticCustomError("tcplab", allowed.replace("{", "(").replace("}", ")"), ctx)


def _magnitude(q: Time | Rate | Size | Buffer) -> Any:
    if isinstance(q, Time):
        return q.ns
    if isinstance(q, Rate):
        return q.bps
    if isinstance(q, Size):
        return q.bytes
    return q.value


def _quantity_validator(cls: type, what: str, example: str, *, positive: bool = True) -> Callable[[object], Any]:
    """The check of a quantity with units that must be positive (or non-negative)."""

    def validate(value: object) -> Any:
        try:
            q = cls.coerce(value)  # type: ignore[attr-defined]
        except UnitError as e:
            raise _invalid(f"expected {e.allowed}") from None
        m = _magnitude(q)
        if m < 0 or (positive and m == 0):
            raise _invalid(f"expected a {'positive' if positive else 'non-negative'} {what} like '{example}'")
        if m >= 2**63:  # the engine's integers
            raise _invalid(f"expected a smaller {what}")
        return q

    return validate


def _quantity(cls: type, what: str, example: str, *, positive: bool = True) -> Any:
    """A field type for a quantity with units that must be positive (or non-negative)."""
    return Annotated[
        cls,
        PlainValidator(_quantity_validator(cls, what, example, positive=positive)),
        PlainSerializer(str, return_type=str),
        WithJsonSchema({"type": "string", "description": cls.allowed}),  # type: ignore[attr-defined]
    ]


PositiveTime = _quantity(Time, "time", "25ms")
NonNegativeTime = _quantity(Time, "time", "0s", positive=False)
PositiveRate = _quantity(Rate, "rate", "10Mbps")
NonNegativeRate = _quantity(Rate, "rate", "1Mbps", positive=False)
PositiveSize = _quantity(Size, "size", "64KB")
PositiveBuffer = _quantity(Buffer, "buffer", "100pkt")


def _window(value: object) -> Window:
    try:
        return Window.coerce(value)
    except UnitError as e:
        raise _invalid(f"expected {e.allowed}") from None


MeasurementWindow = Annotated[
    Window, PlainValidator(_window), PlainSerializer(str, return_type=str), WithJsonSchema({"type": "string"})
]


def _probability(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 <= value < 1):
        raise _invalid("expected a probability in [0, 1) like 0.001")
    return float(value)


Probability = Annotated[float, PlainValidator(_probability), WithJsonSchema({"type": "number"})]


def _integer(minimum: int, maximum: int | None = None) -> Any:
    def validate(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (maximum is not None and value > maximum):
            top = f" and <= {maximum}" if maximum is not None else ""
            raise _invalid(f"expected an integer >= {minimum}{top}")
        return value

    return Annotated[int, PlainValidator(validate), WithJsonSchema({"type": "integer", "minimum": minimum})]


#: The DSCP names a flow's ``dscp`` takes (RFC 2474, 2597, 3246, 5865, 8622), as iperf3 ``--dscp``
#: and tc know them: class selectors, assured forwarding, expedited forwarding, voice admit, lower effort.
DSCP_NAMES: dict[str, int] = {
    **{f"CS{i}": 8 * i for i in range(8)},
    **{f"AF{c}{d}": 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)},
    "EF": 46,
    "VA": 44,
    "LE": 1,
}


def _dscp(value: object) -> int:
    if isinstance(value, str) and value.strip().upper() in DSCP_NAMES:
        return DSCP_NAMES[value.strip().upper()]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 63:
        raise _invalid("expected a DSCP: an integer 0 to 63 or a name (EF, VA, LE, CS0-CS7, AF11-AF43)")
    return value


Dscp = Annotated[int, PlainValidator(_dscp), WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 0, "maximum": 63}, {"type": "string"}]})]


def _tagged_by_kind(default: str) -> Callable[[Any], str]:
    """Discriminator for ``kind``-tagged tables; ``kind`` may be left out for ``default``."""

    def tag(value: Any) -> str:
        kind = value.get("kind", default) if isinstance(value, dict) else getattr(value, "kind", default)
        return f"~{kind}"

    return tag


# --- the base model ----------------------------------------------------------------------------

#: How many tcplab models are being validated, one inside another, in this context.
_DEPTH: ContextVar[int] = ContextVar("tcplab_validation_depth", default=0)


class _Model(BaseModel):
    """Immutable, no unknown keys, and a validation failure raised as one ScenarioError."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @classmethod
    def keys(cls) -> list[str]:
        """The keys a scenario file may use for this table."""
        return [f.alias or name for name, f in cls.model_fields.items()]

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = set(cls.keys()) | set(cls.model_fields)
            for key, value in data.items():
                if key not in known:
                    raise _invalid(f"unknown key; allowed keys: {', '.join(cls.keys())}", at=str(key), value=value)
        return data

    @model_validator(mode="wrap")
    @classmethod
    def _one_error(cls, data: Any, handler: Callable[[Any], Any]) -> Any:
        # Nested models re-raise pydantic's error so that it gains their location; the outermost
        # model validated turns the first problem into a ScenarioError.
        depth = _DEPTH.get()
        token = _DEPTH.set(depth + 1)
        try:
            model = handler(data)
            model._check()
            return model
        except (ValidationError, PydanticCustomError) as e:
            if depth:
                raise
            raise from_validation_error(e) from None
        finally:
            _DEPTH.reset(token)

    def _check(self) -> None:
        """Checks across fields, run after the fields are valid; raise ``_invalid(..., at=...)``."""


# --- topology ----------------------------------------------------------------------------------


def _number_in(low: float, high: float, low_open: bool, high_open: bool, example: str) -> Any:
    def validate(value: object) -> float:
        ok = not isinstance(value, bool) and isinstance(value, (int, float))
        if ok:
            v = float(value)
            ok = (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
        if not ok:
            interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
            raise _invalid(f"expected a number in {interval} like {example}")
        return float(value)  # type: ignore[arg-type]

    return Annotated[float, PlainValidator(validate), WithJsonSchema({"type": "number"})]


class AdaptiveRed(_Model):
    """Adaptive RED's parameters (``adaptive = true``, or a table, in ``[topology.red]``), defaults
    those of ns-2.35's ``Queue/RED`` with ``adaptive_ 1`` (``docs/queues/red.md``)."""

    alpha: _number_in(0, 1, True, False, "0.01") = Field(0.01, description="max_p's additive increase, at most max_p / 4 (ns-2 alpha_)")  # type: ignore[valid-type]
    beta: _number_in(0, 1, True, True, "0.9") = Field(0.9, description="max_p's multiplicative decrease (ns-2 beta_)")  # type: ignore[valid-type]
    interval: PositiveTime = Field(Time(500_000_000), description="at least this long between changes of max_p (ns-2 interval_)")
    top: _number_in(0, 1, True, False, "0.5") = Field(0.5, description="max_p is raised only while below this (ns-2 top_)")  # type: ignore[valid-type]
    bottom: Optional[_number_in(0, 1, True, True, "0.01")] = Field(  # type: ignore[valid-type]
        None, description="max_p is lowered only while above this; default min(0.01, 80 kb/s over the link's rate) (ns-2 bottom_)"
    )

    def _check(self) -> None:
        if self.bottom is not None and self.bottom >= self.top:
            raise _invalid(f"expected less than top ({self.top:g})", at="bottom", value=self.bottom)

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``adaptive`` table."""
        out: dict[str, Any] = {"alpha": self.alpha, "beta": self.beta, "interval_ns": self.interval.ns, "top": self.top}
        if self.bottom is not None:
            out["bottom"] = self.bottom
        return out


class _Thresholds(_Model):
    """A table with ``min_thresh`` and ``max_thresh`` (RED's, FRED's): when both are given, the
    maximum must be above the minimum."""

    def _check(self) -> None:
        lo, hi = self.min_thresh, self.max_thresh  # type: ignore[attr-defined]
        if lo is not None and hi is not None and hi <= lo:
            raise _invalid(f"expected more than min_thresh ({lo:g})", at="max_thresh", value=hi)


class Red(_Thresholds):
    """RED's parameters (``queue = "red"``), defaults those of ns-2.35's ``Queue/RED``
    (``docs/queues/red.md``). Thresholds count packets of ``mean_packet_size`` in byte mode."""

    min_thresh: Optional[_number_in(0, 1e9, True, False, "5")] = Field(  # type: ignore[valid-type]
        None, description="average queue (packets) below which RED drops nothing; default max(5, 2.5 ms of the link's packets)"
    )
    max_thresh: Optional[_number_in(0, 1e9, True, False, "15")] = Field(  # type: ignore[valid-type]
        None, description="average queue (packets) at which the drop probability reaches max_p; default 3 × min_thresh"
    )
    max_p: _number_in(0, 1, True, False, "0.1") = Field(0.1, description="drop probability at max_thresh (ns-2: 1/linterm_)")  # type: ignore[valid-type]
    weight: Optional[_number_in(0, 1, True, True, "0.002")] = Field(  # type: ignore[valid-type]
        None, description="weight of the average's moving mean; default from the link's rate and delay, as ns-2's q_weight_ = -1"
    )
    gentle: bool = Field(True, description="above max_thresh the probability rises to 1 at twice it (else 1 at once)")
    wait: bool = Field(True, description="no early drop until count · p ≥ 1 after the last one")
    byte_mode: bool = Field(True, description="the average counts bytes and a packet's drop probability scales with its size (ns-2 bytes_ and queue_in_bytes_)")
    mean_packet_size: PositiveSize = Field(Size(500), description="packet size RED's byte mode and link rate count in (ns-2 mean_pktsize_)")
    adaptive: Optional[AdaptiveRed] = Field(
        None, description="Adaptive RED (ns-2 adaptive_): true, or a table of its parameters; max_p is tuned to keep the average between the thresholds"
    )
    ecn: Optional[bool] = Field(
        None, description="mark ECN-capable packets CE instead of dropping them early, below the forced-drop region (ns-2 setbit_); default false"
    )

    @field_validator("adaptive", mode="before")
    @classmethod
    def _true_is_the_defaults(cls, value: Any) -> Any:
        return {} if value is True else None if value is False else value

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``red`` table."""
        out: dict[str, Any] = {
            "max_p": self.max_p,
            "gentle": self.gentle,
            "wait": self.wait,
            "byte_mode": self.byte_mode,
            "mean_pkt_bytes": self.mean_packet_size.bytes,
        }
        for key, value in (("min_thresh_pkts", self.min_thresh), ("max_thresh_pkts", self.max_thresh), ("weight", self.weight)):
            if value is not None:
                out[key] = value
        if self.adaptive is not None:
            out["adaptive"] = self.adaptive.engine()
        return out | _ecn_if(self.ecn, False)


def _ce_threshold(threshold: Optional[Time]) -> dict[str, int]:
    """CoDel's ``ce_threshold`` for the engine spec, only when set (earlier specs had none)."""
    return {} if threshold is None else {"ce_threshold_ns": threshold.ns}


def _selector_bytes(text: str) -> tuple[int, int]:
    """tc's ``VALUE/MASK`` of ``ce_threshold_selector``: two bytes, VALUE's bits within MASK."""
    try:
        value, mask = (int(part.strip(), 0) for part in text.split("/"))
    except ValueError:
        raise _invalid("expected 'VALUE/MASK' like '0x1/0x1' (bytes of the TOS field)") from None
    if not (0 <= value <= 255 and 1 <= mask <= 255) or value & ~mask:
        raise _invalid("expected 'VALUE/MASK' like '0x1/0x1': a MASK of 1 to 0xff and a VALUE within it")
    return value, mask


def _ecn_if(ecn: Optional[bool], default: bool) -> dict[str, bool]:
    """A discipline's ``ecn`` for the engine spec, only when it differs from the engine's (and
    Linux's) default for it, so that the specs of scenarios without it stay as they were."""
    return {} if ecn is None or ecn == default else {"ecn": ecn}


class Codel(_Model):
    """CoDel's parameters (``queue = "codel"``), defaults those of Linux's ``sch_codel`` and
    RFC 8289 (``docs/queues/codel.md``)."""

    target: PositiveTime = Field(Time(5_000_000), description="sojourn time CoDel tolerates at the head of the queue")
    interval: PositiveTime = Field(
        Time(100_000_000), description="how long the sojourn must stay above target before the first drop; the control law's base"
    )
    mtu: PositiveSize = Field(Size(1500), description="bytes left queued at or below which CoDel drops nothing (Linux: the device's MTU)")
    ecn: Optional[bool] = Field(None, description="mark ECN-capable packets CE instead of dropping them (Linux ecn); default false, as Linux's codel")
    ce_threshold: Optional[PositiveTime] = Field(None, description="mark CE every ECN-capable packet that leaves after a longer sojourn, whatever CoDel's state (Linux ce_threshold: the shallow step marking DCTCP expects); default unset, off")

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``codel`` table."""
        return {"target_ns": self.target.ns, "interval_ns": self.interval.ns, "mtu_bytes": self.mtu.bytes, **_ecn_if(self.ecn, False), **_ce_threshold(self.ce_threshold)}


def _sixteenths(example: str) -> Any:
    """A number in [0, 2] in steps of 1/16, as Linux's PIE counts its gains."""

    def validate(value: object) -> float:
        ok = not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= float(value) <= 2
        if not ok or float(value * 16) != round(float(value * 16)):  # type: ignore[operator]
            raise _invalid(f"expected a number in [0, 2] in steps of 1/16 (0.0625) like {example}")
        return float(value)  # type: ignore[arg-type]

    return Annotated[float, PlainValidator(validate), WithJsonSchema({"type": "number"})]


class Pie(_Model):
    """PIE's parameters (``queue = "pie"``), defaults those of Linux's ``sch_pie`` and RFC 8033
    (``docs/queues/pie.md``)."""

    target: PositiveTime = Field(Time(15_000_000), description="queueing delay PIE steers towards")
    tupdate: PositiveTime = Field(Time(15_000_000), description="how often the drop probability is recalculated")
    alpha: _sixteenths("0.125") = Field(0.125, description="gain on the delay's distance from target, per second of delay")  # type: ignore[valid-type]
    beta: _sixteenths("1.25") = Field(1.25, description="gain on the delay's change since the last update, per second of delay")  # type: ignore[valid-type]
    mtu: PositiveSize = Field(Size(1500), description="PIE drops nothing while fewer than two of these are queued (Linux: the device's MTU)")
    ecn: Optional[bool] = Field(None, description="mark ECN-capable packets CE instead of dropping them while the drop probability is at most 10% (Linux ecn, RFC 8033); default false, as Linux's pie")

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``pie`` table."""
        return {
            "target_ns": self.target.ns,
            "tupdate_ns": self.tupdate.ns,
            "alpha": round(self.alpha * 16),
            "beta": round(self.beta * 16),
            "mtu_bytes": self.mtu.bytes,
            **_ecn_if(self.ecn, False),
        }


class Drr(_Model):
    """DRR's parameters (``queue = "drr"``), defaults those of ns-2.35's ``Queue/DRR``
    (``docs/queues/drr.md``)."""

    quantum: PositiveSize = Field(Size(250), description="bytes a source may send per turn of the round (ns-2 quantum_)")

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``drr`` table."""
        return {"quantum_bytes": self.quantum.bytes}


class FqCodel(_Model):
    """FQ-CoDel's parameters (``queue = "fq_codel"``), defaults those of Linux's
    ``sch_fq_codel`` and RFC 8290 (``docs/queues/fq_codel.md``)."""

    target: PositiveTime = Field(Time(5_000_000), description="each flow's CoDel: the sojourn time it tolerates")
    interval: PositiveTime = Field(Time(100_000_000), description="each flow's CoDel: how long above target before it drops")
    quantum: PositiveSize = Field(Size(1500), description="bytes per flow per round (Linux: the MTU with its Ethernet header, 1514)")
    drop_batch: _integer(1, 65535) = Field(64, description="at most this many packets dropped from the fattest flow when the buffer overflows")  # type: ignore[valid-type]
    mtu: PositiveSize = Field(Size(1500), description="bytes left queued (the whole queue's) at or below which CoDel drops nothing")
    ecn: Optional[bool] = Field(None, description="each flow's CoDel marks ECN-capable packets CE instead of dropping them (Linux ecn); default true, as Linux's fq_codel")
    ce_threshold: Optional[PositiveTime] = Field(None, description="each flow's CoDel marks CE every ECN-capable packet that leaves after a longer sojourn, whatever its state (Linux ce_threshold, for DCTCP); default unset, off")
    ce_threshold_selector: Optional[str] = Field(
        None, description="'VALUE/MASK' (bytes, e.g. '0x1/0x1'): ce_threshold marks only packets whose TOS byte (DSCP and ECN) masked equals VALUE, as tc's ce_threshold_selector; '0x1/0x1' picks ECT(1) and CE, the L4S identifier; default unset: every packet"
    )

    @field_validator("ce_threshold_selector")
    @classmethod
    def _selector(cls, value: Optional[str]) -> Optional[str]:
        if value is not None:
            _selector_bytes(value)
        return value

    def _check(self) -> None:
        if self.ce_threshold_selector is not None and self.ce_threshold is None:
            raise _invalid("expected ce_threshold with it (the selector picks the packets ce_threshold marks)", at="ce_threshold_selector", value=self.ce_threshold_selector)

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``fq_codel`` table."""
        selector: dict[str, int] = {}
        if self.ce_threshold_selector is not None:
            value, mask = _selector_bytes(self.ce_threshold_selector)
            selector = {"ce_threshold_selector": value, "ce_threshold_mask": mask}
        return {
            "target_ns": self.target.ns,
            "interval_ns": self.interval.ns,
            "quantum_bytes": self.quantum.bytes,
            "drop_batch": self.drop_batch,
            "mtu_bytes": self.mtu.bytes,
            **_ecn_if(self.ecn, True),
            **_ce_threshold(self.ce_threshold),
            **selector,
        }


class FqPie(Pie):
    """FQ-PIE's parameters (``queue = "fq_pie"``), defaults those of Linux's ``sch_fq_pie``
    (``docs/queues/fq_pie.md``): each flow's PIE takes PIE's keys, the round robin a ``quantum``."""

    quantum: PositiveSize = Field(Size(1500), description="bytes per flow per round (Linux: the MTU with its Ethernet header, 1514)")
    ecn: Optional[bool] = Field(None, description="mark ECN-capable packets CE instead of dropping them while the flow's drop probability is at most ecn_prob (Linux ecn); default false, as Linux's fq_pie")
    ecn_prob: _integer(0, 100) = Field(10, description="percent: the drop probability at or below which ecn marks instead of dropping (Linux ecn_prob)")  # type: ignore[valid-type]

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``fq_pie`` table."""
        return {**super().engine(), "quantum_bytes": self.quantum.bytes, "ecn_prob": self.ecn_prob}


class Fred(_Thresholds):
    """FRED's parameters (``queue = "fred"``), defaults those of Lin and Morris's paper
    (``docs/queues/fred.md``)."""

    min_thresh: Optional[_number_in(0, 1e9, True, False, "16")] = Field(  # type: ignore[valid-type]
        None, description="average queue (packets) below which FRED drops nothing at random; default a quarter of the buffer"
    )
    max_thresh: Optional[_number_in(0, 1e9, True, False, "32")] = Field(  # type: ignore[valid-type]
        None, description="average queue (packets) from which FRED drops every arrival; default 2 × min_thresh"
    )
    max_p: _number_in(0, 1, True, False, "0.02") = Field(0.02, description="random-drop probability as the average nears max_thresh")  # type: ignore[valid-type]
    weight: _number_in(0, 1, True, True, "0.002") = Field(0.002, description="weight of the average's moving mean (w_q)")  # type: ignore[valid-type]
    min_q: _integer(1, 1_000_000) = Field(2, description="packets a flow may queue before random drops can fall on it")  # type: ignore[valid-type]
    mean_packet_size: PositiveSize = Field(Size(500), description="packet size the idle decay and a buffer in bytes count in (ns-2 mean_pktsize_)")
    many_flows: bool = Field(False, description="the variant for many flows (FREDL): above max_thresh each flow still keeps min_q packets")

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``fred`` table."""
        out: dict[str, Any] = {
            "max_p": self.max_p,
            "weight": self.weight,
            "min_q": self.min_q,
            "mean_pkt_bytes": self.mean_packet_size.bytes,
            "many_flows": self.many_flows,
        }
        for key, value in (("min_thresh_pkts", self.min_thresh), ("max_thresh_pkts", self.max_thresh)):
            if value is not None:
                out[key] = value
        return out


class Csfq(_Model):
    """CSFQ's parameters (``queue = "csfq"``), defaults those of paper 004's runs
    (``docs/queues/csfq.md``)."""

    k: PositiveTime = Field(Time(100_000_000), description="time constant of each flow's rate estimate, the label (K)")
    kc: PositiveTime = Field(
        Time(100_000_000), description="time constant of the aggregate rates, and the period over which congestion is judged (K_c)"
    )
    threshold: _number_in(0, 1, True, False, "0.75") = Field(  # type: ignore[valid-type]
        0.75, description="fraction of the buffer below which an uncongested link stops dropping"
    )

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``csfq`` table."""
        return {"k_ns": self.k.ns, "kc_ns": self.kc.ns, "threshold": self.threshold}


_positive_rate = _quantity_validator(Rate, "rate", "18Mbps")


def _cake_bandwidth(value: object) -> str | Rate:
    """CAKE's ``bandwidth``: ``unlimited``, ``link`` or a positive rate (the shaper's)."""
    if value in ("unlimited", "link"):
        return value  # type: ignore[return-value]
    try:
        return _positive_rate(value)
    except PydanticCustomError:
        raise _invalid("expected 'unlimited', 'link' or a positive rate like '18Mbps'") from None


CakeBandwidth = Annotated[
    Union[str, Rate],
    PlainValidator(_cake_bandwidth),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string", "description": "unlimited, link or a rate like 18Mbps"}),
]


class Cake(_Model):
    """CAKE's parameters (``queue = "cake"``), defaults those of Linux's ``sch_cake``
    (``docs/queues/cake.md``)."""

    target: PositiveTime = Field(Time(5_000_000), description="each queue's COBALT: the sojourn time it tolerates (Linux target)")
    interval: PositiveTime = Field(Time(100_000_000), description="each queue's COBALT: its control law's interval (Linux rtt)")
    flow_mode: Literal["flowblind", "srchost", "dsthost", "hosts", "flows", "dual-srchost", "dual-dsthost", "triple-isolate"] = Field(
        "triple-isolate",
        description="what a queue is: one for all (flowblind), per source, destination or pair of hosts, or per flow (flows); "
        "dual-srchost, dual-dsthost and triple-isolate (the default) are per flow with fairness between the hosts first",
    )
    bandwidth: CakeBandwidth = Field(
        "unlimited",
        description="unlimited (Linux's default: no shaper); link: as bandwidth set to the link's rate, which tunes the target, "
        "interval and per-flow quantum to it (the link itself paces the packets); or a rate like '18Mbps': the shaper, "
        "which sends Ethernet frames (IP packets + 14 bytes) at that rate whatever the link's, tuned to it",
    )
    overhead: Optional[_integer(-64, 256)] = Field(  # type: ignore[valid-type]
        None,
        description="bytes of link-layer framing added to each IP packet by the shaper's and the round robin's count (Linux overhead; "
        "ethernet 38, docsis 18, pppoe-ptm 30, pppoe-llcsnap 40 ...); unset (Linux's default, raw) counts the Ethernet frame, IP + 14",
    )
    mpu: Optional[_integer(0, 256)] = Field(  # type: ignore[valid-type]
        None, description="the least bytes a packet is counted as, after the overhead (Linux mpu: ethernet 84, docsis 64); default 0"
    )
    atm: Optional[Literal["noatm", "atm", "ptm"]] = Field(
        None,
        description="the link's cells, counted after the overhead and mpu: atm (ADSL: 48 bytes carried in each 53-byte cell), "
        "ptm (VDSL2: a byte per 64 or part of 64) or noatm (the default)",
    )
    ingress: Optional[bool] = Field(
        None,
        description="shape what has already crossed the shaped link (Linux ingress, as for a download shaped on the receiving side): "
        "the packets CAKE drops count against the shaper as if sent, and COBALT's target grows to two MTU times per bulk flow; "
        "default false (egress)",
    )
    ack_filter: Optional[Literal["none", "filter", "aggressive"]] = Field(
        None,
        description="the ACK filter (Linux ack-filter): a pure ACK arriving may take out an older ACK of its flow it makes redundant "
        "(once two such are queued; aggressive: also a lone one just before it); default none",
    )

    diffserv: Optional[Literal["diffserv3", "diffserv4", "diffserv8", "precedence", "besteffort"]] = Field(
        None,
        description="the tins packets are sorted into by their DSCP (Linux's keywords): diffserv3 (the default: bulk for CS1 and LE at "
        "1/16 of the rate, voice for EF, VA, CS6 and CS7 at 1/4, best effort for the rest), diffserv4 (adds video, 1/2), diffserv8, "
        "precedence (8 tins by the DSCP's top three bits), or besteffort (one tin); a tin has priority up to its share, then shares",
    )
    wash: Optional[bool] = Field(
        None, description="clear the DSCP of the packets CAKE sends, once each has chosen its tin (Linux wash; the ECN field stays); default false"
    )

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``cake`` table; the keys after ``bandwidth`` only where they are set
        (the engine's defaults are Linux's)."""
        bandwidth = {"rate_bps": self.bandwidth.bps} if isinstance(self.bandwidth, Rate) else self.bandwidth
        atm = "none" if self.atm == "noatm" else self.atm
        optional = {
            "overhead": self.overhead, "mpu": self.mpu, "atm": atm, "ingress": self.ingress,
            "ack_filter": self.ack_filter, "diffserv": self.diffserv, "wash": self.wash,
        }  # fmt: skip
        spec = {"target_ns": self.target.ns, "interval_ns": self.interval.ns, "flow_mode": self.flow_mode, "bandwidth": bandwidth}
        return spec | {key: value for key, value in optional.items() if value is not None}


class Dualpi2(_Model):
    """DualPI2's parameters (``queue = "dualpi2"``), defaults those of Linux's ``sch_dualpi2``
    (RFC 9332; ``docs/queues/dualpi2.md``)."""

    target: PositiveTime = Field(Time(15_000_000), description="the queueing delay PI2 steers the longer-waiting of the two queues' heads to")
    tupdate: PositiveTime = Field(Time(16_000_000), description="how often PI2 updates its probability")
    alpha: _number_in(1 / 256, 8388607, False, False, "0.16") = Field(0.16, description="PI2's integral gain, Hz, rounded to 1/256 Hz as Linux keeps it (0.16: Linux's 41/256)")  # type: ignore[valid-type]
    beta: _number_in(1 / 256, 8388607, False, False, "3.2") = Field(3.2, description="PI2's proportional gain, Hz, rounded to 1/256 Hz (3.2: Linux's 819/256)")  # type: ignore[valid-type]
    step_thresh: PositiveTime = Field(Time(1_000_000), description="an L4S packet that waited longer is marked CE (dropped if not ECN-capable)")
    min_qlen_step: _integer(0, 2**32 - 1) = Field(0, description="the step applies to L4S arrivals that find at least this many packets in the L queue")  # type: ignore[valid-type]
    coupling_factor: _integer(1, 255) = Field(2, description="k: L4S packets are marked with k times PI2's probability p', classic packets dropped or marked with p'^2")  # type: ignore[valid-type]
    drop_overload: bool = Field(True, description="once k·p' exceeds 1, drop L4S packets as classic ones (with p'^2) instead of marking them all")
    drop_early: bool = Field(False, description="apply the probabilities on arrival instead of at dequeue")
    c_protection: _integer(0, 100) = Field(10, description="percent: the classic queue's weight in the round robin between the two queues")  # type: ignore[valid-type]
    ecn_mask: Literal["l4s_ect", "cla_ect", "any_ect"] = Field("l4s_ect", description="which packets go to the L queue: ECT(1) and CE (l4s_ect, RFC 9331's identifier), ECT(0) and CE (cla_ect), or every ECN-capable one (any_ect)")
    mtu: PositiveSize = Field(Size(1500), description="nothing is dropped or marked while less than two of these are queued, and the round robin's credit starts at mtu x (weights' difference) (Linux: the device's MTU)")

    def engine(self) -> dict[str, Any]:
        """The engine spec's ``dualpi2`` table."""
        return {
            "target_ns": self.target.ns,
            "tupdate_ns": self.tupdate.ns,
            "alpha": round(self.alpha * 256),
            "beta": round(self.beta * 256),
            "step_thresh_ns": self.step_thresh.ns,
            "min_qlen_step": self.min_qlen_step,
            "coupling_factor": self.coupling_factor,
            "drop_overload": self.drop_overload,
            "drop_early": self.drop_early,
            "c_protection": self.c_protection,
            "ecn_mask": self.ecn_mask,
            "mtu_bytes": self.mtu.bytes,
        }


QueueKind = Literal["droptail", "red", "codel", "pie", "drr", "fq_codel", "fq_pie", "fred", "csfq", "cake", "dualpi2"]

#: Every queue discipline: its one-line description and where its documentation is.
QUEUES: dict[str, tuple[str, str]] = {
    "droptail": ("FIFO, arrivals dropped at the buffer's limit (the default)", "docs/scenario.md"),
    "red": ("Random Early Detection as ns-2.35's Queue/RED (Floyd and Jacobson 1993)", "docs/queues/red.md"),
    "codel": ("CoDel as Linux's sch_codel (RFC 8289)", "docs/queues/codel.md"),
    "pie": ("PIE as Linux's sch_pie (RFC 8033)", "docs/queues/pie.md"),
    "drr": ("Deficit Round Robin as ns-2.35's Queue/DRR (Shreedhar and Varghese 1995)", "docs/queues/drr.md"),
    "fq_codel": ("FQ-CoDel as Linux's sch_fq_codel, its default qdisc (RFC 8290)", "docs/queues/fq_codel.md"),
    "fq_pie": ("FQ-PIE as Linux's sch_fq_pie: a queue and a PIE per flow", "docs/queues/fq_pie.md"),
    "fred": ("Flow Random Early Drop (Lin and Morris 1997)", "docs/queues/fred.md"),
    "csfq": ("Core-Stateless Fair Queueing (Stoica, Shenker and Zhang 1998)", "docs/queues/csfq.md"),
    "cake": ("CAKE as Linux's sch_cake: diffserv tins, a queue per flow with COBALT, host isolation, a shaper with overhead compensation, an ACK filter", "docs/queues/cake.md"),
    "dualpi2": ("DualPI2 as Linux's sch_dualpi2 (RFC 9332): an L4S queue and a classic one coupled by one PI2 controller", "docs/queues/dualpi2.md"),
}

# Each discipline but DropTail, and its parameter table's model (the table has its name).
_QUEUE_TABLES: dict[str, type[_Model]] = {"red": Red, "codel": Codel, "pie": Pie, "drr": Drr, "fq_codel": FqCodel, "fq_pie": FqPie, "fred": Fred, "csfq": Csfq, "cake": Cake, "dualpi2": Dualpi2}


class RateSteps(_Model):
    """A stepped rate (a CBR flow's, a link's): ``from``, ``from ± step``, … up to ``to``, changing
    ``every`` period."""

    from_: PositiveRate = Field(alias="from", description="first rate")
    to: PositiveRate = Field(description="last rate")
    step: PositiveRate = Field(description="rate change per step")
    every: PositiveTime = Field(description="time between steps")

    #: Steps beyond this are refused (a typo such as step = '1bps').
    MAX_STEPS: ClassVar[int] = 100_000

    def _check(self) -> None:
        if abs(self.to.bps - self.from_.bps) // self.step.bps > self.MAX_STEPS:
            raise _invalid(f"expected at most {self.MAX_STEPS} steps between 'from' and 'to'", at="step", value=str(self.step))

    def points(self) -> list[tuple[int, int]]:
        """``(offset_ns, rate_bps)`` from the schedule's origin; the last rate is ``to`` exactly."""
        lo, hi, step = self.from_.bps, self.to.bps, self.step.bps
        sign = 1 if hi >= lo else -1
        rates = [lo + sign * k * step for k in range(abs(hi - lo) // step + 1)]
        if rates[-1] != hi:
            rates.append(hi)
        return [(k * self.every.ns, rate) for k, rate in enumerate(rates)]


def _schedule_tag(value: Any) -> str:
    return "~points" if isinstance(value, (list, tuple)) else "~steps"


#: The name a CBR flow's steps had first; the same model.
CbrSteps = RateSteps

CbrSchedule = Annotated[
    Union[Annotated[RateSteps, Tag("~steps")], Annotated[list[tuple[NonNegativeTime, NonNegativeRate]], Tag("~points")]],
    Discriminator(_schedule_tag),
]

#: A link's rate over time: the CBR schedule's two forms; a rate of 0 takes the link down.
LinkSchedule = Annotated[
    Union[Annotated[RateSteps, Tag("~steps")], Annotated[list[tuple[NonNegativeTime, NonNegativeRate]], Tag("~points")]],
    Discriminator(_schedule_tag),
]


def schedule_points(schedule: RateSteps | list[tuple[Time, Rate]]) -> list[tuple[int, int]]:
    """``(offset_ns, rate_bps)`` of a schedule in either form, in time order."""
    if isinstance(schedule, RateSteps):
        return schedule.points()
    return sorted((t.ns, r.bps) for t, r in schedule)


def _link_schedule(schedule: RateSteps | list[tuple[Time, Rate]] | None, at: str) -> list[tuple[int, int]]:
    """A link schedule's points, refused when two share a time."""
    points = schedule_points(schedule) if schedule is not None else []
    for (t0, _), (t1, _) in zip(points, points[1:]):
        if t0 == t1:
            raise _invalid("expected one rate per time", at=at, value=str(Time(t1)))
    return points


class _QueueChoice(_Model):
    """A ``queue`` discipline and its parameter table (``red``, ``codel``, ``pie``, ``drr``,
    ``fq_codel``, ``fq_pie``, ``fred``, ``csfq``, ``cake``, ``dualpi2``), which only that discipline may have.

    All stay ``None`` for DropTail (``"droptail"`` written out is kept as ``None``), so that a
    DropTail scenario's run key is the one it had before tcplab had other disciplines."""

    @field_validator("queue", check_fields=False)
    @classmethod
    def _droptail_is_the_default(cls, value: Optional[str]) -> Optional[str]:
        return None if value == "droptail" else value

    def _check_queue(self, rate_bps: int) -> None:
        """Checks of ``queue`` and ``red`` on a link of ``rate_bps``."""
        red = self.red  # type: ignore[attr-defined]
        for table in _QUEUE_TABLES:
            if self.queue != table and getattr(self, table) is not None:  # type: ignore[attr-defined]
                raise _invalid(f"a [{table}] table only with queue = '{table}'", at=table, value=self.queue or "droptail")  # type: ignore[attr-defined]
        if red is not None and red.max_thresh is not None and red.min_thresh is None:
            # The automatic min_thresh, as the engine sets it (RedSpec::auto_min_thresh_pkts).
            auto = max(5.0, 0.005 * rate_bps / (8 * red.mean_packet_size.bytes) / 2)
            if red.max_thresh <= auto:
                raise _invalid(f"expected more than min_thresh ({auto:g}, set from the link's rate)", at="red.max_thresh", value=red.max_thresh)

    def queue_spec(self, limit: dict[str, int]) -> dict[str, Any]:
        """The engine's queue spec with the hard ``limit`` (``Buffer.limit``)."""
        kind = self.queue  # type: ignore[attr-defined]
        if kind is not None:
            table = getattr(self, kind) or _QUEUE_TABLES[kind]()
            return {"kind": kind, **limit, kind: table.engine()}  # type: ignore[attr-defined]
        return _droptail(limit)


class Dumbbell(_QueueChoice):
    """N sender/receiver pairs sharing one bottleneck; flow i uses pair i (N = number of flows).

    The delay goes on the bottleneck: its one-way delay is rtt/2 − 2·access_delay, so that every
    pair's base RTT = 2·(bottleneck delay + 2·access delay) = ``rtt`` (engine spec, "Base RTT").
    """

    kind: Literal["dumbbell"] = "dumbbell"
    bottleneck: PositiveRate = Field(description="bottleneck link rate, both directions")
    rtt: PositiveTime = Field(description="base (propagation) round-trip time of every pair")
    buffer: PositiveBuffer = Field(Buffer("bdp", 1), description="bottleneck queue limit ('1bdp', '834pkt', '1.2MB')")
    queue: Optional[QueueKind] = Field(None, description="bottleneck queue discipline, both directions: 'droptail' (the default), 'red', 'codel', 'pie', 'drr', 'fq_codel', 'fq_pie', 'fred', 'csfq', 'cake' or 'dualpi2'")
    red: Optional[Red] = Field(None, description="RED's parameters when queue = 'red' (default: ns-2.35's)")
    codel: Optional[Codel] = Field(None, description="CoDel's parameters when queue = 'codel' (default: Linux's)")
    pie: Optional[Pie] = Field(None, description="PIE's parameters when queue = 'pie' (default: Linux's)")
    drr: Optional[Drr] = Field(None, description="DRR's parameters when queue = 'drr' (default: ns-2.35's)")
    fq_codel: Optional[FqCodel] = Field(None, description="FQ-CoDel's parameters when queue = 'fq_codel' (default: Linux's)")
    fq_pie: Optional[FqPie] = Field(None, description="FQ-PIE's parameters when queue = 'fq_pie' (default: Linux's)")
    fred: Optional[Fred] = Field(None, description="FRED's parameters when queue = 'fred' (default: Lin and Morris's)")
    csfq: Optional[Csfq] = Field(None, description="CSFQ's parameters when queue = 'csfq' (default: paper 004's)")
    cake: Optional[Cake] = Field(None, description="CAKE's parameters when queue = 'cake' (default: Linux's)")
    dualpi2: Optional[Dualpi2] = Field(None, description="DualPI2's parameters when queue = 'dualpi2' (default: Linux's)")
    access_rate: PositiveRate = Field(Rate(10**9), description="rate of every access link")
    access_delay: NonNegativeTime = Field(Time(0), description="one-way delay of every access link")
    access_buffer: PositiveBuffer = Field(Buffer("pkts", 1000), description="access link queue limit (Linux txqueuelen 1000)")
    loss: Probability = Field(0.0, description="random loss probability on the forward bottleneck")
    reverse_loss: Probability = Field(0.0, description="random loss probability on the reverse (ACK) bottleneck")
    bottleneck_schedule: Optional[LinkSchedule] = Field(
        None,
        description="the bottleneck's rate over time, both directions: a list of [time, rate] from the run's start, or stepped "
        "{from, to, step, every} from 0; 'bottleneck' until the first time (and always for a buffer in 'bdp' and the queue's tuning)",
    )
    rtt_offset: Optional[NonNegativeTime] = Field(
        None,
        description="delay added to the round trip, half each way on the bottleneck, that the BDP a buffer in 'bdp' is sized by leaves out "
        "(an experiment's rtt_spread sets it per replication)",
    )

    def _check(self) -> None:
        self._check_queue(self.bottleneck.bps)
        self.rate_points()

    def rate_points(self) -> list[tuple[int, int]]:
        """``bottleneck_schedule`` as ``(time_ns, rate_bps)`` from the run's start (empty without one)."""
        return _link_schedule(self.bottleneck_schedule, "bottleneck_schedule")

    @property
    def loop_rtt(self) -> Time:
        """The round trip's delay: ``rtt`` plus ``rtt_offset``."""
        return Time(self.rtt.ns + (self.rtt_offset.ns if self.rtt_offset is not None else 0))

    @property
    def bottleneck_delay(self) -> Time:
        """One-way bottleneck propagation delay: (rtt + rtt_offset)/2 − 2·access_delay (rounded down to 1 ns)."""
        return Time(self.loop_rtt.ns // 2 - 2 * self.access_delay.ns)


class Link(_QueueChoice):
    """A one-way link of a graph topology."""

    from_: str = Field(alias="from", description="name of the sending node")
    to: str = Field(description="name of the receiving node")
    rate: PositiveRate = Field(description="link rate")
    delay: NonNegativeTime = Field(Time(0), description="one-way propagation delay")
    buffer: PositiveBuffer = Field(Buffer("pkts", 1000), description="queue limit in packets or bytes")
    queue: Optional[QueueKind] = Field(None, description="queue discipline: 'droptail' (the default), 'red', 'codel', 'pie', 'drr', 'fq_codel', 'fq_pie', 'fred', 'csfq', 'cake' or 'dualpi2'")
    red: Optional[Red] = Field(None, description="RED's parameters when queue = 'red' (default: ns-2.35's)")
    codel: Optional[Codel] = Field(None, description="CoDel's parameters when queue = 'codel' (default: Linux's)")
    pie: Optional[Pie] = Field(None, description="PIE's parameters when queue = 'pie' (default: Linux's)")
    drr: Optional[Drr] = Field(None, description="DRR's parameters when queue = 'drr' (default: ns-2.35's)")
    fq_codel: Optional[FqCodel] = Field(None, description="FQ-CoDel's parameters when queue = 'fq_codel' (default: Linux's)")
    fq_pie: Optional[FqPie] = Field(None, description="FQ-PIE's parameters when queue = 'fq_pie' (default: Linux's)")
    fred: Optional[Fred] = Field(None, description="FRED's parameters when queue = 'fred' (default: Lin and Morris's)")
    csfq: Optional[Csfq] = Field(None, description="CSFQ's parameters when queue = 'csfq' (default: paper 004's)")
    cake: Optional[Cake] = Field(None, description="CAKE's parameters when queue = 'cake' (default: Linux's)")
    dualpi2: Optional[Dualpi2] = Field(None, description="DualPI2's parameters when queue = 'dualpi2' (default: Linux's)")
    loss: Probability = Field(0.0, description="random loss probability")
    rate_schedule: Optional[LinkSchedule] = Field(
        None, description="the link's rate over time: a list of [time, rate] from the run's start, or stepped {from, to, step, every} from 0; 'rate' until the first time"
    )

    def _check(self) -> None:
        self._check_queue(self.rate.bps)
        self.rate_points()

    def rate_points(self) -> list[tuple[int, int]]:
        """``rate_schedule`` as ``(time_ns, rate_bps)`` from the run's start (empty without one)."""
        return _link_schedule(self.rate_schedule, "rate_schedule")

    @field_validator("buffer")
    @classmethod
    def _no_bdp(cls, value: Buffer) -> Buffer:
        if value.kind == "bdp":
            raise _invalid("expected packets or bytes like '50pkt' or '64KB' (a BDP fraction needs a dumbbell's RTT)")
        return value


class Graph(_Model):
    """Named nodes joined by one-way links; routing is static shortest path by hop count."""

    kind: Literal["graph"]
    nodes: list[str] = Field(min_length=2, description="node names")
    links: list[Link] = Field(min_length=1, description="one-way links; link id = position")

    def _check(self) -> None:
        seen: set[str] = set()
        for j, node in enumerate(self.nodes):
            if node in seen:
                raise _invalid("expected a node name not used before", at=f"nodes[{j}]", value=node)
            seen.add(node)
        for j, link in enumerate(self.links):
            for key, node in (("from", link.from_), ("to", link.to)):
                if node not in seen:
                    raise _invalid(f"expected one of the nodes: {', '.join(self.nodes)}", at=f"links[{j}].{key}", value=node)
            if link.from_ == link.to:
                raise _invalid("expected a node other than the link's 'from'", at=f"links[{j}].to", value=link.to)



Topology = Annotated[
    Union[Annotated[Dumbbell, Tag("~dumbbell")], Annotated[Graph, Tag("~graph")]],
    Discriminator(_tagged_by_kind("dumbbell")),
]


# --- congestion-control parameters ----------------------------------------------------------


def _cc_profiles() -> list[str]:
    from . import _core

    return list(_core.cc_profiles())


def _param_value(value: Any) -> float | None:
    """A parameter value as the engine takes it (a float; true/false as 1/0), or None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return None


def check_cc_params(algorithm: str, given: Mapping[str, Any], at: str) -> None:
    """Check ``given`` (parameter name → value) against ``algorithm``'s parameters in the engine's
    registry, the way the engine does; ``at`` is the user's path of the table (``cc.cubic``)."""
    params = {p["name"]: p for p in variants.ENGINE.get(algorithm, {}).get("params", [])}
    for name, value in given.items():
        p = params.get(name)
        if p is None:
            allowed = f"one of {', '.join(params)}" if params else f"no parameters ({algorithm} has none)"
            raise _invalid(f"expected a parameter of {algorithm}: {allowed}", at=f"{at}.{name}", value=value)
        v = _param_value(value)
        if v is None or not p["min"] <= v <= p["max"]:
            number = "a number " if v is None else ""
            raise _invalid(f"expected {number}{p['min']:g} to {p['max']:g} ({p['help']})", at=f"{at}.{name}", value=value)


class CcSettings(_Model):
    """The ``[cc]`` table: the parameter profile and, per congestion control, parameter values
    for every flow that runs it (``[cc.cubic] beta = 0.8``)."""

    profile: str = Field("linux", description="parameter profile: 'linux' (today's defaults) or an older kernel's, e.g. 'linux-2.6.22'")
    params: dict[str, dict[str, Any]] = Field(default_factory=dict, description="congestion control → {parameter: value}")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        # Every key but ``profile`` is a congestion control's table, named by its name or an alias.
        if not isinstance(data, dict):
            return data
        out: dict[str, Any] = {k: v for k, v in data.items() if k in ("profile", "params")}
        tables = {k: v for k, v in data.items() if k not in ("profile", "params")}
        if not tables:
            return out
        params: dict[str, dict[str, Any]] = {}
        for key, table in tables.items():
            try:
                name = variants.algorithm(key)["name"]
            except KeyError:
                raise _invalid(f"expected 'profile' or a congestion control: one of {', '.join(variants.ENGINE)}", at=str(key), value=table) from None
            if not isinstance(table, dict):
                raise _invalid(f"expected a table of {name}'s parameters like [cc.{name}]", at=str(key), value=table)
            check_cc_params(name, table, str(key))  # errors name the table as the user wrote it
            params.setdefault(name, {}).update(table)
        out["params"] = {**out.get("params", {}), **params}
        return out

    @model_serializer(mode="wrap")
    def _flat(self, handler: Callable[[Any], Any]) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            data.update(data.pop("params", None) or {})
        return data

    def _check(self) -> None:
        profiles = _cc_profiles()
        if self.profile not in profiles:
            raise _invalid(f"expected one of {', '.join(profiles)}", at="profile", value=self.profile)
        for name, table in self.params.items():
            check_cc_params(name, table, name)  # tables given as `params` directly


# --- flows -------------------------------------------------------------------------------------


#: Kernel profiles older than RACK-TLP (Linux 4.4, default from 4.18) and TSO autosizing (3.12):
#: their flows default to the duplicate-ACK threshold and to one segment at a time.
OLD_STACK_PROFILES = frozenset({"linux-2.6.22"})


class TcpSettings(_Model):
    """Settings of TCP flows; the ``[tcp]`` table sets them for all, a flow may override any.

    Defaults follow Linux: initial window 10 (RFC 6928), delayed ACKs (40 ms), timestamps,
    minimum RTO 200 ms, initial RTO 1 s (RFC 6298 (2.1)), maximum RTO 120 s.
    """

    mss: Optional[PositiveSize] = Field(None, description="maximum segment size, 64B to 65000B; default 1500 B MTU − headers (1448 B, 1460 B without timestamps)")
    init_cwnd: _integer(1) = Field(10, description="initial congestion window in segments")  # type: ignore[valid-type]
    rwnd: PositiveSize = Field(Size(6 * 1024**2), description="receiver's advertised window (with rcvbuf_autotuning: the largest it grows to, Linux's tcp_rmem[2])")
    sndbuf: PositiveSize = Field(Size(4 * 1024**2), description="send buffer; caps data in flight")
    delayed_ack: bool = Field(True, description="ACK every second segment or after delack_timeout")
    delack_timeout: PositiveTime = Field(Time(40_000_000), description="delayed-ACK timer")
    timestamps: bool = Field(True, description="TCP timestamps option (12 B per segment)")
    timestamp_offsets: Optional[bool] = Field(None, description="with timestamps, each receiver adds a random per-connection offset to its TSvals, as Linux does with net.ipv4.tcp_timestamps = 1 (the default of today's kernels); false: the clock as it is (tcp_timestamps = 2, older kernels). Only TCP-LP reads the receiver's TSval (docs/algorithms/lp.md). Default: true, false with the linux-2.6.22 profile")
    sack: Optional[bool] = Field(None, description="receiver sends SACK blocks; default from the variant")
    prr: Optional[bool] = Field(None, description="proportional rate reduction (RFC 6937); default from the variant")
    rack: Optional[bool] = Field(None, description="RACK-TLP loss detection (RFC 8985), Linux's default: losses by time, tail loss probes; needs SACK recovery; default from the variant")
    undo: Optional[bool] = Field(None, description="undo a retransmission timeout that proves spurious, as Linux does (Eifel detection, RFC 3522: the first ACK of new data after it echoes a timestamp from before the retransmission, so the window and ssthresh go back to what they were); needs SACK recovery and SACK blocks, and timestamps to tell; default from the variant, as rack (see docs/tcp.md)")
    sack_compression: Optional[bool] = Field(None, description="the receiver ACKs as Linux >= 4.20: quick-ACK mode at the start, SACK compression while holding out-of-order data (default false: every out-of-order segment ACKed at once, RFC 5681 and ns-2; see docs/validation.md)")
    rcvbuf_autotuning: Optional[bool] = Field(None, description="the receiver's window grows as Linux's receive-buffer autotuning grows it, from 128 KB of buffer up to rwnd, opening by two segments per segment received and asking for an ACK each time (default false: rwnd from the start; see docs/tcp.md)")
    sndbuf_autotuning: Optional[bool] = Field(None, description="the send buffer is sized as Linux sizes it (2 x cwnd x 2304 bytes, up to sndbuf) and holds the queued data in memory terms; the writer refills it once a third is free (default false: sndbuf of payload caps the data in flight and there is always data to send; see docs/tcp.md)")
    preamble: Optional[Literal["none", "handshake", "iperf3"]] = Field(None, description="what the simulator sends before a flow's data: none (the default: data from the flow's start), a TCP handshake (SYN, SYN-ACK, then data), or iperf3's connection set-up (its control connection's handshake, cookie and parameters, then the data connection's handshake and cookie: five round trips; the sender gets its first RTT from the SYN-ACK, the receiver starts its first buffer measurement at the cookie). The testbed's flows, iperf3's, always have iperf3's; see docs/tcp.md")
    min_rto: PositiveTime = Field(Time(200_000_000), description="minimum retransmission timeout")
    initial_rto: PositiveTime = Field(Time(1_000_000_000), description="retransmission timeout before the first RTT sample")
    max_rto: PositiveTime = Field(Time(120_000_000_000), description="maximum retransmission timeout")
    pacing: bool = Field(False, description="pace segments at Linux's default rate (BBR always paces)")
    fq_pacing: Optional[bool] = Field(None, description="paced flows are paced as under Linux's fq qdisc: TCP hands segments down up to 1 ms before their departure times (TCP Small Queues) and fq holds each until due (default false: TCP paces itself with its pacing timer, as Linux does under its default qdiscs and on the testbed; see docs/tcp.md)")
    ecn: Optional[bool] = Field(None, description="ECN (RFC 3168, Linux net.ipv4.tcp_ecn = 1): new data is sent ECN-capable, the receiver echoes a CE mark (ECE) until the sender's CWR, and the sender reduces its window once per window of data on ECE as on a loss; an AQM with ecn marks such packets instead of dropping them (default false; see docs/ecn.md)")
    ect1: Optional[bool] = Field(None, description="with ecn: the flow's ECN-capable packets carry ECT(1), the L4S identifier (RFC 9331) that puts them in DualPI2's L queue, instead of ECT(0), as Linux sends them for a congestion control that asks for it (default false; see docs/ecn.md)")
    tso: Optional[bool] = Field(None, description="send as Linux's TCP does with GSO/TSO: new data in bursts of about 1 ms at the pacing rate, waiting for the next ACK rather than sending a small burst (tcp_tso_autosize, tcp_tso_should_defer); default from the variant, as rack")

    @field_validator("mss")
    @classmethod
    def _mss_in_range(cls, value: Optional[Size]) -> Optional[Size]:
        # The engine's range (a segment and its headers in 16 bits).
        if value is not None and not 64 <= value.bytes <= 65000:
            raise _invalid("expected a segment size from 64B to 65000B")
        return value

    @property
    def header_bytes(self) -> int:
        return IP_TCP_HEADER_BYTES + (TIMESTAMP_OPTION_BYTES if self.timestamps else 0)

    @property
    def mss_bytes(self) -> int:
        return self.mss.bytes if self.mss is not None else MTU_BYTES - self.header_bytes


def _overrides_of(model: type[BaseModel]) -> dict[str, Any]:
    """Every field of ``model`` again, optional and unset by default (per-flow overrides)."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if info.metadata:
            annotation = Annotated[(annotation, *info.metadata)]  # type: ignore[assignment]
        fields[name] = (Optional[annotation], Field(None, description=info.description))
    return fields


_TcpOverrides: type[_Model] = create_model("_TcpOverrides", __base__=_Model, **_overrides_of(TcpSettings))  # type: ignore[call-overload]


class _Flow(_Model):
    name: Optional[str] = Field(None, description="flow name; default 'flow<i>' (1-based)")
    src: Optional[str] = Field(None, description="sending node (graph topologies)")
    dst: Optional[str] = Field(None, description="receiving node (graph topologies)")
    start: NonNegativeTime = Field(Time(0), description="start time")
    stop: Optional[NonNegativeTime] = Field(None, description="stop time; default: the end of the run")
    dscp: Optional[Dscp] = Field(
        None,
        description="the DSCP of the flow's data packets (0-63 or a name: EF, VA, LE, CS0-CS7, AF11-AF43), as iperf3 --dscp marks them "
        "(the handshake and the receiver's ACKs stay at 0); CAKE's tins sort by it; default 0, best effort",
    )


class TcpFlow(_TcpOverrides, _Flow):  # type: ignore[misc, valid-type]
    """A bulk TCP transfer (infinite backlog, like iperf)."""

    kind: Literal["tcp"] = "tcp"
    variant: str = Field(description="TCP variant: " + ", ".join(variants.tcp_names()))
    drop_segments: list[_integer(0)] = Field(default_factory=list, description="drop the first transmission of these segments (0-based)")  # type: ignore[valid-type]
    cc_params: dict[str, Any] = Field(default_factory=dict, description="this flow's congestion-control parameters, over [cc.<name>]")

    @field_validator("variant", mode="before")
    @classmethod
    def _known_variant(cls, value: Any, info: ValidationInfo) -> str:
        # A backend may accept more (the testbed: any congestion control the kernel offers),
        # passed as the validation context {"variants": [...]}.
        extra = [variants.normalise(v) for v in (info.context or {}).get("variants", ())]
        try:
            if not isinstance(value, str):
                raise KeyError(value)
            if variants.normalise(value) in extra and variants.normalise(value) not in variants.names():
                return variants.normalise(value)
            return variants.resolve(value).name
        except KeyError:
            raise _invalid(f"expected a TCP variant: one of {', '.join(dict.fromkeys([*variants.tcp_names(), *extra]))}; or {', '.join(variants.DCCP)} for DCCP") from None


class CbrFlow(_Flow):
    """A UDP constant-bit-rate flow: one ``rate``, or a ``schedule`` of rates over time."""

    kind: Literal["cbr"]
    rate: Optional[PositiveRate] = Field(None, description="constant rate")
    schedule: Optional[CbrSchedule] = Field(
        None, description="stepped {from, to, step, every} or a list of [offset, rate] from the flow's start"
    )
    packet_size: PositiveSize = Field(Size(1000), description="IP packet size")
    random: Optional[bool] = Field(
        None, description="ns-2's random_: each gap between datagrams is its mean times a uniform draw from [0.5, 1.5), the rate kept on average (default false: evenly spaced)"
    )

    def _check(self) -> None:
        if (self.rate is None) == (self.schedule is None):
            raise _invalid("expected exactly one of 'rate' or 'schedule'", at="rate", value=str(self.rate) if self.rate else MISSING)

    def points(self) -> list[tuple[int, int]]:
        """``(offset_ns, rate_bps)`` from the flow's start, piecewise constant."""
        if self.rate is not None:
            return [(0, self.rate.bps)]
        return schedule_points(self.schedule or [])


class DccpFlow(_Flow):
    """A DCCP bulk transfer with CCID 2 (RFC 4340, RFC 4341), like iperf's DCCP mode.

    ``variant = "ccid2"`` (or ``"dccp"``) on a flow makes it one; ``kind = "dccp"`` does too.
    """

    kind: Literal["dccp"] = "dccp"
    variant: str = Field("ccid2", description="DCCP congestion control: ccid2")
    packet_size: PositiveSize = Field(Size(1500), description="IP packet size; the payload is 76 B less (1424 B at 1500 B)")
    ack_ratio: Literal["rfc4341", "linux"] = Field(
        "rfc4341", description="Ack Ratio rule: RFC 4341 Ack congestion control (Linux 2.6.22) or Linux ≥ 2.6.38 (10–20 Acks per window)"
    )
    ecn: Optional[bool] = Field(
        None, description="ECN (RFC 4340 §12, RFC 4341 §5): data and Acks are sent ECN-capable, the receiver reports CE-marked packets in its Ack Vector, and the sender halves its window on them once per window, as on a loss; an AQM with ecn marks such packets instead of dropping them (default false; see docs/ecn.md)"
    )

    #: Headers of a data packet: IP 20, DCCP 16 + 8, and 32 B of options (engine spec).
    HEADER_BYTES: ClassVar[int] = 76

    @field_validator("variant", mode="before")
    @classmethod
    def _known_variant(cls, value: Any) -> str:
        if not isinstance(value, str) or not variants.is_dccp(value):
            raise _invalid(f"expected a DCCP variant: one of {', '.join(variants.DCCP)}")
        return "ccid2"

    def _check(self) -> None:
        if not self.HEADER_BYTES < self.packet_size.bytes <= 65_535:
            raise _invalid(f"expected more than {self.HEADER_BYTES} B (the headers) and at most 65535 B", at="packet_size", value=str(self.packet_size))


def _flow_tag(value: Any) -> str:
    """A flow's ``kind``; without one, ``dccp`` for a DCCP variant, else ``tcp``."""
    get = value.get if isinstance(value, dict) else lambda key, default=None: getattr(value, key, default)
    kind = get("kind", None)
    if kind is None:
        variant = get("variant", None)
        kind = "dccp" if isinstance(variant, str) and variants.is_dccp(variant) else "tcp"
    return f"~{kind}"


Flow = Annotated[
    Union[Annotated[TcpFlow, Tag("~tcp")], Annotated[CbrFlow, Tag("~cbr")], Annotated[DccpFlow, Tag("~dccp")]],
    Discriminator(_flow_tag),
]


# --- the scenario ------------------------------------------------------------------------------


class Scenario(_Model):
    """One experiment run: a topology, flows, and how to measure them.

    Summaries and Jain's index are computed over ``window``. By default it is the papers' window,
    120 s to the end, for runs of at least 300 s (their 300 s and 600 s runs); a shorter run uses
    its last 60 % (the proportion of 120–300 s in 300 s), the start rounded down to a whole interval.
    """

    name: str = Field("scenario", description="a label for the run")
    duration: PositiveTime = Field(description="simulated run length")
    seed: _integer(0, 2**64 - 1) = Field(1, description="master random seed")  # type: ignore[valid-type]
    interval: PositiveTime = Field(Time(10**9), description="measurement interval (iperf -i 1)")
    window: Optional[MeasurementWindow] = Field(None, description="measurement window 'START:STOP'; default 120 s to the end (runs under 300 s: the last 60 %)")
    start_jitter: NonNegativeTime = Field(Time(5_000_000), description="each flow starts uniformly in [start, start + jitter)")
    host_jitter: NonNegativeTime = Field(Time(0), description="host processing delay, uniform in [0, jitter), one per send: the packets an endpoint sends at once (a TSO burst, an ACK) share it")
    host_stall: Optional[PositiveTime] = Field(None, description="a host's rare stalls (softirq deferral, preemption): a send that stalls waits uniformly in [0, host_stall) instead of the jitter; with host_stall_probability")
    host_stall_probability: Optional[Probability] = Field(None, description="share of sends that stall for up to host_stall (default none)")
    host_data_holds: Optional[list[NonNegativeTime]] = Field(
        None,
        description="the hosts' holds of a data send, as quantiles at evenly spaced probabilities from 0 to 1 (measured on a testbed: scripts/loop_holds.py table); one draw per send, instead of host_jitter",
    )
    host_ack_holds: Optional[list[NonNegativeTime]] = Field(None, description="the same for an ACK send (a receiver's ACKs)")
    host_holds_in_rtt: Optional[bool] = Field(
        None,
        description="true: the dumbbell's rtt includes the hosts' mean holds (a data send's and an ACK send's: host_jitter or the tables, stalls included): its bottleneck's delay is that much shorter, as the testbed's router delay is shorter by the overhead its pings measure (default false: the holds add to the rtt)",
    )
    topology: Topology = Field(description="dumbbell or graph")
    tcp: TcpSettings = Field(default_factory=TcpSettings, description="defaults for every TCP flow")
    cc: CcSettings = Field(default_factory=CcSettings, description="congestion-control profile and parameters")
    flows: list[Flow] = Field(min_length=1, description="the flows, in order (flow1, flow2, …)")

    def _check(self) -> None:
        duration = self.duration
        if self.interval > duration:
            raise _invalid(f"expected an interval no longer than the run ({duration})", at="interval", value=str(self.interval))
        if self.window is not None:
            start, stop = self.window.bounds(duration)
            if start >= duration:
                raise _invalid(f"expected a window that starts before the run ends (duration = {duration})", at="window", value=str(self.window))
            if stop > duration:
                raise _invalid(f"expected a window that ends by the end of the run (duration = {duration})", at="window", value=str(self.window))
            if stop.ns - start.ns < self.interval.ns:
                raise _invalid(f"expected a window at least one interval ({self.interval}) long", at="window", value=str(self.window))
        if (self.host_stall is None) != (self.host_stall_probability is None):
            if self.host_stall is not None:
                raise _invalid("expected host_stall_probability with it (a stall needs both its length and its probability)", at="host_stall", value=str(self.host_stall))
            raise _invalid("expected host_stall with it (a stall needs both its length and its probability)", at="host_stall_probability", value=self.host_stall_probability)
        for name in ("host_data_holds", "host_ack_holds"):
            holds = getattr(self, name)
            if holds is None:
                continue
            shown = "[" + ", ".join(str(h) for h in holds) + "]"
            if len(holds) < 2:
                raise _invalid("expected at least 2 holds (the quantiles at probabilities 0 and 1, and any evenly spaced between)", at=name, value=shown)
            if any(a > b for a, b in zip(holds, holds[1:])):
                raise _invalid("expected holds in increasing order (quantiles at evenly spaced probabilities)", at=name, value=shown)
            if holds[-1].ns > 10**9:
                raise _invalid("expected holds of at most 1s", at=name, value=shown)
        topo = self.topology
        if isinstance(topo, Dumbbell) and topo.bottleneck_delay.ns < 0:
            raise _invalid(
                f"expected a base RTT of at least 4 × access_delay = {Time(4 * topo.access_delay.ns)}", at="topology.rtt", value=str(topo.rtt)
            )
        if self.host_holds_in_rtt:
            if not isinstance(topo, Dumbbell):
                raise _invalid("expected a dumbbell (a graph has no rtt: its links set their own delays)", at="host_holds_in_rtt", value=True)
            if self._bottleneck_delay_ns() < 0:
                least = Time(4 * topo.access_delay.ns + self.mean_loop_hold_ns())
                raise _invalid(f"expected a base RTT of at least 4 × access_delay plus the hosts' mean holds = {least} (host_holds_in_rtt)", at="topology.rtt", value=str(topo.rtt))
        names: set[str] = set()
        for i, (flow, name) in enumerate(zip(self.flows, self.flow_names)):
            at = f"flows[{i}]"
            if name in names:
                raise _invalid("expected a flow name not used before", at=f"{at}.name", value=name)
            names.add(name)
            if flow.start >= duration:
                raise _invalid(f"expected a start before the end of the run (duration = {duration})", at=f"{at}.start", value=str(flow.start))
            if flow.stop is not None and flow.stop <= flow.start:
                raise _invalid(f"expected a stop after the flow's start ({flow.start})", at=f"{at}.stop", value=str(flow.stop))
            self._check_endpoints(at, flow)
            if isinstance(flow, TcpFlow) and (tcp := self.tcp_settings(flow)).timestamp_offsets and not tcp.timestamps:
                raise _invalid("expected false or unset: offsets are added to timestamps, and this flow's timestamps is false", at=f"{at}.timestamp_offsets", value=True)
            # Variants only a testbed kernel offers (validation context) have no engine entry.
            if not isinstance(flow, TcpFlow) or flow.variant not in variants.names():
                continue
            tcp = self.tcp_settings(flow)
            if tcp.rack and variants.resolve(flow.variant).recovery != "sack":
                raise _invalid(f"expected false or unset: RACK-TLP needs SACK recovery, and variant '{flow.variant}' recovers without it", at=f"{at}.rack", value=True)
            if tcp.undo and variants.resolve(flow.variant).recovery != "sack":
                raise _invalid(f"expected false or unset: undo is modelled for SACK recovery, and variant '{flow.variant}' recovers without it", at=f"{at}.undo", value=True)
            if tcp.undo and tcp.sack is False:
                raise _invalid("expected false or unset: undo is modelled for SACK connections, and this flow's sack is false", at=f"{at}.undo", value=True)
            if tcp.ecn is False and variants.resolve(flow.variant).needs_ecn:
                raise _invalid(f"expected true or unset: {variants.resolve(flow.variant).name} runs only with ECN (Linux negotiates ECN for it whatever tcp_ecn says)", at=f"{at}.ecn", value=False)
            if tcp.ect1 and not (variants.resolve(flow.variant).needs_ecn if tcp.ecn is None else tcp.ecn):
                raise _invalid("expected false or unset: ECT(1) is an ECN codepoint, and this flow's ecn is false", at=f"{at}.ect1", value=True)
            if tcp.rack and tcp.sack is False:
                raise _invalid("expected false or unset: RACK-TLP needs SACK blocks, and this flow's sack is false (Linux runs no RACK without SACK)", at=f"{at}.rack", value=True)
            check_cc_params(variants.resolve(flow.variant).cc, flow.cc_params, f"{at}.cc_params")

    def _check_endpoints(self, at: str, flow: TcpFlow | CbrFlow | DccpFlow) -> None:
        if isinstance(self.topology, Dumbbell):
            for key in ("src", "dst"):
                if getattr(flow, key) is not None:
                    raise _invalid("expected no src/dst in a dumbbell: flow i uses sender i and receiver i", at=f"{at}.{key}", value=getattr(flow, key))
            return
        nodes = self.topology.nodes
        for key in ("src", "dst"):
            node = getattr(flow, key)
            if node is None:
                raise _invalid(f"expected a node name in a graph topology: one of {', '.join(nodes)}", at=f"{at}.{key}", value=MISSING)
            if node not in nodes:
                raise _invalid(f"expected one of the nodes: {', '.join(nodes)}", at=f"{at}.{key}", value=node)
        if flow.src == flow.dst:
            raise _invalid("expected a node other than the flow's src", at=f"{at}.dst", value=flow.dst)

    # --- derived values ---

    @property
    def flow_names(self) -> list[str]:
        """``flow.name`` or ``"flow<i>"`` (1-based), in flow order."""
        return [flow.name or f"flow{i + 1}" for i, flow in enumerate(self.flows)]

    @property
    def node_names(self) -> list[str]:
        """Node names by engine index (a dumbbell's: sender1…N, receiver1…N, router1, router2)."""
        if isinstance(self.topology, Graph):
            return list(self.topology.nodes)
        n = len(self.flows)
        return [*(f"sender{i}" for i in range(1, n + 1)), *(f"receiver{i}" for i in range(1, n + 1)), "router1", "router2"]

    @property
    def flow_variants(self) -> list[str]:
        """Each flow's variant name (``"ccid2"`` for DCCP, ``"cbr"`` for CBR flows)."""
        return [flow.variant if isinstance(flow, (TcpFlow, DccpFlow)) else "cbr" for flow in self.flows]

    @property
    def measurement_window(self) -> tuple[Time, Time]:
        """``(start, stop)`` of the measurement window, the default filled in."""
        if self.window is not None:
            return self.window.bounds(self.duration)
        if self.duration.ns >= PAPERS_RUN.ns:
            return PAPERS_WINDOW_START, self.duration
        start = self.duration.ns * 2 // 5 // self.interval.ns * self.interval.ns
        return Time(start), self.duration

    def tcp_settings(self, flow: TcpFlow) -> TcpSettings:
        """The ``[tcp]`` settings with ``flow``'s own overrides applied."""
        update = {key: getattr(flow, key) for key in TcpSettings.model_fields if getattr(flow, key) is not None}
        return self.tcp.model_copy(update=update)

    def cc_params(self, flow: TcpFlow) -> dict[str, float]:
        """``flow``'s congestion-control parameters: ``[cc.<its algorithm>]`` with the flow's
        ``cc_params`` over it (values as floats, true/false as 1/0)."""
        given = {**self.cc.params.get(variants.resolve(flow.variant).cc, {}), **flow.cc_params}
        return {name: float(_param_value(value) or 0.0) for name, value in given.items()}

    # --- changing and lowering ---

    def override(self, changes: Mapping[str, Any]) -> Scenario:
        """A copy with ``changes`` applied and validated: ``{"topology.rtt": "50ms", "flows[1].start": "30s"}``."""
        data = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        for path, value in changes.items():
            set_path(data, path, value)
        return Scenario.model_validate(data)

    def mean_loop_hold_ns(self) -> int:
        """The hosts' mean holds around the loop: a data send's and an ACK send's, each the mean of
        its table (the quantiles joined by straight lines, as the engine draws) or of the uniform
        jitter, a stall's mean taking its share."""
        def mean(table: Optional[list[Time]]) -> float:
            if table:
                ns = [h.ns for h in table]
                return sum((a + b) / 2 for a, b in zip(ns, ns[1:])) / (len(ns) - 1)
            return self.host_jitter.ns / 2

        p = self.host_stall_probability or 0.0
        stall = self.host_stall.ns / 2 if self.host_stall is not None else 0.0
        return round(sum((1 - p) * mean(table) + p * stall for table in (self.host_data_holds, self.host_ack_holds)))

    def _bottleneck_delay_ns(self) -> int:
        """The dumbbell's one-way bottleneck delay: rtt/2 − 2·access_delay, and with
        ``host_holds_in_rtt`` half the hosts' mean loop hold less."""
        topo = self.topology
        assert isinstance(topo, Dumbbell)
        return topo.bottleneck_delay.ns - (self.mean_loop_hold_ns() // 2 if self.host_holds_in_rtt else 0)

    def to_engine_spec(self) -> dict[str, Any]:
        """The engine spec (``docs/engine-spec.md``): plain JSON, integers with ``_ns``/``_bps``/``_bytes``/``_pkts``."""
        return {
            "seed": self.seed,
            "duration_ns": self.duration.ns,
            "interval_ns": self.interval.ns,
            "start_jitter_ns": self.start_jitter.ns,
            "host_jitter_ns": self.host_jitter.ns,
            "host_stall_ns": self.host_stall.ns if self.host_stall is not None else 0,
            "host_stall_prob": self.host_stall_probability or 0.0,
            **{f"{name}_ns": [h.ns for h in holds] for name, holds in (("host_data_holds", self.host_data_holds), ("host_ack_holds", self.host_ack_holds)) if holds},
            "topology": self._topology_spec(),
            "flows": [self._flow_spec(i, flow) for i, flow in enumerate(self.flows)],
        }

    def _topology_spec(self) -> dict[str, Any]:
        topo = self.topology
        if isinstance(topo, Dumbbell):
            pairs = len(self.flows)
            return {
                "kind": "dumbbell",
                "pairs": pairs,
                "bottleneck_rate_bps": topo.bottleneck.bps,
                "bottleneck_delay_ns": self._bottleneck_delay_ns(),
                "access_rate_bps": topo.access_rate.bps,
                "access_delay_ns": [topo.access_delay.ns] * pairs,
                "queue": topo.queue_spec(topo.buffer.limit(topo.bottleneck.bps, topo.rtt.ns)),
                "access_queue": _droptail(topo.access_buffer.limit(topo.access_rate.bps, topo.rtt.ns)),
                "loss": topo.loss,
                "reverse_loss": topo.reverse_loss,
            } | ({"bottleneck_schedule": topo.rate_points()} if topo.bottleneck_schedule is not None else {})
        index = {node: i for i, node in enumerate(topo.nodes)}
        return {
            "kind": "graph",
            "nodes": list(topo.nodes),
            "links": [
                {
                    "from": index[link.from_],
                    "to": index[link.to],
                    "rate_bps": link.rate.bps,
                    "delay_ns": link.delay.ns,
                    "queue": link.queue_spec(link.buffer.limit()),
                    "loss": link.loss,
                }
                | ({"rate_schedule": link.rate_points()} if link.rate_schedule is not None else {})
                for link in topo.links
            ],
        }

    def _endpoints(self, i: int, flow: TcpFlow | CbrFlow | DccpFlow) -> tuple[int, int]:
        if isinstance(self.topology, Dumbbell):
            # Senders are nodes 0..N, receivers N..2N (engine spec, dumbbell numbering).
            return i, len(self.flows) + i
        nodes = self.topology.nodes
        return nodes.index(flow.src or ""), nodes.index(flow.dst or "")

    def timestamp_offsets(self, flow: TcpFlow) -> bool:
        """Whether ``flow``'s receiver offsets its TSvals: the setting, else Linux's default
        (on, off for an old kernel's profile); never without timestamps."""
        tcp = self.tcp_settings(flow)
        if tcp.timestamp_offsets is not None:
            return tcp.timestamp_offsets and tcp.timestamps
        return tcp.timestamps and self.cc.profile not in OLD_STACK_PROFILES

    def _flow_spec(self, i: int, flow: TcpFlow | CbrFlow | DccpFlow) -> dict[str, Any]:
        src, dst = self._endpoints(i, flow)
        common = {
            "src": src,
            "dst": dst,
            "start_ns": flow.start.ns,
            "stop_ns": flow.stop.ns if flow.stop is not None else None,
            **({"dscp": flow.dscp} if flow.dscp else {}),
        }
        if isinstance(flow, CbrFlow):
            return {
                "kind": "cbr",
                **common,
                "packet_bytes": flow.packet_size.bytes,
                "schedule": [[flow.start.ns + offset, rate] for offset, rate in flow.points()],
                **({"random": True} if flow.random else {}),
            }
        if isinstance(flow, DccpFlow):
            return {
                "kind": "dccp",
                **common,
                "ccid": 2,
                "packet_bytes": flow.packet_size.bytes,
                "header_bytes": DccpFlow.HEADER_BYTES,
                "ack_ratio_policy": flow.ack_ratio,
                **({"ecn": True} if flow.ecn else {}),
            }
        variant = variants.resolve(flow.variant)
        tcp = self.tcp_settings(flow)
        # Today's Linux stack on a SACK connection: what RACK-TLP and undo default to.
        linux_sack = variant.rack and tcp.sack is not False and self.cc.profile not in OLD_STACK_PROFILES
        return {
            "kind": "tcp",
            **common,
            "cc": variant.cc,
            "cc_profile": self.cc.profile,
            "cc_params": self.cc_params(flow),
            "recovery": variant.recovery,
            "prr": variant.prr if tcp.prr is None else tcp.prr,
            # Without SACK blocks Linux marks losses NewReno's way, not RACK's (`tcp_is_reno`).
            "rack": linux_sack if tcp.rack is None else tcp.rack,
            # Undo, as RACK, on a SACK connection; written only when on (earlier specs had none).
            **({"undo": True} if (linux_sack if tcp.undo is None else tcp.undo) else {}),
            "mss_bytes": tcp.mss_bytes,
            "header_bytes": tcp.header_bytes,
            "init_cwnd_pkts": tcp.init_cwnd,
            "rwnd_bytes": tcp.rwnd.bytes,
            "sndbuf_bytes": tcp.sndbuf.bytes,
            "delayed_ack": tcp.delayed_ack,
            "delack_timeout_ns": tcp.delack_timeout.ns,
            "timestamps": tcp.timestamps,
            # Written only when on (earlier specs had none).
            **({"timestamp_offsets": True} if self.timestamp_offsets(flow) else {}),
            "sack": variant.sack if tcp.sack is None else tcp.sack,
            "sack_compression": False if tcp.sack_compression is None else tcp.sack_compression,
            "rcvbuf_autotuning": bool(tcp.rcvbuf_autotuning),
            "preamble": tcp.preamble or "none",
            "min_rto_ns": tcp.min_rto.ns,
            "initial_rto_ns": tcp.initial_rto.ns,
            "max_rto_ns": tcp.max_rto.ns,
            "pacing": tcp.pacing,
            "fq_pacing": bool(tcp.fq_pacing),
            "tso": (variant.tso and self.cc.profile not in OLD_STACK_PROFILES) if tcp.tso is None else tcp.tso,
            **({"ecn": True} if (variant.needs_ecn if tcp.ecn is None else tcp.ecn) else {}),
            **({"ect1": True} if tcp.ect1 else {}),
            **({"sndbuf_autotuning": True} if tcp.sndbuf_autotuning else {}),
            "drop_segments": list(flow.drop_segments),
        }


def _droptail(limit: dict[str, int]) -> dict[str, Any]:
    return {"kind": "droptail", **limit}


# --- files and paths ---------------------------------------------------------------------------


def read_toml(path: str | PathLike[str]) -> dict[str, Any]:
    """The table in a TOML file; a missing or malformed file is a ScenarioError."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ScenarioError("scenario", str(p), "expected an existing TOML file") from None
    except IsADirectoryError:
        raise ScenarioError("scenario", str(p), "expected a TOML file, not a directory") from None
    except OSError as e:
        raise ScenarioError("scenario", str(p), f"expected a readable TOML file ({e.strerror})") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("scenario", str(p), f"expected valid TOML ({e})") from None


def load_scenario(path: str | PathLike[str], overrides: Mapping[str, Any] | None = None) -> Scenario:
    """Read and validate a scenario file; ``name`` defaults to the file's stem.

    ``overrides`` maps dotted paths to values, applied before validation (``{"topology.rtt": "50ms"}``).
    """
    data = read_toml(path)
    data.setdefault("name", Path(path).stem)
    for key, value in (overrides or {}).items():
        set_path(data, key, value)
    return Scenario.model_validate(data)


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``data["flows"][1]["start"] = value`` for ``path = "flows[1].start"``, creating tables."""
    steps: list[str | int] = [name if name else int(index) for name, index in _STEP.findall(path)]
    if not steps:
        raise ScenarioError(path, value, "expected a dotted field path like 'topology.rtt'")
    node: Any = data
    for here, nxt in zip(steps, steps[1:]):
        if isinstance(here, int):
            if not isinstance(node, list) or here >= len(node):
                raise ScenarioError(path, value, "expected an index of an existing list entry")
            node = node[here]
        else:
            if not isinstance(node, dict):
                raise ScenarioError(path, value, "expected a path through tables")
            node = node.setdefault(here, [] if isinstance(nxt, int) else {})
    last = steps[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last > len(node):
            raise ScenarioError(path, value, "expected an index of an existing list entry")
        if last == len(node):
            node.append(copy.deepcopy(value))
        else:
            node[last] = copy.deepcopy(value)
    else:
        if not isinstance(node, dict):
            raise ScenarioError(path, value, "expected a path through tables")
        node[last] = copy.deepcopy(value)

