"""Congestion controls this kernel lacks, supplied as BPF programs.

Linux lets a congestion control be a BPF ``struct_ops`` program: once registered it is listed in
``net.ipv4.tcp_available_congestion_control`` and a socket selects it by name like any other,
with the kernel's own TCP around it (ECN negotiation, CWR, PRR, TSO, the ACK policy). The
testbed's kernel was built without ``tcp_dctcp``, so :func:`register` builds
``bpf/dctcp.bpf.c`` (DCTCP as ``net/ipv4/tcp_dctcp.c`` runs it) with clang against the running
kernel's BTF and registers it with bpftool, the first time a scenario asks for ``dctcp``. It
stays registered, as a loaded module would, and the run's ``backend_info`` says which congestion
controls were tcplab's programs (``bpf_congestion_controls``).

Needs root, ``clang``, ``bpftool``, libbpf's headers (``make deps`` installs them) and a kernel
with BTF (``/sys/kernel/btf/vmlinux``) and BPF congestion controls.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from . import tools

__all__ = ["SOURCES", "register", "registered"]

#: Congestion-control name → its BPF source in this package's ``bpf/`` directory.
SOURCES = {"dctcp": "dctcp.bpf.c"}
#: The prefix of the programs' struct_ops map names: ``tcplab_dctcp`` registers ``dctcp``.
MAP_PREFIX = "tcplab_"
_BTF = Path("/sys/kernel/btf/vmlinux")
_HERE = Path(__file__).parent / "bpf"


def _cache() -> Path:
    """Where the builds go: per kernel release (the header is the running kernel's types)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "tcplab" / "bpf" / os.uname().release


def _missing() -> list[str]:
    problems = []
    if os.geteuid() != 0:
        problems.append("root")
    problems += [t for t in ("clang", "bpftool") if shutil.which(t) is None]
    if not Path("/usr/include/bpf/bpf_helpers.h").exists():
        problems.append("libbpf's headers (libbpf-dev)")
    if not _BTF.exists():
        problems.append(f"the kernel's BTF ({_BTF})")
    return problems


def build(name: str) -> Path:
    """The object file of ``name``'s program, built now unless it is newer than its source."""
    source = _HERE / SOURCES[name]
    cache = _cache()
    cache.mkdir(parents=True, exist_ok=True)
    header = cache / "vmlinux.h"
    if not header.exists():
        text = tools.run(["bpftool", "btf", "dump", "file", str(_BTF), "format", "c"], timeout=120, what="the kernel's types as a C header")
        part = header.with_suffix(".part")
        part.write_text(text)
        part.replace(header)
    obj = cache / f"{name}.bpf.o"
    if not obj.exists() or obj.stat().st_mtime < source.stat().st_mtime:
        part = obj.with_suffix(".part")
        tools.run(["clang", "-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86", "-I", str(cache), "-c", str(source), "-o", str(part)],
                  timeout=120, what=f"building {source.name}")
        part.replace(obj)
    return obj


def register(name: str) -> str | None:
    """Register ``name``'s BPF program as a congestion control. ``None`` when done; otherwise why
    it could not be (what is missing, or the tool's error), for the caller's message."""
    if name not in SOURCES:
        return f"tcplab has no BPF program for {name}"
    missing = _missing()
    if missing:
        return f"building tcplab's BPF {name} needs {', '.join(missing)}"
    try:
        obj = build(name)
        tools.run(["bpftool", "struct_ops", "register", str(obj)], timeout=60, what=f"registering {name}")
    except tools.ToolError as e:
        return str(e).splitlines()[0]
    return None


def registered() -> list[str]:
    """The congestion controls tcplab's BPF programs provide now (none without bpftool)."""
    if shutil.which("bpftool") is None or os.geteuid() != 0:
        return []
    out = tools.run(["bpftool", "struct_ops", "list"], timeout=30, what="listing struct_ops", check=False) or ""
    names = []
    for line in out.splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 3 and parts[1].startswith(MAP_PREFIX) and parts[2] == "tcp_congestion_ops":
            names.append(parts[1][len(MAP_PREFIX):])
    return sorted(names)
