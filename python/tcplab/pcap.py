"""One flow's packets as a pcap file, as tcpdump at one point of the network would see them: a TCP
flow's segments and ACKs, a CBR flow's UDP datagrams (as iperf3 sends them), or a DCCP flow's
DCCP-Data, DCCP-DataAck and DCCP-Ack packets (RFC 4340) with their Ack Vectors.

The engine records the flow's packets on the links of the capture point (the spec's ``capture``,
``docs/engine-spec.md``); this module chooses those links, turns each recorded packet into an
IPv4/TCP packet with dpkt and writes a libpcap file (``docs/pcap.md``):

- capture points: ``sender`` (default: the sender's access link, both directions, as tcpdump on
  the sending host), ``receiver`` (the same at the receiving host) or a link id (one direction,
  as a tap at the link's sending end);
- time: when a packet leaves the point (start of its serialisation onto the link) or when it has
  fully arrived there (end of serialisation + propagation delay), in ns (nanosecond pcap);
- sequence numbers in bytes: ``ISN + 1 + segment · MSS`` with a fixed ISN per flow;
- TCP options as Linux writes them: NOP, NOP, timestamps (TSval/TSecr in 1 ms ticks) and, on ACKs,
  NOP, NOP, SACK; so the IP length equals the engine's packet size;
- addresses: a dumbbell's sender i is 10.0.i.1 and receiver i 10.1.i.1; a graph's node k is
  10.2.k//254.(k%254 + 1); the flow's sender port is 50000 + its index, the receiver's 5201.
"""

from __future__ import annotations

import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .config import CbrFlow, DccpFlow, Scenario
from .errors import ScenarioError

__all__ = ["CapturePoint", "capture_point", "resolve_flow", "seen_rows", "packets", "write_pcap", "LINKTYPE_RAW", "TS_TICK_NS"]

#: pcap link type of raw IPv4/IPv6 packets (no link-layer header): link rates count IP bytes.
LINKTYPE_RAW = 101
#: The timestamp clock: 1 ms per tick (Linux's TCP timestamp clock, RFC 7323 §5.4 allows 1 ms–1 s).
TS_TICK_NS = 1_000_000
#: Receiver's port (iperf3's) and the base of the senders' ports.
SERVER_PORT = 5201
CLIENT_PORT_BASE = 50000

_KIND_DATA, _KIND_ACK, _KIND_SETUP, _KIND_SETUP_ACK = 0, 1, 5, 6  # engine Kind codes (net/packet.rs)
_TH_SYN = 0x02
_TH_ACK = 0x10
_TH_PUSH = 0x08
_TH_ECE = 0x40
_TH_CWR = 0x80
#: Base of the senders' ports of iperf3's control connections.
CONTROL_PORT_BASE = 49000
_NOP = b"\x01"


def isn(flow: int) -> int:
    """The sender's initial sequence number for flow index ``flow`` (fixed, so traces compare)."""
    return 1_000_000 * (flow + 1)


def receiver_isn(flow: int) -> int:
    """The receiver's initial sequence number (it sends no data: every ACK has seq ISN + 1)."""
    return 2_000_000_000 + 1_000_000 * (flow + 1)


def window_scale(rwnd_bytes: int) -> int:
    """The smallest shift that fits ``rwnd_bytes`` into the 16-bit window field (RFC 7323 §2.3, at most 14)."""
    shift = 0
    while rwnd_bytes >> shift > 0xFFFF and shift < 14:
        shift += 1
    return shift


@dataclass(frozen=True)
class CapturePoint:
    """Where a flow is captured: ``links`` and, per link, whether packets are stamped when they
    arrive over it (into the point) rather than when they start onto it (out of the point).
    ``extra`` links are recorded too but not written: a DCCP flow's receiver's links, whose Acks
    give the sequence numbers a DCCP-DataAck acknowledges."""

    flow: int
    at: str
    links: tuple[int, ...]
    inbound: tuple[bool, ...]
    extra: tuple[int, ...] = ()

    def spec(self) -> dict[str, Any]:
        """The engine spec's ``capture``."""
        return {"flow": self.flow, "links": sorted({*self.links, *self.extra})}


def resolve_flow(scenario: Scenario, text: str) -> int:
    """The index of the flow named ``text`` (``flow1`` or a ``name``) or numbered ``text`` (1-based)."""
    names = scenario.flow_names
    if text in names:
        index = names.index(text)
    elif text.strip().isdigit() and 1 <= int(text) <= len(names):
        index = int(text) - 1
    else:
        raise ScenarioError("--pcap", text, f"expected a flow name ({', '.join(names)}) or its 1-based index (1 to {len(names)})")
    return index


def _link_ends(topology: dict[str, Any]) -> list[tuple[int, int]]:
    """(from, to) node indices of every link, by link id (the engine's numbering, docs/engine-spec.md)."""
    if topology["kind"] == "graph":
        return [(link["from"], link["to"]) for link in topology["links"]]
    n = topology["pairs"]
    r1, r2 = 2 * n, 2 * n + 1
    ends = [(r1, r2), (r2, r1)]
    for i in range(n):
        ends += [(i, r1), (r1, i), (r2, n + i), (n + i, r2)]
    return ends


def capture_point(scenario: Scenario, flow: int, at: str) -> CapturePoint:
    """The links to capture for ``at``: ``sender``, ``receiver`` or a link id."""
    spec = scenario.to_engine_spec()
    ends = _link_ends(spec["topology"])
    src, dst = spec["flows"][flow]["src"], spec["flows"][flow]["dst"]
    extra = tuple(i for i, (frm, _) in enumerate(ends) if frm == dst) if isinstance(scenario.flows[flow], DccpFlow) else ()
    if at in ("sender", "receiver"):
        node = src if at == "sender" else dst
        # Every link at the host: only those on the flow's route carry its packets.
        links = [(i, to == node) for i, (frm, to) in enumerate(ends) if node in (frm, to)]
        return CapturePoint(flow, at, tuple(i for i, _ in links), tuple(inb for _, inb in links), extra)
    if at.strip().isdigit() and int(at) < len(ends):
        return CapturePoint(flow, at, (int(at),), (False,), extra)
    raise ScenarioError("--pcap-at", at, f"expected sender, receiver or a link id from 0 to {len(ends) - 1}")


def _addresses(spec: dict[str, Any]) -> list[bytes]:
    """IPv4 address of every node, by node index."""
    topology = spec["topology"]
    if topology["kind"] == "graph":
        return [bytes([10, 2, k // 254, k % 254 + 1]) for k in range(len(topology["nodes"]))]
    n = topology["pairs"]
    if n > 255:
        raise ScenarioError("--pcap", f"{n} pairs", "expected a dumbbell of at most 255 pairs (addresses 10.0.<pair>.1)")
    return [*(bytes([10, 0, i, 1]) for i in range(1, n + 1)), *(bytes([10, 1, i, 1]) for i in range(1, n + 1)),
            bytes([10, 255, 0, 1]), bytes([10, 255, 0, 2])]


def seen_rows(capture: pd.DataFrame, point: CapturePoint) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the capture rows seen at ``point``, in time order (frame k of the pcap is row
    ``rows[k]``), and the time (ns) each is seen."""
    link = capture["link"].to_numpy(dtype=np.int64)
    inbound = np.zeros(len(capture), dtype=bool)
    for l, inb in zip(point.links, point.inbound):
        inbound |= (link == l) & inb
    # A packet the link's loss model drops never arrives at the far end.
    seen = np.isin(link, point.links) & ~(inbound & (capture["lost"].to_numpy() == 1))
    t = np.where(inbound, capture["arrive_ns"].to_numpy(dtype=np.int64), capture["t_ns"].to_numpy(dtype=np.int64))
    rows = np.flatnonzero(seen)
    order = rows[np.argsort(t[rows], kind="stable")]
    return order, t[order]


def _tos(cols: dict[str, Any], i: int) -> int:
    """Row ``i``'s IP TOS byte: its DSCP in the six high bits, its ECN field in the two low ones."""
    dscp = int(cols["dscp"][i]) if "dscp" in cols else 0
    ecn = int(cols["ecn"][i]) if "ecn" in cols else 0
    return (dscp << 2 | ecn) & 0xFF


def packets(scenario: Scenario, capture: pd.DataFrame, point: CapturePoint) -> tuple[list[bytes], np.ndarray]:
    """The IPv4 packets (bytes) seen at ``point`` and their times in ns."""
    import dpkt

    spec = scenario.to_engine_spec()
    f = point.flow
    fs = spec["flows"][f]
    if isinstance(scenario.flows[f], CbrFlow):
        return _udp_packets(dpkt, spec, capture, point)
    if isinstance(scenario.flows[f], DccpFlow):
        return _dccp_packets(dpkt, spec, capture, point)
    mss, header, rwnd, timestamps = fs["mss_bytes"], fs["header_bytes"], fs["rwnd_bytes"], fs["timestamps"]
    addr = _addresses(spec)
    src_ip, dst_ip = addr[fs["src"]], addr[fs["dst"]]
    sport, dport = CLIENT_PORT_BASE + f, SERVER_PORT
    scale = window_scale(rwnd)
    win = min(rwnd >> scale, 0xFFFF)
    isn_s, isn_r = isn(f), receiver_isn(f)

    # The preamble's round trips, from the engine (transport/tcp/setup.rs): (a SYN and SYN-ACK,
    # on the data connection) for each; iperf3's first three are on its control connection.
    from . import _core

    step_list = _core.preamble_steps(fs.get("preamble", "none"), timestamps)
    steps = [(s["syn"], s["data_connection"]) for s in step_list]
    # The preamble's bytes, per connection and side, relative to each ISN: for each step the span
    # [first, end) of the client's request and of the server's answer. The data connection's
    # client bytes before the data (iperf3's cookie) come first in its sequence space.
    conn_isn = {True: (isn_s, isn_r), False: ((isn_s + 500_000) & 0xFFFFFFFF, (isn_r + 500_000) & 0xFFFFFFFF)}
    spans: dict[tuple[int, bool], tuple[int, int]] = {}  # (step, from the client) -> [first, end)
    sent = {(conn, side): 1 for conn in (True, False) for side in (True, False)}
    header_len = 20 + 20 + (12 if timestamps else 0)
    for k, (syn, data_conn) in enumerate(steps):
        lengths = (0, 0) if syn else (step_list[k]["request_bytes"] - header_len, step_list[k]["reply_bytes"] - header_len)
        for side, n in zip((True, False), lengths):
            first = sent[(data_conn, side)]
            spans[(k, side)] = (first, first + n)
            sent[(data_conn, side)] = first + n
    data_offset = sent[(True, True)] - 1

    def seq_bytes(segment: int) -> int:
        return (isn_s + 1 + data_offset + segment * mss) & 0xFFFFFFFF

    def ticks(ns: int) -> int:
        # TSval clock: 1 ms ticks from 1 at time 0; an engine TSecr of 0 means none yet (RFC 7323 §3.2).
        return (1 + ns // TS_TICK_NS) & 0xFFFFFFFF

    order, t = seen_rows(capture, point)
    cols = {name: capture[name].to_numpy() for name in capture.columns}
    payload = bytes(mss)
    out: list[bytes] = []
    for i in order:
        kind = int(cols["kind"][i])
        opts = b""
        if timestamps:
            ecr = int(cols["ts_ecr_ns"][i])
            opts = _NOP + _NOP + struct.pack("!BBII", 8, 10, ticks(int(cols["ts_val_ns"][i])), ticks(ecr) if ecr else 0)
        n_sack = int(cols["n_sack"][i])
        if n_sack:
            blocks = b"".join(
                struct.pack("!II", seq_bytes(int(cols[f"sack_start_{k}"][i])), seq_bytes(int(cols[f"sack_end_{k}"][i])))
                for k in range(n_sack)
            )
            opts += _NOP + _NOP + struct.pack("!BB", 5, 2 + 8 * n_sack) + blocks
        if kind in (_KIND_SETUP, _KIND_SETUP_ACK):
            raw = _setup_packet(dpkt, kind == _KIND_SETUP, int(cols["seq"][i]), steps, spans, conn_isn, opts, timestamps,
                                (src_ip, dst_ip), (sport if steps[int(cols["seq"][i])][1] else CONTROL_PORT_BASE + f, dport),
                                int(cols["size_bytes"][i]), header_len, (min(rwnd, 0xFFFF), win), len(out), mss + (12 if timestamps else 0), scale,
                                ecn=bool(fs.get("ecn", False)))
            out.append(raw)
            continue
        if kind == _KIND_DATA:
            tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq_bytes(int(cols["seq"][i])), ack=(isn_r + sent[(True, False)]) & 0xFFFFFFFF, data=payload)
            ip_src, ip_dst = src_ip, dst_ip
        elif kind == _KIND_ACK:
            tcp = dpkt.tcp.TCP(sport=dport, dport=sport, seq=(isn_r + sent[(True, False)]) & 0xFFFFFFFF, ack=seq_bytes(int(cols["ack"][i])), data=b"")
            ip_src, ip_dst = dst_ip, src_ip
        else:  # pragma: no cover - resolve_flow admits TCP flows only
            raise ValueError(f"packet kind {kind} is not TCP")
        tcp.flags = _TH_ACK | (_TH_PUSH if cols["push"][i] else 0)
        # ECN (captures of engines before it have no such columns): TCP's ECE and CWR, and the
        # IP header's two ECN bits below.
        if "ece" in cols:
            tcp.flags |= (_TH_ECE if cols["ece"][i] else 0) | (_TH_CWR if cols["cwr"][i] else 0)
        # An ACK of a receiver with autotuning carries the window it advertised (bytes, in `seq`).
        advertised = int(cols["seq"][i]) if kind == _KIND_ACK else 0
        tcp.win = min(advertised >> scale, 0xFFFF) if advertised else win
        tcp.opts = opts
        tcp.off = (20 + len(opts)) // 4
        ip = dpkt.ip.IP(src=ip_src, dst=ip_dst, p=dpkt.ip.IP_PROTO_TCP, ttl=64, id=len(out) & 0xFFFF, data=tcp)
        ip.tos = _tos(cols, i)
        ip.len = 20 + len(tcp)
        raw = bytes(ip)  # dpkt fills in the IP and TCP checksums
        size = int(cols["size_bytes"][i])
        if len(raw) != size:
            raise ValueError(f"built a {len(raw)}-byte packet for the engine's {size}-byte one (header_bytes {header})")
        out.append(raw)
    return out, t


#: Bytes of iperf3's header at the start of each UDP datagram's payload: the send time in seconds
#: and microseconds and the datagram's number from 1, 32 bits each (iperf3 without
#: --udp-counters-64bit).
IPERF3_UDP_HEADER = 12


def _udp_packets(dpkt: Any, spec: dict[str, Any], capture: pd.DataFrame, point: CapturePoint) -> tuple[list[bytes], np.ndarray]:
    """A CBR flow's datagrams seen at ``point``: IPv4/UDP from the sender's port to the receiver's,
    each payload starting as iperf3's does (send time, datagram number from 1), the rest zeros."""
    f = point.flow
    fs = spec["flows"][f]
    addr = _addresses(spec)
    order, t = seen_rows(capture, point)
    cols = {name: capture[name].to_numpy() for name in capture.columns}
    out: list[bytes] = []
    for i in order:
        size = int(cols["size_bytes"][i])
        sent_ns = int(cols["ts_val_ns"][i])
        header = struct.pack("!III", sent_ns // 1_000_000_000, sent_ns % 1_000_000_000 // 1000, (int(cols["seq"][i]) + 1) & 0xFFFFFFFF)
        payload = (header + bytes(size - 28))[: size - 28]
        udp = dpkt.udp.UDP(sport=CLIENT_PORT_BASE + f, dport=SERVER_PORT, data=payload)
        udp.ulen = 8 + len(payload)
        ip = dpkt.ip.IP(src=addr[fs["src"]], dst=addr[fs["dst"]], p=dpkt.ip.IP_PROTO_UDP, ttl=64, id=len(out) & 0xFFFF, data=udp)
        ip.tos = _tos(cols, i)
        ip.len = 20 + len(udp)
        raw = bytes(ip)  # dpkt fills in the IP and UDP checksums
        if len(raw) != size:
            raise ValueError(f"built a {len(raw)}-byte datagram for the engine's {size}-byte one")
        out.append(raw)
    return out, t


_KIND_DCCP_DATA, _KIND_DCCP_ACK = 3, 4  # engine Kind codes (net/packet.rs)
#: DCCP packet types (RFC 4340 §5.1), its IP protocol number, and options (§5.8, §11.4).
_DCCP_DATA, _DCCP_ACK, _DCCP_DATAACK = 2, 3, 4
IP_PROTO_DCCP = 33
_DCCP_PADDING, _DCCP_ACK_VECTOR_0 = 0, 38
#: Ack Vector run states as the engine stores them (RunState) and as the wire's two high bits.
_RUN_STATES = {0: 0, 1: 1}  # received, ECN marked; any other: not received (3)


def _ack_vector(words: list[int]) -> bytes:
    """Ack Vector [Nonce 0] options for the engine's runs (one 32-bit word each: state above the
    length): a byte per run of up to 64 packets, state in its two high bits and length − 1 in the
    low six, at most 253 bytes per option (RFC 4340 §11.4)."""
    data = bytearray()
    for w in words:
        state, n = _RUN_STATES.get(w >> 16, 3), w & 0xFFFF
        while n > 0:
            data.append(state << 6 | (min(n, 64) - 1))
            n -= 64
    return b"".join(bytes([_DCCP_ACK_VECTOR_0, 2 + len(data[k : k + 253])]) + bytes(data[k : k + 253]) for k in range(0, len(data), 253))


def _dccp(dpkt: Any, ips: tuple[bytes, bytes], ports: tuple[int, int], kind: int, seq: int, ack: int | None, options: bytes, payload: bytes) -> bytes:
    """A DCCP packet with 48-bit sequence numbers (X = 1), options padded to 4 bytes with Padding,
    full checksum coverage (CsCov 0) and its checksum over the IPv4 pseudo-header (§9.1)."""
    options += bytes(-len(options) % 4)  # Padding options (type 0)
    ack_part = b"" if ack is None else struct.pack("!HHI", 0, (ack >> 32) & 0xFFFF, ack & 0xFFFFFFFF)
    offset = (16 + len(ack_part) + len(options)) // 4
    head = struct.pack("!HHBBHBBHI", ports[0], ports[1], offset, 0, 0, kind << 1 | 1, 0, (seq >> 32) & 0xFFFF, seq & 0xFFFFFFFF)
    body = head + ack_part + options + payload
    pseudo = ips[0] + ips[1] + struct.pack("!BBH", 0, IP_PROTO_DCCP, len(body))
    checksum = dpkt.in_cksum(pseudo + body)
    return body[:6] + struct.pack("!H", checksum) + body[8:]


def _dccp_packets(dpkt: Any, spec: dict[str, Any], capture: pd.DataFrame, point: CapturePoint) -> tuple[list[bytes], np.ndarray]:
    """A DCCP flow's packets seen at ``point``: the sender's data as DCCP-DataAck (DCCP-Data
    before any Ack came back), the receiver's DCCP-Acks with their Ack Vectors. Sequence numbers
    count from each side's ISS; a DataAck acknowledges the sequence number of the receiver's Ack
    whose Acknowledgement Number it carries (the engine's data packets carry that number)."""
    f = point.flow
    fs = spec["flows"][f]
    addr = _addresses(spec)
    ips = (addr[fs["src"]], addr[fs["dst"]])
    ports = (CLIENT_PORT_BASE + f, SERVER_PORT)
    iss_s, iss_r = isn(f), receiver_isn(f)
    cols = {name: capture[name].to_numpy() for name in capture.columns}
    acks = cols["kind"] == _KIND_DCCP_ACK
    # Each Acknowledgement Number and the receiver's sequence number of the Ack that carried it.
    carried = dict(zip(cols["ack"][acks].tolist(), cols["seq"][acks].tolist()))
    header = fs["header_bytes"]
    order, t = seen_rows(capture, point)
    out: list[bytes] = []
    for i in order:
        size, kind, seq = int(cols["size_bytes"][i]), int(cols["kind"][i]), int(cols["seq"][i])
        if kind == _KIND_DCCP_DATA:
            # The engine's `ack`: 0 before any Ack, else the highest Acknowledgement Number + 1.
            high = int(cols["ack"][i])
            payload = bytes(size - header)
            if high:
                ack = (iss_r + carried[high - 1]) & 0xFFFFFFFFFFFF
                dccp = _dccp(dpkt, ips, ports, _DCCP_DATAACK, iss_s + seq, ack, bytes(header - 20 - 24), payload)
            else:
                dccp = _dccp(dpkt, ips, ports, _DCCP_DATA, iss_s + seq, None, bytes(header - 20 - 16), payload)
            ip_src, ip_dst = ips
        elif kind == _KIND_DCCP_ACK:
            n = int(cols["n_sack"][i])
            words = [int(cols[f"sack_{'start' if k % 2 == 0 else 'end'}_{k // 2}"][i]) for k in range(n)]
            dccp = _dccp(dpkt, ips[::-1], ports[::-1], _DCCP_ACK, iss_r + seq, (iss_s + int(cols["ack"][i])) & 0xFFFFFFFFFFFF, _ack_vector(words), b"")
            ip_src, ip_dst = ips[::-1]
        else:  # pragma: no cover - a DCCP flow sends nothing else
            raise ValueError(f"packet kind {kind} is not DCCP")
        ip = dpkt.ip.IP(src=ip_src, dst=ip_dst, p=IP_PROTO_DCCP, ttl=64, id=len(out) & 0xFFFF, data=dccp)
        ip.tos = _tos(cols, i)
        ip.len = 20 + len(dccp)
        raw = bytes(ip)  # dpkt fills in the IP checksum
        if len(raw) != size:
            raise ValueError(f"built a {len(raw)}-byte DCCP packet for the engine's {size}-byte one")
        out.append(raw)
    return out, t


def _setup_packet(dpkt: Any, request: bool, step: int, steps: list[tuple[bool, bool]], spans: dict[tuple[int, bool], tuple[int, int]],
                  conn_isn: dict[bool, tuple[int, int]], opts: bytes, timestamps: bool, ips: tuple[bytes, bytes],
                  ports: tuple[int, int], size: int, header_len: int, windows: tuple[int, int], ip_id: int, mss_option: int, wscale: int,
                  ecn: bool = False) -> bytes:
    """One packet of the preamble: a SYN or SYN-ACK, or a segment with the application's bytes
    (iperf3's cookie, state messages and parameters; zeros here). A request acknowledges the
    server's bytes so far; its answer acknowledges the request too. With ``ecn`` the SYN asks for
    ECN (ECE and CWR) and the SYN-ACK accepts it (ECE), as RFC 3168 §6.1.1 and Linux do."""
    syn, data_conn = steps[step]
    client_isn, server_isn = conn_isn[data_conn]
    mine, theirs = (client_isn, server_isn) if request else (server_isn, client_isn)
    if syn:
        # Linux's SYN options: MSS, SACK permitted, timestamps, NOP, window scale; without
        # timestamps, NOP-padded.
        sack_ts = b"\x04\x02" + opts[2:] if timestamps else b"\x01\x01\x04\x02"
        tcp = dpkt.tcp.TCP(seq=mine, ack=0 if request else (theirs + 1) & 0xFFFFFFFF, data=b"")
        tcp.flags = _TH_SYN | (0 if request else _TH_ACK)
        if ecn:
            tcp.flags |= _TH_ECE | _TH_CWR if request else _TH_ECE
        tcp.opts = struct.pack("!BBH", 2, 4, mss_option) + sack_ts + b"\x01" + struct.pack("!BBB", 3, 3, wscale)
    else:
        first, end = spans[(step, request)]
        other_first, other_end = spans[(step, not request)]
        acked = other_first if request else other_end
        tcp = dpkt.tcp.TCP(seq=(mine + first) & 0xFFFFFFFF, ack=(theirs + acked) & 0xFFFFFFFF, data=bytes(end - first))
        tcp.flags = _TH_ACK | (_TH_PUSH if end > first else 0)
        tcp.opts = opts
    tcp.sport, tcp.dport = ports if request else ports[::-1]
    tcp.win = windows[0] if syn else windows[1]  # a SYN's window is not scaled (RFC 7323 §2.2)
    tcp.off = (20 + len(tcp.opts)) // 4
    src, dst = ips if request else ips[::-1]
    ip = dpkt.ip.IP(src=src, dst=dst, p=dpkt.ip.IP_PROTO_TCP, ttl=64, id=ip_id & 0xFFFF, data=tcp)
    ip.len = 20 + len(tcp)
    raw = bytes(ip)
    if len(raw) != size:
        raise ValueError(f"built a {len(raw)}-byte preamble packet for the engine's {size}-byte one")
    return raw


def write_pcap(scenario: Scenario, capture: pd.DataFrame, point: CapturePoint, path: str | os.PathLike[str]) -> int:
    """Write the packets seen at ``point`` to ``path`` (nanosecond libpcap, raw IPv4), atomically.
    Returns the number of packets written."""
    import dpkt

    pkts, t = packets(scenario, capture, point)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            writer = dpkt.pcap.Writer(fh, snaplen=65535, linktype=LINKTYPE_RAW, nano=True)
            for raw, ns in zip(pkts, t.tolist()):
                writer.writepkt_time(raw, ns / 1e9)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(pkts)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
