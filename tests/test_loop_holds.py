"""scripts/loop_holds.py on the simulator's own captures, where every hold is known: one flow held
by its receive window far below the path's capacity, captured at its sender and at its receiver.
Without host noise the receiver's ACK leaves the instant its segment has arrived, the sender's
data the instant an ACK has, and every ACK crosses the idle reverse path in the same time: all
holds 0. With up to 50 µs of host jitter the two hosts' holds spread over [0, 50] µs and the path
stays fixed (the jitter comes before the receiver's capture point); with stalls, their share of
holds is over 100 µs. A wrong match or a wrong pair of packets gives other numbers."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from holds_lines import host_lines, tables
from tcplab.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "tests" / "data" / "window_limited.toml"
LINE = re.compile(
    r"(\d+) holds, µs: p10 ([\d.]+) p50 ([\d.]+) p90 ([\d.]+) p99 ([\d.]+) p99\.9 ([\d.]+) max ([\d.]+) mean [\d.]+; "
    r">100 ([\d.]+)% >200 ([\d.]+)% >500 ([\d.]+)% >1000 ([\d.]+)%"
)


def _captures(tmp_path: Path, flags: list[str]) -> tuple[Path, Path]:
    sender, receiver = tmp_path / "sender.pcap", tmp_path / "receiver.pcap"
    assert main(["sim", str(SCENARIO), *flags, "--pcap", "1", "--pcap-file", str(sender), "-q"]) == 0
    assert main(["sim", str(SCENARIO), *flags, "--pcap", "1", "--pcap-at", "receiver", "--pcap-file", str(receiver), "-q"]) == 0
    return sender, receiver


def _holds(*args: str) -> tuple[int, list[float], str]:
    """(count, [p10, p50, p90, p99, p99.9, max, >100 %, >200 %, >500 %, >1000 %], the line)."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "loop_holds.py"), *args], capture_output=True, text=True, check=True).stdout
    m = LINE.search(out)
    assert m, out
    return int(m.group(1)), [float(v) for v in m.groups()[1:]], out


@pytest.fixture(autouse=True)
def _tshark() -> None:
    assert shutil.which("tshark") is not None, "tshark is not installed (make deps installs it)"


def test_without_host_noise_every_hold_is_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sender, receiver = _captures(tmp_path, [])
    capsys.readouterr()
    for args in (("ack", str(receiver)), ("react", str(sender)), ("path", str(receiver), str(sender))):
        n, values, out = _holds(*args)
        # 3 s at 20 KB a round trip of 30 ms: about 670 ACKs, one for every two segments.
        assert n > 600 and values == [0.0] * 10, out
    assert "; 0 later than 5 ms" in _holds("ack", str(receiver))[2]


def test_host_jitter_spreads_the_hosts_holds_and_not_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sender, receiver = _captures(tmp_path, ["--host-jitter", "50us"])
    capsys.readouterr()
    for args in (("ack", str(receiver)), ("react", str(sender))):
        n, (p10, p50, p90, p99, _, top, over100, *_), out = _holds(*args)
        assert n > 600 and p10 < 10 and 20 < p50 < 30 and p90 > 40 and top <= 50 and over100 == 0, out
    n, values, out = _holds("path", str(receiver), str(sender))
    assert n > 600 and values == [0.0] * 10, out


def test_host_stalls_are_the_share_of_holds_over_100_us(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 10% of sends wait uniformly up to 1 ms: 9% of them over 100 µs, none over 1 ms.
    sender, receiver = _captures(tmp_path, ["--host-jitter", "10us", "--host-stall", "1ms", "--host-stall-probability", "0.1"])
    capsys.readouterr()
    for args in (("ack", str(receiver)), ("react", str(sender))):
        n, values, out = _holds(*args)
        top, over100, over1000 = values[5], values[6], values[9]
        assert n > 600 and 5.0 < over100 < 14.0 and top < 1000 and over1000 == 0, out


def test_a_capture_without_data_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pcap"
    # A pcap header (nanosecond magic, link type 101) and no packet.
    empty.write_bytes(bytes.fromhex("4d3cb2a1" "0200" "0400" "00000000" "00000000" "ffff0000" "65000000"))
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "loop_holds.py"), "ack", str(empty)], capture_output=True, text=True)
    assert out.returncode != 0 and "loop_holds:" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_the_tables_the_simulator_is_given_come_back_out_of_its_captures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The hosts hold data sends 5-14 µs and ACKs 8-85 µs (two humps, as the testbed's receivers
    # hold theirs); the path adds nothing. `table` over the two captures gives back both tables'
    # quantiles within 3 µs (about 700 draws each), and none outside their range.
    data, ack = [5.0, 6.0, 7.0, 9.0, 14.0], [8.0, 18.0, 21.0, 60.0, 85.0]
    held = tmp_path / "held.toml"
    given = "".join(f"{name} = {json.dumps([f'{v}us' for v in t])}\n" for name, t in (("host_data_holds", data), ("host_ack_holds", ack)))
    held.write_text(SCENARIO.read_text().replace('duration = "3s"\n', 'duration = "3s"\n' + given))
    sender, receiver = tmp_path / "sender.pcap", tmp_path / "receiver.pcap"
    assert main(["sim", str(held), "--pcap", "1", "--pcap-file", str(sender), "-q"]) == 0
    assert main(["sim", str(held), "--pcap", "1", "--pcap-at", "receiver", "--pcap-file", str(receiver), "-q"]) == 0
    capsys.readouterr()
    args = ["table", "--ack", str(receiver), "--react", str(sender), "--path", str(receiver), str(sender), "--points", "5", "--body", "100"]
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "loop_holds.py"), *args], capture_output=True, text=True, check=True).stdout
    for name, given_us in (("host_data_holds", data), ("host_ack_holds", ack)):
        got = tables(out)[name]
        assert len(got) == 5 and all(abs(g - w) <= 3.0 for g, w in zip(got, given_us)), (name, got, out)
        assert given_us[0] <= got[0] and got[-1] <= given_us[-1], (name, got)
    # The printed lines are a scenario's: the simulator takes them as they are.
    again = tmp_path / "again.toml"
    again.write_text(SCENARIO.read_text().replace('duration = "3s"\n', 'duration = "3s"\n' + host_lines(out)))
    assert main(["sim", str(again), "-q"]) == 0


def test_a_paced_senders_answers_wait_for_its_pacing_timer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # No host holds anything, and the receive window no longer limits the flow. Reno answers
    # every ACK at once: all 0. BBR paces at about the bottleneck's rate, so an ACK often finds
    # its pacing timer armed and the data waits for it: most answers take 0.1-1 ms (the testbed's
    # BBR senders: a median of 134 µs at 25 ms / 0.2 BDP, their Reno neighbours' 16 µs). These
    # are the pacing's, not the host's, which is why loop_captures.py leaves paced senders out of
    # the data holds' table.
    for variant, median in (("sack", (0.0, 0.0)), ("bbr", (100.0, 1000.0))):
        sender, _ = _captures(tmp_path, ["--flow", variant, "--set", "tcp.rwnd=1MB"])
        capsys.readouterr()
        n, values, out = _holds("react", str(sender))
        assert n > 2000 and median[0] <= values[1] <= median[1], (variant, out)


def test_table_needs_ack_and_react_captures(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "loop_holds.py"), "table", "--ack", "x.pcap"], capture_output=True, text=True)
    assert out.returncode == 2 and "--react" in out.stderr and "Traceback" not in out.stderr, out.stderr
