"""What each flow's hosts run: the kernel congestion control and the scenario's ``[tcp]`` settings
as per-namespace sysctls and route attributes.

Every flow has its own sender and receiver namespace, so per-flow settings are per-namespace
settings. What maps cleanly is applied; anything else is refused with one line naming the field,
the value and what the testbed can do, before anything is built:

============================  ===================================================================
``[tcp]`` field               on the testbed
============================  ===================================================================
``init_cwnd``                 sender's default route ``initcwnd N`` (Linux's default is 10, RFC 6928)
``rwnd``                      receiver's ``net.ipv4.tcp_rmem`` maximum (the window Linux advertises
                              is this buffer less its per-packet overhead: ``tcp_rmem``'s scaling ratio)
``rcvbuf_autotuning``         receiver's ``net.ipv4.tcp_moderate_rcvbuf`` (Linux's default is 1: the
                              buffer grows from ``tcp_rmem``'s 128 KB up to ``rwnd``); false also
                              starts the buffer at ``rwnd``
``sndbuf``                    sender's ``net.ipv4.tcp_wmem`` maximum
``sndbuf_autotuning = false`` refused: Linux always sizes the send buffer from cwnd up to
                              ``tcp_wmem``'s maximum; true asks for what it does unasked
``timestamps``                ``net.ipv4.tcp_timestamps`` on both hosts (negotiated in the SYN):
                              0 without, 1 with ``timestamp_offsets`` (random per-connection
                              offsets, Linux's default), 2 without them
``sack``                      ``net.ipv4.tcp_sack`` on both hosts (negotiated in the SYN)
``ecn = true``                sender's ``net.ipv4.tcp_ecn`` 1 (it asks for ECN in its SYN; the
                              receiver's Linux default, 2, accepts); for ``dctcp`` unasked
``min_rto``                   sender's default route ``rto_min`` (whole milliseconds: the route
                              metric RTAX_RTO_MIN is kept in ms)
``max_rto``                   sender's ``net.ipv4.tcp_rto_max_ms`` (1 s to 120 s; Linux ≥ 6.15)
``delayed_ack = false``       receiver's default route ``quickack 1`` (RTAX_QUICKACK: the receiver
                              stays in quick-ACK mode and ACKs every segment)
``delack_timeout``            only 40 ms: Linux's delayed-ACK timer adapts between 40 ms and 200 ms
                              (TCP_DELACK_MIN/MAX) and has no per-namespace setting
``initial_rto``               only 1 s: Linux's TCP_TIMEOUT_INIT (RFC 6298 (2.1)) has no setting
``mss``                       only unset: Linux derives it from the 1500-byte MTU (1448 B with
                              timestamps, 1460 B without)
``pacing = true``              the client's ``--fq-rate 10G`` (SO_MAX_PACING_RATE): Linux's internal
                              pacing at its own rates (200% of cwnd/RTT in slow start, 120% after)
``prr = false``               refused: Linux always reduces with PRR (RFC 6937) in recovery;
                              ``prr``, ``rack``, ``sack_compression`` and ``rcvbuf_autotuning`` = true ask for what the
                              kernel does unasked and leave the testbed run's key alone
``undo = false``              refused: Linux always undoes a timeout its timestamps show was
                              spurious; ``undo = true`` asks for what the kernel does unasked
``tso = false``               refused: Linux's TCP always sends GSO bursts (the veths' TSO/GSO being
                              off only moves the splitting into the stack); ``tso`` leaves the
                              testbed run's key alone
``preamble``                  only ``"iperf3"`` (or unset): the flows are iperf3's and open as
                              iperf3 does; ``"iperf3"`` leaves the testbed run's key alone
``cc_params``/``[cc.<name>]`` refused: congestion-control module parameters are host-wide
============================  ===================================================================

Variants: ``newreno`` and ``sack`` are Linux's ``reno`` with SACK off and on (Linux's recovery
without SACK is NewReno's partial-ACK recovery, RFC 6582; with SACK it is RFC 6675's); ``reno``
is Linux's ``reno`` with the variant's SACK setting (off), which recovers as NewReno does: Linux
has no pure Reno recovery. ``tahoe`` does not exist in Linux. Other variants are the kernel's own
congestion controls by their names (``cubic``, ``bbr`` …) and run with SACK on, as the simulator
runs its Linux-like variants; those this kernel was built without (``dctcp``, ``vegas``,
``highspeed`` … :data:`.bpf.SOURCES`) are registered the first time a scenario asks for them, as
tcplab's BPF programs of Linux's ``tcp_<name>.c`` (:mod:`.bpf`). The
socket gets the flow's congestion control (``iperf3 -C``); both of a flow's namespaces get
``reno`` as their default (``net.ipv4.tcp_congestion_control``), never the host's, so that no
other algorithm's state (BBR's pacing) is left on the socket.

A setting the stack profile also sets (``tuned``: ``tcp_rmem``/``tcp_wmem`` maxima of 500 MB)
follows the profile unless the scenario sets it explicitly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import variants
from ..config import CbrFlow, Scenario, TcpFlow
from ..errors import ScenarioError
from . import bpf

__all__ = ["FlowStack", "plan", "available_cc", "kernel_cc", "CC_SYSCTL"]

CC_SYSCTL = "net.ipv4.tcp_available_congestion_control"
#: The namespace's default congestion control, on both of a flow's hosts: reno, whatever the flow
#: runs (iperf3 -C sets the flow's own on its socket). A namespace starts with the host's default,
#: and a socket that starts under BBR keeps BBR's pacing after iperf3 switches it (measured: a
#: reno flow from a namespace whose default was bbr left in slow start at 200% of cwnd/RTT, like
#: BBR, not in ACK-clocked bursts). Outside the initial namespace Linux lets the default be only
#: an unrestricted congestion control (tcp_allowed_congestion_control), and reno always is.
DEFAULT_CC_SYSCTL = "net.ipv4.tcp_congestion_control"
NAMESPACE_DEFAULT_CC = "reno"
#: iperf3 --fq-rate that turns pacing on without limiting it (bits/s; iperf3 keeps bytes/s in 32 bits).
PACING_ON_RATE = "10G"
_PROC = Path("/proc/sys/net/ipv4")

#: Linux's fixed values of the settings the testbed cannot change (the simulator's defaults).
_LINUX_DELACK_MIN_NS = 40_000_000  # TCP_DELACK_MIN, HZ/25
_LINUX_TIMEOUT_INIT_NS = 1_000_000_000  # TCP_TIMEOUT_INIT, RFC 6298 (2.1)
_LINUX_RTO_MAX_NS = 120_000_000_000  # TCP_RTO_MAX
_RTO_MAX_RANGE_MS = (1_000, 120_000)  # net.ipv4.tcp_rto_max_ms bounds
#: Linux's defaults of tcp_rmem/tcp_wmem's first two values (min, default), bytes.
_RMEM_LOW = (4096, 131072)
_WMEM_LOW = (4096, 16384)


def available_cc() -> list[str]:
    """The kernel's ``net.ipv4.tcp_available_congestion_control``."""
    return (_PROC / "tcp_available_congestion_control").read_text().split()


def _load_module(cc: str) -> bool:
    """Load the kernel's module of ``cc`` (``tcp_<cc>``) where the kernel has modules to load;
    whether it did."""
    if shutil.which("modprobe") is None or not Path(f"/lib/modules/{os.uname().release}").is_dir():
        return False
    return subprocess.run(["modprobe", "-q", f"tcp_{cc}"], capture_output=True, timeout=30, check=False).returncode == 0


def kernel_cc(variant: str) -> str:
    """The Linux congestion control a variant runs as: ``reno`` for the classic ones (``tahoe`` is
    refused by :func:`plan`), otherwise the variant's own name."""
    name = variants.normalise(variant)
    return "reno" if name in variants.CLASSIC else name


@dataclass(frozen=True)
class FlowStack:
    """One flow's hosts: its congestion control, sysctls and default-route attributes."""

    cc: str
    sack: bool
    sender_sysctls: dict[str, str] = field(default_factory=dict)
    receiver_sysctls: dict[str, str] = field(default_factory=dict)
    sender_route: tuple[str, ...] = ()
    receiver_route: tuple[str, ...] = ()
    #: Linux's internal pacing at its own rates (``[tcp] pacing``; BBR paces whatever this says).
    pacing: bool = False
    #: A CBR flow (``cc`` "udp"): iperf3's UDP payload rate (bit/s) and datagram payload (bytes).
    udp_payload_bps: int | None = None
    udp_payload_bytes: int = 0
    #: The DSCP iperf3 marks the data with (``--dscp``; the handshake and the ACKs stay at 0).
    dscp: int = 0

    def iperf3_args(self) -> list[str]:
        """The client's options beyond the flow's address, port and length."""
        marked = ["--dscp", str(self.dscp)] if self.dscp else []
        if self.udp_payload_bps is not None:
            return ["-u", "-b", str(self.udp_payload_bps), "-l", str(self.udp_payload_bytes), *marked]
        # SO_MAX_PACING_RATE (iperf3 --fq-rate, bits/s) turns on the socket's internal pacing;
        # 10 Gb/s never binds here, so the kernel paces at its own rate (tcp_update_pacing_rate).
        return ["-C", self.cc, *(["--fq-rate", PACING_ON_RATE] if self.pacing else []), *marked]

    def as_dict(self) -> dict[str, Any]:
        marked = {"dscp": self.dscp} if self.dscp else {}
        if self.udp_payload_bps is not None:
            return {"cc": self.cc, "udp_payload_bps": self.udp_payload_bps, "udp_payload_bytes": self.udp_payload_bytes, **marked}
        return marked | {
            "cc": self.cc,
            "sack": self.sack,
            "pacing": self.pacing,
            "sender_sysctls": dict(self.sender_sysctls),
            "receiver_sysctls": dict(self.receiver_sysctls),
            "sender_route": " ".join(self.sender_route),
            "receiver_route": " ".join(self.receiver_route),
        }


def _explicit(scenario: Scenario, flow: TcpFlow, name: str) -> bool:
    """Whether ``[tcp].name`` or the flow's own override is written in the scenario."""
    return getattr(flow, name) is not None or name in scenario.tcp.model_fields_set


def _refuse(flow: TcpFlow, i: int, name: str, value: Any, allowed: str) -> ScenarioError:
    """Name the field where it is written: the flow's override, else ``[tcp]``."""
    where = f"flows[{i}]" if getattr(flow, name, None) is not None else "tcp"
    return ScenarioError(f"{where}.{name}", value, allowed)


def plan(scenario: Scenario, profile_sysctls: dict[str, str] | None = None, available: list[str] | None = None) -> list[FlowStack]:
    """Each flow's :class:`FlowStack`; a variant this kernel lacks or a ``[tcp]`` setting the
    testbed cannot apply is a :class:`ScenarioError` (one line: field, value, what is allowed)."""
    profile_sysctls = profile_sysctls or {}
    offered = available if available is not None else available_cc()
    out = []
    for i, flow in enumerate(scenario.flows):
        if isinstance(flow, CbrFlow):
            out.append(_cbr_stack(i, flow))
            continue
        if not isinstance(flow, TcpFlow):
            continue  # refused elsewhere (the testbed runs TCP and CBR flows only)
        name = variants.normalise(flow.variant)
        cc = kernel_cc(flow.variant)
        reason = None
        if cc not in offered and available is None and _load_module(cc):
            offered = available_cc()  # the kernel's own module, where it has one, before tcplab's BPF
        if cc in bpf.SOURCES and available is None and (cc not in offered or cc in bpf.registered()):
            # A congestion control the kernel lacks but tcplab has as a BPF program: registered
            # now, or again if its source changed since.
            reason = bpf.register(cc)
            if reason is None:
                offered = available_cc()
        if name == "tahoe" or cc not in offered:
            extra = f"; {reason}" if reason else ""
            raise ScenarioError(
                f"flows[{i}].variant",
                flow.variant,
                f"expected a congestion control this kernel offers ({CC_SYSCTL} = {' '.join(offered)}; newreno and sack run as its reno{extra})",
            )
        out.append(_flow_stack(scenario, i, flow, name, cc, profile_sysctls))
    return out


#: IPv4 and UDP headers: a CBR flow's IP packet less its iperf3 datagram payload.
UDP_IP_HEADERS = 28


def _cbr_stack(i: int, flow: CbrFlow) -> FlowStack:
    """A CBR flow as iperf3 sends UDP: its IP rate and packet size as payload rate and size."""
    if flow.rate is None:
        raise ScenarioError(f"flows[{i}].schedule", f"{len(flow.points())} rates", "expected a constant 'rate' on the testbed (iperf3 sends UDP at one rate)")
    if flow.random:
        raise ScenarioError(f"flows[{i}].random", True, "expected false or unset on the testbed (iperf3 sends UDP at a steady pace)")
    size = flow.packet_size.bytes
    if not 64 <= size <= 1500:
        raise ScenarioError(f"flows[{i}].packet_size", str(flow.packet_size), "expected 64B to 1500B on the testbed (one IPv4 datagram within the 1500-byte MTU)")
    payload = size - UDP_IP_HEADERS
    return FlowStack(cc="udp", sack=False, udp_payload_bps=flow.rate.bps * payload // size, udp_payload_bytes=payload, dscp=flow.dscp or 0)


def _flow_stack(scenario: Scenario, i: int, flow: TcpFlow, name: str, cc: str, profile: dict[str, str]) -> FlowStack:
    tcp = scenario.tcp_settings(flow)
    if tcp.mss is not None:
        raise _refuse(flow, i, "mss", str(tcp.mss), "expected unset on the testbed (Linux derives the MSS from the 1500-byte MTU)")
    if tcp.delack_timeout.ns != _LINUX_DELACK_MIN_NS:
        raise _refuse(flow, i, "delack_timeout", str(tcp.delack_timeout), "expected 40ms on the testbed (Linux's delayed-ACK timer adapts from 40 ms to 200 ms and has no setting)")
    if tcp.initial_rto.ns != _LINUX_TIMEOUT_INIT_NS:
        raise _refuse(flow, i, "initial_rto", str(tcp.initial_rto), "expected 1s on the testbed (Linux's TCP_TIMEOUT_INIT has no setting)")
    if tcp.prr is False:
        raise _refuse(flow, i, "prr", False, "expected true or unset on the testbed (Linux always recovers with PRR, RFC 6937)")
    if tcp.preamble not in (None, "iperf3"):
        raise _refuse(flow, i, "preamble", tcp.preamble, "expected 'iperf3' or unset on the testbed (its flows are iperf3's, which always opens a control connection, then the data connection with its cookie)")
    if tcp.fq_pacing:
        raise _refuse(flow, i, "fq_pacing", True, "expected false or unset on the testbed (its kernel has no fq qdisc: paced flows pace with TCP's own pacing timer)")
    if tcp.ect1:
        raise _refuse(flow, i, "ect1", True, "expected false or unset on the testbed (Linux sends ECT(1) only for a congestion control that negotiates AccECN, which tcplab's programs do not)")
    if tcp.sndbuf_autotuning is False:
        raise _refuse(flow, i, "sndbuf_autotuning", False, "expected true or unset on the testbed (Linux always sizes the send buffer from cwnd, up to tcp_wmem's maximum)")
    if tcp.tso is False:
        raise _refuse(flow, i, "tso", False, "expected true or unset on the testbed (Linux's TCP always sends TSO/GSO bursts)")
    if tcp.undo is False:
        raise _refuse(flow, i, "undo", False, "expected true or unset on the testbed (Linux always undoes a timeout its timestamps show was spurious)")
    if tcp.min_rto.ns % 1_000_000:
        raise _refuse(flow, i, "min_rto", str(tcp.min_rto), "expected whole milliseconds on the testbed (the route's rto_min is in ms)")
    if flow.cc_params or (name in variants.names() and scenario.cc_params(flow)):
        raise ScenarioError(f"flows[{i}].cc_params", flow.cc_params or "[cc]", "expected none on the testbed (Linux's congestion-control parameters are host-wide module parameters)")

    if tcp.sack is not None:
        sack = tcp.sack
    elif name in variants.CLASSIC:
        sack = variants.CLASSIC[name].sack
    else:
        sack = True  # Linux-like variants run SACK + PRR, in the simulator as in Linux

    timestamps = "0" if not tcp.timestamps else "1" if scenario.timestamp_offsets(flow) else "2"
    both = {DEFAULT_CC_SYSCTL: NAMESPACE_DEFAULT_CC, "net.ipv4.tcp_sack": str(int(sack)), "net.ipv4.tcp_timestamps": timestamps}
    if "net.ipv4.tcp_timestamps" in profile and not _explicit(scenario, flow, "timestamps") and not _explicit(scenario, flow, "timestamp_offsets"):
        both["net.ipv4.tcp_timestamps"] = profile["net.ipv4.tcp_timestamps"]
    sender, receiver = dict(both), dict(both)
    if "net.ipv4.tcp_rmem" not in profile or _explicit(scenario, flow, "rwnd") or tcp.rcvbuf_autotuning is False:
        rwnd = tcp.rwnd.bytes
        start = rwnd if tcp.rcvbuf_autotuning is False else min(_RMEM_LOW[1], rwnd)
        receiver["net.ipv4.tcp_rmem"] = f"{min(_RMEM_LOW[0], rwnd)} {start} {rwnd}"
    if tcp.rcvbuf_autotuning is not None:
        receiver["net.ipv4.tcp_moderate_rcvbuf"] = str(int(tcp.rcvbuf_autotuning))
    if "net.ipv4.tcp_wmem" not in profile or _explicit(scenario, flow, "sndbuf"):
        sndbuf = tcp.sndbuf.bytes
        sender["net.ipv4.tcp_wmem"] = f"{min(_WMEM_LOW[0], sndbuf)} {min(_WMEM_LOW[1], sndbuf)} {sndbuf}"
    if tcp.max_rto.ns != _LINUX_RTO_MAX_NS:
        ms = tcp.max_rto.ns / 1e6
        if not (_PROC / "tcp_rto_max_ms").exists():
            raise _refuse(flow, i, "max_rto", str(tcp.max_rto), "expected 120s on this kernel (net.ipv4.tcp_rto_max_ms needs Linux 6.15 or later)")
        if ms != int(ms) or not _RTO_MAX_RANGE_MS[0] <= ms <= _RTO_MAX_RANGE_MS[1]:
            raise _refuse(flow, i, "max_rto", str(tcp.max_rto), "expected whole milliseconds from 1s to 120s on the testbed (net.ipv4.tcp_rto_max_ms)")
        sender["net.ipv4.tcp_rto_max_ms"] = str(int(ms))
    if tcp.sack_compression is not None:
        receiver["net.ipv4.tcp_comp_sack_nr"] = "44" if tcp.sack_compression else "0"
    if tcp.ecn or (tcp.ecn is None and name in variants.LINUX_CC and variants.resolve(name).needs_ecn):
        # DCTCP's ECN: Linux negotiates it for DCTCP in the SYN, but iperf3 selects the
        # congestion control after connecting, so the SYN asks for ECN only with tcp_ecn = 1.
        sender["net.ipv4.tcp_ecn"] = "1"
    if tcp.rack is not None:
        sender["net.ipv4.tcp_recovery"] = "1" if tcp.rack else "0"
        sender["net.ipv4.tcp_early_retrans"] = "3" if tcp.rack else "0"
    sender_route = ("initcwnd", str(tcp.init_cwnd), "rto_min", f"{tcp.min_rto.ns // 1_000_000}ms")
    receiver_route = () if tcp.delayed_ack else ("quickack", "1")
    return FlowStack(cc, sack, sender, receiver, sender_route, receiver_route, pacing=bool(tcp.pacing), dscp=flow.dscp or 0)
