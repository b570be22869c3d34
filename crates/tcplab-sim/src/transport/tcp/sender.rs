//! The TCP sender: a bulk source (infinite backlog, like iperf) with slow start and congestion
//! avoidance delegated to a [`Cc`], and loss recovery chosen separately:
//!
//! ```text
//!            3 dupACKs (or RFC 6675 IsLost(una))            full ACK (una >= recover)
//!   Open/Disorder ─────────────────────────────► Recovery ─────────────────────────► Open
//!        │   tahoe: ssthresh, cwnd = 1, go-back-N   │ reno: first new ACK ends it
//!        │          ───────────► Loss               │ newreno (RFC 6582): partial ACK → retransmit next hole
//!        │                                          │ sack (RFC 6675, PRR RFC 6937): pipe-driven, many holes per RTT
//!        └──── RTO (RFC 6298) ──► Loss: ssthresh, cwnd = 1, all un-SACKed segments lost ──► Open when una >= recover
//! ```
//!
//! An algorithm with `cong_control` (BBR) owns cwnd instead: the sender then skips every cwnd
//! change of recovery above and hands it each ACK's delivery-rate sample (`rate.rs`), as Linux
//! `tcp_cong_control` does.
//!
//! Pacing, as Linux's earliest-departure-time model (`tcp_update_skb_after_send`): each segment
//! is stamped with its departure time `wstamp_ns` (its TSval and send time), and each
//! transmission moves `wstamp_ns` on by the segment's time at the pacing rate. By default the
//! sender paces itself, as Linux's TCP does when the interface's qdisc does not pace (its
//! default qdiscs, the testbed: `tcp_pacing_check` and the pacing hrtimer): it sends a burst only
//! once its departure time has come, else arms its pacing timer for it. With `fq_pacing` it
//! paces as under the fq qdisc: it hands segments down up to [`FQ_HORIZON_NS`] before their
//! departure times (TCP Small Queues let about 1 ms of data wait below TCP) and the first link
//! holds each until its stamp. Either way at most one pacing event per burst.
//!
//! Loss detection with `rack` (RFC 8985, Linux's default): a segment is lost once a segment
//! sent after it is delivered and its RTT plus a reordering window has passed (0 in recovery or
//! once DupThresh segments are SACKed, else min RTT / 4); a reordering timer (whole jiffies, plus 2) covers the wait.
//! Recovery starts when RACK marks a loss, and lost retransmissions are found the same way. In
//! Open state a tail loss probe (TLP) fires after 2·SRTT without ACKs: one new segment (or the
//! last one again), so the ACK it draws starts recovery instead of an RTO. The retransmission
//! timer slot carries the RTO, the reordering timer or the probe, as Linux's `icsk_pending`.
//! Without `rack`: RFC 6675's DupThresh rule (`IsLost`). Without SACK blocks (`sack` off),
//! `sack` recovery is Linux's for a connection without SACK (`tcp_is_reno`): duplicate ACKs stand
//! in for SACKed segments and each partial ACK marks the next hole lost.
//!
//! With `sndbuf_autotuning` the data to send is what the writer has put in a send buffer sized
//! as Linux sizes it (`sndbuf.rs`); otherwise there is always data.
//!
//! Sequence numbers count whole segments (all data segments are full-sized). Deviations from
//! Linux are listed in `docs/tcp.md`.

use super::rate::{self, RateAcc};
use super::rcvbuf::syn_window_bytes;
use super::rtt::{ts_rtt_ns, RttEstimator, TS_TICK_NS};
use super::scoreboard::Scoreboard;
use super::setup::{self, Step};
use super::sndbuf::SndBuf;
use crate::cc::helpers::{jiffies_ceil_ns, JIFFY_NS};
use crate::cc::{AckSample, CaEvent, CaState, Cc, CongestionOps, TcpCcView, INFINITE_SSTHRESH};
use crate::rng::Rng;
use crate::ids::{FlowId, NodeId};
use crate::net::packet::{Ecn, Flags, Kind, Packet};
use crate::spec::{Recovery, TcpSpec};
use crate::time::{Nanos, NS_PER_SEC};
use crate::transport::TimerSlot;

/// RFC 5681 / RFC 6675 DupThresh (Linux `sysctl_tcp_reordering`).
const DUPTHRESH: u32 = 3;
/// Linux `sysctl_tcp_max_reordering`: the most a SACK-less sender raises its duplicate-ACK
/// threshold to when more duplicates come than it has segments out.
const MAX_REORDERING: u32 = 300;

/// Linux `sysctl_tcp_pacing_ss_ratio` / `sysctl_tcp_pacing_ca_ratio`, percent: the default pacing
/// rate is this share of cwnd·mss/srtt in slow start / congestion avoidance.
const PACING_SS_RATIO_PCT: u64 = 200;
const PACING_CA_RATIO_PCT: u64 = 120;
/// With `fq_pacing`, how far ahead of its departure time a paced segment may be handed to the
/// host: 2^-10 s, the data Linux's TCP Small Queues allow below TCP at `sk_pacing_shift` 10
/// (`tcp_small_queue_check`), which fq then holds until due.
pub const FQ_HORIZON_NS: Nanos = NS_PER_SEC >> 10;

/// TSO bursts (`tso`): Linux `sk_pacing_shift` (about 1 ms of data per burst), the GSO size
/// limit (`sk_gso_max_size`, 64 KB), `sysctl_tcp_min_tso_segs`, `sysctl_tcp_tso_rtt_log` and
/// `sysctl_tcp_tso_win_divisor`.
const TSO_PACING_SHIFT: u32 = 10;
const GSO_MAX_BYTES: u64 = 65_536;
const MIN_TSO_SEGS: u32 = 2;
const TSO_RTT_LOG: u32 = 9;
const TSO_WIN_DIVISOR: u32 = 3;
/// `tcp_tso_should_defer` waits only if the sender sent within this long, and for an ACK due
/// within this long (or half the smoothed RTT).
const TSO_DEFER_NS: Nanos = NS_PER_SEC / 1000;

/// Linux `TCP_TIMEOUT_MIN`, 2 jiffies: added to the reordering timer.
const TIMEOUT_MIN_NS: Nanos = 2 * JIFFY_NS;
/// Linux `TCP_TIMEOUT_MIN_US`, 2 ms: added to a tail loss probe's timeout.
const TIMEOUT_MIN_US_NS: Nanos = 2_000_000;

/// A time on Linux's millisecond timestamp clock (`tcp_time_stamp_ts`).
fn ts_ms(t: Nanos) -> u32 {
    (t / TS_TICK_NS) as u32
}

/// What the retransmission timer slot is armed for (Linux `icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XmitTimer {
    Rto,
    /// RACK's reordering timer (`ICSK_TIME_REO_TIMEOUT`).
    Reorder,
    /// Tail loss probe (`ICSK_TIME_LOSS_PROBE`).
    Probe,
    /// The preamble's request is answered by then or sent again.
    Setup,
}

/// Linux paces only once this many data segments have gone out (`data_segs_out >= 10` in
/// `tcp_update_skb_after_send`): the initial window leaves at once.
const PACING_AFTER_SEGS: u64 = 10;

#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub retrans_pkts: u64,
    /// Segments the test hook dropped at the sender.
    pub hook_dropped_pkts: u64,
    pub rto_count: u64,
    /// Fast-retransmit episodes (entries into Recovery, or Tahoe's slow start after 3 dupACKs).
    pub recoveries: u64,
    /// Time spent in fast recovery (Recovery state), ns.
    pub recovery_ns: u64,
    /// Tail loss probes sent (RACK-TLP).
    pub loss_probes: u64,
    /// Window reductions on ECE (entries into CWR, RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
    /// Timeouts undone as spurious (`undo`; Linux's `TCPLossUndo`).
    pub undos: u64,
}

#[derive(Debug)]
pub struct TcpSender {
    flow: FlowId,
    dst: NodeId,
    recovery: Recovery,
    prr: bool,
    timestamps: bool,
    /// ECN (RFC 3168): new data leaves ECT(0) and ECE reduces the window.
    ecn: bool,
    /// The DS field its data packets start with: the flow's DSCP, ECN not yet set.
    tos: u8,
    /// During an ECN window reduction (CWR state), the `snd_nxt` it began at: it ends once
    /// something above it is acknowledged (Linux's `high_seq`).
    cwr_high: Option<u32>,
    /// The next new segment carries CWR (Linux `TCP_ECN_QUEUE_CWR`).
    queue_cwr: bool,
    /// Retransmissions leave ECN-capable too: the algorithm needs ECN (DCTCP; Linux keeps ECT on
    /// every packet of such a socket).
    ect_retrans: bool,
    /// The codepoint of its ECN-capable packets: ECT(0), or ECT(1) with `ect1`.
    ect: Ecn,
    mss_bytes: u32,
    data_bytes: u32,
    /// Window allowed by the receiver and the send buffer, segments.
    wnd_limit_segs: u32,
    /// The limit from `rwnd` and the send buffer, segments (`wnd_limit_segs` without
    /// `rcv_window`); with it, the receiver's advertised window lowers `wnd_limit_segs` below.
    static_wnd_segs: u32,
    /// The receiver advertises its window in each ACK (its `rcvbuf_autotuning`).
    rcv_window: bool,
    pub cc: Cc,
    pub tp: TcpCcView,
    pub sb: Scoreboard,
    snd_nxt: u32,
    dupacks: u32,
    /// Linux `high_seq`, RFC 6582 `recover`: snd_nxt when recovery or loss began.
    recover: u32,
    /// Whether a loss episode has set `recover` yet (RFC 6582 initialises it to the ISN).
    recover_set: bool,
    partial_acks: u32,
    recovery_start_ns: Nanos,
    prr_delivered: u32,
    prr_out: u32,
    pub rtt: RttEstimator,
    backoff: u32,
    /// Whether the last send attempt stopped on cwnd rather than on the window or the application.
    cwnd_limited: bool,
    /// The application has data (between the flow's start and stop).
    pub active: bool,
    drop_segments: Vec<u32>,
    drop_retransmits: Vec<u32>,
    /// The algorithm has `cong_control` and owns cwnd (Linux `icsk_ca_ops->cong_control`).
    cong_control: bool,
    /// Segments are paced (the scenario's `pacing`, or the algorithm set a rate in `init`).
    paced: bool,
    /// How long before its departure time a paced segment is handed to the host: 0 (TCP's own
    /// pacing timer) or [`FQ_HORIZON_NS`] (`fq_pacing`).
    pace_horizon_ns: Nanos,
    /// The sender sets the pacing rate itself (Linux `tcp_update_pacing_rate`): paced, and the
    /// algorithm has no `cong_control` to set it.
    default_pacing_rate: bool,
    /// New data leaves in TSO bursts (the flow's `tso`).
    tso: bool,
    /// Segments of new data left in the write queue's head skb (0: the next one starts). The
    /// application's data waits in skbs of `tcp_xmit_size_goal` (45 segments of 1448 bytes); a
    /// burst never spans two, and a head skb's rest that fits is sent without deferring.
    skb_left: u32,
    /// Segments in the skb after the head (0: a whole one of `tcp_xmit_size_goal`).
    skb_next: u32,
    /// The largest receive window the peer has offered, segments (Linux `max_window`).
    max_wnd_segs: u32,
    /// Linux's default pacing rate of an unpaced `tso` flow, bit/s: it only sizes the bursts
    /// (Linux sets `sk_pacing_rate` on every ACK for that, paced or not).
    sizing_rate_bps: u64,
    pub rto_timer: TimerSlot,
    /// What `rto_timer` is armed for.
    pub xmit_timer: XmitTimer,
    /// RACK-TLP loss detection (the flow's `rack`).
    rack: bool,
    /// SACK recovery without SACK blocks, as Linux recovers a connection that did not negotiate
    /// SACK (`tcp_is_reno`): duplicate ACKs count as SACKed segments (`sb.sacked_out`), the head
    /// is marked lost at `reordering` of them and again at every partial ACK
    /// (`tcp_newreno_mark_lost`), and Recovery or Loss ends only once the ACK passes `recover`.
    reno: bool,
    /// Linux `tp->reordering`: duplicate ACKs that mark the head lost (without SACK).
    reordering: u32,
    /// A timeout that proves spurious is undone (the flow's `undo`; `undo_loss`).
    undo: bool,
    /// The last timeout's reduction may still be undone (Linux `undo_marker`).
    undo_marker: bool,
    /// The slow-start threshold before that reduction (Linux `prior_ssthresh`).
    prior_ssthresh: u32,
    /// When the loss episode's first retransmission left, in whole milliseconds of the
    /// timestamp clock plus one; 0 before it (Linux `retrans_stamp`).
    retrans_stamp: u32,
    /// The send buffer in memory terms and the writer that fills it (`sndbuf_autotuning`).
    sndbuf: Option<Box<SndBuf>>,
    /// Linux `tlp_high_seq`: snd_nxt when the outstanding probe was sent.
    tlp_high_seq: Option<u32>,
    /// The outstanding probe was a retransmission (Linux `tlp_retrans`).
    tlp_retrans: bool,
    /// Fires at `tp.wstamp_ns` when pacing held a segment back.
    pub pace_timer: TimerSlot,
    /// The preamble's round trips (`setup`), the one under way (all done: the data flows), when
    /// its request was first sent, how often it was sent again, and the RTT estimator of the
    /// connection it is on (its requests' retransmission timer).
    setup: &'static [Step],
    setup_step: usize,
    setup_sent_ns: Nanos,
    setup_tries: u32,
    setup_rtt: RttEstimator,
    /// The preamble's request is out and unanswered (else the timer is the wait after its answer).
    setup_awaits_answer: bool,
    pub stats: SenderStats,
}

impl TcpSender {
    /// `rng`: the flow's congestion-control random stream.
    pub fn new(flow: FlowId, dst: NodeId, spec: &TcpSpec, rng: Rng) -> Self {
        let mut cc = Cc::new(&spec.cc, &spec.cc_profile, &spec.cc_params, "flow").expect("validated congestion control");
        cc.seed_rng(rng);
        let tp = TcpCcView::new(spec.init_cwnd_pkts, spec.mss_bytes);
        let cong_control = cc.has_cong_control();
        let ect_retrans = spec.ecn && crate::cc::algorithm(&spec.cc).is_some_and(|a| a.needs_ecn);
        let wnd = (spec.rwnd_bytes.min(spec.sndbuf_bytes) / spec.mss_bytes as u64).clamp(1, u32::MAX as u64 / 2) as u32;
        let syn_wnd = (syn_window_bytes(spec.mss_bytes, spec.rwnd_bytes) / spec.mss_bytes as u64).max(1) as u32;
        let mut drop_segments = spec.drop_segments.clone();
        drop_segments.sort_unstable();
        drop_segments.dedup();
        TcpSender {
            flow,
            dst,
            recovery: spec.recovery,
            prr: spec.prr,
            timestamps: spec.timestamps,
            ecn: spec.ecn,
            tos: spec.dscp << 2,
            cwr_high: None,
            queue_cwr: false,
            ect_retrans,
            ect: if spec.ect1 { Ecn::ECT1 } else { Ecn::ECT0 },
            mss_bytes: spec.mss_bytes,
            data_bytes: spec.mss_bytes + spec.header_bytes,
            // Before the first ACK: the SYN's window.
            wnd_limit_segs: if spec.rcvbuf_autotuning { wnd.min(syn_wnd) } else { wnd },
            static_wnd_segs: wnd,
            rcv_window: spec.rcvbuf_autotuning,
            cc,
            tp,
            sb: Scoreboard::new(wnd.min(1 << 16) as usize + 16).with_rack(spec.rack).without_sack(!spec.sack),
            snd_nxt: 0,
            dupacks: 0,
            recover: 0,
            recover_set: false,
            partial_acks: 0,
            recovery_start_ns: 0,
            prr_delivered: 0,
            prr_out: 0,
            rtt: RttEstimator::new(spec.initial_rto_ns, spec.min_rto_ns, spec.max_rto_ns),
            backoff: 0,
            cwnd_limited: false,
            active: false,
            drop_segments,
            drop_retransmits: spec.drop_retransmits.clone(),
            cong_control,
            paced: spec.pacing,
            pace_horizon_ns: if spec.fq_pacing { FQ_HORIZON_NS } else { 0 },
            default_pacing_rate: spec.pacing && !cong_control,
            tso: spec.tso,
            skb_left: 0,
            skb_next: 0,
            max_wnd_segs: if spec.rcvbuf_autotuning { wnd.min(syn_wnd) } else { wnd },
            sizing_rate_bps: u64::MAX,
            rto_timer: TimerSlot::default(),
            xmit_timer: XmitTimer::Rto,
            rack: spec.rack,
            reno: spec.recovery == Recovery::Sack && !spec.sack,
            reordering: DUPTHRESH,
            undo: spec.undo,
            undo_marker: false,
            prior_ssthresh: 0,
            retrans_stamp: 0,
            sndbuf: spec.sndbuf_autotuning.then(|| Box::new(SndBuf::new(spec.mss_bytes, spec.sndbuf_bytes))),
            tlp_high_seq: None,
            tlp_retrans: false,
            pace_timer: TimerSlot::default(),
            setup: setup::steps(spec.preamble),
            setup_step: 0,
            setup_sent_ns: 0,
            setup_tries: 0,
            setup_rtt: RttEstimator::new(spec.initial_rto_ns, spec.min_rto_ns, spec.max_rto_ns),
            setup_awaits_answer: false,
            stats: SenderStats::default(),
        }
    }

    #[inline]
    pub fn snd_una(&self) -> u32 {
        self.sb.una()
    }

    #[inline]
    pub fn snd_nxt(&self) -> u32 {
        self.snd_nxt
    }

    #[inline]
    pub fn ca_state(&self) -> CaState {
        self.tp.ca_state
    }

    pub fn in_flight_bytes(&self) -> u64 {
        self.sb.in_flight() as u64 * self.mss_bytes as u64
    }

    /// The application starts (iperf3 connects): the preamble's first request, or, without one,
    /// the data.
    pub fn start(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.active = true;
        if self.setup.is_empty() {
            self.begin_data(now, out);
        } else {
            self.send_setup(now, out);
        }
    }

    /// The preamble's current request, first sent or sent again; its timer is its connection's
    /// RTO, backed off: a SYN opens a connection, whose RTO before a sample is `initial_rto`
    /// (Linux `TCP_TIMEOUT_INIT`, 1 s).
    fn send_setup(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let step = self.setup[self.setup_step];
        let mut p = Packet::new(self.flow, self.dst, Kind::Setup, step.sizes(self.timestamps).0);
        p.seq = self.setup_step as u32;
        p.ts_val_ns = now;
        p.ts_ecr_ns = self.tp.rcv_tsval_ns;
        if self.setup_tries == 0 {
            self.setup_sent_ns = now;
            if step.syn {
                // The data connection's own estimator has no sample yet: a fresh one.
                self.setup_rtt = self.rtt;
            }
        }
        self.rto_timer.deadline = Some(now + self.setup_rtt.rto(self.setup_tries));
        self.xmit_timer = XmitTimer::Setup;
        self.setup_awaits_answer = true;
        out.push(p);
    }

    /// The receiver answered the preamble's current request: its round trip gives an RTT (the
    /// first try's, else, by Karn's rule, the echoed timestamp's); the data connection's SYN-ACK
    /// gives the connection its first sample (Linux `tcp_ack` on the SYN-ACK: srtt, RTO, min
    /// RTT). The next request follows, or, after the last, the data.
    pub fn on_setup_ack(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        if !self.setup_awaits_answer || p.seq as usize != self.setup_step {
            return; // the answer to a request sent again
        }
        let step = self.setup[self.setup_step];
        let rtt = if self.setup_tries == 0 {
            Some(now - self.setup_sent_ns)
        } else {
            (self.timestamps && p.ts_ecr_ns > 0).then(|| ts_rtt_ns(now, p.ts_ecr_ns))
        };
        if let Some(r) = rtt {
            self.setup_rtt.sample(r);
            if step.data_syn() {
                self.rtt = self.setup_rtt;
                self.tp.srtt_ns = self.rtt.srtt_ns;
                self.tp.min_rtt_ns = self.tp.min_rtt_ns.min(r);
            }
        }
        if self.timestamps {
            self.tp.rcv_tsval_ns = p.ts_val_ns;
        }
        self.setup_step += 1;
        self.setup_tries = 0;
        self.setup_awaits_answer = false;
        if step.then_ns > 0 {
            self.rto_timer.deadline = Some(now + step.then_ns);
            return;
        }
        self.rto_timer.deadline = None;
        self.setup_next(now, out);
    }

    /// The preamble goes on: its next request, or, after the last, the data.
    fn setup_next(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.setup_step < self.setup.len() {
            self.send_setup(now, out);
        } else {
            self.xmit_timer = XmitTimer::Rto;
            if self.active {
                self.begin_data(now, out);
            }
        }
    }

    /// The connection is established and the application writes: the congestion control is
    /// initialised now, as Linux does at the end of the handshake.
    fn begin_data(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        self.cc.init(&mut self.tp);
        // An algorithm that sets a pacing rate in `init` paces (Linux `SK_PACING_NEEDED`).
        self.paced |= self.tp.pacing_rate_bps > 0;
        self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        let goal = self.skb_size_goal();
        if let Some(b) = &mut self.sndbuf {
            b.start(self.tp.snd_cwnd, goal);
        }
        self.try_send(now, out);
    }

    fn set_state(&mut self, state: CaState) {
        if self.tp.ca_state != state {
            if state == CaState::Recovery {
                self.recovery_start_ns = self.tp.now_ns;
            } else if self.tp.ca_state == CaState::Recovery {
                self.stats.recovery_ns += self.tp.now_ns - self.recovery_start_ns;
            }
            if state == CaState::Open {
                // Linux `tcp_fastretrans_alert` clears it on every ACK in Open state, where
                // nothing sets it (a loss probe's retransmission does not).
                self.retrans_stamp = 0;
            }
            self.cc.set_state(&mut self.tp, state);
            self.tp.ca_state = state;
        }
    }

    fn arm_rto(&mut self, now: Nanos) {
        self.rto_timer.deadline = Some(now + self.rtt.rto(self.backoff));
        self.xmit_timer = XmitTimer::Rto;
    }

    /// Linux `tcp_rearm_rto`: the RTO, counted from the oldest outstanding segment's send time
    /// when it replaces a pending probe or reordering timer (`from_head`, `tcp_rto_delta_us`),
    /// else from now.
    fn rearm_rto(&mut self, now: Nanos, from_head: bool) {
        if self.sb.packets_out() == 0 {
            self.rto_timer.deadline = None;
            return;
        }
        let rto = self.rtt.rto(self.backoff);
        let at = if from_head { (self.sb.head_xmit_ns() + rto).max(now + 1) } else { now + rto };
        self.rto_timer.deadline = Some(at);
        self.xmit_timer = XmitTimer::Rto;
    }

    /// A probe or reordering timer is pending (Linux `icsk_pending` is one of them).
    fn probe_or_reorder_pending(&self) -> bool {
        self.rto_timer.deadline.is_some() && self.xmit_timer != XmitTimer::Rto
    }

    /// Linux `tcp_schedule_loss_probe`: in Open (or CWR) state with data outstanding, probe
    /// after 2·SRTT (plus the minimum RTO when one segment is out, for its delayed ACK; else
    /// 2 ms), or when the RTO would fire if that is sooner. `advancing`: called for an ACK that
    /// advanced snd_una, when the RTO counts from now. Returns whether a probe was armed.
    fn schedule_loss_probe(&mut self, now: Nanos, advancing: bool) -> bool {
        let packets_out = self.sb.packets_out();
        if !self.rack || packets_out == 0 || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr) {
            return false;
        }
        let mut timeout = if self.rtt.srtt_ns > 0 {
            2 * self.rtt.srtt_ns + if packets_out == 1 { self.rtt.min_rto_ns() } else { TIMEOUT_MIN_US_NS }
        } else {
            self.rtt.rto(0)
        };
        let rto = self.rtt.rto(self.backoff);
        let rto_left = if advancing { rto as i64 } else { (self.sb.head_xmit_ns() + rto) as i64 - now as i64 };
        if rto_left > 0 {
            timeout = timeout.min(rto_left as Nanos);
        }
        // The retransmission timer counts jiffies.
        self.rto_timer.deadline = Some(now + jiffies_ceil_ns(timeout));
        self.xmit_timer = XmitTimer::Probe;
        true
    }

    /// RACK's reordering window (Linux `tcp_rack_reo_wnd`; the engine's links never reorder,
    /// so no reordering is ever seen): none in recovery or once DupThresh segments are SACKed,
    /// else a quarter of the min RTT, at most SRTT.
    fn reo_wnd(&self) -> Nanos {
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Loss) || self.sb.sacked_out >= DUPTHRESH || self.rtt.srtt_ns == 0 {
            0
        } else {
            (self.tp.min_rtt_ns / 4).min(self.rtt.srtt_ns)
        }
    }

    /// Linux `tcp_rack_mark_lost`: after deliveries advanced RACK, mark what is due; arm the
    /// reordering timer for the rest. Returns whether the timer was armed.
    fn rack_mark_lost(&mut self, now: Nanos) -> bool {
        if !self.sb.rack.advanced {
            return false;
        }
        self.sb.rack.advanced = false;
        let wait = self.sb.rack_detect_loss(now, self.reo_wnd());
        if wait > 0 {
            self.rto_timer.deadline = Some(now + jiffies_ceil_ns(wait) + TIMEOUT_MIN_NS);
            self.xmit_timer = XmitTimer::Reorder;
        }
        wait > 0
    }

    /// Departure time of the next burst: now, or its pacing slot (Linux stamps
    /// `skb_mstamp_ns` with it).
    fn departure(&self, now: Nanos) -> Nanos {
        if self.paced {
            self.tp.wstamp_ns.max(now)
        } else {
            now
        }
    }

    /// Send one segment in a pacing slot of its own.
    fn transmit(&mut self, seq: u32, retrans: bool, now: Nanos, out: &mut Vec<Packet>) {
        let depart = self.departure(now);
        self.emit(seq, retrans, false, depart, now, out);
        self.after_send(depart, 1);
    }

    /// Send the next `segs` new segments as one burst (a TSO burst, or one segment): one
    /// departure time, one pacing slot.
    fn send_new(&mut self, segs: u32, now: Nanos, out: &mut Vec<Packet>) {
        let depart = self.departure(now);
        for i in 0..segs {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            // A Linux sender's GSO packet ends with PSH; a lone segment carries none. The
            // testbed's senders set it on the last segment of ~99% of their bursts of two or
            // more and on almost no single segment (docs/tcp.md).
            self.emit(seq, false, self.tso && segs > 1 && i + 1 == segs, depart, now, out);
        }
        self.after_send(depart, segs);
    }

    /// Linux `tcp_update_skb_after_send`: `tcp_wstamp_ns` is the last departure, moved on by
    /// the burst's pacing time when paced.
    fn after_send(&mut self, depart: Nanos, segs: u32) {
        if self.paced {
            self.pace_after_send(depart, segs);
        } else {
            self.tp.wstamp_ns = depart;
        }
    }

    /// Hand one segment to the host with departure time `depart`; `push` sets its PSH flag.
    fn emit(&mut self, seq: u32, retrans: bool, push: bool, depart: Nanos, now: Nanos, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.flow, self.dst, Kind::Data, self.data_bytes);
        p.seq = seq;
        p.flags = u8::from(retrans) | u8::from(push) << 1;
        p.tos = self.tos;
        debug_assert_eq!((Flags::RETRANS, Flags::PUSH), (1, 2));
        if self.ecn {
            self.ecn_send(&mut p, retrans);
        }
        p.ts_val_ns = depart;
        // RFC 7323 §3.2: TSecr echoes the peer's most recent TSval (0 before any ACK).
        p.ts_ecr_ns = self.tp.rcv_tsval_ns;
        self.stats.sent_pkts += 1;
        self.stats.sent_bytes += self.data_bytes as u64;
        let tx = rate::on_send(&mut self.tp, self.sb.packets_out(), depart);
        if retrans {
            self.stats.retrans_pkts += 1;
            if self.retrans_stamp == 0 {
                self.retrans_stamp = ts_ms(depart) + 1;
            }
            self.sb.on_retransmit(seq, depart, tx);
        } else {
            self.sb.push(depart, tx);
        }
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        if self.rack {
            // Linux: new data arms the RTO when nothing was outstanding or a probe was pending
            // (`tcp_event_new_data_sent`); retransmitting the head restarts it unless the
            // reordering timer runs (`tcp_xmit_retransmit_queue`).
            let head = seq == self.sb.una();
            let pending = self.rto_timer.deadline.is_some();
            let probe_pending = pending && self.xmit_timer == XmitTimer::Probe;
            if !pending || (!retrans && probe_pending) {
                self.rearm_rto(now, probe_pending);
            } else if retrans && head && self.xmit_timer != XmitTimer::Reorder {
                self.arm_rto(now);
            }
        } else if self.rto_timer.deadline.is_none() {
            // RFC 6298 (5.1): start the timer when it is not running.
            self.arm_rto(now);
        }
        if !retrans && self.drop_segments.binary_search(&seq).is_ok() {
            self.stats.hook_dropped_pkts += 1;
            return;
        }
        if retrans && !self.drop_retransmits.is_empty() {
            if let Some(i) = self.drop_retransmits.iter().position(|&s| s == seq) {
                self.drop_retransmits.swap_remove(i);
                self.stats.hook_dropped_pkts += 1;
                return;
            }
        }
        out.push(p);
    }

    /// Linux `tcp_ecn_send`: new data is ECN-capable (retransmissions and ACKs are not, unless
    /// the algorithm needs ECN), and the first new segment after a window reduction carries CWR.
    #[inline(never)]
    fn ecn_send(&mut self, p: &mut Packet, retrans: bool) {
        if retrans {
            if self.ect_retrans {
                p.set_ecn(self.ect);
            }
            return;
        }
        p.set_ecn(self.ect);
        if self.queue_cwr {
            self.queue_cwr = false;
            p.set_flag(Flags::CWR, true);
        }
    }

    /// Linux `tcp_update_skb_after_send`: the next burst may leave this one's `segs` segment
    /// times at the pacing rate after it, less up to half of that for time the sender sat idle
    /// past its slot (Linux's allowance for timer jitter).
    fn pace_after_send(&mut self, depart: Nanos, segs: u32) {
        let prior = self.tp.wstamp_ns;
        self.tp.wstamp_ns = depart;
        let rate = self.tp.pacing_rate_bps;
        if rate == 0 || rate == u64::MAX || self.stats.sent_pkts < PACING_AFTER_SEGS {
            return;
        }
        // Payload bytes: Linux paces TSO bursts of up to 64 KB, whose headers are negligible,
        // and its pacing rates count payload (mss · segments / time).
        // bits · 10^9 fits in u64 for any burst under 2 GB; a u128 division costs three times as
        // much on the per-packet path.
        let bits = segs as u64 * self.mss_bytes as u64 * 8;
        let len_ns = match bits.checked_mul(NS_PER_SEC) {
            Some(b) => b / rate,
            None => (bits as u128 * NS_PER_SEC as u128 / rate as u128) as Nanos,
        };
        let credit = self.tp.wstamp_ns - prior;
        self.tp.wstamp_ns += len_ns - (len_ns / 2).min(credit);
    }

    /// Linux `tcp_update_pacing_rate`: 200% of cwnd·mss/srtt while cwnd < ssthresh/2, else 120%
    /// (cwnd here: max(cwnd, packets_out)); unlimited before the first RTT sample.
    fn default_pacing_rate(&self) -> u64 {
        let tp = &self.tp;
        if tp.srtt_ns == 0 {
            return u64::MAX;
        }
        let ratio = if tp.snd_cwnd < tp.snd_ssthresh / 2 { PACING_SS_RATIO_PCT } else { PACING_CA_RATIO_PCT };
        let segs = tp.snd_cwnd.max(self.sb.packets_out()) as u128;
        let bps = tp.mss_bytes as u128 * 8 * NS_PER_SEC as u128 * ratio as u128 * segs / 100 / tp.srtt_ns as u128;
        bps.min(u64::MAX as u128) as u64
    }

    /// Linux `tcp_tso_segs` (`tcp_tso_autosize`): segments per burst, 2^-10 s of data at the
    /// pacing rate, plus a share of 64 KB when the min RTT is below 2^(9+5) µs, at most 64 KB,
    /// at least the algorithm's minimum.
    fn tso_segs(&self) -> u32 {
        let rate_bps = if self.paced { self.tp.pacing_rate_bps } else { self.sizing_rate_bps };
        let mut bytes = if rate_bps == 0 { u64::MAX } else { (rate_bps / 8) >> TSO_PACING_SHIFT };
        let r = (self.tp.min_rtt_ns / 1000) >> TSO_RTT_LOG;
        if r < 32 {
            bytes = bytes.saturating_add(GSO_MAX_BYTES >> r);
        }
        let segs = (bytes.min(GSO_MAX_BYTES) / self.mss_bytes as u64) as u32;
        segs.max(self.cc.min_tso_segs(&self.tp).unwrap_or(MIN_TSO_SEGS))
    }

    /// The segments of the skb after the head, which leaves the queue's second place: the rest of
    /// one a grown head skb took data from, or a whole one.
    fn take_next_skb(&mut self) -> u32 {
        match std::mem::take(&mut self.skb_next) {
            0 => self.skb_size_goal(),
            n => n,
        }
    }

    /// Linux `tcp_xmit_size_goal`: the size of the skbs the application's data is queued in, 64 KB
    /// (`sk_gso_max_size`) or half the largest window offered if less, in whole segments.
    fn skb_size_goal(&self) -> u32 {
        let half_wnd = self.max_wnd_segs as u64 * self.mss_bytes as u64 / 2;
        (GSO_MAX_BYTES.min(half_wnd) / self.mss_bytes as u64).max(1) as u32
    }

    /// Linux `tcp_tso_should_defer`: with `room` segments of cwnd free, less than a burst of
    /// `goal`, wait for the ACK that is about to arrive rather than send a small burst — unless
    /// in recovery, idle for over 1 ms, the rest of the head skb fits (it will get no more data),
    /// a third of the window is free, or no ACK is due within min(1 ms, srtt/2).
    fn tso_should_defer(&self, now: Nanos, room: u32, goal: u32) -> bool {
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Loss) {
            return false;
        }
        if now > self.tp.wstamp_ns + TSO_DEFER_NS {
            return false;
        }
        let send_win = self.wnd_limit_segs.saturating_sub(self.sb.packets_out());
        let limit = room.min(send_win);
        if limit >= goal || limit >= self.skb_left || limit * TSO_WIN_DIVISOR >= self.wnd_limit_segs.min(self.tp.snd_cwnd) {
            return false;
        }
        if self.sb.packets_out() == 0 {
            return false;
        }
        let srtt = self.rtt.srtt_ns;
        let ack_due = self.sb.head_xmit_ns() + srtt;
        ack_due <= now + (srtt / 2).min(TSO_DEFER_NS)
    }

    /// Send what the window allows: lost segments first (RFC 6675 NextSeg rule 1), then new data,
    /// no earlier than pacing allows.
    fn try_send(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let nxt = self.snd_nxt;
        self.send_what_fits(now, out);
        // Linux `tcp_write_xmit`: new data sent re-arms the probe.
        if self.rack && self.snd_nxt != nxt {
            self.schedule_loss_probe(now, false);
        }
    }

    fn send_what_fits(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        loop {
            if self.sb.in_flight() >= self.tp.snd_cwnd {
                self.cwnd_limited = true;
                return;
            }
            let retx = self.sb.next_retransmit();
            let written = self.sndbuf.as_ref().map_or(u32::MAX, |b| b.unsent_segs);
            if retx.is_none() && (!self.active || self.sb.packets_out() >= self.wnd_limit_segs || written == 0) {
                self.cwnd_limited = false;
                if !self.active {
                    rate::check_app_limited(&mut self.tp, self.sb.in_flight());
                }
                return;
            }
            // Linux `tcp_pacing_check`: wait until the next departure time (with fq, TCP Small
            // Queues: until it is within the horizon). The timer fires when that segment is due:
            // what the sender handed down has left by then, and it hands down the next horizon's.
            if self.paced && self.tp.wstamp_ns > now + self.pace_horizon_ns {
                self.pace_timer.deadline = Some(self.tp.wstamp_ns);
                return;
            }
            match retx {
                Some(seq) => self.transmit(seq, true, now, out),
                None if self.tso => {
                    // Linux `tcp_write_xmit`: a burst of at most the TSO goal, the free cwnd
                    // (`tcp_cwnd_test`: at most half of cwnd, so two bursts are in flight) and
                    // the send window.
                    let room = self.tp.snd_cwnd - self.sb.in_flight();
                    let goal = self.tso_segs();
                    let quota = goal.min(room).min((self.tp.snd_cwnd / 2).max(1));
                    if self.skb_left == 0 {
                        self.skb_left = self.take_next_skb();
                    }
                    // Linux `tcp_grow_skb`: a head skb smaller than the quota takes data from the next.
                    if self.skb_left < quota {
                        let next = self.take_next_skb();
                        let pulled = (quota - self.skb_left).min(next);
                        self.skb_left += pulled;
                        self.skb_next = next - pulled;
                    }
                    if self.tso_should_defer(now, room, goal) {
                        self.cwnd_limited = true;
                        return;
                    }
                    let segs = quota.min(self.wnd_limit_segs - self.sb.packets_out()).min(self.skb_left).min(written);
                    self.send_new(segs, now, out);
                    self.skb_left -= segs;
                    if written != u32::MAX {
                        self.sndbuf_sent(segs);
                    }
                }
                None => {
                    self.send_new(1, now, out);
                    if written != u32::MAX {
                        self.sndbuf_sent(1);
                    }
                }
            }
        }
    }

    /// The pacing timer fired: send what was held back.
    pub fn on_pace(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        self.try_send(now, out);
    }

    /// Retransmit `seq` now, whatever the window says (fast retransmit, NewReno's partial ACK).
    fn retransmit_now(&mut self, seq: u32, now: Nanos, out: &mut Vec<Packet>) {
        self.sb.mark_lost(seq);
        if self.sb.is_lost(seq) {
            self.transmit(seq, true, now, out);
        }
    }

    fn enter_recovery(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.stats.recoveries += 1;
        // A recovery's own undo (Linux's DSACK and partial undo) is not modelled, nor a timeout's
        // within it.
        self.undo_marker = false;
        // Linux `tcp_init_cwnd_reduction`: a recovery also tells an ECN receiver (CWR) and
        // supersedes an ECN reduction under way; the count of segments acknowledged towards the
        // next increase starts again, so the window leaves recovery at ssthresh and the ACKs
        // counted before the loss (up to a whole window of them) earn no increase after it.
        self.queue_cwr = self.ecn;
        self.cwr_high = None;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
        self.recover = self.snd_nxt;
        self.recover_set = true;
        self.dupacks = 0;
        self.partial_acks = 0;
        match self.recovery {
            Recovery::Tahoe => {
                // Jacobson 1988: retransmit and slow-start from one segment, resending everything
                // outstanding (go-back-N) — no SACK information to skip what arrived.
                self.set_state(CaState::Loss);
                self.tp.snd_cwnd = 1;
                self.sb.mark_all_lost();
            }
            Recovery::Reno | Recovery::Newreno => {
                // RFC 5681 §3.2 steps 2–3: retransmit, cwnd = ssthresh + 3·SMSS.
                self.set_state(CaState::Recovery);
                if !self.cong_control {
                    self.tp.snd_cwnd = self.tp.snd_ssthresh + DUPTHRESH;
                }
                let una = self.snd_una();
                self.retransmit_now(una, now, out);
            }
            Recovery::Sack if self.rack => {
                // RACK has marked the losses; PRR (or cwnd = ssthresh) sends their repairs.
                self.set_state(CaState::Recovery);
                self.prr_delivered = 0;
                self.prr_out = 0;
                self.tlp_high_seq = None;
                if !self.prr && !self.cong_control {
                    self.tp.snd_cwnd = self.tp.snd_ssthresh;
                }
            }
            Recovery::Sack => {
                self.set_state(CaState::Recovery);
                self.prr_delivered = 0;
                self.prr_out = 0;
                let una = self.snd_una();
                self.sb.mark_lost(una);
                self.sb.mark_lost_by_sack(DUPTHRESH);
                if !self.prr || self.cong_control {
                    // RFC 6675 §5 (4.2): cwnd = ssthresh; (4.3): retransmit the first lost segment.
                    if !self.cong_control {
                        self.tp.snd_cwnd = self.tp.snd_ssthresh;
                    }
                    self.retransmit_now(una, now, out);
                }
            }
        }
    }

    /// Whether window reductions follow Linux: PRR spreads them over the ACKs of a round trip
    /// (SACK recovery with `prr`); otherwise cwnd falls to ssthresh at once.
    fn prr_reduces(&self) -> bool {
        self.recovery == Recovery::Sack && self.prr
    }

    /// An ACK with ECE (RFC 3168 §6.1.2; Linux `tcp_enter_cwr`, `tcp_init_cwnd_reduction`):
    /// ssthresh from the algorithm, at most once per window of data. With PRR the window falls
    /// towards it over the next round trip (CWR state); otherwise (ns-2's agents) cwnd =
    /// ssthresh at once, and the state stays as it was.
    fn enter_cwr(&mut self) {
        if self.cwr_high.is_some() {
            return;
        }
        self.stats.ecn_reductions += 1;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
        self.cwr_high = Some(self.snd_nxt);
        self.queue_cwr = true;
        if self.prr_reduces() {
            self.prr_delivered = 0;
            self.prr_out = 0;
            self.tlp_high_seq = None;
            self.set_state(CaState::Cwr);
        } else if !self.cong_control {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
        }
    }

    /// An ACK in Open, Disorder or CWR state that carries ECE, or comes during an ECN reduction
    /// (Linux `tcp_try_to_open`): ECE starts a reduction; in CWR, PRR sets the window; otherwise
    /// Open or Disorder as for any ACK.
    #[inline(never)]
    fn ecn_ack(&mut self, ece: bool, delivered: u32, una_advanced: bool, newly_lost: u32) {
        if ece {
            self.enter_cwr();
        }
        if self.tp.ca_state == CaState::Cwr && self.cwr_high.is_some() {
            self.prr_update(delivered, una_advanced, newly_lost);
        } else if self.dupacks > 0 || self.sb.sacked_out > 0 {
            self.set_state(CaState::Disorder);
        } else {
            self.set_state(CaState::Open);
        }
    }

    /// The ECN reduction's end, once something above its start is acknowledged (Linux
    /// `tcp_fastretrans_alert`, `tcp_end_cwnd_reduction`): from CWR, cwnd = ssthresh and Open.
    #[cold]
    fn end_cwr(&mut self) {
        self.cwr_high = None;
        if self.tp.ca_state == CaState::Cwr {
            if !self.cong_control && self.tp.snd_ssthresh < INFINITE_SSTHRESH {
                self.tp.snd_cwnd = self.tp.snd_ssthresh;
            }
            self.set_state(CaState::Open);
            self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
        }
    }

    fn exit_recovery(&mut self) {
        // Linux `tcp_end_cwnd_reduction`: cwnd = ssthresh. RFC 6582 §3.2 step 3 (full ACK),
        // option (2); RFC 6937: cwnd = ssthresh on exit. Not for `cong_control` algorithms.
        if !self.cong_control {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
        }
        self.dupacks = 0;
        self.set_state(CaState::Open);
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// Linux's duplicate-ACK accounting without SACK (`tcp_remove_reno_sacks`,
    /// `tcp_reset_reno_sack`, `tcp_add_reno_sack`): an ACK of new data delivered one segment
    /// (the hole) plus those acknowledged beyond the duplicates already counted, and the count
    /// drops by what it covered (outside a recovery it starts again); a duplicate ACK delivered
    /// one segment, counted in every state but Loss, and there only once new data has left
    /// after the timeout's `recover`. Returns the segments delivered.
    fn reno_ack(&mut self, acked: u32, dupack: bool) -> u32 {
        let una = self.snd_una();
        let state = self.tp.ca_state;
        let mut delivered = 0;
        if acked > 0 {
            delivered = acked.saturating_sub(self.sb.sacked_out).max(1);
            self.sb.sacked_out = self.sb.sacked_out.saturating_sub(acked - 1);
            self.check_reno_reordering(acked);
            if !(state == CaState::Recovery && una < self.recover) {
                self.sb.sacked_out = 0;
            }
        }
        let counted = match state {
            CaState::Recovery => una < self.recover,
            CaState::Loss => una < self.recover && self.snd_nxt > self.recover,
            _ => true,
        };
        if dupack && counted {
            let prior = self.sb.sacked_out;
            self.sb.sacked_out += 1;
            self.check_reno_reordering(0);
            delivered += self.sb.sacked_out - prior;
        }
        delivered
    }

    /// Linux `tcp_limit_reno_sacked` and `tcp_check_reno_reordering`: more duplicates than
    /// segments out beyond the holes means reordering, not loss. The count is capped, and the
    /// threshold rises to the segments out (plus those just acknowledged), at most
    /// [`MAX_REORDERING`]; it never falls again.
    fn check_reno_reordering(&mut self, addend: u32) {
        let packets_out = self.sb.packets_out();
        let holes = self.sb.lost_out.max(1).min(packets_out);
        if self.sb.sacked_out + holes > packets_out {
            self.sb.sacked_out = packets_out - holes;
            self.reordering = (packets_out + addend).min(MAX_REORDERING);
        }
    }

    /// RFC 6937 PRR as Linux `tcp_cwnd_reduction` (since 5.19: CRB by default, SS only when
    /// snd_una advanced without new losses): while pipe > ssthresh, send ⌈prr_delivered ·
    /// ssthresh / RecoverFS⌉ − prr_out (RecoverFS = cwnd at entry); otherwise send what was
    /// delivered and not yet sent, max(prr_delivered − prr_out, delivered), plus one when the ACK
    /// advanced snd_una and marked nothing lost, never past ssthresh.
    fn prr_update(&mut self, delivered: u32, una_advanced: bool, newly_lost: u32) {
        if delivered == 0 || self.cong_control {
            return;
        }
        self.prr_delivered += delivered;
        let pipe = self.sb.in_flight() as i64;
        let ssthresh = self.tp.snd_ssthresh as i64;
        let delta = ssthresh - pipe;
        let prior = self.tp.prior_cwnd.max(1) as i64;
        let mut sndcnt = if delta < 0 {
            (ssthresh * self.prr_delivered as i64 + prior - 1) / prior - self.prr_out as i64
        } else {
            let owed = (self.prr_delivered as i64 - self.prr_out as i64).max(delivered as i64);
            delta.min(owed + (una_advanced && newly_lost == 0) as i64)
        };
        // Force the fast retransmit on entering recovery.
        sndcnt = sndcnt.max(if self.prr_out == 0 { 1 } else { 0 });
        self.tp.snd_cwnd = (pipe + sndcnt.max(0)).max(1) as u32;
    }

    /// An ACK arrived.
    pub fn on_ack(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        let una = self.snd_una();
        if p.ack < una || p.ack > self.snd_nxt {
            return; // old or bogus
        }
        let ece = self.ecn && p.has(Flags::ECE);
        let prior_in_flight = self.sb.in_flight();
        let packets_out = self.sb.packets_out();
        let prior_lost = self.sb.lost_total;
        self.sb.rate = RateAcc::default();
        if self.rack {
            self.sb.set_ack_context(now, self.tp.min_rtt_ns, if self.timestamps { p.ts_ecr_ns } else { 0 });
        }
        let acked = self.sb.ack(p.ack);
        let una_advanced = acked.segs > 0;
        if self.rcv_window {
            // Linux `tcp_ack_update_window`: the window counts from the ACK; a segment is sent
            // only whole (`tcp_snd_wnd_test`). The modelled reader never lets the window close,
            // so the zero-window probe is not modelled: at least one segment.
            self.wnd_limit_segs = self.static_wnd_segs.min((p.window_bytes() / self.mss_bytes as u64) as u32).max(1);
            self.max_wnd_segs = self.max_wnd_segs.max(self.wnd_limit_segs);
        }
        self.tp.snd_una = p.ack;
        self.tp.snd_nxt = self.snd_nxt;
        if self.timestamps {
            (self.tp.rcv_tsval_ns, self.tp.rcv_tsecr_ns) = (p.ts_val_ns, p.ts_ecr_ns);
        }
        let mut newly_sacked = 0;
        for (i, &(s, e)) in p.sack_blocks().iter().enumerate() {
            newly_sacked += self.sb.sack(s, e, i);
        }
        if self.rack {
            self.sb.finish_ack();
        }

        // RTT, as Linux `tcp_clean_rtx_queue` and `tcp_ack_update_rtt`. For srtt (`seq_rtt`): the
        // oldest cumulatively acknowledged segment (Karn: none retransmitted), else the oldest
        // never-retransmitted one this ACK SACKs, else, when the ACK advances snd_una, the echoed
        // timestamp (RFC 7323 §4) in whole ticks of the millisecond timestamp clock
        // (`tcp_rtt_tsopt_us`). For the algorithm, the rate sample and min RTT (`ca_rtt`): the
        // newest such SACKed segment, else the newest acknowledged one, else the timestamp's.
        let (mut seq_rtt, mut ca_rtt) = match (acked.first_xmit_ns, acked.last_xmit_ns) {
            (Some(f), Some(l)) if !acked.retrans_acked => (Some(now - f), Some(now - l)),
            _ => (None, None),
        };
        if let (Some(first), Some(last)) = (self.sb.rate.first_sackt_ns, self.sb.rate.last_sackt_ns) {
            seq_rtt = seq_rtt.or(Some(now - first));
            ca_rtt = Some(now - last);
        }
        if seq_rtt.is_none() && una_advanced && self.timestamps && p.ts_ecr_ns > 0 {
            let r = ts_rtt_ns(now, p.ts_ecr_ns);
            (seq_rtt, ca_rtt) = (Some(r), Some(r));
        }
        if let Some(r) = seq_rtt {
            self.rtt.sample(r);
            self.tp.srtt_ns = self.rtt.srtt_ns;
        }
        // Linux `tcp_update_rtt_min`: the min RTT the algorithms (`tcp_min_rtt`), RACK and the
        // rate sample read.
        if let Some(r) = ca_rtt {
            self.tp.min_rtt_ns = self.tp.min_rtt_ns.min(r);
        }
        if una_advanced {
            // RFC 6298 (5.7)-(5.3): a new ACK ends backoff and restarts the timer.
            self.backoff = 0;
        }
        // RFC 5681 §2: a duplicate ACK acknowledges nothing new while data is outstanding.
        let is_dupack = !una_advanced && packets_out > 0;
        let delivered = if self.reno { self.reno_ack(acked.segs, is_dupack) } else { acked.not_sacked + newly_sacked };
        self.tp.delivered = self.tp.delivered.wrapping_add(delivered);
        if delivered > 0 {
            let sample = AckSample { pkts_acked: delivered, rtt_ns: ca_rtt, in_flight: prior_in_flight };
            self.cc.pkts_acked(&mut self.tp, &sample);
        }
        if self.ecn {
            // Linux `tcp_count_delivered` (with ECE) and `tcp_in_ack_event`.
            if ece {
                self.tp.delivered_ce = self.tp.delivered_ce.wrapping_add(delivered);
            }
            self.cc.in_ack_event(&mut self.tp);
        }
        if self.rack {
            self.process_tlp_ack(p.ack, una_advanced, newly_sacked > 0);
        }
        let mut reo_armed = false;
        // RFC 6298 (5.3): restart the timer when new data is acknowledged.
        let mut restart_rto = una_advanced;

        match self.tp.ca_state {
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                // Linux `tcp_fastretrans_alert`: an ECN reduction ends once something above its
                // start is acknowledged (the answer to its CWR segment).
                if let Some(high) = self.cwr_high {
                    if self.snd_una() > high {
                        self.end_cwr();
                    }
                }
                if is_dupack {
                    self.dupacks += 1;
                } else if una_advanced {
                    self.dupacks = 0;
                }
                let time_to_recover = match self.recovery {
                    // Linux `tcp_time_to_recover` with RACK: a segment is marked lost.
                    Recovery::Sack if self.rack => {
                        reo_armed = self.rack_mark_lost(now);
                        self.sb.lost_out > 0
                    }
                    // Linux `tcp_newreno_mark_lost`: `reordering` duplicates mark the head lost.
                    Recovery::Sack if self.reno => {
                        if self.sb.sacked_out >= self.reordering {
                            self.sb.mark_lost(self.snd_una());
                        }
                        self.sb.lost_out > 0
                    }
                    Recovery::Sack => {
                        self.sb.mark_lost_by_sack(DUPTHRESH);
                        self.dupacks >= DUPTHRESH || self.sb.lost_out > 0
                    }
                    // RFC 6582 §4.1 (ns-2's `bug_fix_`): after a loss episode, duplicate ACKs
                    // trigger fast retransmit only once they cover more than `recover`, so the
                    // duplicates a go-back-N resend provokes do not start another one. Classic
                    // Reno (RFC 5681) has no such check.
                    Recovery::Reno => self.dupacks >= DUPTHRESH,
                    Recovery::Tahoe | Recovery::Newreno => {
                        self.dupacks >= DUPTHRESH && (!self.recover_set || self.snd_una() > self.recover)
                    }
                };
                if time_to_recover {
                    self.enter_recovery(now, out);
                    if self.recovery == Recovery::Sack && self.prr {
                        let newly_lost = self.sb.lost_total.wrapping_sub(prior_lost);
                        self.prr_update(delivered.max(1), una_advanced, newly_lost);
                    }
                } else if ece || self.cwr_high.is_some() {
                    self.ecn_ack(ece, delivered, una_advanced, self.sb.lost_total.wrapping_sub(prior_lost));
                } else if self.dupacks > 0 || self.sb.sacked_out > 0 {
                    self.set_state(CaState::Disorder);
                } else {
                    self.set_state(CaState::Open);
                }
            }
            CaState::Recovery => {
                if self.reno && self.snd_una() == self.recover {
                    // Linux `tcp_is_non_sack_preventing_reopen`: without SACK, Recovery holds
                    // until something above `recover` is acknowledged (RFC 6582 §3.2 step 6's
                    // caution against a false fast retransmit); PRR still sets the window.
                    if self.prr {
                        self.prr_update(delivered, una_advanced, 0);
                    }
                } else if self.snd_una() >= self.recover {
                    self.exit_recovery();
                } else {
                    match self.recovery {
                        Recovery::Reno => {
                            if una_advanced {
                                // RFC 5681 §3.2 step 6: the first ACK of new data ends recovery.
                                self.exit_recovery();
                            } else if is_dupack && !self.cong_control {
                                self.tp.snd_cwnd += 1; // step 4: inflate
                            }
                        }
                        Recovery::Newreno => {
                            if una_advanced {
                                // RFC 6582 §3.2 step 5: partial ACK — retransmit the next hole,
                                // deflate by what was acknowledged, add back one segment.
                                self.partial_acks += 1;
                                let una = self.snd_una();
                                self.retransmit_now(una, now, out);
                                if !self.cong_control {
                                    self.tp.snd_cwnd = self.tp.snd_cwnd.saturating_sub(acked.segs).max(1) + 1;
                                }
                                // RFC 6582 §4 "Impatient" variant: only the first partial ACK
                                // restarts the timer, so a window with many holes ends in an RTO
                                // rather than one repair per RTT.
                                restart_rto = self.partial_acks == 1;
                            } else if is_dupack && !self.cong_control {
                                self.tp.snd_cwnd += 1;
                            }
                        }
                        Recovery::Sack => {
                            if self.rack {
                                reo_armed = self.rack_mark_lost(now);
                            } else if self.reno {
                                // Linux `tcp_newreno_mark_lost`: a partial ACK marks the new
                                // head lost; its repair goes out as the window allows.
                                if una_advanced {
                                    self.sb.mark_lost(self.snd_una());
                                }
                            } else {
                                self.sb.mark_lost_by_sack(DUPTHRESH);
                            }
                            if self.prr {
                                let newly_lost = self.sb.lost_total.wrapping_sub(prior_lost);
                                self.prr_update(delivered, una_advanced, newly_lost);
                            }
                        }
                        Recovery::Tahoe => unreachable!("tahoe recovers in Loss state"),
                    }
                }
            }
            CaState::Loss if self.undo_marker && una_advanced && self.packet_delayed(p) => {
                self.undo_loss();
                reo_armed = self.reopen_after_undo(now, delivered, prior_lost, out);
            }
            CaState::Loss => {
                if self.rack {
                    reo_armed = self.rack_mark_lost(now);
                } else if self.recovery == Recovery::Sack {
                    self.sb.mark_lost_by_sack(DUPTHRESH);
                }
                // Without SACK, Loss too holds until the ACK passes `recover` (Linux
                // `tcp_process_loss`, `tcp_try_undo_recovery`).
                if self.snd_una() > self.recover || (self.snd_una() == self.recover && !self.reno) {
                    self.dupacks = 0;
                    self.undo_marker = false;
                    self.set_state(CaState::Open);
                }
            }
        }

        // Linux `tcp_cong_control`: an algorithm with `cong_control` gets every ACK's
        // delivery-rate sample and sets cwnd and pacing itself; the others grow the window
        // (`tcp_cong_avoid`) outside cwnd reduction.
        // Linux `tcp_rate_gen`; the sample's RTT is the newest segment's, SACKed ones included.
        let lost = self.sb.lost_total.wrapping_sub(prior_lost);
        self.tp.lost = self.sb.lost_total;
        let acc = self.sb.rate;
        let rs = rate::gen(&mut self.tp, &acc, delivered, lost, prior_in_flight, ca_rtt, now);
        if self.cong_control {
            // For `cong_control`, in flight after the ACK (Linux reads `tcp_packets_in_flight`).
            self.tp.packets_in_flight = self.sb.in_flight();
            self.cc.cong_control(&mut self.tp, &rs);
        } else if una_advanced && !matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.tp.packets_in_flight = prior_in_flight;
            self.tp.is_cwnd_limited = self.cwnd_limited
                || prior_in_flight >= self.tp.snd_cwnd
                || (self.tp.in_slow_start() && self.tp.snd_cwnd < 2 * prior_in_flight);
            // Linux `tcp_cong_control` passes what the ACK newly delivered: the ACK that ends a
            // recovery does not also credit the segments SACKed during it.
            self.cc.cong_avoid(&mut self.tp, p.ack, delivered);
        }
        if self.default_pacing_rate {
            self.tp.pacing_rate_bps = self.default_pacing_rate();
        } else if self.tso && !self.cong_control {
            self.sizing_rate_bps = self.default_pacing_rate();
        }

        if self.sb.packets_out() == 0 {
            self.rto_timer.deadline = None; // RFC 6298 (5.2)
        } else if self.rack {
            // Linux `tcp_set_xmit_timer` (FLAG_SET_XMIT_TIMER: snd_una advanced and RACK did
            // not just arm its reordering timer): the probe if one may run, else the RTO.
            if una_advanced && !reo_armed {
                let from_head = self.probe_or_reorder_pending();
                if !self.schedule_loss_probe(now, true) {
                    self.rearm_rto(now, from_head);
                }
            }
        } else if restart_rto {
            self.arm_rto(now);
        }
        if self.sndbuf.is_some() {
            self.refill_sndbuf(p.ack);
        }
        self.try_send(now, out);
        #[cfg(debug_assertions)]
        if self.stats.sent_pkts % 1024 == 0 {
            self.sb.check();
        }
    }

    /// A burst of `segs` new segments, the last sent, leaves the send buffer's unsent data.
    #[cold]
    #[inline(never)]
    fn sndbuf_sent(&mut self, segs: u32) {
        if let Some(b) = &mut self.sndbuf {
            b.on_sent(self.snd_nxt - segs, segs);
        }
    }

    /// An ACK (`tcp_check_space`, on every ACK while the writer waits): what it acknowledged
    /// leaves the send buffer, the buffer grows for the window while the window has room, and the
    /// writer may wake and write. Linux checks after sending what it could, but TCP Small Queues
    /// and TSO deferral leave room in the window then on most ACKs (the testbed's buffer followed
    /// 2 · cwnd · 2304 bytes at every cwnd through slow start and congestion avoidance, with data
    /// waiting to be sent), so here the check comes before the sender sends.
    #[cold]
    #[inline(never)]
    fn refill_sndbuf(&mut self, una: u32) {
        let goal = self.skb_size_goal();
        let (cwnd, in_flight, reordering) = (self.tp.snd_cwnd, self.sb.in_flight(), self.reordering);
        if let Some(b) = &mut self.sndbuf {
            b.on_acked(una);
            b.after_ack(cwnd, in_flight, reordering, goal);
        }
    }

    /// Linux `tcp_process_tlp_ack`: the ACK of a probe. A probe of new data, or one answered by
    /// a pure duplicate ACK (the original arrived too), ends the episode; a retransmitted probe
    /// whose ACK covers more than it repaired a loss: the window is reduced once (CWR).
    fn process_tlp_ack(&mut self, ack: u32, una_advanced: bool, sacked: bool) {
        let Some(high) = self.tlp_high_seq else { return };
        if ack < high {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_high_seq = None;
        } else if ack > high {
            // tcp_init_cwnd_reduction, CWR, tcp_end_cwnd_reduction.
            self.tlp_high_seq = None;
            self.cwr_high = None;
            self.queue_cwr = self.ecn;
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_cwnd_cnt = 0;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.set_state(CaState::Cwr);
            if !self.cong_control && self.tp.snd_ssthresh < INFINITE_SSTHRESH {
                self.tp.snd_cwnd = self.tp.snd_ssthresh;
            }
            self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
        } else if !una_advanced && !sacked {
            self.tlp_high_seq = None;
        }
    }

    /// The retransmission timer slot fired: an RTO, RACK's reordering timer or a loss probe.
    pub fn on_rto(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        match self.xmit_timer {
            XmitTimer::Rto => self.on_retransmission_timeout(now, out),
            XmitTimer::Reorder => self.on_reorder_timeout(now, out),
            XmitTimer::Probe => self.on_loss_probe(now, out),
            // A request unanswered (sent again), or the wait after an answer over.
            XmitTimer::Setup if self.setup_awaits_answer => {
                self.setup_tries += 1;
                self.send_setup(now, out);
            }
            XmitTimer::Setup => self.setup_next(now, out),
        }
    }

    /// Linux `tcp_rack_reo_timeout`: mark what is now due; if anything was, recover (from any
    /// state but Recovery) and send the repairs; then the RTO.
    fn on_reorder_timeout(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        let prior_in_flight = self.sb.in_flight();
        let prior_lost = self.sb.lost_total;
        self.sb.rack_detect_loss(now, self.reo_wnd());
        if self.sb.in_flight() != prior_in_flight {
            if self.tp.ca_state != CaState::Recovery {
                self.enter_recovery(now, out);
                if self.prr && !self.cong_control {
                    self.prr_update(1, false, self.sb.lost_total.wrapping_sub(prior_lost));
                }
            }
            self.send_what_fits(now, out);
        }
        // The reordering timer was the pending one: the RTO counts from the oldest segment.
        self.rearm_rto(now, true);
    }

    /// Linux `tcp_send_loss_probe`: one new segment if the receiver's window allows (whatever
    /// cwnd says), else the last segment again; at most one probe outstanding. Then the RTO.
    fn on_loss_probe(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.tp.now_ns = now;
        if self.sb.packets_out() == 0 {
            return;
        }
        if self.tlp_high_seq.is_none() {
            let written = self.sndbuf.as_ref().is_none_or(|b| b.unsent_segs > 0);
            let sent = if self.active && self.sb.packets_out() < self.wnd_limit_segs && written {
                self.send_new(1, now, out);
                if self.sndbuf.is_some() {
                    self.sndbuf_sent(1);
                }
                self.tlp_retrans = false;
                true
            } else {
                let last = self.snd_nxt - 1;
                let fresh = !self.sb.is_sacked(last) && !self.sb.is_retransmitted(last);
                if fresh {
                    // Linux's probe (`__tcp_retransmit_skb`) leaves `retrans_stamp` alone.
                    let stamp = self.retrans_stamp;
                    self.transmit(last, true, now, out);
                    self.retrans_stamp = stamp;
                    self.tlp_retrans = true;
                }
                fresh
            };
            if sent {
                self.stats.loss_probes += 1;
                self.tlp_high_seq = Some(self.snd_nxt);
                // Linux clears icsk_pending: the RTO counts from now.
                self.rearm_rto(now, false);
                return;
            }
        }
        // The probe was the pending timer: the RTO counts from the oldest segment.
        self.rearm_rto(now, true);
    }

    /// The retransmission timer expired (RFC 6298 (5.4)-(5.7), Linux `tcp_enter_loss`).
    fn on_retransmission_timeout(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.sb.packets_out() == 0 {
            return;
        }
        self.tp.now_ns = now;
        self.stats.rto_count += 1;
        // Linux `tcp_enter_loss`: a timeout during a reduction (Recovery, Loss, an ECN
        // reduction's CWR) is the same episode while the reduction's window is unacknowledged
        // (`high_seq`), and keeps its ssthresh (an RFC-style inflated cwnd must not set it),
        // unless it is the first timeout in Loss since an ACK of new data (`icsk_retransmits` 0,
        // as `backoff` here): the Loss episode's repairs got through and a new loss followed.
        let state = self.tp.ca_state;
        let high = if state == CaState::Cwr { self.cwr_high.unwrap_or(0) } else { self.recover };
        if matches!(state, CaState::Open | CaState::Disorder)
            || self.snd_una() >= high
            || (state == CaState::Loss && self.backoff == 0)
        {
            // Linux `tcp_current_ssthresh`: in a reduction its ssthresh, else at least 3/4 cwnd.
            self.prior_ssthresh = if matches!(state, CaState::Recovery | CaState::Cwr) {
                self.tp.snd_ssthresh
            } else {
                self.tp.snd_ssthresh.max((self.tp.snd_cwnd >> 1) + (self.tp.snd_cwnd >> 2))
            };
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            // Linux `tcp_init_undo`: a later timeout of the same episode keeps it.
            self.undo_marker = self.undo;
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        // Linux `tcp_enter_loss`: the timeout ends an ECN reduction and tells the receiver (CWR).
        self.cwr_high = None;
        self.queue_cwr = self.ecn;
        self.set_state(CaState::Loss);
        self.tp.snd_cwnd = 1;
        self.tp.snd_cwnd_cnt = 0;
        self.recover = self.snd_nxt;
        self.recover_set = true;
        self.dupacks = 0;
        if self.rack {
            self.tlp_high_seq = None;
            self.sb.mark_timeout_lost(now);
        } else {
            self.sb.mark_all_lost();
        }
        self.backoff += 1;
        self.arm_rto(now);
        self.try_send(now, out);
    }

    /// Linux `tcp_packet_delayed` (Eifel detection, RFC 3522): ACK `p` echoes a timestamp from
    /// before the episode's first retransmission, so what it acknowledges is an original that was
    /// delayed, not lost; with no retransmission sent yet, a SACK connection's ACK of new data says
    /// the same. Timestamps are compared in whole milliseconds, Linux's timestamp clock.
    #[cold]
    fn packet_delayed(&self, p: &Packet) -> bool {
        if self.retrans_stamp == 0 {
            return true;
        }
        self.timestamps && p.ts_ecr_ns > 0 && ts_ms(p.ts_ecr_ns) + 1 < self.retrans_stamp
    }

    /// Linux `tcp_try_undo_loss` and `tcp_undo_cwnd_reduction`: the timeout was spurious. No
    /// segment stays marked lost, the window and ssthresh go back to what they were before it
    /// (the algorithm's `undo_cwnd`), and the connection is Open again (a SACK connection, as
    /// every one with `undo` is; Linux keeps one without SACK in Loss until the ACK passes
    /// `recover`).
    #[cold]
    fn undo_loss(&mut self) {
        self.sb.undo_lost();
        if self.prior_ssthresh > 0 {
            self.tp.snd_cwnd = self.cc.undo_cwnd(&self.tp);
            if self.prior_ssthresh > self.tp.snd_ssthresh {
                self.tp.snd_ssthresh = self.prior_ssthresh;
                // Linux `tcp_ecn_withdraw_cwr`.
                self.queue_cwr = false;
            }
        }
        self.undo_marker = false;
        self.stats.undos += 1;
        self.set_state(CaState::Open);
    }

    /// After an undo, the ACK is looked at as in Open state (Linux falls through to
    /// `tcp_fastretrans_alert`'s default case): what RACK (or RFC 6675's rule) now marks lost
    /// starts a recovery of its own. Returns whether RACK armed its reordering timer.
    #[cold]
    fn reopen_after_undo(&mut self, now: Nanos, delivered: u32, prior_lost: u32, out: &mut Vec<Packet>) -> bool {
        // Segments whose retransmission is out stay marked (`Scoreboard::undo_lost`); Linux has
        // unmarked them, so only a loss marked now starts a recovery.
        let kept = self.sb.lost_out;
        let reo_armed = if self.rack {
            self.rack_mark_lost(now)
        } else {
            self.sb.mark_lost_by_sack(DUPTHRESH);
            false
        };
        if self.sb.lost_out > kept {
            self.enter_recovery(now, out);
            if self.prr {
                let newly_lost = self.sb.lost_total.wrapping_sub(prior_lost);
                self.prr_update(delivered.max(1), true, newly_lost);
            }
        } else if self.sb.sacked_out > 0 {
            self.set_state(CaState::Disorder);
        }
        reo_armed
    }

    /// The slow-start threshold in bytes, or `None` while it is still infinite.
    pub fn ssthresh_bytes(&self) -> Option<u64> {
        (self.tp.snd_ssthresh < INFINITE_SSTHRESH).then(|| self.tp.snd_ssthresh as u64 * self.mss_bytes as u64)
    }

    /// The rate the sender paces at, bit/s of payload (Linux `sk_pacing_rate` × 8); `None` when it
    /// does not pace, or paces without a limit yet (before its first RTT sample).
    pub fn pacing_rate_bps(&self) -> Option<u64> {
        let rate = self.tp.pacing_rate_bps;
        (self.paced && rate > 0 && rate != u64::MAX).then_some(rate)
    }
}
