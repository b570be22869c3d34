"""What a testbed run may leave behind: tcplab's namespaces and processes (for clean-up checks)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def netns() -> list[str]:
    """The tcplab- network namespaces that exist."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith("tcplab-")]


def processes(*names: str) -> list[str]:
    """Command lines of running processes (not zombies) that mention any of ``names``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(n in cmdline for n in names) and "pytest" not in cmdline:
            found.append(cmdline.strip())
    return found
