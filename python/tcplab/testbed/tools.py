"""Layer 1: the command-line tools the testbed drives (``ip``, ``sysctl``, ``ethtool``,
``iperf3``, ``ping``), each run in a namespace when one is given.

Every call either succeeds or raises :class:`ToolError` carrying the command line, its exit status
and its stderr: a tool's complaint is never swallowed.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TcplabError

__all__ = [
    "ToolError",
    "MissingTool",
    "INSTALL",
    "require",
    "run",
    "ns_cmd",
    "ip",
    "sysctl_set",
    "sysctl_get",
    "ethtool_offloads_off",
    "ping",
    "PingStats",
    "spawn",
    "parent_death_signal",
    "kernel_counters",
]

#: The Debian packages behind each external tool.
INSTALL = {"ip": "iproute2", "iperf3": "iperf3", "ping": "iputils-ping", "ethtool": "ethtool"}


class ToolError(TcplabError):
    """A tool failed: the command, its exit status and its stderr."""

    def __init__(self, cmd: Sequence[str], returncode: int | None, stderr: str, what: str = "") -> None:
        self.cmd = list(cmd)
        self.returncode = returncode
        self.stderr = stderr.strip()
        status = "timed out" if returncode is None else f"exit status {returncode}"
        head = f"{what}: " if what else ""
        super().__init__(f"{head}'{' '.join(self.cmd)}' failed ({status}): {self.stderr or '(no stderr)'}")


class MissingTool(TcplabError):
    """The testbed cannot run here: what is missing and how to get it."""


def require(tools: Sequence[str] = ("ip", "iperf3", "ping", "ethtool")) -> None:
    """Raise :class:`MissingTool` unless running as root with every tool on PATH."""
    problems = []
    if os.geteuid() != 0:
        problems.append("the testbed needs root (network namespaces, veth, TUN): run it as root or with sudo")
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        packages = " ".join(dict.fromkeys(INSTALL[t] for t in missing))
        problems.append(f"missing {', '.join(missing)}: install with 'apt-get install {packages}'")
    if not Path("/dev/net/tun").exists():
        problems.append("/dev/net/tun is missing: load the tun module ('modprobe tun')")
    if problems:
        raise MissingTool("tcplab testbed: " + "; ".join(problems))


def ns_cmd(ns: str | None, cmd: Sequence[str]) -> list[str]:
    """``cmd`` run inside namespace ``ns`` (``ip netns exec``), or as is."""
    return ["ip", "netns", "exec", ns, *cmd] if ns else list(cmd)


def run(cmd: Sequence[str], ns: str | None = None, timeout: float = 30.0, what: str = "", check: bool = True) -> str:
    """Run ``cmd`` (in ``ns``) and return its stdout; raise :class:`ToolError` on failure."""
    full = ns_cmd(ns, cmd)
    try:
        proc = subprocess.run(full, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        raise ToolError(full, None, stderr, what) from None
    except FileNotFoundError:
        raise MissingTool(f"tcplab testbed: '{full[0]}' not found: install with 'apt-get install {INSTALL.get(full[0], full[0])}'") from None
    if check and proc.returncode != 0:
        raise ToolError(full, proc.returncode, proc.stderr, what)
    return proc.stdout


def ip(*args: str, ns: str | None = None) -> str:
    """``ip ARGS`` (in ``ns``)."""
    return run(["ip", *args], ns=ns)


def sysctl_set(ns: str, values: dict[str, str]) -> None:
    """Set sysctls inside ``ns`` (``sysctl -w``; ``-q`` only hides the echo, errors still raise)."""
    if values:
        run(["sysctl", "-q", "-w", *(f"{k}={v}" for k, v in values.items())], ns=ns, what=f"sysctl in {ns}")


def sysctl_get(ns: str, names: Sequence[str]) -> dict[str, str]:
    """Read sysctls inside ``ns``."""
    out = run(["sysctl", "-n", *names], ns=ns, what=f"sysctl in {ns}")
    return {name: " ".join(value.split()) for name, value in zip(names, out.splitlines())}


def ethtool_offloads_off(ns: str, dev: str) -> None:
    """TSO, GSO and GRO off: the router must see wire-sized packets (one MTU each)."""
    run(["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"], ns=ns, what=f"offloads off on {dev}")


def kernel_counters(ns: str) -> dict[str, int]:
    """The network stack's counters of namespace ``ns`` (``/proc/net/snmp`` and
    ``/proc/net/netstat``, as ``nstat`` reads them), keyed ``Group.Name``: ``Tcp.RetransSegs``,
    ``TcpExt.TCPTimeouts``, ``TcpExt.TCPSackRecovery`` …"""
    out = run(["cat", "/proc/net/snmp", "/proc/net/netstat"], ns=ns, what=f"counters of {ns}")
    counters: dict[str, int] = {}
    lines = out.splitlines()
    # Each group is two lines: "Group: Name1 Name2 …" then "Group: value1 value2 …".
    for head, values in zip(lines[::2], lines[1::2]):
        group, names = head.split(":", 1)
        group2, numbers = values.split(":", 1)
        if group != group2:
            raise ToolError(ns_cmd(ns, ["cat", "/proc/net/snmp", "/proc/net/netstat"]), 1, f"unexpected layout near '{head[:40]}'", f"counters of {ns}")
        for name, number in zip(names.split(), numbers.split()):
            counters[f"{group}.{name}"] = int(number)
    return counters


@dataclass(frozen=True)
class PingStats:
    """Round-trip times of a ping run, in ms."""

    count: int
    min_ms: float
    mean_ms: float
    max_ms: float

    @staticmethod
    def combine(runs: list[PingStats]) -> PingStats:
        """The statistics of several runs' pings taken together."""
        count = sum(r.count for r in runs)
        mean = sum(r.mean_ms * r.count for r in runs) / count
        return PingStats(count, min(r.min_ms for r in runs), round(mean, 3), max(r.max_ms for r in runs))


def ping(ns: str, dst: str, count: int = 10, interval_s: float = 0.2, size: int = 56, preload: int = 1) -> PingStats:
    """Ping ``dst`` from ``ns`` ``count`` times. ping prints each reply's time to 3 significant
    digits ("time=100 ms") but its summary "rtt min/avg/max/mdev = a/b/c/d ms" to the
    microsecond: the statistics come from the summary. ping keeps at most about 10 × ``preload``
    + 1 pings unanswered (its "pipe"), so at an interval shorter than a tenth of the RTT it pings
    slower than asked unless ``preload`` is raised (``-l``: that many are sent at once first)."""
    cmd = ["ping", "-n", "-c", str(count), "-i", f"{interval_s:g}", "-l", str(preload), "-s", str(size), "-W", "2", dst]
    out = run(cmd, ns=ns, timeout=count * interval_s + 10, what="ping", check=False)
    replies = sum(1 for line in out.splitlines() if "time=" in line)
    for line in out.splitlines():
        if "min/avg/max" in line and "=" in line and replies:
            low, mean, high = (float(x) for x in line.split("=", 1)[1].split()[0].split("/")[:3])
            return PingStats(replies, low, mean, high)
    raise ToolError(ns_cmd(ns, cmd), 1, f"no reply from {dst}: {out.strip()[-300:]}", "ping")


_PR_SET_PDEATHSIG = 1


def parent_death_signal(sig: int) -> Any:
    """A ``preexec_fn`` asking the kernel to send ``sig`` to the child when its parent dies, so a
    killed runner leaves no router or iperf3 behind (``prctl(2)`` PR_SET_PDEATHSIG; it survives
    the ``exec`` of ``ip netns exec`` and of the tool)."""
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)

    return preexec


def spawn(cmd: Sequence[str], ns: str | None, stdout: Any, stderr: Any, death_signal: int = signal.SIGKILL) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in ``ns`` in the background; it dies with this process."""
    full = ns_cmd(ns, cmd)
    try:
        return subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, preexec_fn=parent_death_signal(death_signal))
    except FileNotFoundError:
        raise MissingTool(f"tcplab testbed: '{full[0]}' not found") from None


def read_json(path: Path, what: str, stderr_path: Path | None = None) -> dict[str, Any]:
    """A tool's JSON output file; a missing or malformed one raises with the tool's stderr."""
    err = stderr_path.read_text(errors="replace").strip() if stderr_path and stderr_path.exists() else ""
    try:
        text = path.read_text()
        data = json.loads(text)
    except (OSError, json.JSONDecodeError) as e:
        raise ToolError([what], 1, f"no JSON output ({e}); stderr: {err or '(empty)'}", what) from None
    if isinstance(data, dict) and data.get("error"):
        raise ToolError([what], 1, f"{data['error']}; stderr: {err or '(empty)'}", what)
    return data
