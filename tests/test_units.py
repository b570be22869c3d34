"""Units as people write them: exact parsing, canonical writing, and refusal of bare numbers."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcplab.units import Buffer, Rate, Size, Time, UnitError, Window

MS = 1_000_000
S = 1_000_000_000


@pytest.mark.parametrize(
    ("text", "ns"),
    [("25ms", 25 * MS), ("300s", 300 * S), ("1.5s", 1_500 * MS), ("500us", 500_000), ("500µs", 500_000),
     ("7ns", 7), ("0s", 0), ("2min", 120 * S), ("1e-3s", MS), (" 25 ms ", 25 * MS), ("0.5ns", 0), ("1.5ns", 2)],
)
def test_time(text: str, ns: int) -> None:
    assert Time.parse(text).ns == ns


@pytest.mark.parametrize(
    ("text", "bps"),
    [("100Mbps", 10**8), ("1Gbps", 10**9), ("1.5Mb/s", 1_500_000), ("64kbps", 64_000), ("64Kbps", 64_000),
     ("100mbps", 10**8), ("9600bps", 9600), ("10bit/s", 10), ("2Tbps", 2 * 10**12), ("0.1Mbps", 100_000)],
)
def test_rate(text: str, bps: int) -> None:
    assert Rate.parse(text).bps == bps


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [("96KB", 96 * 1024), ("64KB", 65_536), ("64KiB", 65_536), ("64kB", 65_536), ("1500B", 1500), ("6MB", 6 * 1024**2),
     ("1.2MB", 1_258_291), ("1GB", 1024**3)],
)
def test_size_is_binary(text: str, nbytes: int) -> None:
    assert Size.parse(text).bytes == nbytes


def test_buffers() -> None:
    assert Buffer.parse("64pkt") == Buffer("pkts", 64)
    assert Buffer.parse("64packets") == Buffer("pkts", 64)
    assert Buffer.parse("96KB") == Buffer("bytes", 98_304)
    assert Buffer.parse("0.2bdp") == Buffer("bdp", Decimal("0.2"))


def test_bdp_buffer_in_packets() -> None:
    # 1 BDP at 100 Mb/s × 100 ms = 1 250 000 B = 833.3 packets of 1500 B → 833 (nearest).
    assert Buffer.parse("1bdp").limit(10**8, 100 * MS) == {"limit_pkts": 833}
    # 0.2 BDP = 166.7 → 167; 0.6 BDP = 500 exactly.
    assert Buffer.parse("0.2bdp").limit(10**8, 100 * MS) == {"limit_pkts": 167}
    assert Buffer.parse("0.6bdp").limit(10**8, 100 * MS) == {"limit_pkts": 500}
    # Halves round up: 0.0012 BDP = 1.5 packets → 2; a tiny BDP is still one packet.
    assert Buffer.parse("0.0018bdp").limit(10**8, 100 * MS) == {"limit_pkts": 2}
    assert Buffer.parse("0.00001bdp").limit(10**8, 100 * MS) == {"limit_pkts": 1}
    assert Buffer.parse("834pkt").limit() == {"limit_pkts": 834}
    assert Buffer.parse("1.2MB").limit() == {"limit_bytes": 1_258_291}


@pytest.mark.parametrize("bad", ["25", 25, 2.5, "ms", "", "25 parsecs", "25mss", "abc", None, True, "1,5s", "--5ms"])
def test_time_refuses(bad: object) -> None:
    with pytest.raises(UnitError) as e:
        Time.parse(bad)
    assert "ns, us, ms, s" in e.value.allowed


@pytest.mark.parametrize("bad", ["100", 100, "100MBps", "100Mbit", "100Mps", "100MB/s", "1.5"])
def test_rate_refuses(bad: object) -> None:
    with pytest.raises(UnitError) as e:
        Rate.parse(bad)
    assert "Mbps" in e.value.allowed


@pytest.mark.parametrize("bad", ["64", 64, "64kb", "64pkt", "64bdp", "64 bytes"])
def test_size_refuses(bad: object) -> None:
    with pytest.raises(UnitError):
        Size.parse(bad)


@pytest.mark.parametrize("bad", ["64", "1.5pkt", "0.2", "64ms"])
def test_buffer_refuses(bad: object) -> None:
    with pytest.raises(UnitError):
        Buffer.parse(bad)


def test_window() -> None:
    assert Window.parse("120s:300s").bounds(Time(400 * S)) == (Time(120 * S), Time(300 * S))
    assert Window.parse("120s:").bounds(Time(400 * S)) == (Time(120 * S), Time(400 * S))
    assert Window.parse(("10s", "30s")) == Window(Time(10 * S), Time(30 * S))
    assert str(Window.parse("120s:300s")) == "120s:300s"
    for bad in ["300s:120s", "120s", "120:300", "a:b", "10s:10s"]:
        with pytest.raises(UnitError):
            Window.parse(bad)


@pytest.mark.parametrize(
    ("value", "text"),
    [(Time(25 * MS), "25ms"), (Time(1_500 * MS), "1.5s"), (Time(0), "0s"), (Rate(10**8), "100Mbps"),
     (Rate(1_500_000), "1.5Mbps"), (Size(65_536), "64KB"), (Size(1_250_000), "1250000B"), (Buffer("bdp", Decimal("0.2")), "0.2bdp")],
)
def test_canonical_text(value: object, text: str) -> None:
    assert str(value) == text


@given(st.integers(min_value=0, max_value=10**18))
def test_time_round_trips(ns: int) -> None:
    assert Time.parse(str(Time(ns))) == Time(ns)


@given(st.integers(min_value=0, max_value=10**15))
def test_rate_round_trips(bps: int) -> None:
    assert Rate.parse(str(Rate(bps))) == Rate(bps)


@given(st.integers(min_value=0, max_value=2**50))
def test_size_round_trips(nbytes: int) -> None:
    assert Size.parse(str(Size(nbytes))) == Size(nbytes)


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(["pkt", "KB", "B", "bdp"]))
def test_buffer_round_trips(n: int, unit: str) -> None:
    b = Buffer.parse(f"{n}{unit}")
    assert Buffer.parse(str(b)) == b


@given(st.integers(min_value=0, max_value=10**9), st.sampled_from([("ns", 1), ("us", 10**3), ("ms", 10**6), ("s", 10**9)]))
def test_time_scales_exactly(n: int, unit: tuple[str, int]) -> None:
    name, scale = unit
    assert Time.parse(f"{n}{name}").ns == n * scale


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=999), st.sampled_from(["kbps", "Mbps", "Gbps"]))
def test_decimal_rates_are_exact(whole: int, thousandths: int, unit: str) -> None:
    # No binary floating point: 1.001 Mbps is exactly 1 001 000 bit/s.
    scale = {"kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9}[unit]
    assert Rate.parse(f"{whole}.{thousandths:03d}{unit}").bps == whole * scale + thousandths * scale // 1000


@given(st.one_of(st.integers(), st.floats(allow_nan=False), st.from_regex(r"\A\s*[0-9]{1,9}(\.[0-9]{1,3})?\s*\Z")))
def test_numbers_without_units_are_refused(value: object) -> None:
    for cls in (Time, Rate, Size, Buffer):
        with pytest.raises(UnitError):
            cls.parse(value)
