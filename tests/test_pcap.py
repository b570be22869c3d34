"""pcap export: the engine's capture of one flow, written as IPv4/TCP and read back by tshark.

The scenario loses segments 10 and 40–42 of flow1 to the engine's test hook (inside the sender,
so they never reach a link) and 0.5 % of the forward bottleneck's packets at random; flow1 stops
at 4 s and the run lasts 6 s, so every packet has drained. (flow2, the cross traffic, sends one
segment at a time.) tshark must find the same packets, the same data/ACK split and the same
retransmissions as the engine (docs/pcap.md), except that its heuristic calls a retransmission
sent within 3 ms of the previous data segment out of order.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tcplab
from tcplab import pcap
from tcplab.cli import main

HOOK_DROPS = [10, 40, 41, 42]
SCENARIO = f"""
name = "lossy"
duration = "6s"
seed = 2
window = "1s:6s"

[topology]
kind = "dumbbell"
bottleneck = "20Mbps"
rtt = "40ms"
buffer = "0.5bdp"
loss = 0.005

[[flows]]
variant = "sack"
stop = "4s"
drop_segments = {HOOK_DROPS}

[[flows]]
variant = "illinois"
start = "1s"
tso = false
"""
MSS = 1448


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pcap") / "lossy.toml"
    path.write_text(SCENARIO)
    return path


def tshark(path: Path, *fields: str, where: str | None = None, prefs: tuple[str, ...] = ()) -> pd.DataFrame:
    """``tshark -r path -T fields``: one row per frame (matching ``where``), one column per field."""
    exe = shutil.which("tshark")
    assert exe is not None, "tshark is not installed (make deps installs it)"
    cmd = [exe, "-r", str(path), "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"]
    for pref in prefs:
        cmd += ["-o", pref]
    if where:
        cmd += ["-Y", where]
    for f in ("frame.number", *fields):
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [line.split("|") for line in out.splitlines()]
    return pd.DataFrame(rows, columns=["frame", *fields]).replace("", None)


def frames(path: Path, where: str) -> set[int]:
    return {int(f) for f in tshark(path, where=where)["frame"]}


def capture(scenario_file: Path, at: str) -> tuple[tcplab.Result, pcap.CapturePoint, np.ndarray]:
    s = tcplab.load_scenario(scenario_file)
    point = pcap.capture_point(s, 0, at)
    r = tcplab.simulate(s, capture=point.spec())
    assert r.capture is not None
    rows, _ = pcap.seen_rows(r.capture, point)
    return r, point, rows


def scenario_pcap(toml_path: Path, pcap_file: Path, at: str = "receiver") -> Path:
    """``tcplab sim TOML --pcap 1 --pcap-at AT --pcap-file PCAP`` as a user runs it (a separate
    process); the file written."""
    p = subprocess.run([sys.executable, "-m", "tcplab", "sim", str(toml_path), "--pcap", "1", "--pcap-at", at, "--pcap-file", str(pcap_file), "-q"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return pcap_file


def write(scenario_file: Path, at: str, out: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = out / f"at-{at}.pcap"
    code = main(["sim", str(scenario_file), "-q", "--pcap", "flow1", "--pcap-at", at, "--pcap-file", str(path)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"wrote {path}" in err
    return path


def test_sender_capture_matches_the_engine(scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(scenario_file, "sender", tmp_path, capsys)
    r, point, rows = capture(scenario_file, "sender")
    assert point.links == (2, 3)  # sender1 → router1 and back
    flow = r.flows.iloc[0]
    assert flow.in_flight_pkts == 0 and flow.retrans_pkts > len(HOOK_DROPS)
    cap = r.capture.iloc[rows].reset_index(drop=True)

    t = tshark(path, "ip.src", "ip.dst", "tcp.srcport", "tcp.dstport", "tcp.len", "ip.len", "tcp.seq_raw", "tcp.ack_raw",
               "tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr", "tcp.window_size_value")
    # Every packet of the flow that crossed the sender's access link, in both directions.
    assert len(t) == len(cap) == len(r.capture)
    data = t["tcp.len"].astype(int) > 0
    assert data.sum() == flow.sent_pkts - len(HOOK_DROPS)  # the hook drops inside the sender
    assert (~data).sum() == (r.capture["link"] == 3).sum()
    assert (data.to_numpy() == (cap["kind"] == 0).to_numpy()).all()
    assert set(t.loc[data, "ip.src"]) == {"10.0.1.1"} and set(t.loc[data, "ip.dst"]) == {"10.1.1.1"}
    assert set(t.loc[data, "tcp.srcport"]) == {"50000"} and set(t.loc[~data, "tcp.srcport"]) == {"5201"}
    assert (t["ip.len"].astype(int).to_numpy() == cap["size_bytes"].to_numpy()).all()
    assert set(t.loc[data, "tcp.len"].astype(int)) == {MSS}
    # Sequence numbers in bytes from the fixed ISN; ACK numbers likewise.
    isn = pcap.isn(0)
    seq = t.loc[data, "tcp.seq_raw"].astype(int).to_numpy()
    assert (seq == isn + 1 + cap.loc[data.to_numpy(), "seq"].to_numpy() * MSS).all()
    ack = t.loc[~data, "tcp.ack_raw"].astype(int).to_numpy()
    assert (ack == isn + 1 + cap.loc[~data.to_numpy(), "ack"].to_numpy() * MSS).all()
    # Timestamps in 1 ms ticks from 1 at time 0; the window field scaled by 7 (6 MB rwnd).
    tsval = t["tcp.options.timestamp.tsval"].astype(int).to_numpy()
    assert (tsval == 1 + cap["ts_val_ns"].to_numpy() // 1_000_000).all()
    assert t["tcp.options.timestamp.tsecr"].astype(int).iloc[-1] > 0
    assert set(t["tcp.window_size_value"].astype(int)) == {6 * 2**20 >> 7}
    scaled = tshark(path, "tcp.window_size", prefs=("tcp.default_window_scaling:7",))
    assert set(scaled["tcp.window_size"].astype(int)) == {6 * 2**20}

    # Retransmissions: tshark flags exactly the frames the engine marks, as retransmissions
    # (most of them fast: sent within 20 ms of the duplicate ACKs asking for them), except that
    # its heuristic calls a segment that follows the previous data segment within 3 ms out of
    # order instead (a loss found by SACK while new data is still leaving); nothing else.
    engine = {k + 1 for k in np.flatnonzero(cap["retrans"].to_numpy() == 1)}
    assert len(engine) == flow.retrans_pkts
    flagged = frames(path, "tcp.analysis.retransmission")
    out_of_order = frames(path, "tcp.analysis.out_of_order")
    assert flagged <= engine and engine == flagged | out_of_order
    sent = tshark(path, "frame.time_relative", where="tcp.len > 0")
    t_data = dict(zip(sent["frame"].astype(int), sent["frame.time_relative"].astype(float)))
    order = sorted(t_data)
    for f in out_of_order:
        before = order[order.index(f) - 1]
        assert t_data[f] - t_data[before] < 0.003, f"frame {f}, {t_data[f] - t_data[before]:.4f} s after frame {before}"
    fast = frames(path, "tcp.analysis.fast_retransmission")
    assert fast <= flagged and len(fast) >= len(flagged) - 2
    assert not frames(path, "tcp.analysis.spurious_retransmission")
    # The hook's drops leave two gaps in the sender's stream (10; 40–42): "previous segment not captured".
    assert len(frames(path, "tcp.analysis.lost_segment")) == 2

    # SACK blocks decode to the engine's, in bytes.
    sack = tshark(path, "tcp.options.sack_le", "tcp.options.sack_re", where="tcp.options.sack_le",
                  prefs=("tcp.relative_sequence_numbers:FALSE",))
    with_sack = cap[cap["n_sack"] > 0]
    assert len(sack) == len(with_sack) > 0
    assert (sack["tcp.options.sack_le"].astype(int).to_numpy() == isn + 1 + with_sack["sack_start_0"].to_numpy() * MSS).all()
    assert (sack["tcp.options.sack_re"].astype(int).to_numpy() == isn + 1 + with_sack["sack_end_0"].to_numpy() * MSS).all()
    assert int(sack["tcp.options.sack_le"].iloc[0]) == isn + 1 + 11 * MSS  # above the hole at segment 10

    # IP and TCP checksums are right where tshark is told to check them.
    bad = tshark(path, prefs=("ip.check_checksum:TRUE", "tcp.check_checksum:TRUE"),
                 where="ip.checksum.status != 1 || tcp.checksum.status != 1")
    assert bad.empty


@pytest.mark.parametrize("at", ["receiver", "0"])
def test_other_points_see_the_same_retransmissions(at: str, scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(scenario_file, at, tmp_path, capsys)
    r, point, rows = capture(scenario_file, at)
    cap = r.capture.iloc[rows].reset_index(drop=True)
    flow = r.flows.iloc[0]
    t = tshark(path, "tcp.len")
    data = (t["tcp.len"].astype(int) > 0).to_numpy()
    assert len(t) == len(cap)
    if at == "receiver":
        # What the hook, the queues or the bottleneck's loss model drop never reaches the receiver.
        assert data.sum() == flow.delivered_pkts == flow.sent_pkts - flow.dropped_pkts
    else:
        # A tap at the bottleneck's sending end sees even the packets the link then loses, not
        # those dropped before it (the hook's, the queue's: all in dropped_pkts); no ACKs.
        lost = r.capture["lost"].sum()
        assert 0 < lost <= r.queues.loc[0, "random_loss_pkts"]  # flow2 shares the bottleneck from 1 s
        assert data.all() and len(t) == flow.sent_pkts - flow.dropped_pkts + lost
    # tshark classifies each retransmitted segment as a retransmission, or as out-of-order when it
    # follows the highest segment within 3 ms without duplicate ACKs in view: together, exactly
    # the engine's retransmissions.
    engine = {k + 1 for k in np.flatnonzero(cap["retrans"].to_numpy() == 1)}
    # (A retransmission the path loses never reaches the receiver.)
    assert len(engine) == flow.retrans_pkts if at == "0" else 0 < len(engine) <= flow.retrans_pkts
    flagged = frames(path, "tcp.analysis.retransmission || tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order")
    assert flagged == engine
    if at == "0":
        assert frames(path, "tcp.analysis.out_of_order")  # no ACK direction on a one-way link


def test_psh_is_on_each_burst_end_of_a_tso_sender(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A Linux-like sender (CUBIC: `tso` on) ends each burst with PSH, as Linux's GSO packets do;
    # tshark sees it on exactly the segments the engine marks, never on an ACK.
    scenario = tmp_path / "psh.toml"
    scenario.write_text(SCENARIO.split("[[flows]]")[0].replace("loss = 0.005", "") + '[[flows]]\nvariant = "cubic"\n')
    path = write(scenario, "sender", tmp_path, capsys)
    r, point, rows = capture(scenario, "sender")
    cap = r.capture.iloc[rows].reset_index(drop=True)
    t = tshark(path, "tcp.len", "tcp.flags.push")
    psh = t["tcp.flags.push"].isin(["1", "True"]).to_numpy()
    data = (t["tcp.len"].astype(int) > 0).to_numpy()
    assert (psh == (cap["push"] == 1).to_numpy()).all()
    assert 0.1 < psh[data].mean() < 0.9 and not psh[~data].any()


def test_default_file_name_and_flow_index(scenario_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["sim", str(scenario_file), "-q", "--pcap", "1"]) == 0
    assert (tmp_path / "lossy-flow1.pcap").stat().st_size > 0
    assert main(["sim", str(scenario_file), "-q", "--pcap", "flow2"]) == 0
    assert len(tshark(tmp_path / "lossy-flow2.pcap", where="ip.src == 10.0.2.1 && tcp.len > 0")) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lossy-flow1.pcap", "lossy-flow2.pcap"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pcap", "flow3"], "tcplab: error: --pcap = 'flow3': expected a flow name (flow1, flow2) or its 1-based index (1 to 2)"),
        (["--pcap", "0"], "tcplab: error: --pcap = '0': expected a flow name (flow1, flow2) or its 1-based index (1 to 2)"),
        (["--pcap", "flow1", "--pcap-at", "router"], "tcplab: error: --pcap-at = 'router': expected sender, receiver or a link id from 0 to 9"),
        (["--pcap-at", "receiver"], "tcplab: error: --pcap: missing; expected a flow to capture with --pcap FLOW when --pcap-at or --pcap-file is given"),
    ],
)
def test_bad_pcap_arguments(argv: list[str], message: str, scenario_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["sim", str(scenario_file), "-q", *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == message
    assert list(tmp_path.iterdir()) == []


def test_a_dccp_flow_as_rfc4340_packets(tmp_path: Path) -> None:
    # A CCID 2 flow beside a CUBIC flow into a 20-packet buffer, 5 s: tshark reads DCCP-Data, then
    # DCCP-DataAck once an Ack came back, and DCCP-Acks with Ack Vectors, all with 48-bit sequence
    # numbers and good checksums; one data packet per packet the flow sent (at the sender) or
    # delivered (at the receiver); each DataAck acknowledges the sequence number of an Ack the
    # sender received, never going back; and the packets the Acks' vectors report not received
    # are packets the queue dropped.
    path = tmp_path / "dccp.toml"
    path.write_text(
        'name = "dccp"\nduration = "5s"\nseed = 1\n[topology]\nbottleneck = "10Mbps"\nrtt = "20ms"\nbuffer = "20pkt"\n'
        '[[flows]]\nvariant = "ccid2"\n[[flows]]\nvariant = "cubic"\nstart = "1s"\n'
    )
    files = {at: tmp_path / f"dccp-{at}.pcap" for at in ("sender", "receiver")}
    for at, pcap_file in files.items():
        scenario_pcap(path, pcap_file, at)
    flows = tcplab.simulate(tcplab.load_scenario(path)).flows
    assert flows.dropped_pkts[0] > 0
    fields = ("dccp.type", "dccp.x", "dccp.seq_raw", "dccp.ack_raw", "dccp.checksum.status", "ip.checksum.status", "ip.len", "dccp.ack_vector.nonce_0")
    prefs = ("ip.check_checksum:TRUE", "dccp.check_checksum:TRUE")
    sender, receiver = (tshark(f, *fields, prefs=prefs) for f in files.values())
    for d in (sender, receiver):
        assert set(d["dccp.checksum.status"]) == {"1"} and set(d["ip.checksum.status"]) == {"1"}  # 1: good
        assert set(d["dccp.x"]) == {"1"} and set(d["dccp.type"]) <= {"2", "3", "4"}
    data = {name: d[d["dccp.type"].isin(["2", "4"])] for name, d in (("sender", sender), ("receiver", receiver))}
    assert len(data["sender"]) == flows.sent_pkts[0] and len(data["receiver"]) == flows.delivered_pkts[0]
    assert set(data["sender"]["ip.len"]) == {"1500"}
    # DCCP-Data only before the first Ack reached the sender.
    types = sender["dccp.type"].tolist()
    first_ack = types.index("3")
    assert set(types[:first_ack]) == {"2"} and "2" not in types[first_ack:]
    acks = sender[sender["dccp.type"] == "3"]
    data_acks = sender[sender["dccp.type"] == "4"]["dccp.ack_raw"].astype(int)
    assert set(data_acks) <= set(acks["dccp.seq_raw"].astype(int)) and data_acks.is_monotonic_increasing
    # Ack Vectors: the first run starts at the Acknowledgement Number, received; the packets
    # reported not received (state 3) were sent and never delivered.
    sent = set(data["sender"]["dccp.seq_raw"].astype(int))
    dropped = sent - set(data["receiver"]["dccp.seq_raw"].astype(int))
    missing: set[int] = set()
    for ackno, vector in zip(acks["dccp.ack_raw"].astype(int), acks["dccp.ack_vector.nonce_0"]):
        cells = bytes.fromhex(vector.replace(":", ""))
        assert cells[0] >> 6 == 0, vector
        top = ackno
        for c in cells:
            n = (c & 0x3F) + 1
            if c >> 6 == 3:
                missing |= set(range(top - n + 1, top + 1))
            top -= n
    assert missing and missing <= dropped, sorted(missing - dropped)[:10]


def test_a_cbr_flow_as_iperf3_udp(tmp_path: Path) -> None:
    # A 2 Mb/s CBR flow of 1000-byte datagrams beside a CUBIC flow into a 20-packet buffer: at the
    # receiver tshark finds one UDP datagram per delivery, 1000 IP bytes with valid checksums,
    # each payload opening with iperf3's header (send time, datagram number from 1), and the
    # numbers the queue dropped missing.
    path = tmp_path / "udp.toml"
    path.write_text(
        'name = "udp"\nduration = "5s"\nseed = 1\n[topology]\nbottleneck = "10Mbps"\nrtt = "20ms"\nbuffer = "20pkt"\n'
        '[[flows]]\nkind = "cbr"\nrate = "2Mbps"\n[[flows]]\nvariant = "cubic"\n'
    )
    pcap_file = tmp_path / "udp.pcap"
    scenario_pcap(path, pcap_file)
    flows = tcplab.simulate(tcplab.load_scenario(path)).flows
    assert flows.dropped_pkts[0] > 0
    udp = tshark(pcap_file, "ip.len", "udp.srcport", "udp.dstport", "udp.length", "udp.checksum.status", "ip.checksum.status", "data.data",
                 prefs=("ip.check_checksum:TRUE", "udp.check_checksum:TRUE"))
    assert len(udp) == flows.delivered_pkts[0]
    assert set(udp["ip.len"]) == {"1000"} and set(udp["udp.length"]) == {"980"}
    assert set(udp["udp.srcport"]) == {"50000"} and set(udp["udp.dstport"]) == {"5201"}
    assert set(udp["udp.checksum.status"]) == {"1"} and set(udp["ip.checksum.status"]) == {"1"}  # 1: good
    numbers = [int(d[16:24], 16) for d in udp["data.data"]]
    assert numbers == sorted(numbers) and numbers[0] == 1 and len(set(numbers)) == len(numbers)
    # The numbers missing below the last one received are datagrams the queue dropped.
    assert 0 < max(numbers) - len(numbers) <= flows.dropped_pkts[0]


def test_acks_carry_the_autotuned_window(scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # With rcvbuf_autotuning the receiver's window opens from the SYN's 64 KB as Linux's does; each
    # ACK's window field carries it, scaled by 7 (6 MB rwnd), and tshark reads it back.
    tuned = tmp_path / "tuned.toml"
    tuned.write_text(scenario_file.read_text().replace('variant = "sack"\n', 'variant = "sack"\nrcvbuf_autotuning = true\n', 1))
    path = write(tuned, "sender", tmp_path, capsys)
    acks = tshark(path, "tcp.ack_raw", "tcp.window_size", where="tcp.len == 0", prefs=("tcp.default_window_scaling:7",))
    window = acks["tcp.window_size"].astype(int).to_numpy()
    edge = acks["tcp.ack_raw"].astype(int).to_numpy() + window
    # The first ACK (for two segments: this receiver ACKs every second one) offers 65160 B plus
    # 2 MSS a segment, in 128-byte units; the buffer then grows past its first 128 KB (a window
    # of 81920 B); the offered right edge never moves back.
    assert window[0] == 71_040, window[:10]
    assert window.max() > 81_920 and window.max() < 6 * 2**20, window.max()
    assert (np.diff(edge) >= 0).all()


@pytest.mark.parametrize("timestamps", [True, False])
def test_the_iperf3_preamble_is_two_tcp_connections(timestamps: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # With `preamble = "iperf3"` the flow first opens iperf3's control connection (handshake,
    # cookie, parameters) and then the data connection (handshake, cookie). tshark finds the two
    # connections, their SYNs and the application's bytes, and the data following the 37-byte
    # cookie in the data connection's sequence space, without a sequence anomaly or a bad checksum.
    scenario = tmp_path / "preamble.toml"
    tcp = '[tcp]\npreamble = "iperf3"\n' + ("" if timestamps else "timestamps = false\n")
    scenario.write_text(SCENARIO.split("[[flows]]")[0].replace("loss = 0.005", "") + tcp + '[[flows]]\nvariant = "cubic"\n')
    path = write(scenario, "sender", tmp_path, capsys)
    t = tshark(path, "tcp.stream", "tcp.srcport", "tcp.flags.syn", "tcp.flags.ack", "tcp.len", "tcp.seq", "tcp.ack", "tcp.analysis.flags",
               prefs=("ip.check_checksum:TRUE", "tcp.check_checksum:TRUE", "tcp.relative_sequence_numbers:TRUE"))
    head = t.iloc[:12]
    mss = MSS if timestamps else 1460
    assert head["tcp.stream"].tolist() == ["0"] * 6 + ["1"] * 6
    assert head["tcp.len"].astype(int).tolist() == [0, 0, 37, 1, 154, 1, 0, 0, 37, 0, mss, mss]
    syn = head["tcp.flags.syn"].isin(["1", "True"]).tolist()
    assert syn == [True, True, False, False, False, False, True, True] + [False] * 4
    # The client's ports: iperf3's control connection, then the data connection's.
    assert head["tcp.srcport"].iloc[[0, 6]].astype(int).tolist() == [pcap.CONTROL_PORT_BASE, pcap.CLIENT_PORT_BASE]
    # The answer to each request acknowledges it; the data begins after the cookie.
    assert head["tcp.ack"].iloc[[3, 5, 9]].astype(int).tolist() == [38, 192, 38]
    assert head["tcp.seq"].iloc[[10, 11]].astype(int).tolist() == [38, 38 + mss]
    assert head["tcp.analysis.flags"].isna().all()
    bad = tshark(path, prefs=("ip.check_checksum:TRUE", "tcp.check_checksum:TRUE"), where="ip.checksum.status == 0 || tcp.checksum.status == 0")
    assert bad.empty
