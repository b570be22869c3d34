"""Experiments: a base scenario swept over axes, flow pairs and replications.

An experiment file (TOML, documented in ``docs/experiments.md``) holds a base scenario (the schema
of ``docs/scenario.md``), sweep axes over any scenario field (dotted paths as
:meth:`Scenario.override` takes them: ``topology.rtt``, ``topology.buffer``, ``tcp.rwnd``,
``flows[1].start``), given as lists or as ``{from, to, step}`` ranges with units, the flow pairs,
the number of replications, the measurement window and the metrics to report.

:meth:`Experiment.runs` expands the grid into :class:`Run` s: one resolved, validated scenario per
point and replication, with its seed and its ``run_id`` (a hash of the full resolved scenario, the
backend and the seed, so that a run is known by its parameters alone).

>>> exp = load_experiment("experiments/paper000-quick.toml")    # doctest: +SKIP
>>> runs = exp.runs("sim")                                       # doctest: +SKIP
>>> runs[0].point                                                # doctest: +SKIP
{'flow1': 'newreno', 'flow2': 'newreno', 'topology.rtt': '50ms', 'topology.buffer': '0.2bdp', 'replication': 1}
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from os import PathLike
from pathlib import Path
from typing import Any

from .config import Dumbbell, Scenario, TcpFlow, read_toml, set_path
from .errors import MISSING, ScenarioError
from .units import Time, UnitError, Window

__all__ = ["Experiment", "Axis", "Run", "load_experiment", "parse_experiment", "replication_seed", "run_id", "METRICS"]

#: The metrics ``tcplab run`` can report per grid cell (mean ± standard deviation over replications).
METRICS: dict[str, str] = {
    "jfi": "Jain's index of the flows' mean throughputs over the window, eq. (1)",
    "mean_jt": "mean of the per-interval Jain's index J(t) over the window, eq. (2)",
    "throughput": "each flow's mean throughput over the window (Mb/s)",
    "share": "each flow's share of the flows' total throughput over the window",
    "drop_rate": "packets dropped / packets sent over the window, all flows",
    "mark_rate": "packets that arrived CE-marked (ECN) / packets sent over the window, all flows",
    "retrans": "packets retransmitted over the window, all flows",
    "owd": "mean one-way delay of all flows (ms)",
}

#: Keys an experiment file may use at its top level.
KEYS = ("name", "description", "seed", "replications", "rtt_spread", "window", "metrics", "profile", "scenario", "pairs", "sweep", "cells")
#: Keys of each ``[[cells]]`` table.
CELL_KEYS = ("where", "set")
#: Stack profiles of the testbed backend (``profile`` key, ``tcplab run --profile``).
PROFILES = ("default", "tuned")
PAIR_KEYS = ("flow1", "flow2", "both_orders")
RANGE_KEYS = ("from", "to", "step")

#: At most this many values per range axis (a typo such as step = '1ns' is refused).
MAX_AXIS_VALUES = 10_000

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_QUANTITY = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([^\d\s.][^\s]*)\s*$")


def _error(field: str, value: Any, allowed: str) -> ScenarioError:
    return ScenarioError(field, value, allowed)


def replication_seed(experiment_seed: int, replication: int) -> int:
    """The engine seed of replication ``replication`` (1-based) of an experiment seeded ``experiment_seed``.

    The first 8 bytes (little-endian) of SHA-256 over ``"tcplab-replication:<seed>:<replication>"``:
    every replication of every point shares its seed (common random numbers across the grid), and
    two experiment seeds give unrelated replications.
    """
    digest = hashlib.sha256(f"tcplab-replication:{experiment_seed}:{replication}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the text that is hashed."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def scenario_json(scenario: Scenario) -> dict[str, Any]:
    """The full resolved scenario as JSON data (defaults filled in, unset optional fields left out)."""
    return scenario.model_dump(mode="json", by_alias=True, exclude_none=True)


#: Bumped when the testbed's hosts change how they run a given scenario, so that a store of runs
#: made the old way is not resumed as if they were the new one. 2: each flow's namespaces default
#: to reno (revision 1 left the host's default, e.g. bbr, whose pacing a socket kept after
#: iperf3 switched it to the flow's congestion control).
TESTBED_REVISION = 2

#: Scenario fields that model what real hosts do and so mean nothing to the testbed, whose hosts
#: are real: a testbed run's key takes them at their defaults.
SIMULATOR_ONLY = ("host_jitter", "host_stall", "host_stall_probability", "host_data_holds", "host_ack_holds", "host_holds_in_rtt")
#: Dumbbell fields the testbed does not apply: its access links are veths, unshaped and with no
#: queue of their own (docs/testbed.md), likewise taken at their defaults.
SIMULATOR_ONLY_TOPOLOGY = ("access_rate", "access_buffer")
#: TCP settings that model what a real host's stack always does (it sends TSO bursts whatever
#: the scenario says), likewise taken at their defaults in ``[tcp]`` and in every flow.
SIMULATOR_ONLY_TCP = ("tso",)
#: TCP settings whose value here asks the testbed for what a new namespace's Linux does unasked:
#: PRR in every recovery, RACK-TLP (``tcp_recovery`` 1, ``tcp_early_retrans`` 3), SACK
#: compression (``tcp_comp_sack_nr`` 44), receive-buffer autotuning (``tcp_moderate_rcvbuf``
#: 1, ``tcp_rmem`` from 128 KB up to ``rwnd``) and send-buffer autotuning (``tcp_wmem``). Written out so that the simulator runs them too, they
#: change nothing on the testbed, so a testbed run's key takes them unset in ``[tcp]`` and in
#: every flow (tests/test_testbed.py checks the namespaces' values against what the testbed
#: writes for these). ``preamble = "iperf3"`` is what the testbed's iperf3 flows always send first;
#: ``fq_pacing = false`` is how its kernel paces (no fq qdisc: TCP's own pacing timer);
#: ``timestamp_offsets = true`` is ``tcp_timestamps`` 1, what the testbed writes anyway.
KERNEL_DEFAULT_TCP: dict[str, Any] = {"prr": True, "rack": True, "undo": True, "sack_compression": True, "rcvbuf_autotuning": True, "sndbuf_autotuning": True, "preamble": "iperf3", "fq_pacing": False, "timestamp_offsets": True}


#: What a testbed run's key leaves out, as a scenario file names it.
_TESTBED_IGNORES = (*SIMULATOR_ONLY, *(f"tcp.{n}" for n in SIMULATOR_ONLY_TCP), *(f"topology.{n}" for n in SIMULATOR_ONLY_TOPOLOGY))


def _as_the_testbed_runs(settings: Any, kernel_defaults_unset: bool) -> Any:
    """``[tcp]`` or a flow, with what the testbed's hosts do whatever it says taken unset."""
    unset = dict.fromkeys(SIMULATOR_ONLY_TCP)
    if kernel_defaults_unset:
        unset |= {name: None for name, value in KERNEL_DEFAULT_TCP.items() if getattr(settings, name) == value}
    return settings.model_copy(update=unset)


def run_id(scenario: Scenario, backend: str, seed: int, profile: str | None = None, *, kernel_defaults_unset: bool = True) -> str:
    """A run's key: the first 32 hex digits of SHA-256 over the full resolved scenario, the backend
    and the seed (and the testbed's stack profile). Any change to a run's parameters gives another
    key — except, on the testbed, the simulator's model of the hosts and access links
    (:data:`SIMULATOR_ONLY`, :data:`SIMULATOR_ONLY_TCP`, :data:`SIMULATOR_ONLY_TOPOLOGY`) and
    settings that ask for the kernel's own behaviour (:data:`KERNEL_DEFAULT_TCP`): scenarios that
    differ only there are the same testbed run.

    ``kernel_defaults_unset=False`` gives the key tcplab gave testbed runs before it treated
    :data:`KERNEL_DEFAULT_TCP` so (``scripts/rekey_store.py`` moves a store to the new keys)."""
    key: dict[str, Any] = {"backend": backend, "seed": seed}
    if backend == "testbed":
        defaults: dict[str, Any] = {name: type(scenario).model_fields[name].default for name in SIMULATOR_ONLY}
        if isinstance(scenario.topology, Dumbbell):
            defaults["topology"] = scenario.topology.model_copy(update={name: Dumbbell.model_fields[name].default for name in SIMULATOR_ONLY_TOPOLOGY})
        defaults["tcp"] = _as_the_testbed_runs(scenario.tcp, kernel_defaults_unset)
        defaults["flows"] = [_as_the_testbed_runs(flow, kernel_defaults_unset) if isinstance(flow, TcpFlow) else flow for flow in scenario.flows]
        scenario = scenario.model_copy(update=defaults)
        key["testbed"] = TESTBED_REVISION
    key["scenario"] = scenario_json(scenario)
    if profile is not None:
        key["profile"] = profile
    text = canonical_json(key)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def moved_testbed_key(scenario: dict[str, Any], seed: int, profile: str | None, stored_key: str) -> str | None:
    """The current key of a stored testbed run whose ``stored_key`` is the one tcplab gave it
    before it keyed :data:`KERNEL_DEFAULT_TCP` as unset (from its stored ``scenario`` JSON, seed
    and stack profile); ``None`` when it is keyed any other way (already current, another testbed
    revision, a scenario this tcplab cannot read)."""
    try:
        s = Scenario.model_validate(scenario)
    except ScenarioError:
        return None
    if run_id(s, "testbed", seed, profile, kernel_defaults_unset=False) != stored_key:
        return None
    new = run_id(s, "testbed", seed, profile)
    return new if new != stored_key else None


@dataclass(frozen=True)
class Axis:
    """One sweep axis: ``key`` as written in the file and its values as written (or generated)."""

    key: str
    values: tuple[Any, ...]
    #: scenario paths set by this axis (``flow1`` sets ``flows[0].variant``)
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Run:
    """One run of the grid."""

    point: dict[str, Any]  # axis key → value as written, plus "replication"
    scenario: Scenario  # fully resolved, seed included
    seed: int
    backend: str
    run_id: str

    @property
    def replication(self) -> int:
        return int(self.point["replication"])


@dataclass(frozen=True)
class Experiment:
    """A validated experiment file."""

    name: str
    description: str
    seed: int
    replications: int
    window: str | None
    metrics: tuple[str, ...]
    base: dict[str, Any]  # the base scenario's table
    pairs: tuple[tuple[str, str], ...]  # (flow 1 variant, flow 2 variant); empty: the base's flows
    axes: tuple[Axis, ...]  # the sweep axes, in file order
    definition: dict[str, Any] = field(repr=False)  # the parsed file, scenario file inlined
    path: Path | None = None
    profile: str = "default"  # the testbed's stack profile (the simulator has none)
    #: variant names accepted beyond the simulator's (a backend's: the testbed kernel's)
    extra_variants: tuple[str, ...] = ()
    #: The span the replications' round trips spread over (``rtt_spread``), ns; None: all at the rtt.
    rtt_spread_ns: int | None = None
    #: ``[[cells]]``: (where, set) — scenario fields (dotted path → value) set at the points whose
    #: axes take every value in ``where``, after the axes' own.
    cells: tuple[tuple[dict[str, Any], dict[str, Any]], ...] = ()

    @property
    def definition_hash(self) -> str:
        """SHA-256 (hex) of the definition's canonical JSON (comments and layout do not count)."""
        return hashlib.sha256(canonical_json(self.definition).encode()).hexdigest()

    @property
    def grid_axes(self) -> tuple[Axis, ...]:
        """Every axis of the grid, the flow pairs (``flow1``, ``flow2``) first."""
        return (*_pair_axes(self.pairs), *self.axes)

    @property
    def axis_keys(self) -> list[str]:
        """The keys of a point, in order (``replication`` last)."""
        return [a.key for a in self.grid_axes] + ["replication"]

    def points(self) -> Iterator[dict[str, Any]]:
        """The grid's points without replication: pairs outermost, then the axes in file order."""
        pair_rows: list[dict[str, Any]] = [{"flow1": a, "flow2": b} for a, b in self.pairs] or [{}]
        for pair in pair_rows:
            for values in itertools.product(*(axis.values for axis in self.axes)):
                yield {**pair, **{axis.key: v for axis, v in zip(self.axes, values)}}

    def __len__(self) -> int:
        n = max(len(self.pairs), 1) * self.replications
        for axis in self.axes:
            n *= len(axis.values)
        return n

    def scenario(self, point: Mapping[str, Any], seed: int | None = None) -> Scenario:
        """The resolved scenario of ``point`` (``seed`` defaults to the base scenario's)."""
        data = self._data(point)
        if seed is not None:
            data["seed"] = seed
        if self.extra_variants:
            return Scenario.model_validate(data, context={"variants": list(self.extra_variants)})
        return Scenario.model_validate(data)

    def _data(self, point: Mapping[str, Any]) -> dict[str, Any]:
        data = copy.deepcopy(self.base)
        data.setdefault("name", self.name)
        if self.window is not None:
            data["window"] = self.window
        by_key = {axis.key: axis for axis in self.grid_axes}
        for key, value in point.items():
            if key in by_key:
                for path in by_key[key].paths:
                    set_path(data, path, value)
        for _, settings in self._cells_at(point):
            for path, value in settings.items():
                set_path(data, path, copy.deepcopy(value))
        return data

    def _cells_at(self, point: Mapping[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
        """(index, set) of each ``[[cells]]`` table whose ``where`` the point meets."""
        for i, (where, settings) in enumerate(self.cells):
            if all(canonical_json(point.get(key)) == canonical_json(value) for key, value in where.items()):
                yield i, settings

    def rtt_offset_ns(self, replication: int) -> int:
        """The round-trip offset of replication ``replication`` (1-based) of R: (r − ½)·spread/R,
        to the nearest ns, so that the replications sit evenly over the spread; 0 without one."""
        if self.rtt_spread_ns is None:
            return 0
        return round((2 * replication - 1) * self.rtt_spread_ns / (2 * self.replications))

    def _at_offset(self, scenario: Scenario, replication: int) -> Scenario:
        """``scenario`` with the replication's round-trip offset added to its ``topology.rtt_offset``."""
        if self.rtt_spread_ns is None:
            return scenario
        topo = scenario.topology
        assert isinstance(topo, Dumbbell), "checked when the file was read"
        offset = (topo.rtt_offset.ns if topo.rtt_offset is not None else 0) + self.rtt_offset_ns(replication)
        return scenario.model_copy(update={"topology": topo.model_copy(update={"rtt_offset": Time(offset)})})

    def runs(self, backend: str = "sim") -> list[Run]:
        """Every run of the grid: replication outermost (a partial sweep covers the whole grid
        early), then the flow pairs, then the axes in file order. With ``rtt_spread``, each
        replication's round trip is longer by its :meth:`rtt_offset_ns`."""
        resolved: list[tuple[dict[str, Any], Scenario]] = []
        for point in self.points():
            try:
                resolved.append((point, self.scenario(point)))
            except ScenarioError as e:
                raise self._point_error(point, e) from None
        runs: list[Run] = []
        seen: dict[str, dict[str, Any]] = {}
        for r in range(1, self.replications + 1):
            seed = replication_seed(self.seed, r)
            for point, scenario in resolved:
                s = self._at_offset(scenario.model_copy(update={"seed": seed}), r)
                key = run_id(s, backend, seed, self.profile if backend == "testbed" else None)
                full = {**point, "replication": r}
                if key in seen:
                    why = f" (on the testbed, which does not apply {', '.join(_TESTBED_IGNORES)})" if backend == "testbed" else ""
                    raise _error("sweep", _show_point(full), f"expected points that differ: it resolves to the same run as {_show_point(seen[key])}{why}")
                seen[key] = full
                runs.append(Run(full, s, seed, backend, key))
        return runs

    def _point_error(self, point: Mapping[str, Any], e: ScenarioError) -> ScenarioError:
        """Name the point whose combination of values is invalid (each value alone was valid)."""
        return _error(e.field, e.value, f"{e.allowed} (at the point {_show_point(point)})")


def _show_point(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


# --- reading the file --------------------------------------------------------------------------


def load_experiment(path: str | PathLike[str], extra_variants: tuple[str, ...] = ()) -> Experiment:
    """Read and validate an experiment file; ``name`` defaults to the file's stem. ``extra_variants``:
    variant names a backend runs beyond the simulator's (the testbed kernel's congestion controls)."""
    p = Path(path)
    try:
        data = read_toml(p)
    except ScenarioError as e:
        raise _error("experiment", e.value, e.allowed) from None
    return parse_experiment(data, name=p.stem, base_dir=p.parent, path=p, extra_variants=extra_variants)


def parse_experiment(
    data: Mapping[str, Any], name: str = "experiment", base_dir: Path | None = None, path: Path | None = None, extra_variants: tuple[str, ...] = ()
) -> Experiment:
    """Validate an experiment table (as read from TOML); the first problem is one ScenarioError."""
    for key in data:
        if key not in KEYS:
            raise _error(str(key), data[key], f"unknown key; allowed keys: {', '.join(KEYS)}")
    definition = copy.deepcopy(dict(data))

    name = data.get("name", name)
    if not isinstance(name, str) or not _NAME.match(name):
        raise _error("name", name, "expected a name of letters, digits, '.', '_' or '-' (it names the store file)")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _error("description", description, "expected a string")
    seed = data.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise _error("seed", seed, "expected an integer >= 0 and < 2^64")
    replications = data.get("replications", 1)
    if isinstance(replications, bool) or not isinstance(replications, int) or replications < 1:
        raise _error("replications", replications, "expected an integer >= 1")
    rtt_spread = data.get("rtt_spread")
    if rtt_spread is not None:
        allowed = "expected a time above 0 like '120us': the span the replications' round trips spread over (one packet's time at the bottleneck, 120us at 100 Mb/s, spans the loop's phase)"
        try:
            spread = Time.coerce(rtt_spread)
        except UnitError:
            raise _error("rtt_spread", rtt_spread, allowed) from None
        if spread.ns <= 0:
            raise _error("rtt_spread", rtt_spread, allowed)
    window = data.get("window")
    if window is not None:
        try:
            Window.coerce(window)
        except UnitError as e:
            raise _error("window", window, f"expected {e.allowed}") from None
    profile = data.get("profile", "default")
    if profile not in PROFILES:
        raise _error("profile", profile, f"expected one of {', '.join(PROFILES)} (the testbed's stack profile)")
    metrics = data.get("metrics", ["jfi"])
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, list) or not metrics:
        raise _error("metrics", metrics, f"expected a list of metrics: {', '.join(METRICS)}")
    for i, m in enumerate(metrics):
        if m not in METRICS:
            raise _error(f"metrics[{i}]", m, f"expected one of {', '.join(METRICS)}")

    base = _base_scenario(data.get("scenario", MISSING), base_dir)
    definition["scenario"] = base
    pairs = _pairs(data.get("pairs"), base)
    axes = tuple(_axis(key, spec) for key, spec in _table(data.get("sweep", {}), "sweep").items())
    for axis in axes:
        if axis.key in ("seed", "name"):
            raise _error("sweep", axis.key, "expected a scenario field other than seed and name (replications set the seed)")
        if pairs and axis.key in ("flows[0].variant", "flows[1].variant"):
            raise _error("sweep", axis.key, "expected no variant axis: [pairs] sets the flows' variants")

    cells = _cells(data.get("cells", []), {axis.key: axis for axis in (*_pair_axes(pairs), *axes)})

    exp = Experiment(
        name=name,
        description=description,
        seed=seed,
        replications=replications,
        window=str(window) if window is not None else None,
        metrics=tuple(dict.fromkeys(metrics)),
        base=base,
        pairs=pairs,
        axes=axes,
        definition=definition,
        path=path,
        profile=profile,
        extra_variants=tuple(extra_variants),
        rtt_spread_ns=None if rtt_spread is None else spread.ns,
        cells=cells,
    )
    _check_values(exp)
    return exp


def _pair_axes(pairs: tuple[tuple[str, str], ...]) -> tuple[Axis, ...]:
    """The ``flow1`` and ``flow2`` axes of ``[pairs]`` (none without it)."""
    if not pairs:
        return ()
    return (Axis("flow1", tuple(a for a, _ in pairs), ("flows[0].variant",)), Axis("flow2", tuple(b for _, b in pairs), ("flows[1].variant",)))


def _cells(value: Any, axes: Mapping[str, Axis]) -> tuple[tuple[dict[str, Any], dict[str, Any]], ...]:
    """``[[cells]]``: each a ``where`` (grid axis → one of its values) and a ``set`` (dotted
    scenario path → value), e.g. the hosts' holds measured at one round trip for that rtt's cells."""
    if not isinstance(value, list):
        raise _error("cells", value, "expected an array of tables ([[cells]]), each with where and set")
    cells = []
    for i, cell in enumerate(value):
        at = f"cells[{i}]"
        if not isinstance(cell, dict):
            raise _error(at, cell, "expected a table with where and set")
        for key in cell:
            if key not in CELL_KEYS:
                raise _error(f"{at}.{key}", cell[key], f"unknown key; allowed keys: {', '.join(CELL_KEYS)}")
        where, settings = cell.get("where", MISSING), cell.get("set", MISSING)
        if not isinstance(where, dict) or not where:
            raise _error(f"{at}.where", where, "expected a table of grid axes and values, e.g. where = { \"topology.rtt\" = \"25ms\" }")
        for key, v in where.items():
            if key not in axes:
                raise _error(f"{at}.where", key, f"expected an axis of the grid: {', '.join(axes) or 'none (no [pairs] or [sweep])'}")
            values = axes[key].values
            if canonical_json(v) not in {canonical_json(x) for x in values}:
                raise _error(f"{at}.where.{key}", v, f"expected one of the axis's values: {', '.join(map(str, values))}")
        if not isinstance(settings, dict) or not settings:
            raise _error(f"{at}.set", settings, "expected a table of scenario fields and values, e.g. set = { host_data_holds = [...] }")
        for path, v in settings.items():
            if path in ("seed", "name"):
                raise _error(f"{at}.set", path, "expected a scenario field other than seed and name")
            if isinstance(v, dict):  # set.tcp.rwnd = … unquoted: TOML makes it a table, which would replace [tcp] whole
                raise _error(f"{at}.set.{path}", v, f"expected a value, not a table: quote a dotted path, e.g. set = {{ \"{path}.{next(iter(v), 'field')}\" = … }}")
            for axis in axes.values():
                if path in axis.paths:
                    raise _error(f"{at}.set", path, f"expected a field no axis sets ({axis.key} is an axis)")
        cells.append((dict(where), dict(settings)))
    return tuple(cells)


def _table(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _error(field, value, "expected a table")
    return value


def _base_scenario(value: Any, base_dir: Path | None) -> dict[str, Any]:
    if value is MISSING:
        raise _error("scenario", MISSING, "expected a [scenario] table (the schema of docs/scenario.md) or the path of a scenario file")
    if isinstance(value, str):
        p = Path(value)
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        try:
            return read_toml(p)
        except ScenarioError as e:
            raise _error("scenario", value, e.allowed) from None
    return copy.deepcopy(_table(value, "scenario"))


def _variants(value: Any, field: str) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise _error(field, value, "expected a variant name or a non-empty list of them, like ['newreno', 'cubic']")
    return values


def _pairs(value: Any, base: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    table = _table(value, "pairs")
    for key in table:
        if key not in PAIR_KEYS:
            raise _error(f"pairs.{key}", table[key], f"unknown key; allowed keys: {', '.join(PAIR_KEYS)}")
    for key in ("flow1", "flow2"):
        if key not in table:
            raise _error(f"pairs.{key}", MISSING, "expected a variant name or a list of them")
    both = table.get("both_orders", False)
    if not isinstance(both, bool):
        raise _error("pairs.both_orders", both, "expected true or false")
    flows = base.get("flows")
    if not isinstance(flows, list) or len(flows) < 2:
        raise _error("scenario.flows", flows if flows is not None else MISSING, "expected at least two flows: [pairs] sets the variants of flows 1 and 2")
    pairs: list[tuple[str, str]] = []
    for a in _variants(table["flow1"], "pairs.flow1"):
        for b in _variants(table["flow2"], "pairs.flow2"):
            pairs.append((a, b))
            if both and a != b:
                pairs.append((b, a))
    return tuple(dict.fromkeys(pairs))


def _axis(key: Any, spec: Any) -> Axis:
    where = f"sweep.{key}"
    if isinstance(spec, dict):
        values = _range(where, spec)
    elif isinstance(spec, list):
        values = list(spec)
        if not values:
            raise _error(where, spec, "expected at least one value (a list, or {from, to, step})")
        seen: set[str] = set()
        for v in values:
            text = canonical_json(v)
            if text in seen:
                raise _error(where, v, "expected each value once")
            seen.add(text)
    else:
        values = [spec]
    return Axis(str(key), tuple(values), (str(key),))


def _number(where: str, value: Any) -> tuple[Decimal, str]:
    """``"25ms"`` → ``(Decimal("25"), "ms")``; a number → ``(Decimal, "")``."""
    if isinstance(value, bool):
        raise _error(where, value, "expected a number or a quantity with a unit like '25ms'")
    if isinstance(value, (int, float)):
        return Decimal(str(value)), ""
    if isinstance(value, str):
        m = _QUANTITY.match(value)
        if m is not None:
            try:
                return Decimal(m.group(1)), m.group(2)
            except InvalidOperation:  # pragma: no cover - the pattern admits decimals only
                pass
    raise _error(where, value, "expected a non-negative number or a quantity with a unit like '25ms', '0.2bdp', '10Mbps'")


def _range(where: str, spec: dict[str, Any]) -> list[Any]:
    """``{from = "25ms", to = "400ms", step = "25ms"}`` → ``["25ms", "50ms", …, "400ms"]``:
    from, from + step, … while ≤ to, in exact decimal arithmetic, written in the unit of ``from``."""
    for key in spec:
        if key not in RANGE_KEYS:
            raise _error(f"{where}.{key}", spec[key], f"unknown key; a range has: {', '.join(RANGE_KEYS)}")
    for key in RANGE_KEYS:
        if key not in spec:
            raise _error(f"{where}.{key}", MISSING, "expected a value: a range needs from, to and step")
    lo, unit = _number(f"{where}.from", spec["from"])
    hi, hi_unit = _number(f"{where}.to", spec["to"])
    step, step_unit = _number(f"{where}.step", spec["step"])
    for key, u in (("to", hi_unit), ("step", step_unit)):
        if u != unit:
            raise _error(f"{where}.{key}", spec[key], f"expected the unit of 'from' ({unit or 'a plain number'})")
    if step <= 0:
        raise _error(f"{where}.step", spec["step"], "expected a step > 0")
    if hi < lo:
        raise _error(f"{where}.to", spec["to"], f"expected 'to' >= 'from' ({spec['from']})")
    count = int((hi - lo) // step) + 1
    if count > MAX_AXIS_VALUES:
        raise _error(f"{where}.step", spec["step"], f"expected at most {MAX_AXIS_VALUES} values between 'from' and 'to'")
    numbers = [lo + k * step for k in range(count)]
    if unit:
        return [f"{n}{unit}" for n in numbers]
    as_int = all(isinstance(spec[k], int) for k in RANGE_KEYS)
    return [int(n) if as_int else float(n) for n in numbers]


def _check_values(exp: Experiment) -> None:
    """Every axis value on its own, the others at their first value, must make a valid scenario;
    a field that is not in the scenario is named as such."""
    axes = exp.grid_axes
    first = {axis.key: axis.values[0] for axis in axes}
    # The base alone (with the first value of every axis).
    try:
        base = exp.scenario(first)
    except ScenarioError as e:
        raise _blame(exp, first, e) from None
    if exp.rtt_spread_ns is not None and not isinstance(base.topology, Dumbbell):
        raise _error("rtt_spread", exp.definition["rtt_spread"], "expected a dumbbell topology (a graph has no rtt: its links set their own delays)")
    for axis in axes:
        for value in axis.values[1:]:
            point = {**first, axis.key: value}
            try:
                exp.scenario(point)
            except ScenarioError as e:
                blamed = _blame(exp, point, e)
                if blamed.field.startswith("scenario."):  # a valid value the rest of the scenario cannot take
                    blamed = _error(blamed.field, blamed.value, f"{blamed.allowed} (with sweep.{axis.key} = {value!r})")
                raise blamed from None


def _blame(exp: Experiment, point: Mapping[str, Any], e: ScenarioError) -> ScenarioError:
    """Turn a scenario error into one that names the experiment's field: a ``[[cells]]`` setting,
    an axis or the base."""
    for i, settings in exp._cells_at(point):
        for path in settings:
            if _within(e.field, path):
                return _error(f"cells[{i}].set.{path}", settings[path], e.allowed)
    for axis in exp.grid_axes:
        for path in axis.paths:
            if _within(e.field, path):
                where = "pairs" if axis.key in ("flow1", "flow2") else "sweep"
                if e.allowed.startswith("unknown key") or e.allowed.startswith("expected a path") or e.allowed.startswith("expected an index"):
                    return _error(where, axis.key, f"expected a field of the scenario: {e.field} is not one ({e.allowed})")
                return _error(f"{where}.{axis.key}", point[axis.key], e.allowed)
    return _error(f"scenario.{e.field}", e.value, e.allowed)


def _within(field: str, path: str) -> bool:
    """Whether the scenario field ``field`` is ``path`` or inside it."""
    return field == path or field.startswith(path + ".") or field.startswith(path + "[")
