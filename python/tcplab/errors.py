"""tcplab's one exception tree, and the one place where other errors are mapped into it.

::

    TcplabError
     ├── ScenarioError   a scenario that cannot run: names the field, the value and what is allowed
     │    └── ResultsError   results that cannot be analysed (a missing or foreign store, two
     │                       result sets on different grids): the same three parts
     └── EngineError     the engine failed (or is not built)

A bad scenario, whether caught by validation in Python (pydantic) or by the engine
(``tcplab._core.SpecError(field, value, allowed)``, e.g. a flow between unconnected nodes), reaches
the user as a single :class:`ScenarioError` whose text reads::

    topology.rtt = '-5ms': expected a positive time like '25ms'
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["TcplabError", "ScenarioError", "ResultsError", "EngineError", "MISSING", "from_validation_error", "from_spec_error"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: The value of a required field that was not given.
MISSING: Any = _Missing()


class TcplabError(Exception):
    """Base class of every error tcplab raises on purpose."""


class ScenarioError(TcplabError):
    """A scenario that cannot run.

    Attributes:
        field: dotted path of the offending field, as written in the scenario (``"flows[1].rwnd"``).
        value: the value found there (:data:`MISSING` when a required field is absent).
        allowed: what would have been accepted (``"expected a positive time like '25ms'"``).
    """

    def __init__(self, field: str, value: Any, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.value is MISSING:
            return f"{self.field}: missing; {self.allowed}"
        return f"{self.field} = {_show(self.value)}: {self.allowed}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.field, self.value, self.allowed))


class ResultsError(ScenarioError):
    """Results that cannot be analysed: a store that is missing or is not a store, a metric or axis
    that the results lack, two result sets on different grids. Bad input, like a bad scenario."""


class EngineError(TcplabError):
    """The engine could not run a valid scenario, or is not built."""


def _show(value: Any) -> str:
    """A value as the user wrote it: strings quoted, TOML booleans, short containers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _path(loc: tuple[Any, ...] | list[Any]) -> str:
    """``("flows", 1, "~tcp", "rwnd")`` → ``"flows[1].rwnd"``; ``~``-prefixed union tags are dropped."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.startswith("~"):
            continue
        elif part:
            out += f".{part}" if out else str(part)
    return out


def _join(base: str, rest: str) -> str:
    if not base:
        return rest
    if not rest:
        return base
    return base + rest if rest.startswith("[") else f"{base}.{rest}"


# What to say for pydantic's own error types (the scenario models raise tcplab's messages themselves).
_PYDANTIC_ALLOWED = {
    "missing": "a value is required",
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "string_type": "expected a string",
    "list_type": "expected a list",
    "tuple_type": "expected a list",
    "dict_type": "expected a table",
    "model_type": "expected a table",
    "model_attributes_type": "expected a table",
    "extra_forbidden": "unknown key",
}


def from_validation_error(err: Any) -> ScenarioError:
    """The first problem in a ``pydantic.ValidationError`` (or one ``PydanticCustomError``), as a
    :class:`ScenarioError`."""
    if hasattr(err, "message_template"):  # a PydanticCustomError raised by a top-level check
        first = {"type": err.type, "loc": (), "msg": err.message(), "ctx": err.context or {}}
    else:
        first = err.errors(include_url=False)[0]
    kind = first["type"]
    ctx = first.get("ctx") or {}
    field = _path(first["loc"])
    value = first.get("input", MISSING)
    if kind == "tcplab":
        # A tcplab check; ``at`` locates it below the validated model, ``value`` overrides the input.
        field = _join(field, ctx.get("at", ""))
        if "value" in ctx:
            value = ctx["value"]
        return ScenarioError(field, value, first["msg"])
    if kind == "missing":
        return ScenarioError(field, MISSING, _PYDANTIC_ALLOWED["missing"])
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tags = ", ".join(repr(t.strip("'\" ~")) for t in str(ctx.get("expected_tags", "")).split(","))
        tag = str(ctx.get("tag", "")).lstrip("~")
        return ScenarioError(_join(field, "kind"), tag, f"expected one of {tags}")
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return ScenarioError(field, value, f"expected at least {n} {'entry' if n == 1 else 'entries'}")
    if kind == "literal_error":
        return ScenarioError(field, value, f"expected {ctx.get('expected', 'one of the allowed values')}")
    allowed = _PYDANTIC_ALLOWED.get(kind)
    if allowed is None:
        msg = str(first["msg"])
        allowed = re.sub(r"^(Input|Value) should (be )?", "expected ", msg)
        allowed = re.sub(r"^Value error, ", "", allowed)
    return ScenarioError(field, value, allowed)


# Engine spec keys → scenario keys, for SpecErrors raised by the engine.
_ENGINE_KEYS = {
    "bottleneck_rate": "bottleneck",
    "bottleneck_delay": "rtt",
    "access_queue": "access_buffer",
    "queue": "buffer",
    "packet": "packet_size",
}


def _scenario_field(engine_field: str) -> str:
    """``"topology.links[0].rate_bps"`` → ``"topology.links[0].rate"``."""
    parts = []
    for part in engine_field.split("."):
        m = re.match(r"^([A-Za-z_]+?)(_ns|_bps|_bytes|_pkts)?(\[.*)?$", part)
        if m is None:
            parts.append(part)
            continue
        key = _ENGINE_KEYS.get(m.group(1), m.group(1))
        parts.append(key + (m.group(3) or ""))
    return ".".join(parts)


def from_spec_error(exc: BaseException, scenario: Any = None) -> ScenarioError:
    """Map the engine's ``SpecError(field, value, allowed)`` onto a :class:`ScenarioError`.

    Engine field names lose their unit suffix (``rate_bps`` → ``rate``); a node index in a flow's
    ``src``/``dst`` or a link's ``from``/``to`` is shown as the node's name when ``scenario`` is given.
    """
    args = [getattr(exc, name, None) for name in ("field", "value", "allowed")]
    if any(a is None for a in args):
        args = (list(exc.args) + [None, None, None])[:3]
    field, value, allowed = (str(a) if a is not None else "" for a in args)
    allowed = allowed if allowed.startswith("expected") else f"expected {allowed}"
    field = _scenario_field(field) or "scenario"
    nodes = list(getattr(scenario, "node_names", None) or [])
    if re.search(r"\.(src|dst|from|to)$", field) and value.isdigit() and int(value) < len(nodes):
        value = nodes[int(value)]
    return ScenarioError(field, value, allowed)
