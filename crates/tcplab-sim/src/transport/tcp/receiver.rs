//! The TCP receiver: cumulative ACKs, SACK blocks (RFC 2018), delayed ACKs (RFC 1122 §4.2.3.2 as
//! Linux does it: every second full segment, a 40 ms timer, an immediate ACK for data that
//! fills the last hole and for duplicates), and RFC 7323 timestamp echo.
//!
//! With `sack_compression` the ACK policy is Linux's (`__tcp_ack_snd_check`, ≥ 4.20): the first
//! ACKs of a connection are immediate (quick-ACK mode: rcv_wnd / 2·MSS of them, the initial
//! window being 10 segments, or the SYN's 64 KB with autotuning: 16), as after a duplicate or a
//! gap longer than the receiver's RTO (16);
//! while out-of-order data is held, the first three ACKs for a given rcv_nxt are immediate and the
//! rest are compressed: one ACK after min(1 ms, RTT/20) plus the timer's 100 µs of slack, or after
//! 44 held back (`tcp_comp_sack_delay_ns`, `tcp_comp_sack_slack_ns`, `tcp_comp_sack_nr`); and
//! at once before a segment starts a SACK block or extends one below the two most recent, so
//! that every block is reported among the first two before it moves down
//! (`tcp_sack_new_ofo_skb`, Linux ≥ 5.8). A receiver without SACK keeps the quick-ACK mode
//! and ACKs every out-of-order segment at once. Without `sack_compression` every out-of-order
//! segment is ACKed at once, as RFC 5681 §4.2 says and ns-2 does.

use std::collections::VecDeque;

use super::rcvbuf::RcvBuf;
use super::rtt::ts_rtt_ns;
use super::setup::{self, Step};
use crate::ids::{FlowId, NodeId};
use crate::measure::Histogram;
use crate::net::packet::{Ecn, Flags, Kind, Packet, MAX_SACK_BLOCKS};
use crate::spec::TcpSpec;
use crate::time::Nanos;
use crate::transport::TimerSlot;

/// Linux `TCP_MAX_QUICKACKS`.
const MAX_QUICKACKS: u32 = 16;
/// Quick ACKs after a CE mark starts the echo (`tcp_enter_quickack_mode(sk, 2)`).
const ECN_QUICKACKS: u32 = 2;
/// Linux's initial receive window, segments (`TCP_DEFAULT_INIT_RCVWND`): it sizes the quick-ACK
/// mode a connection starts in.
const INIT_RCVWND_SEGS: u32 = 10;
/// Linux `tcp_comp_sack_nr`, `tcp_comp_sack_delay_ns` and `tcp_comp_sack_slack_ns` (defaults).
const COMP_SACK_NR: u32 = 44;
const COMP_SACK_DELAY_NS: Nanos = 1_000_000;
const COMP_SACK_SLACK_NS: Nanos = 100_000;
/// Linux `TCP_FASTRETRANS_THRESH`: duplicate ACKs sent before compression starts.
const FASTRETRANS_THRESH: u32 = 3;
/// Linux `TCP_SACK_BLOCKS_EXPECTED` (≥ 5.8): the SACK blocks an ACK is counted on to carry. A
/// compressed ACK is sent before a block would fall below this many more recent ones.
const SACK_BLOCKS_EXPECTED: usize = 2;
/// The receiver's RTO (it sends no data, so Linux's stays at `TCP_TIMEOUT_INIT`): a longer gap
/// between segments restarts quick-ACK mode (`tcp_event_data_recv`).
const RECEIVER_RTO_NS: Nanos = 1_000_000_000;

/// An out-of-order range [start, end) held by the receiver.
#[derive(Clone, Copy, Debug)]
struct OooRange {
    start: u32,
    end: u32,
    /// When it last grew, for RFC 2018's "most recently received first" block order.
    touched: u64,
}

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    /// Data packets that reached the receiver (duplicates included).
    pub delivered_pkts: u64,
    /// Bytes delivered in order to the application.
    pub goodput_bytes: u64,
    pub acks_sent: u64,
    /// Data packets that arrived marked CE (ECN).
    pub ce_pkts: u64,
    /// One-way delay of data packets, sender to receiver.
    pub owd: Histogram,
}

#[derive(Debug)]
pub struct TcpReceiver {
    flow: FlowId,
    /// Where ACKs go (the sender's node).
    peer: NodeId,
    mss_bytes: u32,
    header_bytes: u32,
    delayed_ack: bool,
    delack_timeout_ns: Nanos,
    sack: bool,
    timestamps: bool,
    /// ECN (RFC 3168): a CE mark is echoed with ECE on every ACK until a segment with CWR.
    ecn: bool,
    /// Linux `TCP_ECN_DEMAND_CWR`: ACKs carry ECE.
    demand_cwr: bool,
    /// Linux `TCP_ECN_SEEN`: an ECN-capable segment has arrived.
    ecn_seen: bool,
    /// DCTCP's receiver (the flow's algorithm needs ECN; Linux `dctcp_ece_ack_update`): ECE is
    /// set exactly while the last data segment arrived CE, whatever CWR says, and a change is
    /// acknowledged at once, after an ACK with the old state for what a pending delayed ACK held.
    dctcp: bool,
    /// DCTCP's `ce_state`: the last data segment arrived CE.
    ce_state: bool,
    /// The DS field of the ACKs: ECT(0) from a DCTCP receiver (Linux keeps ECT on every packet of
    /// a socket whose algorithm needs ECN), else 0.
    ack_tos: u8,
    pub rcv_nxt: u32,
    /// Out-of-order data, sorted; holes are filled from the front, so a deque.
    ooo: VecDeque<OooRange>,
    /// Segments held in `ooo`.
    ooo_segs: u32,
    touch: u64,
    /// The most recently touched ranges as they stand, newest first (distinct ranges): the SACK
    /// blocks without a search or a scan of every range when there are many holes. Only
    /// `insert_ooo` changes a range, and it puts that one first; a listed range below rcv_nxt has
    /// been delivered.
    recent: [OooRange; MAX_SACK_BLOCKS],
    n_recent: usize,
    /// In-order full segments received since the last ACK.
    unacked_segs: u32,
    ts_recent: Nanos,
    last_ack_sent: u32,
    /// Linux's ACK policy: quick-ACK mode and SACK compression, the latter only with SACK (see
    /// the module doc).
    sack_compression: bool,
    /// Quick ACKs left (Linux `icsk_ack.quick`).
    quick: u32,
    /// ACKs held back since the last one sent (Linux `compressed_ack`).
    compressed: u32,
    /// rcv_nxt when the duplicate-ACK count below started, and that count.
    comp_rcv_nxt: u32,
    dup_acks: u32,
    /// Arrival of the last data segment, and the receiver's RTT estimate from timestamps.
    last_data_ns: Option<Nanos>,
    rcv_rtt_ns: Nanos,
    /// The TSecr the last RTT sample came from (Linux `rcv_rtt_last_tsecr`).
    rcv_rtt_last_tsecr: Nanos,
    /// With autotuning, the per-window RTT measurement (Linux `rcv_rtt_est.seq`, `.time`): the
    /// segment that ends the window advertised when it began, and when that was.
    rcv_rtt_win: Option<(u32, Nanos)>,
    /// Linux's receive-buffer autotuning and the window it advertises (the flow's
    /// `rcvbuf_autotuning`); without it the window is `rwnd`, fixed.
    pub rcvbuf: Option<RcvBuf>,
    /// The preamble's round trips (`setup`): what each request means here.
    setup: &'static [Step],
    /// The delayed-ACK timer, and the compressed-ACK timer while out-of-order data is held
    /// (either fires one ACK).
    pub delack_timer: TimerSlot,
    pub stats: ReceiverStats,
}

impl TcpReceiver {
    pub fn new(flow: FlowId, peer: NodeId, spec: &TcpSpec) -> Self {
        let dctcp = spec.ecn && crate::cc::algorithm(&spec.cc).is_some_and(|a| a.needs_ecn);
        TcpReceiver {
            flow,
            peer,
            mss_bytes: spec.mss_bytes,
            header_bytes: spec.header_bytes,
            delayed_ack: spec.delayed_ack,
            delack_timeout_ns: spec.delack_timeout_ns,
            sack: spec.sack,
            timestamps: spec.timestamps,
            ecn: spec.ecn,
            demand_cwr: false,
            ecn_seen: false,
            dctcp,
            ce_state: false,
            ack_tos: match (dctcp, spec.ect1) {
                (false, _) => 0,
                (true, false) => Ecn::ECT0.bits(),
                (true, true) => Ecn::ECT1.bits(),
            },
            rcv_nxt: 0,
            ooo: VecDeque::with_capacity(64),
            ooo_segs: 0,
            touch: 0,
            recent: [OooRange { start: 0, end: 0, touched: 0 }; MAX_SACK_BLOCKS],
            n_recent: 0,
            unacked_segs: 0,
            ts_recent: 0,
            last_ack_sent: 0,
            sack_compression: spec.sack_compression,
            quick: 0,
            compressed: 0,
            comp_rcv_nxt: 0,
            dup_acks: 0,
            last_data_ns: None,
            rcv_rtt_ns: 0,
            rcv_rtt_last_tsecr: 0,
            rcv_rtt_win: None,
            rcvbuf: spec.rcvbuf_autotuning.then(|| RcvBuf::new(spec.mss_bytes, spec.rwnd_bytes)),
            setup: setup::steps(spec.preamble),
            delack_timer: TimerSlot::default(),
            stats: ReceiverStats::default(),
        }
    }

    /// A data segment arrived.
    pub fn on_data(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        self.stats.delivered_pkts += 1;
        self.stats.owd.record(now.saturating_sub(p.ts_val_ns));
        // RFC 7323 §4.3: remember TSval of the segment that starts at or before the last ACK sent.
        if self.timestamps && p.seq <= self.last_ack_sent {
            self.ts_recent = p.ts_val_ns;
        }
        let cwr_ack = self.ecn && self.ecn_arrival(p, now, out);
        // Only Linux's ACK policy and autotuning read the estimate; ns-2's receiver skips it.
        let rtt_used = self.sack_compression || self.rcvbuf.is_some();
        if rtt_used && self.timestamps && p.ts_ecr_ns > 0 && p.ts_ecr_ns != self.rcv_rtt_last_tsecr {
            // Linux `tcp_rcv_rtt_measure_ts`, once per echoed timestamp (whole ticks of the
            // timestamp clock), as `tcp_rcv_rtt_update`: a smaller sample at once, a larger one
            // smoothed 7/8. It paces SACK compression and the buffer's growth.
            self.rcv_rtt_last_tsecr = p.ts_ecr_ns;
            let m = ts_rtt_ns(now, p.ts_ecr_ns);
            self.rcv_rtt_ns = if self.rcv_rtt_ns == 0 || m < self.rcv_rtt_ns { m } else { self.rcv_rtt_ns - self.rcv_rtt_ns / 8 + m / 8 };
        }
        if !self.sack_compression {
            return self.on_data_rfc(p, cwr_ack, now, out);
        }
        // Linux `tcp_event_data_recv`: quick-ACK mode at the first segment, and after a gap.
        match self.last_data_ns {
            None => self.incr_quickack(self.first_quickacks()),
            Some(t) if now - t > RECEIVER_RTO_NS => self.incr_quickack(MAX_QUICKACKS),
            _ => {}
        }
        self.last_data_ns = Some(now);
        if p.seq == self.rcv_nxt {
            let before = self.rcv_nxt;
            self.rcv_nxt += 1;
            let had_hole = !self.ooo.is_empty();
            self.deliver_ooo();
            self.stats.goodput_bytes += (self.rcv_nxt - before) as u64 * self.mss_bytes as u64;
            self.rcv_rtt_measure(now);
            self.grow_window(now);
            // RFC 5681 §4.2: an ACK at once when the last gap is filled (ICSK_ACK_NOW); and for
            // a PSH segment when no hole is left (out-of-order data keeps Linux's receive
            // memory in use, so `tcp_cleanup_rbuf` does not send the PSH ACK; below).
            let now_ack = ((had_hole || p.has(Flags::PUSH)) && self.ooo.is_empty()) || cwr_ack;
            self.ack_check(now_ack, now, out);
            self.reader_progress(now);
        } else if p.seq > self.rcv_nxt {
            // Linux `tcp_sack_new_ofo_skb` (≥ 5.8): the ACKs held back go out before this segment
            // starts a block or moves one up from third place or below, so that every block was
            // among the first two of some ACK before it moves down (under heavy loss, a new
            // block at each segment: most compressed ACKs then report only a few segments).
            if self.compressed > 0 && self.sack_block_position(p.seq) >= SACK_BLOCKS_EXPECTED {
                self.send_ack(now, out);
            }
            self.insert_ooo(p.seq);
            self.ooo_queued(now);
            self.ack_check(cwr_ack, now, out);
        } else {
            // A duplicate: quick-ACK mode and an ACK at once (Linux: with a DSACK).
            self.incr_quickack(MAX_QUICKACKS);
            self.send_ack(now, out);
        }
    }

    /// RFC 3168 §6.1.3 as Linux runs it (`tcp_ecn_accept_cwr`, then `__tcp_ecn_check_ce`): CWR
    /// ends the echo; CE starts it, and (Linux's ACK policy) two quick ACKs; a segment that is not
    /// ECN-capable after ECN-capable ones, probably a retransmission, two quick ACKs too.
    /// Whether the segment is to be acknowledged at once (Linux: one with CWR, with Linux's ACK
    /// policy; a DCTCP receiver's change of CE state, with either policy).
    #[inline(never)]
    fn ecn_arrival(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) -> bool {
        let cwr = p.has(Flags::CWR);
        if cwr {
            self.demand_cwr = false;
        }
        let mut ack_now = false;
        match p.ecn() {
            Ecn::CE => {
                self.stats.ce_pkts += 1;
                if self.dctcp {
                    ack_now = self.dctcp_ce_state(true, now, out);
                }
                if !self.demand_cwr {
                    self.demand_cwr = true;
                    if self.sack_compression {
                        self.incr_quickack(ECN_QUICKACKS);
                    }
                }
                self.ecn_seen = true;
            }
            Ecn::NOT_ECT => {
                if self.ecn_seen && self.sack_compression {
                    self.incr_quickack(ECN_QUICKACKS);
                }
            }
            _ => {
                if self.dctcp {
                    ack_now = self.dctcp_ce_state(false, now, out);
                }
                self.ecn_seen = true;
            }
        }
        ack_now || (cwr && self.sack_compression)
    }

    /// Linux `dctcp_ece_ack_update`: ECE follows the CE state of the last ECN-capable data
    /// segment. When it changes with a delayed ACK pending, that ACK goes out first with the old
    /// state, for the data before this segment (Linux `__tcp_send_ack(sk, prior_rcv_nxt)`, which
    /// leaves the delayed-ACK timer and the quick-ACK count alone); the segment itself is
    /// acknowledged at once (`ICSK_ACK_NOW`). Returns whether the state changed.
    fn dctcp_ce_state(&mut self, ce: bool, now: Nanos, out: &mut Vec<Packet>) -> bool {
        let changed = ce != self.ce_state;
        if changed && self.delack_timer.deadline.is_some() {
            let (quick, deadline, unacked) = (self.quick, self.delack_timer.deadline, self.unacked_segs);
            self.demand_cwr = self.ce_state;
            self.send_ack(now, out);
            (self.quick, self.delack_timer.deadline, self.unacked_segs) = (quick, deadline, unacked);
        }
        self.ce_state = ce;
        self.demand_cwr = ce;
        changed
    }

    /// A request of the flow's preamble arrived: it is answered at once, the answer echoing its
    /// timestamp. The data connection's cookie (with the handshake's last ACK) establishes this
    /// side: the first receive-buffer measurement starts (`tcp_init_buffer_space`), and, as the
    /// first payload, it starts quick-ACK mode (`tcp_event_data_recv`), whose first ACK answers it.
    pub fn on_setup(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        let Some(step) = self.setup.get(p.seq as usize) else { return };
        if step.establishes && self.last_data_ns.is_none() {
            if let Some(b) = &mut self.rcvbuf {
                b.start(now);
            }
            if self.sack_compression {
                self.incr_quickack(self.first_quickacks());
                self.quick = self.quick.saturating_sub(1);
            }
            self.last_data_ns = Some(now);
        }
        let mut a = Packet::new(self.flow, self.peer, Kind::SetupAck, step.sizes(self.timestamps).1);
        a.seq = p.seq;
        a.ts_val_ns = now;
        a.ts_ecr_ns = if self.timestamps { p.ts_val_ns } else { 0 };
        out.push(a);
    }

    /// The quick ACKs a connection starts with (`tcp_incr_quickack` at the first segment):
    /// rcv_wnd / 2·MSS, rcv_wnd being the SYN's window with autotuning and Linux's initial
    /// 10-segment window without.
    fn first_quickacks(&self) -> u32 {
        match &self.rcvbuf {
            Some(b) => (b.rcv_wnd / (2 * self.mss_bytes as u64)).max(2) as u32,
            None => INIT_RCVWND_SEGS / 2,
        }
    }

    /// In-order data arrived: with autotuning, Linux's per-window RTT sample (`tcp_rcv_rtt_measure`):
    /// the time rcv_nxt took to pass the end of the window advertised when the measurement began,
    /// to the microsecond; taken only when smaller than the estimate (`tcp_rcv_rtt_update` with
    /// `win_dep`). A sender held by that window delivers it in one round trip.
    fn rcv_rtt_measure(&mut self, now: Nanos) {
        let Some(b) = &self.rcvbuf else { return };
        if let Some((seq, t)) = self.rcv_rtt_win {
            if self.rcv_nxt < seq {
                return;
            }
            let m = ((now - t) / 1_000).max(1) * 1_000;
            if self.rcv_rtt_ns == 0 || m < self.rcv_rtt_ns {
                self.rcv_rtt_ns = m;
            }
        }
        self.rcv_rtt_win = Some((self.rcv_nxt + (b.rcv_wnd / self.mss_bytes as u64) as u32, now));
    }

    /// A segment arrived: with autotuning, the window opens (`tcp_grow_window`), and each
    /// opening asks for an immediate ACK (`icsk_ack.quick |= 1`).
    fn grow_window(&mut self, now: Nanos) {
        if let Some(b) = &mut self.rcvbuf {
            b.start(now);
            if b.grow_window(self.ooo_segs) {
                self.quick |= 1;
            }
        }
    }

    /// An out-of-order segment was queued (`tcp_data_queue_ofo`): the window opens as for an
    /// in-order one, and the buffer covers the out-of-order span at once (`tcp_rcvbuf_grow`).
    /// Without SACK the window stays (Linux ≥ 5.7): an ACK that moves it is no duplicate ACK to
    /// the sender, which then could not start fast retransmit.
    fn ooo_queued(&mut self, now: Nanos) {
        if self.sack {
            self.grow_window(now);
        }
        if let (Some(b), Some(last)) = (&mut self.rcvbuf, self.ooo.back()) {
            b.ooo_queued((last.end - self.rcv_nxt) as u64 * self.mss_bytes as u64);
        }
    }

    /// The reader (iperf3) took the in-order data: once per receiver RTT the buffer is resized
    /// from what it read (`tcp_rcv_space_adjust`).
    fn reader_progress(&mut self, now: Nanos) {
        if let Some(b) = &mut self.rcvbuf {
            b.reader_progress(self.rcv_nxt, self.rcv_rtt_ns, now);
        }
    }

    /// RFC 5681 §4.2 (and ns-2): every second in-order segment or the timer; out-of-order data,
    /// a hole filled and duplicates at once; and (Linux) a PSH segment at once.
    /// `now_ack`: the segment is to be acknowledged at once (a DCTCP receiver's change of CE
    /// state).
    fn on_data_rfc(&mut self, p: &Packet, now_ack: bool, now: Nanos, out: &mut Vec<Packet>) {
        if p.seq == self.rcv_nxt {
            let before = self.rcv_nxt;
            self.rcv_nxt += 1;
            let had_hole = !self.ooo.is_empty();
            self.deliver_ooo();
            self.stats.goodput_bytes += (self.rcv_nxt - before) as u64 * self.mss_bytes as u64;
            self.rcv_rtt_measure(now);
            self.grow_window(now);
            self.reader_progress(now);
            if had_hole || !self.delayed_ack || now_ack {
                self.send_ack(now, out);
            } else {
                self.unacked_segs += 1;
                // Linux `tcp_measure_rcv_mss` marks a full-sized PSH segment (ICSK_ACK_PUSHED)
                // and `tcp_cleanup_rbuf` acknowledges it once the reader has taken everything,
                // which a bulk reader such as iperf3 does at once. Only `tso` senders set PSH.
                if self.unacked_segs >= 2 || p.has(Flags::PUSH) {
                    self.send_ack(now, out);
                } else if self.delack_timer.deadline.is_none() {
                    self.delack_timer.deadline = Some(now + self.delack_timeout_ns);
                }
            }
        } else if p.seq > self.rcv_nxt {
            self.insert_ooo(p.seq);
            self.ooo_queued(now);
            self.send_ack(now, out);
        } else {
            // Old duplicate: ACK at once so the sender learns where we are.
            self.send_ack(now, out);
        }
    }

    /// Move rcv_nxt over the out-of-order ranges it now reaches.
    fn deliver_ooo(&mut self) {
        while let Some(first) = self.ooo.front() {
            if first.start > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(first.end);
            self.ooo_segs -= first.end - first.start;
            self.ooo.pop_front();
        }
    }

    /// Linux `tcp_incr_quickack`.
    fn incr_quickack(&mut self, max: u32) {
        self.quick = self.quick.max(max.min(MAX_QUICKACKS));
    }

    /// Linux `__tcp_ack_snd_check`: more than one full segment since the last ACK, quick-ACK
    /// mode or `now_ack` send at once; without out-of-order data, the delayed-ACK timer; with
    /// it, three immediate duplicate ACKs per rcv_nxt, then compressed ones.
    fn ack_check(&mut self, now_ack: bool, now: Nanos, out: &mut Vec<Packet>) {
        let unacked = self.rcv_nxt - self.last_ack_sent;
        if now_ack || !self.delayed_ack || unacked >= 2 || self.quick > 0 {
            return self.send_ack(now, out);
        }
        if self.ooo.is_empty() {
            self.unacked_segs = unacked;
            if self.delack_timer.deadline.is_none() {
                self.delack_timer.deadline = Some(now + self.delack_timeout_ns);
            }
            return;
        }
        // Linux `__tcp_ack_snd_check`: without SACK every out-of-order segment is ACKed at once
        // (the duplicates the sender counts).
        if !self.sack || self.compressed >= COMP_SACK_NR {
            return self.send_ack(now, out);
        }
        if self.comp_rcv_nxt != self.rcv_nxt {
            self.comp_rcv_nxt = self.rcv_nxt;
            self.dup_acks = 0;
        }
        if self.dup_acks < FASTRETRANS_THRESH {
            self.dup_acks += 1;
            return self.send_ack(now, out);
        }
        self.compressed += 1;
        if self.compressed == 1 {
            // The compressed-ACK timer: 5% of the RTT, at most 1 ms, and Linux's hrtimer range
            // of 100 µs after that, whose end is when it fires on an otherwise idle CPU (the
            // testbed's receivers: one compressed ACK per 1.19–1.20 ms at 200 ms, 0.2 BDP; 1.08
            // ms here without the slack). It replaces a pending delayed ACK, which it would
            // precede anyway.
            let delay = (self.rcv_rtt_ns / 20).min(COMP_SACK_DELAY_NS).max(1) + COMP_SACK_SLACK_NS;
            let at = now + delay;
            self.delack_timer.deadline = Some(self.delack_timer.deadline.map_or(at, |d| d.min(at)));
        }
    }

    /// Where the block that out-of-order segment `seq` extends (or lies in) stands among the
    /// receiver's SACK blocks, most recent first (Linux's `selective_acks`, the 4 most recently
    /// touched); the number of blocks when it starts a new one or extends one no longer listed.
    fn sack_block_position(&self, seq: u32) -> usize {
        let listed = || self.recent[..self.n_recent].iter().filter(|l| l.start >= self.rcv_nxt);
        let i = self.ooo_index(seq);
        let Some(r) = self.ooo.get(i).filter(|r| r.start <= seq + 1 && seq <= r.end) else {
            return listed().count();
        };
        // `seq` may join range i to range i + 1; Linux extends the first of them it lists.
        let next = self.ooo.get(i + 1).filter(|n| n.start == seq + 1);
        let touches = |l: &OooRange| l.start == r.start || next.is_some_and(|n| l.start == n.start);
        listed().position(touches).unwrap_or_else(|| listed().count())
    }

    /// The first range that does not end below `seq` (`ooo.len()` if none). A segment out of
    /// order nearly always extends the newest range or opens one past it, so the last two
    /// ranges are looked at before a binary search.
    #[inline]
    fn ooo_index(&self, seq: u32) -> usize {
        let n = self.ooo.len();
        match self.ooo.back() {
            None => 0,
            Some(last) if last.end < seq => n,
            Some(_) if n == 1 || self.ooo[n - 2].end < seq => n - 1,
            Some(_) => self.ooo.partition_point(|r| r.end < seq),
        }
    }

    fn insert_ooo(&mut self, seq: u32) {
        self.touch += 1;
        let touched = self.touch;
        let i = self.ooo_index(seq);
        if i < self.ooo.len() && self.ooo[i].start <= seq + 1 && seq <= self.ooo[i].end {
            if seq < self.ooo[i].start || seq >= self.ooo[i].end {
                self.ooo_segs += 1;
            }
            // Extends or lies in range i (touching it on the left or right).
            let r = &mut self.ooo[i];
            r.start = r.start.min(seq);
            r.end = r.end.max(seq + 1);
            r.touched = touched;
            // Merge with the next range if they now touch.
            if i + 1 < self.ooo.len() && self.ooo[i + 1].start <= self.ooo[i].end {
                self.ooo[i].end = self.ooo[i].end.max(self.ooo[i + 1].end);
                self.ooo.remove(i + 1);
            }
        } else {
            self.ooo_segs += 1;
            self.ooo.insert(i, OooRange { start: seq, end: seq + 1, touched });
        }
        // Range i is now the most recent: it goes first, without the ranges it now covers.
        let first = self.ooo[i];
        let mut kept = [first; MAX_SACK_BLOCKS];
        let mut n = 1;
        for &l in &self.recent[..self.n_recent] {
            if (l.start < first.start || l.start >= first.end) && n < MAX_SACK_BLOCKS {
                kept[n] = l;
                n += 1;
            }
        }
        (self.recent, self.n_recent) = (kept, n);
    }

    /// The ranges for the SACK option, most recently touched first (RFC 2018 §4), as
    /// (touched, start, end); returns how many.
    fn sack_ranges(&self, max_blocks: usize, best: &mut [(u64, u32, u32); MAX_SACK_BLOCKS]) -> usize {
        // Listed ranges below rcv_nxt have been delivered.
        let mut n = 0;
        for l in &self.recent[..self.n_recent] {
            if l.start >= self.rcv_nxt && n < max_blocks {
                best[n] = (l.touched, l.start, l.end);
                n += 1;
            }
        }
        if n == max_blocks || n == self.ooo.len() {
            return n;
        }
        // Fewer listed than wanted (ranges were delivered): one pass keeping the
        // `max_blocks` most recently touched (`touched` values are distinct).
        n = 0;
        for r in &self.ooo {
            if n == max_blocks && r.touched <= best[n - 1].0 {
                continue;
            }
            let mut i = if n < max_blocks { n } else { n - 1 };
            while i > 0 && best[i - 1].0 < r.touched {
                best[i] = best[i - 1];
                i -= 1;
            }
            best[i] = (r.touched, r.start, r.end);
            n = (n + 1).min(max_blocks);
        }
        n
    }

    /// The delayed-ACK (or compressed-ACK) timer expired.
    pub fn on_delack(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.unacked_segs > 0 || self.compressed > 0 || self.rcv_nxt != self.last_ack_sent {
            self.send_ack(now, out);
        }
    }

    fn send_ack(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let mut a = Packet::new(self.flow, self.peer, Kind::Ack, self.header_bytes);
        a.ack = self.rcv_nxt;
        a.tos = self.ack_tos;
        if self.demand_cwr {
            a.flags |= Flags::ECE;
        }
        if let Some(b) = &mut self.rcvbuf {
            a.set_window_bytes(b.select_window(self.rcv_nxt, self.ooo_segs));
        }
        a.ts_val_ns = now;
        a.ts_ecr_ns = if self.timestamps { self.ts_recent } else { 0 };
        if self.sack && !self.ooo.is_empty() {
            // RFC 2018 §4: the most recently changed block first, then the others most recent first.
            let max_blocks = if self.timestamps { 3 } else { MAX_SACK_BLOCKS };
            let mut best = [(0, 0, 0); MAX_SACK_BLOCKS];
            let n = self.sack_ranges(max_blocks, &mut best);
            for (slot, b) in a.sack.iter_mut().zip(&best[..n]) {
                *slot = (b.1, b.2);
            }
            a.n_sack = n as u8;
            // The SACK option: kind, length and 8 bytes a block, padded with two NOPs (Linux).
            a.size_bytes += 4 + 8 * n as u32;
        }
        self.stats.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segs = 0;
        self.compressed = 0;
        self.quick = self.quick.saturating_sub(1);
        self.delack_timer.deadline = None;
        out.push(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 5681's policy (every out-of-order segment ACKed at once), the default.
    fn rx(delayed: bool) -> TcpReceiver {
        let mut spec = TcpSpec::new(0, 1);
        spec.delayed_ack = delayed;
        TcpReceiver::new(FlowId(0), NodeId(0), &spec)
    }

    /// Linux's policy.
    fn linux_rx() -> TcpReceiver {
        let mut spec = TcpSpec::new(0, 1);
        spec.sack_compression = true;
        TcpReceiver::new(FlowId(0), NodeId(0), &spec)
    }

    /// Linux's policy after segments 0–19 arrived in order at `rtt` (its RTT estimate set, quick-ACK
    /// mode over), with no ACK pending.
    fn linux_rx_past_quickack(rtt: Nanos) -> (TcpReceiver, Vec<Packet>) {
        let mut r = linux_rx();
        let mut out = vec![];
        for s in 0..20 {
            r.on_data(&data_at(s, 1), rtt, &mut out);
        }
        out.clear();
        (r, out)
    }

    fn data_at(seq: u32, ts_ecr_ns: Nanos) -> Packet {
        let mut p = data(seq);
        p.ts_ecr_ns = ts_ecr_ns;
        p
    }

    /// `ooo_index` (the last two ranges, then a binary search) finds what a binary search over
    /// all ranges finds, for every sequence number around them, as segments arrive in a
    /// scrambled order that opens, extends and merges ranges anywhere.
    #[test]
    fn ooo_index_agrees_with_a_binary_search_over_the_ranges() {
        let mut r = rx(false);
        let mut out = vec![];
        let mut rng = crate::rng::Rng::stream(1, crate::rng::Stream::LinkLoss, 0);
        let (mut checked, mut most) = (0, 0);
        for _ in 0..3000 {
            // Mostly just past the newest range, sometimes into an older hole; never segment 0,
            // so nothing is delivered in order and the ranges pile up.
            let top = r.ooo.back().map_or(2, |l| l.end);
            let seq = if rng.chance(0.25) { 1 + rng.below(top as u64 - 1) as u32 } else { top + rng.below(3) as u32 };
            r.on_data(&data(seq), 0, &mut out);
            most = most.max(r.ooo.len());
            for q in 0..=r.ooo.back().map_or(0, |l| l.end) + 2 {
                assert_eq!(r.ooo_index(q), r.ooo.partition_point(|l| l.end < q), "seq {q}");
                checked += 1;
            }
        }
        assert!(most > 50 && checked > 100_000, "{most} ranges at most, {checked} lookups");
    }

    #[test]
    fn linux_acks_the_first_five_segments_at_once_then_every_second() {
        let mut r = linux_rx();
        let mut out = vec![];
        for s in 0..9 {
            r.on_data(&data(s), s as Nanos * 1_000, &mut out);
        }
        // Quick-ACK mode: rcv_wnd (10 segments) / 2 = 5 immediate ACKs, then one per 2 segments.
        assert_eq!(out.iter().map(|a| a.ack).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5, 7, 9]);
    }

    #[test]
    fn with_autotuning_every_segment_is_acked_while_the_window_opens() {
        let mut spec = TcpSpec::new(0, 1);
        spec.sack_compression = true;
        spec.rcvbuf_autotuning = true;
        spec.rwnd_bytes = 64 << 20;
        let mut r = TcpReceiver::new(FlowId(0), NodeId(0), &spec);
        let mut out = vec![];
        // No RTT estimate yet (TSecr 0), so the buffer stays at 128 KB: the window opens from
        // the SYN's 65160 B to the clamp 81920 B in 6 segments. 16 quick ACKs (65160 / 2·1448,
        // at most 16), each opening asking for one more: 22 ACKs of one segment, then one per two.
        for s in 0..40 {
            r.on_data(&data(s), s as Nanos * 120_000, &mut out);
        }
        let acks: Vec<u32> = out.iter().map(|a| a.ack).collect();
        assert_eq!(acks[..22], (1..=22).collect::<Vec<_>>()[..]);
        assert_eq!(acks[22..], [24, 26, 28, 30, 32, 34, 36, 38, 40]);
        // Each ACK carries the window, in units of 2048 B (window scale 11 for 64 MB), opening by
        // 2896 B a segment: 65160 + 2896 = 68056 → 69632 first, 81920 once open.
        assert_eq!(out[0].window_bytes(), 69_632);
        assert_eq!(out.last().unwrap().window_bytes(), 81_920);
        // One receiver RTT (50 ms) later the reader has taken 41 segments (59368 B), more than
        // the initial measurement's 10: after segment 40 (held for a delayed ACK) the buffer grows
        // to 2·59368 plus twice the growth in window terms (854898 B), and every later segment is
        // ACKed at once while the window opens towards it.
        out.clear();
        let t0 = 50_000_000;
        for (k, s) in (40..50).enumerate() {
            r.on_data(&data_at(s, 1), t0 + k as Nanos * 120_000, &mut out);
        }
        assert_eq!(out.iter().map(|a| a.ack).collect::<Vec<_>>(), (42..=50).collect::<Vec<_>>());
        assert_eq!(r.rcvbuf.as_ref().unwrap().window_clamp, 854_897);
    }

    #[test]
    fn linux_compresses_sacks_after_three_duplicates() {
        let rtt = 50_000_000;
        let (mut r, mut out) = linux_rx_past_quickack(rtt);
        // Segment 20 lost; 21.. arrive 120 µs apart (100 Mb/s). Three duplicate ACKs at once,
        // then the rest wait for the compressed-ACK timer: min(1 ms, RTT/20) + 100 µs of slack
        // after the fourth, which fires after segment 29 (1.08 ms after segment 21).
        let t0 = 2 * rtt;
        for (k, s) in (21..30).enumerate() {
            r.on_data(&data_at(s, rtt), t0 + k as Nanos * 120_000, &mut out);
        }
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|a| a.ack == 20));
        let due = r.delack_timer.deadline.expect("compressed-ACK timer armed");
        assert_eq!(due, t0 + 3 * 120_000 + 1_100_000);
        assert!(due > t0 + 8 * 120_000);
        r.on_delack(due, &mut out);
        assert_eq!(out.len(), 4);
        assert_eq!(out[3].sack_blocks(), &[(21, 30)]);
        // The retransmission fills the only hole: an immediate ACK for everything.
        r.on_data(&data_at(20, rtt), due + 1, &mut out);
        assert_eq!((out.len(), out[4].ack, out[4].n_sack), (5, 30, 0));
    }

    #[test]
    fn linux_sends_the_held_acks_before_a_block_falls_to_third_place() {
        let rtt = 50_000_000;
        let (mut r, mut out) = linux_rx_past_quickack(rtt);
        // Segment 20 lost; then 21, 23, 25 (three duplicate ACKs at once, three blocks), 27 (a
        // fourth block, held: nothing was held before it) and 28 (extends the first block, held).
        let mut t = 2 * rtt;
        let mut arrive = |r: &mut TcpReceiver, s: u32, out: &mut Vec<Packet>| {
            t += 120_000;
            r.on_data(&data_at(s, rtt), t, out);
        };
        for s in [21, 23, 25, 27, 28] {
            arrive(&mut r, s, &mut out);
        }
        assert_eq!(out.len(), 3);
        // 30 starts a fifth block: the held ACK goes first, reporting 27–28 while it is still
        // first (blocks as they stood, the three most recent), then 30 is held.
        arrive(&mut r, 30, &mut out);
        assert_eq!(out.len(), 4);
        assert_eq!(out[3].sack_blocks(), &[(27, 29), (25, 26), (23, 24)]);
        // 31 extends the first block and 29 joins the first two: both held.
        arrive(&mut r, 31, &mut out);
        arrive(&mut r, 29, &mut out);
        assert_eq!(out.len(), 4);
        // 22 extends 23, third (and joins 21, no longer listed): the held ACK goes first.
        arrive(&mut r, 22, &mut out);
        assert_eq!(out.len(), 5);
        assert_eq!(out[4].sack_blocks(), &[(27, 32), (25, 26), (23, 24)]);
        // 24 joins 21–23 to 25, second: held.
        arrive(&mut r, 24, &mut out);
        assert_eq!(out.len(), 5);
        // Data already held, in the first block: held.
        arrive(&mut r, 28, &mut out);
        assert_eq!(out.len(), 5);
    }

    #[test]
    fn linux_sends_every_44th_compressed_ack_at_once() {
        let mut r = linux_rx();
        let mut out = vec![];
        for s in 0..20 {
            r.on_data(&data(s), 0, &mut out);
        }
        out.clear();
        // 60 out-of-order segments at one instant: 3 duplicates, then 44 held back, the 45th
        // sent, and so on.
        for s in 21..81 {
            r.on_data(&data(s), 1_000, &mut out);
        }
        assert_eq!(out.len(), 4);
    }

    fn data(seq: u32) -> Packet {
        let mut p = Packet::new(FlowId(0), NodeId(1), Kind::Data, 1500);
        p.seq = seq;
        p
    }

    #[test]
    fn acks_every_second_segment_and_arms_the_timer_for_the_odd_one() {
        let mut r = rx(true);
        let mut out = vec![];
        r.on_data(&data(0), 0, &mut out);
        assert!(out.is_empty());
        assert_eq!(r.delack_timer.deadline, Some(40_000_000));
        r.on_data(&data(1), 10, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 2);
        assert_eq!(r.delack_timer.deadline, None);
        r.on_data(&data(2), 20, &mut out);
        assert_eq!(out.len(), 1);
        r.on_delack(40_000_020, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].ack, 3);
    }

    #[test]
    fn out_of_order_data_is_acked_at_once_with_sack_blocks() {
        let mut r = rx(true);
        let mut out = vec![];
        for s in [0, 1] {
            r.on_data(&data(s), 0, &mut out);
        }
        out.clear();
        // Segment 2 lost; 3, 4 arrive, then 6 (5 lost too).
        for s in [3, 4, 6] {
            r.on_data(&data(s), 0, &mut out);
        }
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|a| a.ack == 2));
        assert_eq!(out[1].sack_blocks(), &[(3, 5)]);
        assert_eq!(out[2].sack_blocks(), &[(6, 7), (3, 5)]);
        // 52-byte header + SACK option 4 + 2·8.
        assert_eq!(out[2].size_bytes, 52 + 20);
        out.clear();
        // The retransmission of 2 fills the first hole: immediate ACK up to 5.
        r.on_data(&data(2), 0, &mut out);
        assert_eq!(out[0].ack, 5);
        assert_eq!(out[0].sack_blocks(), &[(6, 7)]);
        r.on_data(&data(5), 0, &mut out);
        assert_eq!(out[1].ack, 7);
        assert_eq!(out[1].n_sack, 0);
        assert_eq!(r.stats.goodput_bytes, 7 * 1448);
    }

    /// The SACK blocks against a naive pick (most recently touched first, RFC 2018 §4), over
    /// random arrival orders with many holes.
    #[test]
    fn sack_blocks_are_the_most_recently_touched_ranges() {
        let mut rng = crate::rng::Rng::stream(3, crate::rng::Stream::LinkLoss, 0);
        for timestamps in [true, false] {
            let mut r = rx(false);
            r.timestamps = timestamps;
            let mut out = vec![];
            for k in 0..2000 {
                // Mostly out of order; now and then the missing segment, delivering ranges.
                let seq = if k % 40 == 39 { r.rcv_nxt } else { r.rcv_nxt + 1 + rng.below(300) as u32 };
                r.on_data(&data(seq), 0, &mut out);
                let a = out.pop().unwrap();
                let mut ranges: Vec<_> = r.ooo.iter().map(|o| (o.touched, o.start, o.end)).collect();
                ranges.sort_by(|x, y| y.0.cmp(&x.0));
                let want: Vec<(u32, u32)> = ranges.iter().take(if timestamps { 3 } else { 4 }).map(|x| (x.1, x.2)).collect();
                assert_eq!(a.sack_blocks(), &want[..]);
            }
        }
    }

    #[test]
    fn ranges_merge() {
        let mut r = rx(false);
        for s in [5, 7, 6, 9, 8] {
            r.insert_ooo(s);
        }
        assert_eq!(r.ooo.len(), 1);
        assert_eq!((r.ooo[0].start, r.ooo[0].end), (5, 10));
    }
}
