//! `--pcap-fwd FILE`: every packet the forward direction reads from its TUN device, as the
//! router's queue sees it — its first [`SNAPLEN`] bytes, stamped with the router's arrival time
//! (the time the queue's drop decision uses) — as a nanosecond libpcap file of raw IPv4 packets,
//! so tshark can put the router's view beside captures at the hosts.
//!
//! Arrival times come from CLOCK_MONOTONIC (the router's clock); the file carries them as wall
//! time through one offset measured when the file is opened, so they line up with captures made
//! on the same host (dumpcap stamps with CLOCK_REALTIME).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::sys;

/// Bytes kept of each packet: IPv4 and TCP headers with their options (as `dumpcap -s 96`).
pub const SNAPLEN: usize = 96;

pub struct Capture {
    out: PcapWriter<BufWriter<File>>,
    /// Wall-clock time minus monotonic time, ns.
    offset_ns: i128,
}

impl Capture {
    pub fn create(path: &str) -> io::Result<Capture> {
        let file = BufWriter::with_capacity(1 << 20, File::create(path)?);
        let header = PcapHeader {
            snaplen: SNAPLEN as u32,
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::native(),
            ..Default::default()
        };
        let out = PcapWriter::with_header(file, header).map_err(to_io)?;
        Ok(Capture {
            out,
            offset_ns: sys::wall_ns() as i128 - sys::now_ns() as i128,
        })
    }

    /// Record `packet`, read at monotonic time `now_ns`.
    pub fn record(&mut self, now_ns: u64, packet: &[u8]) -> io::Result<()> {
        let ns = (now_ns as i128 + self.offset_ns).max(0) as u64;
        let kept = &packet[..packet.len().min(SNAPLEN)];
        self.out
            .write_packet(&PcapPacket::new(
                Duration::from_nanos(ns),
                packet.len() as u32,
                kept,
            ))
            .map_err(to_io)?;
        Ok(())
    }

    pub fn finish(self) -> io::Result<()> {
        self.out.into_writer().flush()
    }
}

fn to_io(e: pcap_file::PcapError) -> io::Error {
    io::Error::other(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file is a nanosecond libpcap of raw IPv4 (link type 101) with the arrival times and
    /// lengths given, packets cut at SNAPLEN bytes.
    #[test]
    fn writes_nanosecond_raw_ip_records() {
        let dir =
            std::env::temp_dir().join(format!("tcplab-router-capture-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fwd.pcap");
        let mut c = Capture::create(path.to_str().unwrap()).unwrap();
        let offset = c.offset_ns;
        let big = vec![0x45u8; 1500];
        c.record(1_000_000_123, &big).unwrap();
        c.record(1_000_120_123, &big[..60]).unwrap();
        c.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let u32_at = |i: usize| u32::from_ne_bytes(bytes[i..i + 4].try_into().unwrap());
        assert_eq!(u32_at(0), 0xa1b2_3c4d, "nanosecond magic");
        assert_eq!(
            (u32_at(16), u32_at(20)),
            (SNAPLEN as u32, 101),
            "snaplen, LINKTYPE_RAW"
        );
        // Record 1 at 24: ts_sec, ts_nsec, incl_len, orig_len, then SNAPLEN bytes.
        let ts = |i: usize| u32_at(i) as i128 * 1_000_000_000 + u32_at(i + 4) as i128;
        assert_eq!(ts(24) - offset, 1_000_000_123);
        assert_eq!((u32_at(32), u32_at(36)), (SNAPLEN as u32, 1500));
        let second = 24 + 16 + SNAPLEN;
        assert_eq!(ts(second) - ts(24), 120_000);
        assert_eq!((u32_at(second + 8), u32_at(second + 12)), (60, 60));
        assert_eq!(bytes.len(), second + 16 + 60);
    }
}
