//! The CCID 2 sender (RFC 4341) as Linux's `net/dccp/ccids/ccid2.c` runs it:
//!
//! - a window in packets: send while `pipe < cwnd` (`ccid2_hc_tx_send_packet`);
//! - slow start: +1 per two packets acknowledged, at most ⌈Ack Ratio/2⌉ per Ack; congestion
//!   avoidance: +1 per `cwnd` packets acknowledged (`ccid2_new_ack`, RFC 4341 §5);
//! - loss: a packet is lost when NUMDUPACK = 3 packets sent after it are acknowledged
//!   (RFC 4341 §5); `cwnd` halves, `ssthresh = max(cwnd, 2)`, once for all the losses among
//!   packets sent before the last reduction (`ccid2_congestion_event`);
//! - RTO (RFC 4341 §5, RFC 2988, as Linux TCP computes it): cwnd = 1, ssthresh = cwnd/2,
//!   everything outstanding is forgotten, Ack Ratio 1, the timeout doubles;
//! - Ack Ratio (RFC 4341 §6.1.2), never above ⌈cwnd/2⌉: by default RFC 4341's Ack congestion
//!   control (doubled in a window with lost Acks, down by 1 after cwnd/(R² − R) windows
//!   without; Linux 2.6.22), or today's Linux rule, about 10–20 Acks per window (RFC 4340 §7.5.2);
//! - ECN (RFC 4341 §5, RFC 4340 §12), with `ecn`: data and Acks leave ECT(0); a packet the Ack
//!   Vector reports ECN-marked counts as acknowledged and halves the window as a loss does, once
//!   per window (Linux `ccid2_hc_tx_packet_recv`); a CE-marked Ack counts as a lost Ack for Ack
//!   Ratio (RFC 4341 §6.1.2);
//! - no retransmission: a lost datagram is gone.

use std::collections::VecDeque;

use crate::ids::{FlowId, NodeId};
use crate::net::packet::{Ecn, Kind, Packet, RunState};
use crate::spec::{AckRatioPolicy, DccpSpec};
use crate::time::Nanos;
use crate::transport::dccp::AckVector;
use crate::transport::TimerSlot;

/// RFC 4341 §5: acknowledged later packets that make an earlier one lost.
pub const NUMDUPACK: u32 = 3;
/// Linux `CCID2_WIN_CHANGE_FACTOR`: keep the peer's Sequence Window at this many times the
/// Acks in flight (RFC 4340 §7.5.2), which sets Ack Ratio.
pub const WIN_CHANGE_FACTOR: u32 = 5;
/// RFC 4340 §11.3: Ack Ratio is a 16-bit feature.
pub const ACK_RATIO_MAX: u32 = 0xFFFF;
/// `ssthresh` before the first loss (Linux `~0U`).
pub const INFINITE_SSTHRESH: u32 = u32::MAX;
/// Fixed-point scale of `srtt` (Linux keeps it ×8, `ccid2_rtt_estimator`).
const SRTT_SHIFT: u32 = 3;
/// Fixed-point scale of `mdev` (×4).
const MDEV_SHIFT: u32 = 2;

/// RFC 3390 initial window for a payload size, as Linux `rfc3390_bytes_to_packets`:
/// min(4, max(2, ⌊4380 / size⌋)) packets.
pub fn rfc3390_packets(payload_bytes: u32) -> u32 {
    if payload_bytes <= 1095 {
        4
    } else if payload_bytes > 2190 {
        2
    } else {
        3
    }
}

/// Linux `ccid2_change_l_ack_ratio`: 0 or above ⌈cwnd/2⌉ (RFC 4341 §6.1.2 (2)) becomes
/// ⌈cwnd/2⌉; the feature is 16 bits wide.
pub fn bounded_ack_ratio(val: u32, cwnd: u32) -> u32 {
    let max_ratio = cwnd.div_ceil(2).max(1);
    let v = if val == 0 || val > max_ratio { max_ratio } else { val };
    v.min(ACK_RATIO_MAX)
}

/// Linux `ccid2_rtt_estimator` (TCP's estimator before RFC 6298's rewrite): srtt ×8 and mdev
/// ×4 in fixed point, `rttvar` the largest mdev of the last flight, decayed once per flight,
/// never below the minimum RTO; RTO = srtt + rttvar, at most `max_rto`.
#[derive(Clone, Copy, Debug)]
pub struct Ccid2Rtt {
    /// srtt << SRTT_SHIFT, ns; 0 before the first sample.
    srtt8: i64,
    /// mdev << MDEV_SHIFT, ns.
    mdev4: i64,
    mdev_max: i64,
    rttvar: i64,
    /// GSS when the current flight began (decay once per flight).
    rtt_seq: u32,
    min_rto_ns: i64,
    max_rto_ns: i64,
    pub rto_ns: Nanos,
}

impl Ccid2Rtt {
    pub fn new(initial_rto_ns: Nanos, min_rto_ns: Nanos, max_rto_ns: Nanos) -> Self {
        Ccid2Rtt { srtt8: 0, mdev4: 0, mdev_max: 0, rttvar: 0, rtt_seq: 0, min_rto_ns: min_rto_ns as i64, max_rto_ns: max_rto_ns as i64, rto_ns: initial_rto_ns }
    }

    pub fn srtt_ns(&self) -> Nanos {
        (self.srtt8 >> SRTT_SHIFT) as Nanos
    }

    /// One sample `mrtt`; `gar` is the greatest Acknowledgement Number received, `gss` the
    /// greatest sequence number sent.
    pub fn sample(&mut self, mrtt: Nanos, gar: u32, gss: u32) {
        let mut m = (mrtt as i64).max(1);
        if self.srtt8 == 0 {
            self.srtt8 = m << SRTT_SHIFT;
            self.mdev4 = m << 1; // mdev = m/2, ×4
            self.mdev_max = self.mdev4.max(self.min_rto_ns);
            self.rttvar = self.mdev_max;
            self.rtt_seq = gss;
        } else {
            m -= self.srtt8 >> SRTT_SHIFT;
            self.srtt8 += m; // srtt += (m − srtt)/8
            if m < 0 {
                m = -m;
                m -= self.mdev4 >> MDEV_SHIFT;
                // A sample below srtt − mdev moves mdev 8 times less (Sarolahti & Kuznetsov 2002).
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= self.mdev4 >> MDEV_SHIFT;
            }
            self.mdev4 += m; // mdev += (|err| − mdev)/4
            if self.mdev4 > self.mdev_max {
                self.mdev_max = self.mdev4;
                if self.mdev_max > self.rttvar {
                    self.rttvar = self.mdev_max;
                }
            }
            // Decay rttvar toward the flight's largest mdev once per flight.
            if gar > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = gss;
                self.mdev_max = self.min_rto_ns;
            }
        }
        self.rto_ns = ((self.srtt8 >> SRTT_SHIFT) + self.rttvar).min(self.max_rto_ns) as Nanos;
    }

    /// RFC 2988 (5.5) as Linux does it: the timeout itself doubles, until the next sample.
    pub fn back_off(&mut self) {
        self.rto_ns = (self.rto_ns.saturating_mul(2) as i64).min(self.max_rto_ns) as Nanos;
    }
}

/// One packet sent and not yet acknowledged or declared lost (Linux `struct ccid2_seq`).
#[derive(Clone, Copy, Debug)]
struct SentPacket {
    sent_ns: Nanos,
    acked: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Ccid2Stats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    /// Packets declared lost by the NUMDUPACK rule (an RTO forgets packets without counting).
    pub lost_pkts: u64,
    /// Window reductions on loss (each halves cwnd).
    pub congestion_events: u64,
    /// Window reductions on an ECN mark (each halves cwnd).
    pub ecn_reductions: u64,
    pub rto_count: u64,
    pub acks_received: u64,
}

#[derive(Debug)]
pub struct Ccid2Sender {
    flow: FlowId,
    dst: NodeId,
    packet_bytes: u32,
    payload_bytes: u32,
    /// Congestion window, packets.
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Packets sent and neither acknowledged nor lost (RFC 4341 §5).
    pub pipe: u32,
    /// Acknowledged packets counted toward the next increase (RFC 3465-style).
    packets_acked: u32,
    /// Ack Ratio this side asks of the receiver (RFC 4340 §11.3).
    pub ack_ratio: u32,
    policy: AckRatioPolicy,
    /// Data leaves ECN-capable (ECT(0)) and marks reported in the Ack Vector halve the window.
    ecn: bool,
    dscp: u8,
    /// The receiver's Sequence Window (RFC 4340 §7.5.2), packets.
    seq_window: u32,
    /// Sequence number of the last DCCP-Ack received (Ack loss detection, RFC 4341 §6.1.2).
    last_ack_seq: Option<u32>,
    /// Acks were lost in the current window (Ack Ratio already doubled for it).
    ack_loss: bool,
    /// Data packets sent since Ack Ratio last changed or the last window with Ack loss ended.
    ar_sent: u64,
    /// Sequence number of `hist[0]`.
    tail: u32,
    next_seq: u32,
    hist: VecDeque<SentPacket>,
    /// Greatest Acknowledgement Number received (RFC 4340 §7.1 GAR).
    high_ack: Option<u32>,
    /// When the window was last reduced.
    last_cong_ns: Nanos,
    pub rtt: Ccid2Rtt,
    /// The application has data (between the flow's start and stop).
    pub active: bool,
    pub rto_timer: TimerSlot,
    pub stats: Ccid2Stats,
}

impl Ccid2Sender {
    pub fn new(flow: FlowId, dst: NodeId, spec: &DccpSpec) -> Self {
        let payload = spec.payload_bytes();
        let cwnd = spec.init_cwnd_pkts.unwrap_or_else(|| rfc3390_packets(payload));
        Ccid2Sender {
            flow,
            dst,
            packet_bytes: spec.packet_bytes,
            dscp: spec.dscp,
            payload_bytes: payload,
            cwnd,
            ssthresh: INFINITE_SSTHRESH,
            pipe: 0,
            packets_acked: 0,
            // `ccid2_hc_tx_init`: the Ack Ratio in force, at most ⌈cwnd/2⌉.
            ack_ratio: bounded_ack_ratio(spec.init_ack_ratio, cwnd),
            policy: spec.ack_ratio_policy,
            ecn: spec.ecn,
            seq_window: spec.seq_window_pkts,
            last_ack_seq: None,
            ack_loss: false,
            ar_sent: 0,
            tail: 0,
            next_seq: 0,
            hist: VecDeque::with_capacity(1024),
            high_ack: None,
            last_cong_ns: 0,
            rtt: Ccid2Rtt::new(spec.initial_rto_ns, spec.min_rto_ns, spec.max_rto_ns),
            active: false,
            rto_timer: TimerSlot::default(),
            stats: Ccid2Stats::default(),
        }
    }

    pub fn in_flight_bytes(&self) -> u64 {
        self.pipe as u64 * self.payload_bytes as u64
    }

    pub fn payload_bytes(&self) -> u32 {
        self.payload_bytes
    }

    /// The slow-start threshold in packets, or `None` while it is still infinite.
    pub fn ssthresh_pkts(&self) -> Option<u32> {
        (self.ssthresh != INFINITE_SSTHRESH).then_some(self.ssthresh)
    }

    /// The application starts writing (iperf connects).
    pub fn start(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.active = true;
        self.last_cong_ns = now;
        self.try_send(now, out);
    }

    fn set_ack_ratio(&mut self, val: u32) {
        self.ack_ratio = bounded_ack_ratio(val, self.cwnd);
    }

    /// After the window shrank. Linux `ccid2_check_l_ack_ratio`: an Ack Ratio above cwnd would
    /// leave a whole window unacknowledged; bring it to cwnd/2 (at least 1). RFC 4341 §6.1.2
    /// (Linux 2.6.22 `ccid2_change_cwnd`): keep it at most ⌈cwnd/2⌉.
    fn check_ack_ratio(&mut self) {
        match self.policy {
            AckRatioPolicy::Linux if self.ack_ratio > self.cwnd => self.set_ack_ratio((self.cwnd / 2).max(1)),
            AckRatioPolicy::Rfc4341 => self.set_ack_ratio(self.ack_ratio),
            _ => {}
        }
    }

    /// RFC 4341 §6.1.2 after each data packet sent (Linux 2.6.22 `ccid2_hc_tx_packet_sent`):
    /// a window after Ack loss ends the loss episode; without Ack loss, R decreases by 1 every
    /// cwnd/(R² − R) windows, i.e. every cwnd²/(R² − R) packets.
    fn ack_ratio_on_sent(&mut self) {
        self.ar_sent += 1;
        if self.ack_loss {
            if self.ar_sent >= self.cwnd as u64 {
                self.ar_sent = 0;
                self.ack_loss = false;
            }
        } else if self.ack_ratio > 1 {
            let r = self.ack_ratio as u64;
            let cwnd = self.cwnd as u64;
            if self.ar_sent >= cwnd * cwnd / (r * r - r) {
                self.set_ack_ratio(self.ack_ratio - 1);
                self.ar_sent = 0;
            }
        } else {
            self.ar_sent = 0;
        }
    }

    /// RFC 4341 §6.1.2: a gap in the Acks' sequence numbers is Ack loss, and a CE-marked Ack
    /// counts as one; double Ack Ratio, once per window.
    fn ack_ratio_on_ack(&mut self, ack_seq: u32, marked: bool) {
        let lost = marked || self.last_ack_seq.is_some_and(|l| ack_seq > l.wrapping_add(1));
        if self.last_ack_seq.is_none_or(|l| ack_seq > l) {
            self.last_ack_seq = Some(ack_seq);
        }
        if lost && !self.ack_loss {
            self.set_ack_ratio(self.ack_ratio * 2);
            self.ack_loss = true;
            self.ar_sent = 0;
        }
    }

    fn try_send(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        while self.active && self.pipe < self.cwnd {
            let mut p = Packet::new(self.flow, self.dst, Kind::DccpData, self.packet_bytes);
            p.seq = self.next_seq;
            p.ack = self.high_ack.map_or(0, |h| h + 1);
            p.set_ack_ratio(self.ack_ratio as u16);
            p.set_dscp(self.dscp);
            p.ts_val_ns = now;
            if self.ecn {
                p.set_ecn(Ecn::ECT0);
            }
            self.next_seq += 1;
            self.hist.push_back(SentPacket { sent_ns: now, acked: false });
            self.pipe += 1;
            self.stats.sent_pkts += 1;
            self.stats.sent_bytes += self.packet_bytes as u64;
            if self.policy == AckRatioPolicy::Rfc4341 {
                self.ack_ratio_on_sent();
            }
            // `ccid2_hc_tx_packet_sent` restarts the timer with every packet.
            self.rto_timer.deadline = Some(now + self.rtt.rto_ns);
            out.push(p);
        }
    }

    /// Linux `ccid2_new_ack`: window growth, Ack Ratio, RTT sample for one packet newly
    /// acknowledged.
    fn new_ack(&mut self, sent_ns: Nanos, maxincr: &mut u32, now: Nanos) {
        // Acks per window: what the receiver's Sequence Window must hold (RFC 4340 §7.5.2).
        let r_seq_used = self.cwnd / self.ack_ratio;
        let linux = self.policy == AckRatioPolicy::Linux;
        if !linux || r_seq_used < self.seq_window {
            if self.cwnd < self.ssthresh {
                if *maxincr > 0 {
                    self.packets_acked += 1;
                    if self.packets_acked >= 2 {
                        self.cwnd += 1;
                        *maxincr -= 1;
                        self.packets_acked = 0;
                    }
                }
            } else {
                self.packets_acked += 1;
                if self.packets_acked >= self.cwnd {
                    self.cwnd += 1;
                    self.packets_acked = 0;
                }
            }
        }
        if linux {
            if r_seq_used * WIN_CHANGE_FACTOR >= self.seq_window {
                self.set_ack_ratio(self.ack_ratio * 2);
            } else if r_seq_used * WIN_CHANGE_FACTOR < self.seq_window / 2 {
                self.set_ack_ratio((self.ack_ratio / 2).max(1));
            }
        }
        let gss = self.next_seq.saturating_sub(1);
        self.rtt.sample(now - sent_ns, self.high_ack.unwrap_or(0), gss);
    }

    /// Linux `ccid2_congestion_event`: halve the window, once for the losses and marks of one
    /// window; true when it did.
    fn congestion_event(&mut self, sent_ns: Nanos, now: Nanos) -> bool {
        if sent_ns < self.last_cong_ns {
            return false; // sent before the last reduction: the same congestion event
        }
        self.last_cong_ns = now;
        self.cwnd = (self.cwnd / 2).max(1);
        self.ssthresh = self.cwnd.max(2);
        self.check_ack_ratio();
        true
    }

    /// A DCCP-Ack arrived (`ccid2_hc_tx_packet_recv`).
    pub fn on_ack(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        self.stats.acks_received += 1;
        if self.policy == AckRatioPolicy::Rfc4341 {
            self.ack_ratio_on_ack(p.seq, p.ecn() == Ecn::CE);
        }
        if !self.hist.is_empty() && p.ack < self.next_seq {
            self.process_ack(p, now);
        }
        self.try_send(now, out);
    }

    fn process_ack(&mut self, p: &Packet, now: Nanos) {
        let ackno = p.ack;
        if self.high_ack.is_none_or(|h| ackno > h) {
            self.high_ack = Some(ackno);
        }
        let mut maxincr = if self.cwnd < self.ssthresh { self.ack_ratio.div_ceil(2) } else { 0 };

        // Mark what the Ack Vector reports received, highest first, as Linux walks it; a
        // packet reported ECN-marked is acknowledged too, and is a congestion event.
        let last = self.next_seq - 1;
        for (lo, hi, state) in AckVector::reported(ackno, &p.ackvec_runs()) {
            if hi < self.tail {
                break;
            }
            for seq in (lo.max(self.tail)..=hi.min(last)).rev() {
                let e = &mut self.hist[(seq - self.tail) as usize];
                if !e.acked {
                    e.acked = true;
                    self.pipe -= 1;
                    let sent = e.sent_ns;
                    if state == RunState::Marked {
                        if self.congestion_event(sent, now) {
                            self.stats.ecn_reductions += 1;
                        }
                    } else {
                        self.new_ack(sent, &mut maxincr, now);
                    }
                }
            }
        }

        // NUMDUPACK (RFC 4341 §5): find the third acknowledged packet down from the greatest
        // Acknowledgement Number; every packet below it not acknowledged is lost.
        let high = self.high_ack.unwrap_or(0).clamp(self.tail, last);
        let mut found = 0;
        let mut idx = (high - self.tail) as usize;
        loop {
            if self.hist[idx].acked {
                found += 1;
                if found == NUMDUPACK {
                    break;
                }
            }
            if idx == 0 {
                break;
            }
            idx -= 1;
        }
        if found == NUMDUPACK {
            for i in (0..idx).rev() {
                let e = self.hist[i];
                if !e.acked {
                    self.stats.lost_pkts += 1;
                    self.pipe -= 1;
                    if self.congestion_event(e.sent_ns, now) {
                        self.stats.congestion_events += 1;
                    }
                }
            }
            self.hist.drain(..idx);
            self.tail += idx as u32;
        }
        while self.hist.front().is_some_and(|e| e.acked) {
            self.hist.pop_front();
            self.tail += 1;
        }
        self.rto_timer.deadline = if self.pipe == 0 { None } else { Some(now + self.rtt.rto_ns) };
    }

    /// The retransmission timer expired (`ccid2_hc_tx_rto_expire`).
    pub fn on_rto(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.stats.rto_count += 1;
        self.rtt.back_off();
        self.ssthresh = (self.cwnd / 2).max(2);
        self.cwnd = 1;
        self.pipe = 0;
        // Forget everything outstanding: Acks for it are ignored from now on.
        self.tail = self.next_seq;
        self.hist.clear();
        self.packets_acked = 0;
        self.set_ack_ratio(1);
        self.ack_loss = false;
        self.ar_sent = 0;
        self.rto_timer.deadline = Some(now + self.rtt.rto_ns);
        self.try_send(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Run, MAX_ACKVEC_RUNS};
    use crate::time::NS_PER_MS;

    fn spec(extra: serde_json::Value) -> DccpSpec {
        let mut v = serde_json::json!({"src": 0, "dst": 1});
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value(v).unwrap()
    }

    /// A DCCP-Ack with Acknowledgement Number `ackno` and these run lengths, alternately
    /// received and not received.
    fn ack(ackno: u32, lens: &[u16]) -> Packet {
        let runs: Vec<Run> = lens.iter().enumerate().map(|(i, &l)| if i % 2 == 0 { Run::received(l) } else { Run::not_received(l) }).collect();
        ack_of(ackno, &runs)
    }

    fn ack_of(ackno: u32, runs: &[Run]) -> Packet {
        let mut p = Packet::new(FlowId(0), NodeId(0), Kind::DccpAck, 48);
        p.ack = ackno;
        p.set_ackvec(runs);
        p
    }

    fn sender(cwnd: u32) -> (Ccid2Sender, Vec<Packet>) {
        let mut s = Ccid2Sender::new(FlowId(0), NodeId(1), &spec(serde_json::json!({"init_cwnd_pkts": cwnd})));
        let mut out = vec![];
        s.start(0, &mut out);
        (s, out)
    }

    #[test]
    fn defaults_follow_linux() {
        let s = Ccid2Sender::new(FlowId(0), NodeId(1), &spec(serde_json::json!({})));
        // 1424-byte payload: RFC 3390 gives 3 packets; Ack Ratio 2 ≤ ⌈3/2⌉; RTO 3 s.
        assert_eq!((s.cwnd, s.ack_ratio, s.rtt.rto_ns), (3, 2, 3_000 * NS_PER_MS));
        assert_eq!((rfc3390_packets(536), rfc3390_packets(1095), rfc3390_packets(1096), rfc3390_packets(2191)), (4, 4, 3, 2));
    }

    #[test]
    fn ack_ratio_bounds() {
        // RFC 4341 §6.1.2 (2): at most ⌈cwnd/2⌉; 0 means "as large as allowed".
        assert_eq!(bounded_ack_ratio(2, 1), 1);
        assert_eq!(bounded_ack_ratio(2, 3), 2);
        assert_eq!(bounded_ack_ratio(4, 7), 4);
        assert_eq!(bounded_ack_ratio(5, 7), 4);
        assert_eq!(bounded_ack_ratio(0, 10), 5);
        assert_eq!(bounded_ack_ratio(1 << 20, 1 << 24), ACK_RATIO_MAX);
        // The sender keeps cwnd / R in [10, 20): the receiver's Sequence Window of 100 holds
        // five windows of Acks (RFC 4340 §7.5.2, Linux CCID2_WIN_CHANGE_FACTOR).
        let mut s = Ccid2Sender::new(FlowId(0), NodeId(1), &spec(serde_json::json!({"init_cwnd_pkts": 400, "ack_ratio_policy": "linux"})));
        let mut out = vec![];
        s.start(0, &mut out);
        assert_eq!(out.len(), 400);
        let mut t = 0;
        for k in 0..400u32 {
            t += 1;
            s.on_ack(&ack(k, &[k as u16 + 1]), t * NS_PER_MS, &mut out);
            let per_window = s.cwnd / s.ack_ratio;
            assert!(s.ack_ratio <= s.cwnd.div_ceil(2));
            // R starts at 2 and doubles once per newly acknowledged packet until it is there.
            if k >= 4 {
                assert!((10..20).contains(&per_window), "ack {k}: cwnd {} R {}", s.cwnd, s.ack_ratio);
            }
        }
        // After a halving, R is never above cwnd; after an RTO it is 1.
        s.on_rto(t * NS_PER_MS, &mut out);
        assert_eq!((s.cwnd, s.ack_ratio, s.pipe), (1, 1, 1));
        assert_eq!(out.last().unwrap().ack_ratio(), 1);
    }

    #[test]
    fn rfc4341_ack_congestion_control() {
        // R decreases by 1 after cwnd/(R² − R) windows = cwnd²/(R² − R) packets without Ack loss:
        // R = 3 at cwnd 30 after 900/6 = 150 packets, then R = 2 after 900/2 = 450 more.
        let (mut s, mut out) = sender(30);
        s.ack_ratio = 3;
        s.ar_sent = 0;
        for i in 1..=600u64 {
            s.ack_ratio_on_sent();
            let want = if i < 150 { 3 } else if i < 600 { 2 } else { 1 };
            assert_eq!(s.ack_ratio, want, "after {i} packets");
        }
        // A gap in the Acks' sequence numbers doubles R, once for the window.
        s.ack_ratio = 2;
        for (ack_seq, want) in [(0, 2), (1, 2), (3, 4), (5, 4)] {
            let mut a = ack(0, &[1]);
            a.seq = ack_seq;
            s.on_ack(&a, NS_PER_MS, &mut out);
            assert_eq!(s.ack_ratio, want, "ack {ack_seq}");
        }
        // Never above ⌈cwnd/2⌉.
        s.cwnd = 5;
        s.check_ack_ratio();
        assert_eq!(s.ack_ratio, 3);
    }

    #[test]
    fn a_packet_is_lost_when_three_later_ones_are_acknowledged() {
        let (mut s, mut out) = sender(20);
        s.ssthresh = 10; // congestion avoidance: no growth noise
        s.cwnd = 20;
        // 0–4 received, 5 missing, 6–7 received: only two later packets acknowledged.
        s.on_ack(&ack(7, &[2, 1, 5]), NS_PER_MS, &mut out);
        // Seven acknowledged, seven more sent: 5 still counts in pipe.
        assert_eq!((s.stats.lost_pkts, s.stats.congestion_events, s.pipe, out.len()), (0, 0, 20, 27));
        // 8 received as well: three later packets acknowledged, 5 is lost, the window halves.
        s.on_ack(&ack(8, &[3, 1, 5]), 2 * NS_PER_MS, &mut out);
        assert_eq!((s.stats.lost_pkts, s.stats.congestion_events), (1, 1));
        assert_eq!((s.cwnd, s.ssthresh), (10, 10));
        // 27 sent, 8 acknowledged, 1 lost: 18 in flight, above the halved window: nothing sent.
        assert_eq!((s.pipe, out.len()), (18, 27));
        // 9 missing too: another loss, but of a packet sent before the reduction — same event.
        // (10, 11, 12 acknowledged make 10 acknowledged in congestion avoidance: cwnd + 1, as
        // Linux, which keeps its counter across the reduction.)
        s.on_ack(&ack(12, &[3, 1, 1]), 3 * NS_PER_MS, &mut out);
        assert_eq!((s.stats.lost_pkts, s.stats.congestion_events, s.cwnd), (2, 1, 11));
    }

    #[test]
    fn a_hole_needs_three_acknowledged_packets_above_it_not_three_acks() {
        // Packets 0 and 2 acked, 1 missing; then one ack reports 3, 4, 5 at once.
        let (mut s, mut out) = sender(10);
        s.ssthresh = 5;
        s.on_ack(&ack(2, &[1, 1, 1]), NS_PER_MS, &mut out);
        assert_eq!(s.stats.lost_pkts, 0);
        s.on_ack(&ack(5, &[4, 1, 1]), NS_PER_MS, &mut out);
        assert_eq!(s.stats.lost_pkts, 1);
        assert!(MAX_ACKVEC_RUNS >= 3);
    }

    #[test]
    fn slow_start_grows_by_half_per_acked_packet_capped_per_ack() {
        let (mut s, mut out) = sender(10);
        // Ack Ratio 2 (R ≤ ⌈10/2⌉ and cwnd/R = 5 < 10 halves it to 1 on the first new ack).
        // One ack of 10 packets: growth capped at ⌈R/2⌉ = 1 per ack.
        s.on_ack(&ack(9, &[10]), NS_PER_MS, &mut out);
        assert_eq!(s.cwnd, 11);
        // Acks of 2 packets each: +1 per ack (one per two packets).
        let (mut s, mut out) = sender(10);
        for k in 0..5u32 {
            s.on_ack(&ack(2 * k + 1, &[2 * k as u16 + 2]), NS_PER_MS, &mut out);
        }
        assert_eq!(s.cwnd, 15);
    }

    #[test]
    fn congestion_avoidance_adds_one_per_window() {
        let (mut s, mut out) = sender(10);
        s.ssthresh = 10;
        for k in 0..10u32 {
            s.on_ack(&ack(k, &[k as u16 + 1]), NS_PER_MS, &mut out);
        }
        assert_eq!(s.cwnd, 11);
    }

    #[test]
    fn rto_follows_linux() {
        let mut r = Ccid2Rtt::new(3_000 * NS_PER_MS, 200 * NS_PER_MS, 64_000 * NS_PER_MS);
        r.sample(100 * NS_PER_MS, 0, 10);
        // srtt 100 ms, mdev 50 ms: rttvar = max(4·50 ms, 200 ms) = 200 ms; RTO 300 ms.
        assert_eq!((r.srtt_ns(), r.rto_ns), (100 * NS_PER_MS, 300 * NS_PER_MS));
        r.sample(180 * NS_PER_MS, 5, 20);
        // srtt += 80/8 = 110 ms; mdev·4 = 200 + (80 − 50) = 230 ms → rttvar 230 ms.
        assert_eq!((r.srtt_ns(), r.rto_ns), (110 * NS_PER_MS, 340 * NS_PER_MS));
        r.back_off();
        assert_eq!(r.rto_ns, 680 * NS_PER_MS);
        for _ in 0..20 {
            r.back_off();
        }
        assert_eq!(r.rto_ns, 64_000 * NS_PER_MS);
    }

    #[test]
    fn rto_forgets_the_flight_and_restarts_from_one_packet() {
        let (mut s, mut out) = sender(8);
        assert_eq!(out.len(), 8);
        s.on_rto(3_000 * NS_PER_MS, &mut out);
        assert_eq!((s.cwnd, s.ssthresh, s.pipe, out.len()), (1, 4, 1, 9));
        assert_eq!(s.rtt.rto_ns, 6_000 * NS_PER_MS);
        // An ack for the forgotten flight changes nothing; one for the new packet counts.
        s.on_ack(&ack(7, &[8]), 3_100 * NS_PER_MS, &mut out);
        assert_eq!((s.pipe, out.len()), (1, 9));
        s.on_ack(&ack(8, &[9]), 3_200 * NS_PER_MS, &mut out);
        assert_eq!(s.pipe, s.cwnd);
        assert_eq!(s.rtt.srtt_ns(), 200 * NS_PER_MS);
    }

    #[test]
    fn with_ecn_data_leaves_ect0_and_without_it_does_not() {
        let (_, out) = sender(4);
        assert!(out.iter().all(|p| p.ecn() == Ecn::NOT_ECT));
        let mut s = Ccid2Sender::new(FlowId(0), NodeId(1), &spec(serde_json::json!({"init_cwnd_pkts": 4, "ecn": true})));
        let mut out = vec![];
        s.start(0, &mut out);
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|p| p.ecn() == Ecn::ECT0));
    }

    #[test]
    fn a_marked_packet_is_acknowledged_and_halves_the_window_once_per_window() {
        let (mut s, mut out) = sender(20);
        s.ssthresh = 10; // congestion avoidance
        let srtt_before = s.rtt.srtt_ns();
        // 0–3 received, 4 marked, 5–7 received: 4 leaves the pipe, the window halves, no loss.
        s.on_ack(&ack_of(7, &[Run::received(3), Run::marked(1), Run::received(4)]), 10 * NS_PER_MS, &mut out);
        assert_eq!((s.stats.ecn_reductions, s.stats.congestion_events, s.stats.lost_pkts), (1, 0, 0));
        assert_eq!((s.cwnd, s.ssthresh), (10, 10));
        // 20 sent, 8 acknowledged (the marked one too): 12 in flight, above cwnd: nothing sent.
        assert_eq!((s.pipe, out.len()), (12, 20));
        assert!(s.rtt.srtt_ns() > srtt_before, "the unmarked packets gave RTT samples");
        // Another mark, on a packet sent before the reduction: the same congestion event.
        s.on_ack(&ack_of(10, &[Run::received(1), Run::marked(1), Run::received(1), Run::marked(1), Run::received(7)]), 11 * NS_PER_MS, &mut out);
        assert_eq!((s.stats.ecn_reductions, s.cwnd), (1, 10));
        // 9 in flight after it, below cwnd 10: packet 20 goes out (at 11 ms, after the reduction).
        assert_eq!((s.pipe, out.len(), out[20].seq), (10, 21, 20));
        // The marked packets count as acknowledged for NUMDUPACK: nothing below 10 is lost.
        assert_eq!(s.stats.lost_pkts, 0);
        // Packet 20 arrives marked: sent after the reduction, so a second halving.
        s.on_ack(&ack_of(20, &[Run::marked(1), Run::not_received(9), Run::received(11)]), 20 * NS_PER_MS, &mut out);
        assert_eq!((s.stats.ecn_reductions, s.cwnd, s.ssthresh), (2, 5, 5));
    }

    #[test]
    fn a_marked_ack_counts_as_a_lost_ack_for_ack_ratio() {
        let (mut s, mut out) = sender(30);
        s.ack_ratio = 2;
        let mut a = ack(0, &[1]);
        a.seq = 0;
        s.on_ack(&a, NS_PER_MS, &mut out);
        assert_eq!(s.ack_ratio, 2);
        let mut a = ack(1, &[2]);
        a.seq = 1; // no gap, but CE-marked
        a.set_ecn(Ecn::CE);
        s.on_ack(&a, 2 * NS_PER_MS, &mut out);
        assert_eq!(s.ack_ratio, 4);
    }
}
