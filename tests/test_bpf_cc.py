"""tcplab's BPF congestion controls (tcplab.testbed.bpf) in this kernel: each builds, passes the
verifier, registers under its Linux name and carries a TCP connection; a changed source replaces
the registered program. Needs root, clang, bpftool and libbpf's headers (``make deps``) and a
kernel with BTF and BPF congestion controls, as the CI machine has. About 20 s.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tcplab.testbed import bpf, stack


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _loopback_transfer(cc: str) -> dict:
    """iperf3's end summary of a one-second transfer over loopback under ``cc``."""
    port = _free_port()
    server = subprocess.Popen(["iperf3", "-s", "-1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):  # until it listens (a probing connect would be taken as its one test)
            if subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True).stdout.strip():
                break
            time.sleep(0.02)
        out = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", "1", "-C", cc, "-J"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    finally:
        server.kill()
        server.wait()
    return json.loads(out)["end"]


@pytest.mark.parametrize("name", sorted(bpf.SOURCES))
def test_each_program_registers_under_its_linux_name_and_carries_a_connection(name: str) -> None:
    assert bpf.register(name) is None
    assert name in bpf.registered()
    assert name in stack.available_cc()
    end = _loopback_transfer(name)
    # Both ends' sockets ran it (iperf3 sets the client's and the server's data socket), and it
    # moved data: cwnd grew from 10 segments, so its hooks ran under a real connection.
    assert end["sender_tcp_congestion"] == name and end["receiver_tcp_congestion"] == name, end
    assert end["sum_sent"]["bytes"] > 10_000_000, end["sum_sent"]


def test_a_changed_source_replaces_the_registered_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The registered program is the current source's: a run asking for ``scalable`` after its
    file changed registers the new build in the old one's place (sockets then get the new one)."""
    assert bpf.register("scalable") is None

    def struct_ops_id() -> str:
        out = subprocess.run(["bpftool", "struct_ops", "list"], capture_output=True, text=True, check=True).stdout
        return next(line.split(":")[0] for line in out.splitlines() if bpf.map_name("scalable") + " " in line)

    before = struct_ops_id()
    assert bpf.register("scalable") is None and struct_ops_id() == before  # unchanged: left alone
    copy = tmp_path / "bpf"
    shutil.copytree(bpf._HERE, copy)
    source = copy / bpf.SOURCES["scalable"]
    source.write_text(source.read_text().replace("#define AI_CNT 100U", "#define AI_CNT 50U"))
    monkeypatch.setattr(bpf, "_HERE", copy)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    try:
        assert bpf.register("scalable") is None
        changed = struct_ops_id()
        assert changed != before and bpf.registered().count("scalable") == 1
    finally:
        monkeypatch.undo()
        assert bpf.register("scalable") is None  # the package's own again
    assert struct_ops_id() not in (before, changed)
    assert _loopback_transfer("scalable")["sender_tcp_congestion"] == "scalable"


def test_dctcp_publishes_each_connections_alpha() -> None:
    """tcplab's DCTCP keeps each connection's α in its map for the testbed's series: a loopback
    transfer (ECN negotiated, nothing marked) leaves an entry for 127.0.0.1 whose α decayed from 1
    at the start; an entry opened before ``since_ns`` is not this run's and is left out."""
    assert bpf.register("dctcp") is None
    since = time.monotonic_ns()
    _loopback_transfer("dctcp")
    alphas = bpf.dctcp_alphas(since)
    assert set(alphas) == {"127.0.0.1"} and 0 <= alphas["127.0.0.1"] < 0.5, alphas
    assert bpf.dctcp_alphas(time.monotonic_ns()) == {}
