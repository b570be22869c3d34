"""Move a results store's testbed runs to the run keys tcplab gives them now.

tcplab keys a testbed run's ``[tcp]`` settings that ask for the kernel's own behaviour
(``prr``, ``rack``, ``sack_compression``, ``rcvbuf_autotuning`` = true:
``tcplab.experiment.KERNEL_DEFAULT_TCP``) as
unset, so that an experiment that writes them out for the simulator resumes a store of runs made
without them. Stores written before that hold those runs under their old keys; this script gives
each run whose stored key is its old key (its stored scenario, seed and stack profile hashed the
old way) its new key, in every table, in one transaction. Runs keyed any other way (another
testbed revision, the simulator) are left as they are and counted.

    python scripts/rekey_store.py docs/data/validation-testbed.duckdb
"""

from __future__ import annotations

import argparse
import json
import sys

import duckdb

from tcplab.config import Scenario
from tcplab.errors import ScenarioError
from tcplab.experiment import moved_testbed_key, run_id
from tcplab.store import TABLES


def _current(scenario: dict, seed: int, profile: str | None) -> str | None:
    """The run's key as tcplab gives it now (None for a scenario this tcplab cannot read)."""
    try:
        return run_id(Scenario.model_validate(scenario), "testbed", seed, profile)
    except ScenarioError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="a tcplab results store (.duckdb)")
    args = parser.parse_args(argv)
    db = duckdb.connect(args.store)
    rows = db.execute("SELECT run_id, scenario::VARCHAR, seed, versions->>'$.profile' FROM runs WHERE backend = 'testbed'").fetchall()
    moves, current, other = [], 0, 0
    for key, scenario_text, seed, profile in rows:
        new = moved_testbed_key(json.loads(scenario_text), seed, profile, key)
        if new is not None:
            moves.append((key, new))
        elif _current(json.loads(scenario_text), seed, profile) == key:
            current += 1
        else:
            other += 1
    clash = {new for _, new in moves} & {key for (key, *_) in rows}
    if clash:
        print(f"rekey_store: {len(clash)} new keys are already in the store (the same run stored twice); nothing changed", file=sys.stderr)
        return 1
    db.execute("BEGIN TRANSACTION")
    for old, new in moves:
        for table in TABLES:
            if "run_id" in {c[0] for c in db.execute(f"DESCRIBE {table}").fetchall()}:
                db.execute(f"UPDATE {table} SET run_id = ? WHERE run_id = ?", [new, old])
    db.execute("COMMIT")
    db.close()
    print(f"{args.store}: {len(moves)} testbed runs rekeyed, {current} already current, {other} keyed otherwise (left alone)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
