"""The results store: one DuckDB file per experiment, one transaction per run.

Tables (``docs/experiments.md``, "Results store"):

``meta``
    ``key``/``value`` rows identifying the file: ``format = tcplab-store``, ``format_version``,
    ``experiment`` (the experiment's name), ``definition_hash`` (of the definition last run),
    ``created_at``, ``tcplab_version``.
``definitions``
    every experiment definition that has run into the store: ``definition_hash``, ``definition``
    (JSON), ``first_run_at``.
``runs``
    one row per finished run: ``run_id`` (primary key; a hash of the full resolved scenario, the
    backend and the seed), ``experiment``, ``point`` (axis values as written), ``scenario`` (the
    full resolved scenario), ``seed``, ``backend``, ``versions``, ``wall_s``, ``finished_at``,
    ``valid``, ``invalid_reason``, and for convenience ``replication``, ``jfi``, ``mean_jt``.
``flows``
    per run and flow: ``run_id``, ``flow`` (engine index, 0-based), ``name``, ``variant``, the
    summary over the measurement window (``Result.summary``) and the run's totals
    (``Result.flows``; those that share a name with a window column are prefixed ``total_``).
``intervals``
    per run, flow and interval: ``run_id``, ``flow``, ``t_s`` and the columns of ``Result.intervals``.
``queues``
    per run and link: ``run_id`` and the columns of ``Result.queues``.

The engine's columns are added to ``flows``/``intervals``/``queues`` as they first appear, so a
newer engine's extra columns extend the tables (older rows hold NULL there).

Only the process that runs the sweep writes the store; a run's rows are written in one
transaction, so a run is in the store completely or not at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import ScenarioError

__all__ = ["Store", "StoreError", "RunRecord", "FORMAT", "FORMAT_VERSION", "TABLES"]

FORMAT = "tcplab-store"
FORMAT_VERSION = "1"
#: Every table of a store, in the order they are exported.
TABLES = ("meta", "definitions", "runs", "flows", "intervals", "queues")
#: The first 8 bytes of a DuckDB file are a checksum; bytes 8–12 are its magic.
_DUCKDB_MAGIC = b"DUCK"

_SCHEMA = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE definitions (definition_hash VARCHAR PRIMARY KEY, definition JSON, first_run_at TIMESTAMP);
CREATE TABLE runs (
    run_id VARCHAR PRIMARY KEY,
    experiment VARCHAR NOT NULL,
    point JSON NOT NULL,
    scenario JSON NOT NULL,
    seed UBIGINT NOT NULL,
    backend VARCHAR NOT NULL,
    versions JSON,
    wall_s DOUBLE,
    finished_at TIMESTAMP,
    valid BOOLEAN NOT NULL,
    invalid_reason VARCHAR,
    replication INTEGER,
    jfi DOUBLE,
    mean_jt DOUBLE
);
CREATE TABLE flows (run_id VARCHAR NOT NULL, flow INTEGER NOT NULL, name VARCHAR, variant VARCHAR);
CREATE TABLE intervals (run_id VARCHAR NOT NULL, flow INTEGER NOT NULL, t_s DOUBLE NOT NULL);
CREATE TABLE queues (run_id VARCHAR NOT NULL, link INTEGER NOT NULL);
"""

_RUN_COLUMNS = (
    "run_id", "experiment", "point", "scenario", "seed", "backend", "versions", "wall_s",
    "finished_at", "valid", "invalid_reason", "replication", "jfi", "mean_jt",
)  # fmt: skip


class StoreError(ScenarioError):
    """A store that cannot be used: not a tcplab store, another experiment's, or in use."""


@dataclass
class RunRecord:
    """Everything the store keeps of one run (the rows of all four tables)."""

    run_id: str
    experiment: str
    point: dict[str, Any]
    scenario: dict[str, Any]
    seed: int
    backend: str
    versions: dict[str, Any]
    wall_s: float
    valid: bool
    invalid_reason: str | None
    jfi: float | None
    mean_jt: float | None
    flows: pd.DataFrame | None
    intervals: pd.DataFrame | None
    queues: pd.DataFrame | None
    finished_at: datetime | None = None


def _duckdb() -> Any:
    import duckdb

    return duckdb


def _looks_like_duckdb(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(16)
    except OSError:
        return False
    return len(head) >= 12 and head[8:12] == _DUCKDB_MAGIC


class Store:
    """A tcplab results store.

    ``Store(path)`` opens an existing store read-only (for :meth:`frames` and :meth:`export`);
    :meth:`Store.for_experiment` opens or creates the store of an experiment for writing.
    A file that is not a tcplab store, or one of another experiment, raises :class:`StoreError`
    and is left untouched.
    """

    def __init__(self, path: str | PathLike[str], *, read_only: bool = True, _experiment: str | None = None) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._con: Any = None
        self._columns: dict[str, set[str]] = {}  # columns known to be in each table
        exists = self.path.exists()
        if self.path.is_dir():
            raise StoreError("store", str(self.path), "expected a store file, not a directory")
        if exists:
            found = self._check_existing(_experiment, allow_empty=not read_only)
            # A DuckDB file without any table (a store whose creation was interrupted) is set up anew.
            exists = found is not None
            self.experiment = found if found is not None else _experiment or ""
        elif read_only:
            raise StoreError("store", str(self.path), "expected an existing tcplab store (a .duckdb file that 'tcplab run' wrote)")
        else:
            if not self.path.parent.is_dir():
                raise StoreError("--store", str(self.path), f"expected a file in an existing directory ({self.path.parent} does not exist)")
            self.experiment = _experiment or ""
        self._con = self._connect(read_only)
        if not exists:
            self._create(_experiment or "")

    # --- opening ---

    @classmethod
    def for_experiment(cls, path: str | PathLike[str], experiment: Any) -> Store:
        """Open (or create) the store of ``experiment`` (an :class:`~tcplab.experiment.Experiment`)
        for writing, and record its definition."""
        store = cls(path, read_only=False, _experiment=experiment.name)
        store._record_definition(experiment)
        return store

    def _connect(self, read_only: bool) -> Any:
        duckdb = _duckdb()
        try:
            return duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.IOException as e:
            text = str(e)
            if "lock" in text.lower():
                raise StoreError("store", str(self.path), "expected a store no other process is using (it is locked: is another 'tcplab run' writing it?)") from None
            raise StoreError("store", str(self.path), f"expected a readable tcplab store ({text.splitlines()[0]})") from None

    def _check_existing(self, experiment: str | None, allow_empty: bool = False) -> str | None:
        """Check, through a read-only connection, that the file is a tcplab store (of ``experiment``);
        ``None`` for a DuckDB file with no table at all when ``allow_empty``."""
        if not _looks_like_duckdb(self.path):
            raise StoreError("store", str(self.path), "expected a tcplab results store (a DuckDB file); this file is not one and was left untouched")
        con = self._connect(read_only=True)
        try:
            tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            meta: dict[str, str] = {}
            if "meta" in tables:
                try:
                    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
                except Exception:  # a 'meta' table of some other shape
                    meta = {}
        finally:
            con.close()
        if not tables and allow_empty:
            return None
        if meta.get("format") != FORMAT:
            raise StoreError("store", str(self.path), "expected a tcplab results store; this DuckDB file is not one (no tcplab meta table) and was left untouched")
        if meta.get("format_version") != FORMAT_VERSION:
            raise StoreError("store", str(self.path), f"expected a store of format version {FORMAT_VERSION}, not {meta.get('format_version')}")
        found = meta.get("experiment", "")
        if experiment is not None and found != experiment:
            raise StoreError("--store", str(self.path), f"expected the store of experiment '{experiment}'; it holds experiment '{found}' and was left untouched")
        return found

    def _create(self, experiment: str) -> None:
        from . import __version__

        con = self._con
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(_SCHEMA)
            rows = [
                ("format", FORMAT),
                ("format_version", FORMAT_VERSION),
                ("experiment", experiment),
                ("created_at", _now().isoformat(sep=" ")),
                ("tcplab_version", __version__),
            ]
            con.executemany("INSERT INTO meta VALUES (?, ?)", rows)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def _record_definition(self, experiment: Any) -> None:
        from .experiment import canonical_json

        con = self._con
        digest = experiment.definition_hash
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(
                "INSERT INTO definitions VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [digest, canonical_json(experiment.definition), _now()],
            )
            con.execute("INSERT OR REPLACE INTO meta VALUES ('definition_hash', ?)", [digest])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    # --- writing ---

    def finished(self) -> set[str]:
        """The run_ids of every run in the store."""
        return {row[0] for row in self._con.execute("SELECT run_id FROM runs").fetchall()}

    def invalid(self) -> set[str]:
        """The run_ids of runs recorded as invalid."""
        return {row[0] for row in self._con.execute("SELECT run_id FROM runs WHERE NOT valid").fetchall()}

    def delete(self, run_ids: Iterable[str]) -> None:
        """Remove runs (all their rows, in one transaction), e.g. to redo invalid ones."""
        ids = list(run_ids)
        if not ids:
            return
        con = self._con
        con.execute("BEGIN TRANSACTION")
        try:
            for table in ("flows", "intervals", "queues", "runs"):
                con.execute(f"DELETE FROM {table} WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [ids])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def write(self, record: RunRecord) -> None:
        """Write one run's rows to every table in one transaction."""
        from .experiment import canonical_json

        con = self._con
        finished_at = record.finished_at or _now()
        row = [
            record.run_id,
            record.experiment,
            json.dumps(record.point, separators=(",", ":"), ensure_ascii=False),  # the grid's order of axes
            canonical_json(record.scenario),
            record.seed,
            record.backend,
            canonical_json(record.versions),
            record.wall_s,
            finished_at,
            record.valid,
            record.invalid_reason,
            record.point.get("replication"),
            _finite(record.jfi),
            _finite(record.mean_jt),
        ]
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(f"INSERT INTO runs ({', '.join(_RUN_COLUMNS)}) VALUES ({', '.join('?' * len(_RUN_COLUMNS))})", row)
            for table, frame in (("flows", record.flows), ("intervals", record.intervals), ("queues", record.queues)):
                if frame is not None and len(frame):
                    self._insert(table, record.run_id, frame)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            self._columns.clear()  # columns added in the transaction are gone
            raise

    def _insert(self, table: str, run_id: str, frame: pd.DataFrame) -> None:
        con = self._con
        frame = _plain(frame)
        frame.insert(0, "run_id", run_id)
        con.register("_tcplab_frame", frame)
        try:
            have = self._columns.get(table)
            if have is None or not set(frame.columns) <= have:
                have = {row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()}
                for name, kind, *_ in con.execute("DESCRIBE SELECT * FROM _tcplab_frame").fetchall():
                    if name not in have:
                        con.execute(f'ALTER TABLE {table} ADD COLUMN "{name}" {kind}')
                        have.add(name)
                self._columns[table] = have
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _tcplab_frame")
        finally:
            con.unregister("_tcplab_frame")

    # --- reading ---

    @property
    def meta(self) -> dict[str, str]:
        return dict(self._con.execute("SELECT key, value FROM meta").fetchall())

    def sql(self, query: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        """Run a query on the store and return a data frame."""
        return self._con.execute(query, params or []).df()

    def frames(self, experiment: Any = None, backend: str = "sim") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """``(runs, flows, intervals)`` as pandas data frames.

        ``runs``: one row per run; one column per axis key (``flow1``, ``flow2``, ``topology.rtt`` …:
        the values as written, as strings), then ``run_id``, ``experiment``, ``replication``
        (int, 1-based), ``seed``, ``backend``, ``valid``. ``flows`` and ``intervals``: the tables of
        the same names, rows of those runs.

        Every run in the store by default; with ``experiment`` (an
        :class:`~tcplab.experiment.Experiment`), only the runs of its grid on ``backend``, in grid order.
        """
        raw = self._con.execute(
            "SELECT run_id, experiment, point, replication, seed, backend, valid FROM runs ORDER BY finished_at, run_id"
        ).df()
        if experiment is not None:
            order = {run.run_id: i for i, run in enumerate(experiment.runs(backend))}
            raw = raw[raw["run_id"].isin(order)]
            raw = raw.iloc[sorted(range(len(raw)), key=lambda i: order[raw["run_id"].iloc[i]])]
        points = [json.loads(p) for p in raw["point"]]
        keys: list[str] = [k for k in experiment.axis_keys if k != "replication"] if experiment is not None else []
        for p in points:
            keys.extend(k for k in p if k != "replication" and k not in keys)
        columns: dict[str, Any] = {k: [_as_text(p.get(k)) for p in points] for k in keys}
        runs = pd.DataFrame(columns, index=range(len(raw)))
        for name in ("run_id", "experiment"):
            runs[name] = raw[name].to_numpy()
        runs["replication"] = [int(p.get("replication", r)) for p, r in zip(points, raw["replication"].fillna(0))]
        runs["seed"] = raw["seed"].to_numpy(dtype="uint64")
        runs["backend"] = raw["backend"].to_numpy()
        runs["valid"] = raw["valid"].to_numpy(dtype=bool)
        ids = list(runs["run_id"])
        flows = self.rows("flows", ids, "flow")
        intervals = self.rows("intervals", ids, "flow, t_s")
        return runs, flows, intervals

    def rows(self, table: str, run_ids: Sequence[str], order: str = "run_id") -> pd.DataFrame:
        """The rows of ``table`` (``runs``, ``flows``, ``intervals``, ``queues``) of the runs
        ``run_ids``, in that order of runs and then by ``order`` (columns, SQL)."""
        if table not in TABLES[2:]:
            raise StoreError("table", table, f"expected one of {', '.join(TABLES[2:])}")
        con = self._con
        keys = pd.DataFrame({"run_id": list(run_ids), "_k": range(len(run_ids))})
        con.register("_tcplab_ids", keys)
        try:
            frame = con.execute(
                f"SELECT t.* FROM {table} t JOIN _tcplab_ids k USING (run_id) ORDER BY k._k, {order}"
            ).df()
        finally:
            con.unregister("_tcplab_ids")
        return frame

    # --- export ---

    def export(self, directory: str | PathLike[str], fmt: str) -> list[Path]:
        """Write every table to ``directory/<table>.parquet`` (or ``.csv``); returns the paths."""
        if fmt not in ("parquet", "csv"):
            raise StoreError("format", fmt, "expected parquet or csv")
        out = Path(directory)
        if out.exists() and not out.is_dir():
            raise StoreError(f"--{fmt}", str(out), "expected a directory, not a file")
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for table in TABLES:
            target = out / f"{table}.{fmt}"
            tmp = out / f".{table}.{fmt}.tmp"
            options = "(FORMAT PARQUET)" if fmt == "parquet" else "(FORMAT CSV, HEADER)"
            self._con.execute(f"COPY (SELECT * FROM {table}) TO '{_sql_text(tmp)}' {options}")
            os.replace(tmp, target)
            written.append(target)
        return written

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _finite(x: float | None) -> float | None:
    return None if x is None or x != x else float(x)


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _sql_text(path: Path) -> str:
    return str(path).replace("'", "''")


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Categorical and string columns as plain object strings (DuckDB would make ENUMs of categories)."""
    out = frame.copy()
    for name in out.columns:
        dtype = out[name].dtype
        if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype):
            out[name] = out[name].astype(str).astype(object)
    return out

