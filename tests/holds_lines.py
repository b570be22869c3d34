"""The scenario lines `scripts/loop_holds.py table` prints (for the tests that read them)."""

from __future__ import annotations

import tomllib


def host_lines(out: str) -> str:
    """The ``host_data_holds`` and ``host_ack_holds`` lines of ``out``, as scenario text."""
    return "".join(line + "\n" for line in out.splitlines() if line.startswith("host_"))


def tables(out: str) -> dict[str, list[float]]:
    """Each table of ``out``, in µs."""
    return {name: [float(v.removesuffix("us")) for v in holds] for name, holds in tomllib.loads(host_lines(out)).items()}
