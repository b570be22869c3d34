"""Layer 2: the dumbbell of a scenario as network namespaces.

::

    tcplab-s1 ──veth── ┐                      ┌ ──veth── tcplab-r1
    tcplab-s2 ──veth── ┤  tcplab-rt (router)  ├ ──veth── tcplab-r2
       ...             │  tcplab-fwd (TUN) →  │
                       │  ← tcplab-rev (TUN)  │

Pair i (1-based) has sender ``10.201.i.2`` (router side ``10.201.i.1``) and receiver
``10.202.i.2`` (router side ``10.202.i.1``). In the router, policy routing sends everything that
arrives from a sender link into table 201 (default route: the forward TUN) and everything from a
receiver link into table 202 (the reverse TUN); the router process writes each packet back into
its TUN after the bottleneck, and the kernel forwards it by the main table. Veth ends are created
directly inside their namespaces, so nothing outside the ``tcplab-`` namespaces is touched;
deleting the namespaces removes every link, route and rule.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass, field

from . import tools

__all__ = ["PREFIX", "ROUTER_NS", "FWD_TUN", "REV_TUN", "Dumbbell", "namespaces", "clean"]

PREFIX = "tcplab-"
ROUTER_NS = f"{PREFIX}rt"
FWD_TUN = f"{PREFIX}fwd"
REV_TUN = f"{PREFIX}rev"
FWD_TABLE = "201"
REV_TABLE = "202"
#: The TUN devices' transmit queue (packets): the kernel must never be the bottleneck.
TUN_TXQUEUELEN = 100_000

#: Sysctls of the router namespace: forward, and accept packets arriving on a TUN with a source
#: reachable through another link (reverse-path filtering off).
ROUTER_SYSCTLS = {
    "net.ipv4.ip_forward": "1",
    "net.ipv4.conf.all.rp_filter": "0",
    "net.ipv4.conf.default.rp_filter": "0",
    "net.ipv4.conf.all.send_redirects": "0",
    "net.ipv4.conf.default.send_redirects": "0",
}


def sender_ns(i: int) -> str:
    return f"{PREFIX}s{i}"


def receiver_ns(i: int) -> str:
    return f"{PREFIX}r{i}"


def sender_addr(i: int) -> str:
    return f"10.201.{i}.2"


def receiver_addr(i: int) -> str:
    return f"10.202.{i}.2"


def sender_gateway(i: int) -> str:
    """The router's address on sender ``i``'s link: the sender's default route."""
    return f"10.201.{i}.1"


def receiver_gateway(i: int) -> str:
    """The router's address on receiver ``i``'s link: the receiver's default route."""
    return f"10.202.{i}.1"


@dataclass
class Dumbbell:
    """``pairs`` sender/receiver namespaces around one router namespace."""

    pairs: int
    host_sysctls: dict[str, str] = field(default_factory=dict)
    host_txqueuelen: int | None = None
    created: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not 1 <= self.pairs <= 250:
            raise ValueError(f"pairs = {self.pairs}: expected 1 to 250")

    @property
    def hosts(self) -> list[str]:
        return [*(sender_ns(i) for i in range(1, self.pairs + 1)), *(receiver_ns(i) for i in range(1, self.pairs + 1))]

    def _add_ns(self, name: str) -> None:
        tools.ip("netns", "add", name)
        self.created.append(name)
        tools.ip("link", "set", "lo", "up", ns=name)

    def create(self) -> None:
        """Namespaces, veth pairs, addresses, default routes, offloads off, sysctls. The TUN
        devices and policy routing come with :meth:`attach_router`, once the router made them."""
        self._add_ns(ROUTER_NS)
        tools.sysctl_set(ROUTER_NS, ROUTER_SYSCTLS)
        for i in range(1, self.pairs + 1):
            for ns, host_ip, side in ((sender_ns(i), sender_addr(i), "s"), (receiver_ns(i), receiver_addr(i), "r")):
                self._add_ns(ns)
                host_dev, router_dev = f"{PREFIX}{side}{i}h", f"{PREFIX}{side}{i}"
                tools.ip("link", "add", host_dev, "netns", ns, "type", "veth", "peer", "name", router_dev, "netns", ROUTER_NS)
                gateway = sender_gateway(i) if side == "s" else receiver_gateway(i)
                tools.ip("addr", "add", f"{host_ip}/24", "dev", host_dev, ns=ns)
                tools.ip("addr", "add", f"{gateway}/24", "dev", router_dev, ns=ROUTER_NS)
                link_opts = ["txqueuelen", str(self.host_txqueuelen)] if self.host_txqueuelen else []
                tools.ip("link", "set", host_dev, "up", *link_opts, ns=ns)
                tools.ip("link", "set", router_dev, "up", ns=ROUTER_NS)
                tools.ethtool_offloads_off(ns, host_dev)
                tools.ethtool_offloads_off(ROUTER_NS, router_dev)
                tools.ip("route", "add", "default", "via", gateway, ns=ns)
                tools.sysctl_set(ROUTER_NS, {f"net.ipv4.conf.{router_dev}.rp_filter": "0"})
                tools.sysctl_set(ns, self.host_sysctls)

    def set_default_route(self, ns: str, gateway: str, attrs: tuple[str, ...]) -> None:
        """Change a host's default route to carry ``attrs`` (``initcwnd 10 rto_min 200ms`` …)."""
        if attrs:
            tools.ip("route", "change", "default", "via", gateway, *attrs, ns=ns)

    def attach_router(self, rules: bool = True) -> None:
        """Bring the router's TUN devices up and route each direction into its own. ``rules``:
        also add the rules that send each link's arrivals to its table (they outlive a router,
        whose TUNs, and the routes through them, go with it)."""
        for tun, table, side in ((FWD_TUN, FWD_TABLE, "s"), (REV_TUN, REV_TABLE, "r")):
            tools.ip("link", "set", tun, "up", "txqueuelen", str(TUN_TXQUEUELEN), ns=ROUTER_NS)
            tools.sysctl_set(ROUTER_NS, {f"net.ipv4.conf.{tun}.rp_filter": "0"})
            tools.ip("route", "add", "default", "dev", tun, "table", table, ns=ROUTER_NS)
            if not rules:
                continue
            for i in range(1, self.pairs + 1):
                tools.ip("rule", "add", "iif", f"{PREFIX}{side}{i}", "lookup", table, "pref", "100", ns=ROUTER_NS)

    def destroy(self) -> None:
        """Remove what :meth:`create` made (and whatever runs inside)."""
        clean(self.created)
        self.created.clear()


def namespaces() -> list[str]:
    """The ``tcplab-`` namespaces that exist now."""
    out = tools.run(["ip", "netns", "list"])
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return [n for n in names if n.startswith(PREFIX)]


def pids_in(ns: str) -> list[int]:
    """Processes running inside namespace ``ns`` (none once it is gone)."""
    out = tools.run(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def clean(names: list[str] | None = None) -> list[str]:
    """Stop every process inside the ``tcplab-`` namespaces (SIGTERM, then SIGKILL) and delete
    the namespaces, which removes their links, routes and rules. Idempotent: something already
    gone is not an error. Returns the namespaces removed."""
    targets = namespaces() if names is None else [n for n in names if n in set(namespaces())]
    for sig, wait_s in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
        pids = {p for ns in targets for p in pids_in(ns)}
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while pids and time.monotonic() < deadline:
            pids = {p for p in pids if _alive(p)}
            time.sleep(0.02)
    removed = []
    for ns in targets:
        try:
            tools.ip("netns", "del", ns)
            removed.append(ns)
        except tools.ToolError:
            if ns in namespaces():  # still there: a real failure
                raise
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
