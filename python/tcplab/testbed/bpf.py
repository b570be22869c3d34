"""Congestion controls this kernel lacks, supplied as BPF programs.

Linux lets a congestion control be a BPF ``struct_ops`` program: once registered it is listed in
``net.ipv4.tcp_available_congestion_control`` and a socket selects it by name like any other,
with the kernel's own TCP around it (ECN negotiation, CWR, PRR, RACK-TLP, TSO, the ACK policy).
The testbed's kernel was built with ``reno``, ``cubic`` and ``bbr`` only, so for each Linux
congestion control in :data:`SOURCES` tcplab has a program in ``bpf/`` that follows Linux's
``net/ipv4/tcp_<name>.c`` (as the simulator's ``crates/tcplab-sim/src/cc/<name>.rs`` does).
:func:`register` builds one with clang against the running kernel's BTF and registers it with
bpftool, the first time a scenario asks for it on a kernel without that module. It stays
registered, as a loaded module would; when its source has changed since, the next run that asks
for it registers the new build in its place (sockets already open keep the old one). The run's
``backend_info`` says which congestion controls were tcplab's programs
(``bpf_congestion_controls``).

Needs root, ``clang``, ``bpftool``, libbpf's headers (``make deps`` installs them) and a kernel
with BTF (``/sys/kernel/btf/vmlinux``) and BPF congestion controls.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from . import tools

__all__ = ["SOURCES", "register", "registered", "map_name", "dctcp_alphas", "ALPHA_MAP"]

#: Congestion-control name → its BPF source in this package's ``bpf/`` directory.
SOURCES = {
    name: f"{name}.bpf.c"
    for name in ("bic", "dctcp", "highspeed", "htcp", "hybla", "illinois", "lp", "scalable", "vegas", "veno", "westwood", "yeah")
}
#: The prefix of the programs' struct_ops map names: ``tcplab_dctcp`` registers ``dctcp``.
MAP_PREFIX = "tcplab_"
#: The kernel keeps this many characters of a map's name (``BPF_OBJ_NAME_LEN`` less its NUL):
#: ``tcplab_highspeed`` is listed as ``tcplab_highspee``.
MAP_NAME_LEN = 15
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
    newest = max(p.stat().st_mtime for p in (source, *_HERE.glob("*.h")))  # a changed header rebuilds all
    if not obj.exists() or obj.stat().st_mtime < newest:
        part = obj.with_suffix(".part")
        tools.run(["clang", "-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86", "-I", str(cache), "-c", str(source), "-o", str(part)],
                  timeout=120, what=f"building {source.name}")
        part.replace(obj)
    return obj


def map_name(name: str) -> str:
    """The struct_ops map that registers ``name``, as the kernel lists it (``bpftool struct_ops
    unregister name <this>`` removes it)."""
    return (MAP_PREFIX + name)[:MAP_NAME_LEN]


#: Which build of each program is registered: its object's SHA-256, one file per program. Kept
#: where the registrations are kept, for the running kernel's lifetime (``/run`` is cleared at
#: boot), not in a build cache another user or directory may have.
_STAMPS = Path("/run/tcplab/bpf")


def _digest(obj: Path) -> str:
    return hashlib.sha256(obj.read_bytes()).hexdigest()


def register(name: str) -> str | None:
    """Register ``name``'s BPF program as a congestion control, or, when it is registered from an
    older build than its source gives now, register the new build in its place. ``None`` when
    done; otherwise why it could not be (what is missing, or the tool's error), for the caller's
    message."""
    if name not in SOURCES:
        return f"tcplab has no BPF program for {name}"
    missing = _missing()
    if missing:
        return f"building tcplab's BPF {name} needs {', '.join(missing)}"
    try:
        obj = build(name)
        stamp = _STAMPS / name
        if name in registered():
            if stamp.exists() and stamp.read_text() == _digest(obj):
                return None
            tools.run(["bpftool", "struct_ops", "unregister", "name", map_name(name)], timeout=60, what=f"unregistering the old {name}")
        tools.run(["bpftool", "struct_ops", "register", str(obj)], timeout=60, what=f"registering {name}")
        _STAMPS.mkdir(parents=True, exist_ok=True)
        stamp.write_text(_digest(obj))
    except tools.ToolError as e:
        return str(e).splitlines()[0]
    return None


#: The map in which tcplab's DCTCP publishes each connection's α (``bpf/dctcp.bpf.c``).
ALPHA_MAP = "tcplab_alpha"


def dctcp_alphas(since_ns: int) -> dict[str, float]:
    """DCTCP's α (0–1) of each connection tcplab's BPF DCTCP opened at ``since_ns`` or later
    (CLOCK_MONOTONIC), by its local IPv4 address; of several from one address, the one that
    delivered the most (a bulk flow's data connection, not iperf3's control connection). Empty
    when the map is not there (no BPF DCTCP, or a kernel's own) or cannot be read."""
    text = tools.run(["bpftool", "-j", "map", "dump", "name", ALPHA_MAP], timeout=10, what="reading DCTCP's alpha", check=False)
    try:
        entries = json.loads(text) if text.strip() else []
    except json.JSONDecodeError:
        return {}
    best: dict[str, tuple[int, float]] = {}
    for entry in entries:
        raw, value = entry.get("key"), entry.get("formatted", {}).get("value")
        if not isinstance(raw, list) or len(raw) < 4 or not isinstance(value, dict) or value.get("born_ns", 0) < since_ns:
            continue
        addr = ".".join(str(int(b, 16)) for b in raw[:4])  # the address's bytes in network order
        if addr not in best or value["delivered"] > best[addr][0]:
            best[addr] = (value["delivered"], value["alpha"] / 1024)
    return {addr: alpha for addr, (_, alpha) in best.items()}


def registered() -> list[str]:
    """The congestion controls tcplab's BPF programs provide now (none without bpftool)."""
    if shutil.which("bpftool") is None or os.geteuid() != 0:
        return []
    out = tools.run(["bpftool", "struct_ops", "list"], timeout=30, what="listing struct_ops", check=False) or ""
    ours = {map_name(name): name for name in SOURCES}
    names = []
    for line in out.splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 3 and parts[1] in ours and parts[2] == "tcp_congestion_ops":
            names.append(ours[parts[1]])
    return sorted(names)
