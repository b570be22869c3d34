"""Running an experiment: expand the grid, run the points on an executor, store every run.

::

    tcplab run experiments/paper000-quick.toml --jobs 2
    tcplab run experiments/paper000.toml --executor dask --scheduler tcp://head:8786

Workers (local processes or Dask workers) only run a backend and return the run's rows
(:func:`execute`); the coordinator alone writes the store, one transaction per run. Re-running an
experiment skips the runs already in its store (known by ``run_id``, a hash of their full
parameters), so an interrupted sweep resumes where it stopped and no run is stored twice.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import backends
from .config import Scenario
from .errors import MISSING, EngineError, ScenarioError, TcplabError
from .experiment import PROFILES, Experiment, Run, _blame, canonical_json, moved_testbed_key, scenario_json
from .store import RunRecord, Store, StoreError

__all__ = ["execute", "run_experiment", "with_profile", "default_store_path", "SweepReport", "print_summary", "EXECUTORS"]

EXECUTORS = ("local", "dask")

#: Columns of ``Result.flows`` that the window summary already holds for the whole run.
_WHOLE_RUN = ("rto_count", "loss_undos", "recoveries")


def default_store_path(experiment: Experiment) -> Path:
    """``results/<experiment name>.duckdb``, relative to the current directory."""
    return Path("results") / f"{experiment.name}.duckdb"


# --- the worker side ---------------------------------------------------------------------------


def execute(backend: str, scenario: Scenario, seed: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one scenario on ``backend`` (with the backend's ``options``: the testbed's ``profile``
    and ``sweep``) and return its rows; runs in a worker, touches no store.

    A run that the backend refuses or that fails (a :class:`~tcplab.errors.TcplabError`) comes back
    with ``error`` set and is stored as invalid; a backend may also mark a finished run invalid with
    ``Result.meta["invalid_reason"]``.
    """
    started = time.perf_counter()
    out: dict[str, Any] = {"error": None, "flows": None, "intervals": None, "queues": None, "jfi": None, "mean_jt": None}
    try:
        result = backends.get(backend)(scenario, seed, **(options or {}))
        summary = result.summary()
        out["versions"] = backends.versions(backend, result)
        out["flows"] = _flow_rows(result.flows, summary)
        out["intervals"] = _interval_rows(result.intervals)
        out["queues"] = result.queues.copy()
        out["jfi"] = float(summary.attrs["jain"])
        out["mean_jt"] = float(result.jain_series().mean())
        reason = result.meta.get("invalid_reason")
        if reason:
            out["error"] = str(reason)
    except TcplabError as e:
        out["error"] = f"{type(e).__name__}: {e}"
        out.setdefault("versions", {**backends.versions(backend), **({"profile": options["profile"]} if options and "profile" in options else {})})
    out["wall_s"] = time.perf_counter() - started
    return out


def _flow_rows(flows: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per flow: index, name, variant, the window summary, then the run's totals."""
    rows = pd.DataFrame(
        {
            "flow": flows["flow"].to_numpy(dtype=np.int64),
            "name": summary["flow"].astype(str).to_numpy(),
            "variant": summary["variant"].astype(str).to_numpy(),
        }
    )
    for column in summary.columns:
        if column not in ("flow", "variant"):
            rows[column] = summary[column].to_numpy()
    for column in flows.columns:
        if column in ("flow", "name", "variant") or column in _WHOLE_RUN:
            continue
        rows[f"total_{column}" if column in summary.columns else column] = flows[column].to_numpy()
    return rows


def _interval_rows(intervals: pd.DataFrame) -> pd.DataFrame:
    rows = intervals.drop(columns=["name"], errors="ignore").copy()
    rows["flow"] = rows["flow"].to_numpy(dtype=np.int64)
    return rows


# --- executors ---------------------------------------------------------------------------------


def _in_process(backend: str, runs: Iterable[Run], options: dict[str, Any]) -> Iterator[tuple[Run, dict[str, Any]]]:
    for run in runs:
        yield run, execute(backend, run.scenario, run.seed, options)


def _process_pool(backend: str, runs: Iterable[Run], jobs: int, options: dict[str, Any]) -> Iterator[tuple[Run, dict[str, Any]]]:
    """A local pool of ``jobs`` processes (started fresh: 'spawn'), at most 2·jobs runs in flight."""
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_watch_parent, initargs=(os.getpid(),)
    )
    pending: dict[Any, Run] = {}
    todo = iter(runs)
    try:
        while True:
            while len(pending) < 2 * jobs:
                run = next(todo, None)
                if run is None:
                    break
                pending[pool.submit(execute, backend, run.scenario, run.seed, options)] = run
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()
    except BrokenProcessPool:
        raise EngineError(
            "a worker process died (killed, or out of memory?); the runs finished so far are stored: run again to resume"
        ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _watch_parent(parent: int) -> None:
    """In a pool worker: exit as soon as the coordinator is gone (killed, say), rather than wait
    forever for work that will never come."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="tcplab-parent-watch", daemon=True).start()


def _dask(backend: str, runs: Iterable[Run], scheduler: str, options: dict[str, Any]) -> Iterator[tuple[Run, dict[str, Any]]]:
    """The runs on the Dask cluster at ``scheduler``, at most 2 per worker thread in flight."""
    try:
        from distributed import Client, as_completed
    except ImportError as e:  # pragma: no cover - a dependency of tcplab
        raise ScenarioError("--executor", "dask", f"the Dask executor needs dask[distributed] ({e})") from None
    try:
        client = Client(scheduler, timeout="10s")
    except (OSError, TimeoutError, ValueError) as e:
        raise ScenarioError("--scheduler", scheduler, f"expected the address of a running Dask scheduler (could not connect: {e})") from None
    try:
        limit = max(2 * sum(client.nthreads().values()), 2)
        pending: dict[str, Run] = {}
        futures = as_completed()
        todo = iter(runs)

        def fill() -> None:
            while len(pending) < limit:
                run = next(todo, None)
                if run is None:
                    return
                future = client.submit(execute, backend, run.scenario, run.seed, options, pure=False, key=f"tcplab-run-{run.run_id}")
                pending[future.key] = run
                futures.add(future)

        fill()
        for future in futures:
            run = pending.pop(future.key)
            yield run, future.result()
            future.release()
            fill()
    finally:
        client.close()


def _results(backend: str, runs: Sequence[Run], executor: str, jobs: int, scheduler: str | None, options: dict[str, Any]) -> Iterator[tuple[Run, dict[str, Any]]]:
    if executor == "dask":
        assert scheduler is not None
        return _dask(backend, runs, scheduler, options)
    if jobs == 1 or len(runs) <= 1:
        return _in_process(backend, runs, options)
    return _process_pool(backend, runs, min(jobs, len(runs)), options)


# --- the coordinator ---------------------------------------------------------------------------


@dataclass
class SweepReport:
    """What a sweep did."""

    store: Path
    total: int  # runs in the grid
    skipped: int  # already in the store
    ran: int  # run now
    invalid: int  # runs of the grid stored as invalid
    wall_s: float
    interrupted: bool = False

    @property
    def runs_per_s(self) -> float:
        return self.ran / self.wall_s if self.wall_s > 0 else float("nan")


def _record(exp: Experiment, run: Run, payload: dict[str, Any]) -> RunRecord:
    return RunRecord(
        run_id=run.run_id,
        experiment=exp.name,
        point=run.point,
        scenario=scenario_json(run.scenario),
        seed=run.seed,
        backend=run.backend,
        versions=payload.get("versions") or {"backend": run.backend},
        wall_s=float(payload["wall_s"]),
        valid=payload["error"] is None,
        invalid_reason=payload["error"],
        jfi=payload["jfi"],
        mean_jt=payload["mean_jt"],
        flows=payload["flows"],
        intervals=payload["intervals"],
        queues=payload["queues"],
    )


def check_options(executor: str, jobs: int | None, scheduler: str | None, backend: str = "sim") -> int:
    """Validate the executor options; returns the number of local jobs: by default every core for
    the simulator, one for the testbed (parallel testbed runs would share the machine's CPUs and
    disturb each other's measurements)."""
    if executor not in EXECUTORS:
        raise ScenarioError("--executor", executor, f"expected one of {', '.join(EXECUTORS)}")
    if executor == "dask" and not scheduler:
        raise ScenarioError("--scheduler", MISSING, "expected a scheduler address like tcp://host:8786 with --executor dask")
    if executor == "local" and scheduler:
        raise ScenarioError("--scheduler", scheduler, "expected no --scheduler with the local executor (use --executor dask)")
    if jobs is None:
        return 1 if backend == "testbed" else os.cpu_count() or 1
    if jobs < 1:
        raise ScenarioError("--jobs", jobs, "expected an integer >= 1")
    if backend == "testbed" and executor == "local" and jobs > 1:
        raise ScenarioError("--jobs", jobs, "expected 1 with --backend testbed (one testbed per machine: its runs would share the CPUs and the namespaces)")
    return jobs


def with_profile(exp: Experiment, backend: str, profile: str | None) -> Experiment:
    """``exp`` with the stack profile ``profile`` (``--profile``) instead of its file's, if given."""
    if profile is None:
        return exp
    check_profile(backend, profile)
    return replace(exp, profile=profile)


def check_profile(backend: str, profile: str | None) -> None:
    """``--profile``: a testbed stack profile, and only with the testbed."""
    if profile is None:
        return
    if backend != "testbed":
        raise ScenarioError("--profile", profile, "expected --profile only with --backend testbed (the simulator has no stack profiles)")
    if profile not in PROFILES:
        raise ScenarioError("--profile", profile, f"expected one of {', '.join(PROFILES)}")


def run_experiment(
    exp: Experiment,
    store: str | PathLike[str] | None = None,
    *,
    jobs: int | None = None,
    backend: str = "sim",
    executor: str = "local",
    scheduler: str | None = None,
    redo_invalid: bool = False,
    progress: bool = True,
    console: Any = None,
    profile: str | None = None,
) -> SweepReport:
    """Run every run of ``exp`` that is not in its store yet, writing each as it finishes.

    ``store`` defaults to :func:`default_store_path`. Ctrl-C stops the sweep; the runs finished so
    far stay in the store (``report.interrupted``) and the next call resumes. ``profile`` (the
    testbed's stack profile) overrides the experiment's ``profile``. Every run is checked against
    the backend first (the testbed: variants of this kernel, applicable ``[tcp]`` settings): the
    first problem is a ScenarioError and nothing runs.
    """
    jobs = check_options(executor, jobs, scheduler, backend)
    exp = with_profile(exp, backend, profile)
    backends.get(backend)
    runs = exp.runs(backend)
    checked: set[str] = set()
    for run in runs:
        text = canonical_json(scenario_json(run.scenario))
        if text in checked:
            continue
        checked.add(text)
        try:
            backends.check_scenario(backend, run.scenario, exp.profile)
        except ScenarioError as e:
            if e.field == "profile":
                raise
            raise _blame(exp, run.point, e) from None
    backends.check(backend)  # the tools (the testbed: root, iperf3, the router …), once the grid is known good
    options: dict[str, Any] = {"profile": exp.profile, "sweep": uuid.uuid4().hex} if backend == "testbed" else {}
    path = Path(store) if store is not None else default_store_path(exp)
    if store is None:
        path.parent.mkdir(exist_ok=True)
    if backend == "testbed" and path.exists():
        _refuse_runs_under_old_keys(runs, path)
    started = time.perf_counter()
    with Store.for_experiment(path, exp) as db:
        done = db.finished()
        if redo_invalid:
            redo = db.invalid() & {run.run_id for run in runs}
            db.delete(redo)
            done -= redo
        todo = [run for run in runs if run.run_id not in done]
        report = SweepReport(path, len(runs), len(runs) - len(todo), 0, 0, 0.0)
        bar = _Progress(console, progress, _describe(exp, report), len(todo))
        try:
            bar.start()
            for run, payload in _results(backend, todo, executor, jobs, scheduler, options):
                db.write(_record(exp, run, payload))
                report.ran += 1
                bar.advance(run, payload)
        except KeyboardInterrupt:
            report.interrupted = True
        finally:
            bar.stop()
        ids = [run.run_id for run in runs]
        report.invalid = int(
            db.sql("SELECT count(*) AS n FROM runs WHERE NOT valid AND run_id IN (SELECT unnest(?::VARCHAR[]))", [ids])["n"].iloc[0]
        )
    report.wall_s = time.perf_counter() - started
    return report


def _refuse_runs_under_old_keys(runs: Sequence[Run], path: Path) -> None:
    """A store written before testbed run keys took ``KERNEL_DEFAULT_TCP`` as unset may hold these
    runs under their old keys; running them again would store the same runs twice."""
    todo = {r.run_id for r in runs}
    with Store(path) as db:
        stored = db.sql("SELECT run_id, scenario::VARCHAR AS scenario, seed, versions->>'$.profile' AS profile FROM runs WHERE backend = 'testbed'")
    moved = [
        key
        for key, scenario, seed, profile in stored[["run_id", "scenario", "seed", "profile"]].itertuples(index=False)
        if key not in todo and moved_testbed_key(json.loads(scenario), int(seed), profile, key) in todo
    ]
    if moved:
        raise StoreError(
            "--store",
            str(path),
            f"expected the current run keys: {len(moved)} of these runs are in it under the keys of an earlier tcplab "
            f"(before [tcp] settings at the kernel's own defaults were keyed as unset); move them with "
            f"'python scripts/rekey_store.py {path}', then run again",
        )


def _describe(exp: Experiment, report: SweepReport) -> str:
    text = f"{exp.name}"
    if report.skipped:
        text += f" ({report.skipped} of {report.total} already stored)"
    return text


class _Progress:
    """Progress of a sweep: a rich bar (runs done, rate, ETA) on a terminal; elsewhere (a log file,
    a batch job) one line per stored run; nothing when quiet."""

    def __init__(self, console: Any, enabled: bool, description: str, total: int) -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self.enabled = enabled
        self.total = total
        self.done = 0
        self.started = time.perf_counter()
        self.bar: Any = None
        if enabled and self.console.is_terminal:
            self.bar = _rich_bar(self.console)
            self.task = self.bar.add_task(description, total=total)
        elif enabled:
            self.console.print(f"{description}: {total} runs to do", highlight=False)

    def start(self) -> None:
        self.started = time.perf_counter()
        if self.bar is not None:
            self.bar.start()

    def advance(self, run: Run, payload: dict[str, Any]) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.advance(self.task)
        elif self.enabled:
            elapsed = time.perf_counter() - self.started
            rate = self.done / elapsed if elapsed > 0 else float("nan")
            eta = (self.total - self.done) / rate if rate > 0 else float("nan")
            point = _show(run.point)
            state = "" if payload["error"] is None else f"  invalid: {payload['error']}"
            self.console.print(
                f"[{self.done}/{self.total}] {rate:.2f} runs/s, ETA {_clock(eta)}  {point}  ({payload['wall_s']:.2f} s){state}",
                highlight=False,
                soft_wrap=True,
            )

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _show(point: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in point.items())


def _clock(seconds: float) -> str:
    if seconds != seconds:
        return "-:--:--"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _rich_bar(console: Any) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Runs per second, over rich's recent-speed window."""

        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text("- runs/s" if speed is None else f"{speed:.2f} runs/s", style="progress.data.speed")

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


# --- the summary table -------------------------------------------------------------------------


def print_summary(store: Store, exp: Experiment, report: SweepReport, backend: str = "sim", console: Any = None) -> None:
    """The across-replication tables of the experiment's metrics (:func:`tcplab.analysis.summary_table`,
    what ``tcplab table`` prints: mean (std) per cell) and a line on what the sweep did."""
    from rich.console import Console

    from . import analysis

    console = console or Console()
    frames = analysis.store_frames(store, exp, backend)
    valid = frames.runs["valid"].astype(bool)
    if valid.any():
        runs_table = analysis.per_run(frames)
        for metric in analysis.experiment_metrics(exp.metrics, runs_table):
            print(analysis.summary_table(frames, metric, runs_table=runs_table), end="\n\n")
    line = f"{report.total} runs: {report.ran} run now, {report.skipped} already in the store"
    if report.invalid:
        line += f", [bold red]{report.invalid} invalid[/] (runs.invalid_reason)"
    rate = f", {report.runs_per_s:.2f} runs/s" if report.ran else ""
    console.print(f"{line}; {report.wall_s:.1f} s{rate} → {report.store}", highlight=False, soft_wrap=True)


def main_run(args: Any) -> int:
    """``tcplab run``: the CLI's entry (see :mod:`tcplab.cli`)."""
    from rich.console import Console

    from .experiment import load_experiment

    backend = args.backend
    check_profile(backend, getattr(args, "profile", None))
    exp = load_experiment(args.file, tuple(backends.variants(backend)))
    exp = with_profile(exp, backend, getattr(args, "profile", None))
    # A wide table is not folded when the output goes to a file or a pipe.
    console = Console() if sys.stdout.isatty() else Console(width=240)
    report = run_experiment(
        exp,
        args.store,
        jobs=args.jobs,
        backend=args.backend,
        executor=args.executor,
        scheduler=args.scheduler,
        redo_invalid=args.redo_invalid,
        progress=not args.quiet,
        console=Console(stderr=True),
    )
    if report.interrupted:
        print(f"tcplab: interrupted: {report.ran} runs stored in {report.store}; run the same command again to resume", file=sys.stderr)
        return 130
    if not args.quiet:
        with Store(report.store) as db:
            print_summary(db, exp, report, args.backend, console)
    return 1 if report.invalid else 0


def main_export(args: Any) -> int:
    """``tcplab export``: every table of a store to Parquet or CSV files."""
    fmt, directory = ("parquet", args.parquet) if args.parquet else ("csv", args.csv)
    with Store(args.store) as db:
        written = db.export(directory, fmt)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0
