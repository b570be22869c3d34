//! Packet capture: one flow's packets as they cross chosen links, for a trace file (tcplab writes
//! it as pcap, `docs/pcap.md`). Opt-in through the spec's `capture`; a simulation without it keeps
//! no `Capture` and pays one `Option` test per link transmission.
//!
//! A packet is recorded once per captured link, when its serialisation on that link ends (the
//! moment the link's random-loss model decides its fate), with the time it started onto the link
//! and the time it reaches the link's far end. Packets a queue drops never start and are not
//! recorded; packets the loss model drops are, with `lost = 1`.

use crate::ids::{FlowId, LinkId};
use crate::net::packet::{Flags, Packet, MAX_SACK_BLOCKS};
use crate::result::{Column, Table};
use crate::time::{tx_time_ns, Nanos};

/// One captured crossing. Kept compact during the run; turned into columns at the end.
#[derive(Clone, Copy, Debug)]
struct Row {
    t_ns: Nanos,
    arrive_ns: Nanos,
    link: u32,
    kind: u8,
    flags: u8,
    ecn: u8,
    dscp: u8,
    lost: bool,
    n_sack: u8,
    size_bytes: u32,
    seq: u32,
    ack: u32,
    sack: [(u32, u32); MAX_SACK_BLOCKS],
    ts_val_ns: Nanos,
    ts_ecr_ns: Nanos,
}

/// Column names of the SACK blocks, block `i` as [`SACK_START[i]`, `SACK_END[i]`) in segments.
const SACK_START: [&str; MAX_SACK_BLOCKS] = ["sack_start_0", "sack_start_1", "sack_start_2", "sack_start_3"];
const SACK_END: [&str; MAX_SACK_BLOCKS] = ["sack_end_0", "sack_end_1", "sack_end_2", "sack_end_3"];

#[derive(Debug)]
pub struct Capture {
    flow: FlowId,
    /// Whether each link (by id) is captured.
    on_link: Vec<bool>,
    /// Per link, the rate the packet being serialised started at when the link's rate changed
    /// under it (0: none did).
    started_rate_bps: Vec<u64>,
    rows: Vec<Row>,
}

impl Capture {
    pub fn new(flow: FlowId, links: &[u32], n_links: usize) -> Capture {
        let mut on_link = vec![false; n_links];
        for &l in links {
            on_link[l as usize] = true;
        }
        // Growable: a capture's size is not known in advance; 4096 rows cover a short run.
        Capture { flow, on_link, started_rate_bps: vec![0; n_links], rows: Vec::with_capacity(4096) }
    }

    /// Link `l`'s rate changed from `old_bps` while it was serialising a packet, which keeps the
    /// rate it started at (the first change's old rate, should more come before it ends).
    pub fn rate_changed(&mut self, l: LinkId, old_bps: u64) {
        let started = &mut self.started_rate_bps[l.idx()];
        if *started == 0 {
            *started = old_bps;
        }
    }

    /// `pkt` finished serialisation on link `l` at `now`. `rate_bps` is the link's rate now (the
    /// packet's, unless [`Self::rate_changed`] said otherwise), `delay_ns` its propagation delay,
    /// `lost` the loss model's verdict. Kept out of line so that the link's per-packet path stays
    /// as small as without a capture.
    #[inline(never)]
    pub fn on_tx_done(&mut self, l: LinkId, pkt: &Packet, now: Nanos, rate_bps: u64, delay_ns: Nanos, lost: bool) {
        let rate_bps = match std::mem::take(&mut self.started_rate_bps[l.idx()]) {
            0 => rate_bps,
            started => started,
        };
        if pkt.flow != self.flow || !self.on_link[l.idx()] {
            return;
        }
        let tx_ns = tx_time_ns(pkt.size_bytes, rate_bps);
        self.rows.push(Row {
            t_ns: now - tx_ns,
            arrive_ns: now + delay_ns,
            link: l.0,
            kind: pkt.kind as u8,
            flags: pkt.flags,
            ecn: pkt.ecn().bits(),
            dscp: pkt.dscp(),
            lost,
            n_sack: pkt.n_sack,
            size_bytes: pkt.size_bytes,
            seq: pkt.seq,
            ack: pkt.ack,
            sack: pkt.sack,
            ts_val_ns: pkt.ts_val_ns,
            ts_ecr_ns: pkt.ts_ecr_ns,
        });
    }

    /// The `capture` table: one row per recorded crossing, in the order the crossings ended.
    pub fn into_table(self) -> Table {
        let rows = self.rows;
        let col = |f: &dyn Fn(&Row) -> u64| Column::U64(rows.iter().map(f).collect());
        let mut t = Table::default();
        t.push("t_ns", col(&|r| r.t_ns));
        t.push("arrive_ns", col(&|r| r.arrive_ns));
        t.push("link", col(&|r| r.link as u64));
        t.push("kind", col(&|r| r.kind as u64));
        t.push("seq", col(&|r| r.seq as u64));
        t.push("ack", col(&|r| r.ack as u64));
        t.push("n_sack", col(&|r| r.n_sack as u64));
        for i in 0..MAX_SACK_BLOCKS {
            t.push(SACK_START[i], col(&|r| if i < r.n_sack as usize { r.sack[i].0 as u64 } else { 0 }));
            t.push(SACK_END[i], col(&|r| if i < r.n_sack as usize { r.sack[i].1 as u64 } else { 0 }));
        }
        t.push("ts_val_ns", col(&|r| r.ts_val_ns));
        t.push("ts_ecr_ns", col(&|r| r.ts_ecr_ns));
        t.push("size_bytes", col(&|r| r.size_bytes as u64));
        t.push("retrans", col(&|r| u64::from(r.flags & Flags::RETRANS != 0)));
        t.push("push", col(&|r| u64::from(r.flags & Flags::PUSH != 0)));
        t.push("ece", col(&|r| u64::from(r.flags & Flags::ECE != 0)));
        t.push("cwr", col(&|r| u64::from(r.flags & Flags::CWR != 0)));
        // The IP header's two ECN bits (RFC 3168 §5): 0 not ECN-capable, 2 ECT(0), 3 CE.
        t.push("ecn", col(&|r| r.ecn as u64));
        // The DSCP (RFC 2474): the DS field's six high bits.
        t.push("dscp", col(&|r| r.dscp as u64));
        t.push("lost", col(&|r| r.lost as u64));
        t
    }
}

#[cfg(test)]
mod tests {
    use crate::net::packet::Kind;
    use crate::result::SimResult;
    use crate::{simulate, Spec};

    /// One pair, 20 Mb/s, RTT 20 ms, 1 Gb/s access links; one SACK flow from 0 to 1.5 s that
    /// loses segments 5, 20 and 21 to the test hook; the run lasts 3 s so every packet drains.
    fn spec(loss: f64, capture: serde_json::Value) -> Spec {
        let mut v = serde_json::json!({
            "seed": 3, "duration_ns": 3_000_000_000u64, "start_jitter_ns": 0,
            "topology": {"kind": "dumbbell", "pairs": 1, "bottleneck_rate_bps": 20_000_000u64,
                "bottleneck_delay_ns": 10_000_000u64, "access_rate_bps": 1_000_000_000u64, "access_delay_ns": [0],
                "queue": {"kind": "droptail", "limit_pkts": 30}, "access_queue": {"kind": "droptail", "limit_pkts": 1000},
                "loss": loss},
            "flows": [{"kind": "tcp", "src": 0, "dst": 1, "stop_ns": 1_500_000_000u64, "drop_segments": [5, 20, 21]}],
        });
        if !capture.is_null() {
            v["capture"] = capture;
        }
        Spec::from_json(&v.to_string()).unwrap()
    }

    fn rows(r: &SimResult, col: &str) -> Vec<u64> {
        let c = r.capture.as_ref().expect("a capture table").col(col);
        (0..c.len()).map(|i| c.get(i) as u64).collect()
    }

    #[test]
    fn records_the_flows_packets_on_the_senders_access_links() {
        // Links of pair 0: 2 = sender1 → router1 (data), 3 = router1 → sender1 (ACKs).
        let r = simulate(&spec(0.0, serde_json::json!({"flow": 0, "links": [2, 3]}))).unwrap();
        assert_eq!(r.flow(0, "in_flight_pkts"), 0.0, "the run drained");
        let (link, kind, seq, retrans) = (rows(&r, "link"), rows(&r, "kind"), rows(&r, "seq"), rows(&r, "retrans"));
        let n = link.len();
        let data: Vec<usize> = (0..n).filter(|&i| link[i] == 2).collect();
        assert!(data.iter().all(|&i| kind[i] == Kind::Data as u64));
        assert!((0..n).filter(|&i| link[i] == 3).all(|i| kind[i] == Kind::Ack as u64));
        // Every segment sent leaves the sender except the three the hook drops before the link.
        assert_eq!(data.len() as f64, r.flow(0, "sent_pkts") - 3.0);
        let retx = data.iter().filter(|&&i| retrans[i] == 1).count();
        assert_eq!(retx as f64, r.flow(0, "retrans_pkts"));
        for s in [5, 20, 21] {
            assert!(!data.iter().any(|&i| seq[i] == s && retrans[i] == 0), "first transmission of {s} was dropped");
            assert!(data.iter().any(|&i| seq[i] == s && retrans[i] == 1), "{s} was retransmitted");
        }
        // The ACK for the hole at 5 reports segment 6 onwards in its first SACK block.
        let (ack, n_sack, s0) = (rows(&r, "ack"), rows(&r, "n_sack"), rows(&r, "sack_start_0"));
        assert!((0..n).any(|i| link[i] == 3 && ack[i] == 5 && n_sack[i] >= 1 && s0[i] == 6));
        // Times: a 1500-byte packet takes 12 µs at 1 Gb/s; access links have no delay.
        let (t, arrive, size) = (rows(&r, "t_ns"), rows(&r, "arrive_ns"), rows(&r, "size_bytes"));
        for &i in &data {
            assert_eq!(size[i], 1500);
            assert_eq!(arrive[i] - t[i], 12_000);
        }
        // One link serialises in order: its rows' start times never go back.
        assert!(data.windows(2).all(|w| t[w[0]] + 12_000 <= t[w[1]]));
        // Data segments echo the receiver's timestamps once ACKs have come back.
        let ecr = rows(&r, "ts_ecr_ns");
        assert_eq!(ecr[data[0]], 0);
        assert!(ecr[*data.last().unwrap()] > 0);
    }

    #[test]
    fn capture_does_not_change_the_run() {
        let plain = simulate(&spec(0.01, serde_json::Value::Null)).unwrap();
        let captured = simulate(&spec(0.01, serde_json::json!({"flow": 0, "links": [0]}))).unwrap();
        assert!(plain.capture.is_none());
        assert_eq!((&plain.flows, &plain.intervals, &plain.queues), (&captured.flows, &captured.intervals, &captured.queues));
        assert_eq!(plain.transmissions, captured.transmissions);
        // The bottleneck's random losses are the captured rows marked lost (one flow only).
        let lost: u64 = rows(&captured, "lost").iter().sum();
        assert!(lost > 0);
        assert_eq!(lost as f64, captured.queues.col("random_loss_pkts").get(0));
        // Link 0 carries data only: every row of the flow that crossed it, lost or not.
        assert!(rows(&captured, "kind").iter().all(|&k| k == Kind::Data as u64));
        let delivered = captured.flow(0, "delivered_pkts");
        assert_eq!(rows(&captured, "link").len() as f64 - lost as f64, delivered);
    }

    #[test]
    fn a_capture_names_a_flow_and_links_that_exist() {
        let e = crate::simulate(&spec(0.0, serde_json::json!({"flow": 1, "links": [2]}))).unwrap_err();
        assert_eq!((e.field.as_str(), e.value.as_str()), ("capture.flow", "1"));
        let e = crate::simulate(&spec(0.0, serde_json::json!({"flow": 0, "links": [6]}))).unwrap_err();
        assert_eq!((e.field.as_str(), e.allowed.as_str()), ("capture.links", "link ids below 6"));
    }
}
