"""A stand-in for ``tcplab.store.Store`` that keeps the three frames in a pickle file: the CLI's
results commands are tested against the store's interface (``Store(path).frames()``)."""

from __future__ import annotations

import pickle
import sys
import types
from pathlib import Path

from tcplab.analysis import Frames


class PickleStore:
    def __init__(self, path: Path) -> None:
        with open(path, "rb") as f:
            data = pickle.load(f)
        if not isinstance(data, dict) or set(data) != {"runs", "flows", "intervals"}:
            raise ValueError("not a results store")
        self.data = data

    def frames(self) -> tuple:
        return self.data["runs"], self.data["flows"], self.data["intervals"]


def write(frames: Frames, path: Path) -> Path:
    with open(path, "wb") as f:
        pickle.dump({"runs": frames.runs, "flows": frames.flows, "intervals": frames.intervals}, f)
    return path


def install(monkeypatch) -> None:
    """Make ``tcplab.store`` this module's store for one test."""
    module = types.ModuleType("tcplab.store")
    module.Store = PickleStore  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tcplab.store", module)
