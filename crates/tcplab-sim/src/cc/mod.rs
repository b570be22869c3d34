//! Congestion control, mirroring Linux's `struct tcp_congestion_ops` (include/net/tcp.h) hook for
//! hook, so that `cc/<name>.rs` reads beside `net/ipv4/tcp_<name>.c`.
//!
//! An algorithm sees a narrow view of the connection ([`TcpCcView`]: cwnd, its counter, ssthresh,
//! in-flight, MSS, RTT, delivery counters, pacing rate) and, per ACK, a delivery-rate sample
//! ([`RateSample`]) — never the socket, the queue or the scheduler. Windows are in segments,
//! like Linux's `snd_cwnd`. Loss recovery (Tahoe, Reno, NewReno, SACK/PRR) lives in the sender and
//! is chosen separately.
//!
//! Dispatch is an enum ([`Cc`]) so the per-ACK path has no dynamic dispatch.

mod bbr;
mod bic;
mod compound;
mod cubic;
mod dctcp;
pub mod helpers;
mod highspeed;
mod htcp;
pub mod hybla;
pub mod illinois;
pub mod lp;
pub mod params;
mod reno;
mod scalable;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod yeah;

pub use bbr::Bbr;
pub use bic::Bic;
pub use compound::Compound;
pub use cubic::Cubic;
pub use dctcp::Dctcp;
pub use highspeed::HighSpeed;
pub use htcp::Htcp;
pub use hybla::Hybla;
pub use illinois::Illinois;
pub use lp::Lp;
pub use params::{Param, ParamValues};
pub use reno::Reno;
pub use scalable::Scalable;
pub use vegas::Vegas;
pub use veno::Veno;
pub use westwood::Westwood;
pub use yeah::Yeah;

use std::collections::BTreeMap;

use crate::error::SpecError;
use crate::rng::Rng;
use crate::time::Nanos;

/// Linux's `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// A congestion control as users see it: its name, what it is, where it comes from, its
/// parameters, and how to build it.
#[derive(Clone, Copy, Debug)]
pub struct Algorithm {
    /// The name users type (Linux's module name where there is one).
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// One line: what it does.
    pub about: &'static str,
    /// The paper or RFC it implements.
    pub reference: &'static str,
    /// The Linux source file it mirrors, if any.
    pub linux: &'static str,
    pub params: &'static [Param],
    pub build: fn(&ParamValues) -> Cc,
    /// The algorithm runs only with ECN (Linux `TCP_CONG_NEEDS_ECN`): every segment leaves
    /// ECN-capable and the receiver echoes each CE mark as DCTCP's does.
    pub needs_ecn: bool,
}

/// Every congestion control, in the order `tcplab variants` lists them.
pub const ALGORITHMS: &[Algorithm] = &[
    Algorithm {
        name: "reno",
        aliases: &["newreno"],
        about: "Slow start, +1 segment per RTT, halve on loss",
        reference: "RFC 5681",
        linux: "net/ipv4/tcp_cong.c (tcp_reno_*)",
        params: &[],
        build: |_| Cc::Reno(Reno),
        needs_ecn: false,
    },
    Algorithm {
        name: "bic",
        aliases: &["bictcp"],
        about: "Binary search toward the window of the last loss, at most 16 segments per RTT; cut to 0.8",
        reference: "Xu, Harfoush, Rhee, INFOCOM 2004",
        linux: "net/ipv4/tcp_bic.c",
        params: bic::PARAMS,
        build: |p| Cc::Bic(Bic::new(p)),
        needs_ecn: false,
    },
    Algorithm {
        name: "cubic",
        aliases: &[],
        about: "Window a cubic function of time since the last loss, TCP-friendly region, HyStart; cut to 0.7",
        reference: "RFC 9438; Ha, Rhee, Xu, ACM SIGOPS OSR 2008",
        linux: "net/ipv4/tcp_cubic.c",
        params: cubic::PARAMS,
        build: |p| Cc::Cubic(Cubic::new(p)),
        needs_ecn: false,
    },
    Algorithm {
        name: "highspeed",
        aliases: &["hstcp"],
        about: "Increase a(w) and decrease b(w) from RFC 3649's table: more aggressive at large windows",
        reference: "RFC 3649",
        linux: "net/ipv4/tcp_highspeed.c",
        params: highspeed::PARAMS,
        build: |_| Cc::HighSpeed(HighSpeed::default()),
        needs_ecn: false,
    },
    Algorithm {
        name: "htcp",
        aliases: &[],
        about: "Increase grows with time since the last loss, RTT-scaled; backoff RTT_min/RTT_max",
        reference: "Leith, Shorten, PFLDnet 2004",
        linux: "net/ipv4/tcp_htcp.c",
        params: htcp::PARAMS,
        build: |p| Cc::Htcp(Htcp::new(p)),
        needs_ecn: false,
    },
    Algorithm {
        name: "scalable",
        aliases: &["stcp"],
        about: "+0.01 segment per ACK (1% per RTT), cut to 0.875",
        reference: "Kelly, ACM SIGCOMM CCR 2003",
        linux: "net/ipv4/tcp_scalable.c",
        params: scalable::PARAMS,
        build: |p| Cc::Scalable(Scalable::new(p)),
        needs_ecn: false,
    },
    Algorithm {
        name: "compound",
        aliases: &["ctcp"],
        about: "Reno window plus a delay-based window that grows as win^0.75 while the queue is short",
        reference: "Tan, Song, Zhang, Sridharan, INFOCOM 2006; CTCP-TUBE gamma tuning",
        linux: "none (Windows; Caltech's Linux patch tcp_compound.c)",
        params: compound::PARAMS,
        build: |p| Cc::Compound(Compound::new(p)),
        needs_ecn: false,
    },
    Algorithm {
        name: "vegas",
        aliases: &[],
        about: "Delay-based: keep between alpha and beta segments queued, adjusting cwnd by 1 per RTT",
        reference: "Brakmo & Peterson, IEEE JSAC 13(8), 1995",
        linux: "net/ipv4/tcp_vegas.c",
        params: vegas::PARAMS,
        build: |v| Cc::Vegas(Vegas::new(v)),
        needs_ecn: false,
    },
    Algorithm {
        name: "veno",
        aliases: &[],
        about: "Reno whose decrease (4/5 or 1/2) and increase follow a Vegas-style backlog estimate",
        reference: "Fu & Liew, IEEE JSAC 21(2), 2003",
        linux: "net/ipv4/tcp_veno.c",
        params: veno::PARAMS,
        build: |v| Cc::Veno(Veno::new(v)),
        needs_ecn: false,
    },
    Algorithm {
        name: "westwood",
        aliases: &["westwood+", "westwoodplus"],
        about: "Reno probing; after a loss cwnd and ssthresh = bandwidth estimate x RTTmin",
        reference: "Mascolo et al., ACM MobiCom 2001; Grieco & Mascolo, ACM CCR 34(2), 2004 (Westwood+)",
        linux: "net/ipv4/tcp_westwood.c",
        params: westwood::PARAMS,
        build: |v| Cc::Westwood(Westwood::new(v)),
        needs_ecn: false,
    },
    Algorithm {
        name: "illinois",
        aliases: &[],
        about: "Loss-based AIMD with alpha (0.3-10) and beta (1/8-1/2) set by average queueing delay",
        reference: "Liu, Basar & Srikant, VALUETOOLS 2006",
        linux: "net/ipv4/tcp_illinois.c",
        params: illinois::PARAMS,
        build: |v| Cc::Illinois(Illinois::new(v)),
        needs_ecn: false,
    },
    Algorithm {
        name: "yeah",
        aliases: &[],
        about: "Scalable-TCP growth while the estimated queue is small, Reno otherwise; drains its queue",
        reference: "Baiocchi, Castellani & Vacirca, PFLDnet 2007",
        linux: "net/ipv4/tcp_yeah.c",
        params: yeah::PARAMS,
        build: |v| Cc::Yeah(Yeah::new(v)),
        needs_ecn: false,
    },
    Algorithm {
        name: "lp",
        aliases: &["tcp-lp"],
        about: "Low priority: Reno that backs off on rising one-way delay (needs timestamps)",
        reference: "Kuzmanovic & Knightly, IEEE INFOCOM 2003",
        linux: "net/ipv4/tcp_lp.c",
        params: lp::PARAMS,
        build: |v| Cc::Lp(Lp::new(v)),
        needs_ecn: false,
    },
    Algorithm {
        name: "hybla",
        aliases: &[],
        about: "Growth scaled by rho = RTT/RTT0 so long-RTT flows grow like an RTT0 flow",
        reference: "Caini & Firrincieli, Int. J. Satellite Commun. Netw. 22(5), 2004",
        linux: "net/ipv4/tcp_hybla.c",
        params: hybla::PARAMS,
        build: |v| Cc::Hybla(Hybla::new(v)),
        needs_ecn: false,
    },
    Algorithm {
        name: "dctcp",
        aliases: &[],
        about: "Reno whose ECN reduction is proportional to the fraction of marked data, alpha/2 (needs ECN)",
        reference: "RFC 8257; Alizadeh et al., Data Center TCP, ACM SIGCOMM 2010",
        linux: "net/ipv4/tcp_dctcp.c",
        params: dctcp::PARAMS,
        build: |v| Cc::Dctcp(Dctcp::new(v)),
        needs_ecn: true,
    },
    Algorithm {
        name: "bbr",
        aliases: &["bbr1", "bbrv1"],
        about: "BBR v1: paces at the estimated bottleneck bandwidth, cwnd 2 BDP; probes bw and min RTT",
        reference: "Cardwell et al., BBR: Congestion-Based Congestion Control, ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00",
        linux: "net/ipv4/tcp_bbr.c",
        params: bbr::PARAMS,
        build: |v| Cc::Bbr(Box::new(Bbr::new(v))),
        needs_ecn: false,
    },
];

/// Parameter profiles: older kernels' defaults, so the papers' configuration can be reproduced.
/// Each entry: (profile, algorithm, parameter, value). Vegas, Illinois and Hybla, the delay-based
/// algorithms with parameters, had today's defaults in 2.6.22 (see `docs/algorithms/`). `linux-2.6.22` is the kernel of the
/// papers' testbeds; each algorithm's file says what changed since and what the profile leaves
/// out.
pub const PROFILES: &[(&str, &str, &str, f64)] = &[
    // CUBIC v2.1: beta 819/1024 (717 from 2.6.25), no HyStart (from 2.6.29).
    ("linux-2.6.22", "cubic", "beta", 0.8),
    ("linux-2.6.22", "cubic", "hystart", 0.0),
    // TCP_SCALABLE_AI_CNT was 50.
    ("linux-2.6.22", "scalable", "ai", 0.02),
];

/// The profile names known.
pub fn profile_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = PROFILES.iter().map(|p| p.0).collect();
    names.push("linux");
    names.sort_unstable();
    names.dedup();
    names
}

/// The algorithm a user names (by its name or an alias).
pub fn algorithm(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.name == name || a.aliases.contains(&name))
}

/// Linux's `enum tcp_ca_state` (include/net/tcp.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// Nothing bad has been observed.
    Open,
    /// Duplicate ACKs or SACKs seen, not yet enough to recover.
    Disorder,
    /// Window reduced for a reason other than loss (ECN, local congestion).
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout (or Tahoe's fast retransmit): slow start from one segment.
    Loss,
}

/// Linux's `enum tcp_ca_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packets are in flight.
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of congestion window reduction.
    CompleteCwr,
    /// Loss timeout (the first of a loss episode, when it reduces ssthresh).
    Loss,
}

/// The part of the connection a congestion control may read and write (Linux's `tcp_sock`
/// fields that `tcp_cong.c` algorithms touch).
#[derive(Clone, Copy, Debug)]
pub struct TcpCcView {
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    /// Linear increase counter, segments acknowledged since the last increase.
    pub snd_cwnd_cnt: u32,
    /// Slow-start threshold, segments.
    pub snd_ssthresh: u32,
    /// Upper bound on `snd_cwnd`, segments.
    pub snd_cwnd_clamp: u32,
    /// cwnd before the last reduction, for undo.
    pub prior_cwnd: u32,
    /// For `cong_avoid`: segments in flight when the ACK arrived (Linux `prior_in_flight`); for
    /// `cong_control`: in flight after it (Linux `tcp_packets_in_flight`; the sample carries
    /// `prior_in_flight`).
    pub packets_in_flight: u32,
    /// Whether the sender used its window (Linux `tcp_is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    pub mss_bytes: u32,
    /// Smoothed RTT, ns (0 before the first sample).
    pub srtt_ns: Nanos,
    /// Minimum RTT seen, ns (`Nanos::MAX` before the first sample): Linux `tcp_min_rtt`, over
    /// the newest delivered segment's RTT per ACK, SACKed ones first. RACK, the rate sample and
    /// TSO sizing read it too.
    pub min_rtt_ns: Nanos,
    /// Oldest unacknowledged segment (Linux `snd_una`, in segments).
    pub snd_una: u32,
    /// Next new segment to send (Linux `snd_nxt`, in segments).
    pub snd_nxt: u32,
    pub ca_state: CaState,
    pub now_ns: Nanos,
    /// RFC 7323 TSval of the last ACK (the receiver's clock when it sent it; Linux
    /// `rx_opt.rcv_tsval`), ns; 0 without timestamps. TCP-LP reads one-way delay from it.
    pub rcv_tsval_ns: Nanos,
    /// RFC 7323 TSecr of the last ACK (Linux `rx_opt.rcv_tsecr`), ns; 0 without timestamps.
    pub rcv_tsecr_ns: Nanos,
    /// The receiver's timestamp offset, added to its clock (in ms) in the TSval it writes: random
    /// per connection as Linux's `net.ipv4.tcp_timestamps = 1` draws it, or 0
    /// (`TcpSpec::timestamp_offsets`). TCP-LP is the one reader.
    pub peer_ts_offset: u32,
    /// Segments delivered (cumulatively ACKed or SACKed) so far (Linux `tp->delivered`).
    pub delivered: u32,
    /// Of those, the segments delivered by ACKs with ECE (Linux `tp->delivered_ce`); ECN flows
    /// only.
    pub delivered_ce: u32,
    /// When `delivered` last grew, ns (Linux `delivered_mstamp`).
    pub delivered_ns: Nanos,
    /// Send time of the segment that ends the current sampling interval, ns (Linux
    /// `first_tx_mstamp`).
    pub first_tx_ns: Nanos,
    /// 0, or `delivered` + in-flight when the sender last ran out of data: samples of segments
    /// sent before that many are delivered are application-limited (Linux `tp->app_limited`).
    pub app_limited: u32,
    /// Segments marked lost so far (Linux `tp->lost`).
    pub lost: u32,
    /// Departure time of the next segment under pacing, ns (Linux `tcp_wstamp_ns`).
    pub wstamp_ns: Nanos,
    /// Pacing rate, bit/s; 0 = not paced (Linux `sk_pacing_rate`, which counts bytes/s). The
    /// sender paces when the scenario asks for it or the algorithm sets a rate in `init`.
    pub pacing_rate_bps: u64,
}

impl TcpCcView {
    pub fn new(init_cwnd: u32, mss_bytes: u32) -> Self {
        TcpCcView {
            snd_cwnd: init_cwnd,
            snd_cwnd_cnt: 0,
            snd_ssthresh: INFINITE_SSTHRESH,
            snd_cwnd_clamp: u32::MAX / 2,
            prior_cwnd: init_cwnd,
            packets_in_flight: 0,
            is_cwnd_limited: false,
            mss_bytes,
            srtt_ns: 0,
            min_rtt_ns: Nanos::MAX,
            snd_una: 0,
            snd_nxt: 0,
            ca_state: CaState::Open,
            now_ns: 0,
            rcv_tsval_ns: 0,
            rcv_tsecr_ns: 0,
            peer_ts_offset: 0,
            delivered: 0,
            delivered_ce: 0,
            delivered_ns: 0,
            first_tx_ns: 0,
            app_limited: 0,
            lost: 0,
            wstamp_ns: 0,
            pacing_rate_bps: 0,
        }
    }

    /// Linux `tcp_in_slow_start`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }
}

/// What an ACK acknowledged, for `pkts_acked` (Linux `struct ack_sample`).
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    /// Segments newly acknowledged (cumulatively or by SACK).
    pub pkts_acked: u32,
    /// RTT measured from this ACK, if any (ns).
    pub rtt_ns: Option<Nanos>,
    /// Segments in flight before the ACK.
    pub in_flight: u32,
}

/// One ACK's delivery-rate sample (Linux `struct rate_sample`, include/net/tcp.h;
/// draft-cheng-iccrg-delivery-rate-estimation §3): `delivered` segments over `interval_ns`.
/// `delivered` and `interval_ns` are −1 when the ACK gives no valid sample (as in Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// `tp.delivered` when the newest delivered segment was sent.
    pub prior_delivered: u32,
    /// `tp.delivered_ns` when the newest delivered segment was sent, ns.
    pub prior_ns: Nanos,
    /// Segments delivered over the interval; −1 if no sample.
    pub delivered: i64,
    /// max(send interval, ACK interval), ns; −1 if no valid sample.
    pub interval_ns: i64,
    /// Send phase: first to last transmission of the sampled flight, ns.
    pub snd_interval_ns: i64,
    /// ACK phase: `prior_ns` to now, ns.
    pub rcv_interval_ns: i64,
    /// RTT of the newest segment this ACK delivered (never a retransmitted one), ns; −1 if none.
    pub rtt_ns: i64,
    /// Segments lost (newly marked) by this ACK.
    pub losses: u32,
    /// Segments newly ACKed or SACKed by this ACK.
    pub acked_sacked: u32,
    /// In-flight before the ACK (Linux `prior_in_flight`).
    pub prior_in_flight: u32,
    /// The sampled flight was sent while the application had nothing more to send.
    pub is_app_limited: bool,
    /// The newest delivered segment had been retransmitted.
    pub is_retrans: bool,
}

impl RateSample {
    /// A sample that measured nothing (Linux's initial `rate_sample`: delivered and intervals −1).
    pub fn invalid() -> RateSample {
        RateSample {
            prior_delivered: 0,
            prior_ns: 0,
            delivered: -1,
            interval_ns: -1,
            snd_interval_ns: -1,
            rcv_interval_ns: -1,
            rtt_ns: -1,
            losses: 0,
            acked_sacked: 0,
            prior_in_flight: 0,
            is_app_limited: false,
            is_retrans: false,
        }
    }

    /// The sample as a delivery rate, bit/s of `mss_bytes`-segments; `None` if invalid.
    pub fn delivery_rate_bps(&self, mss_bytes: u32) -> Option<u64> {
        (self.delivered >= 0 && self.interval_ns > 0)
            .then(|| (self.delivered as u128 * mss_bytes as u128 * 8 * 1_000_000_000 / self.interval_ns as u128) as u64)
    }
}

/// Linux's `struct tcp_congestion_ops`, minus the bookkeeping fields.
pub trait CongestionOps {
    /// Called once when the connection starts.
    fn init(&mut self, _tp: &mut TcpCcView) {}
    /// New slow-start threshold after a loss (required). Returns it; the sender sets it.
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32;
    /// Grow the window on an ACK in Open/Disorder/Loss state (required unless `cong_control`).
    /// `ack` is the cumulative ACK (segments), `acked` the segments it newly delivered (Linux's
    /// `acked_sacked`: newly cumulatively acknowledged ones not SACKed before, plus newly SACKed
    /// ones).
    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, acked: u32);
    /// The window to restore when a reduction proves spurious (required).
    fn undo_cwnd(&mut self, tp: &TcpCcView) -> u32 {
        tp.snd_cwnd.max(tp.prior_cwnd)
    }
    /// The connection's `ca_state` is about to change (`tp.ca_state` is still the old one); like
    /// Linux's hook it may write ssthresh (DCTCP halves on entering Recovery).
    fn set_state(&mut self, _tp: &mut TcpCcView, _new_state: CaState) {}
    /// An event; like Linux's hook it may write the window (Westwood+ sets cwnd and ssthresh
    /// from its bandwidth estimate at `CompleteCwr` and `Loss`).
    fn cwnd_event(&mut self, _tp: &mut TcpCcView, _ev: CaEvent) {}
    /// Every ACK that acknowledges something, with its RTT sample. May write the window, as
    /// Linux's may (TCP-LP cuts cwnd here on early congestion).
    fn pkts_acked(&mut self, _tp: &mut TcpCcView, _sample: &AckSample) {}
    /// Every ACK of an ECN flow, after its deliveries are counted (`delivered`, `delivered_ce`)
    /// and before the window is decided (Linux `in_ack_event`, which today's kernels call after
    /// `tcp_clean_rtx_queue`; DCTCP reads the ECE count from `delivered_ce`).
    fn in_ack_event(&mut self, _tp: &mut TcpCcView) {}
    /// Whether the algorithm has `cong_control`. Linux `tcp_cong_control`: when it does, it is
    /// called on every ACK instead of `cong_avoid`, and the sender leaves cwnd alone in recovery
    /// (no PRR, no fast-recovery inflation, no cwnd = ssthresh on exit).
    fn has_cong_control(&self) -> bool {
        false
    }
    /// Set cwnd and the pacing rate from the ACK's delivery-rate sample (e.g. BBR).
    fn cong_control(&mut self, _tp: &mut TcpCcView, _rs: &RateSample) {}
    /// The fewest segments in a TSO burst (Linux `min_tso_segs`); `None`: the sender's default
    /// (`tcp_min_tso_segs`, 2).
    fn min_tso_segs(&self, _tp: &TcpCcView) -> Option<u32> {
        None
    }
}

/// Every congestion control, dispatched by `match`. States are held inline (the largest,
/// CUBIC's, is about 100 bytes): one `Cc` per flow, and no pointer to follow on each ACK.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Cc {
    Reno(Reno),
    Bic(Bic),
    Cubic(Cubic),
    Dctcp(Dctcp),
    HighSpeed(HighSpeed),
    Htcp(Htcp),
    Scalable(Scalable),
    Compound(Compound),
    Vegas(Vegas),
    Veno(Veno),
    Westwood(Westwood),
    Illinois(Illinois),
    Yeah(Yeah),
    Lp(Lp),
    Hybla(Hybla),
    /// Boxed: BBR's state is several times the size of the classic algorithms'.
    Bbr(Box<Bbr>),
}

impl Cc {
    /// Build the algorithm `name` with its defaults, the `profile`'s values ("linux" = today's
    /// defaults) and the scenario's `params`. `field` names the flow for error messages.
    pub fn new(name: &str, profile: &str, params: &BTreeMap<String, f64>, field: &str) -> Result<Cc, SpecError> {
        let alg = algorithm(name).ok_or_else(|| {
            SpecError::new(format!("{field}.cc"), name, format!("one of {}", ALGORITHMS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")))
        })?;
        if !profile_names().contains(&profile) {
            return Err(SpecError::new(format!("{field}.cc_profile"), profile, format!("one of {}", profile_names().join(", "))));
        }
        let overrides: Vec<(&'static str, f64)> =
            PROFILES.iter().filter(|p| p.0 == profile && p.1 == alg.name).map(|p| (p.2, p.3)).collect();
        let values = ParamValues::resolve(alg.params, &overrides, params, &format!("{field}.cc_params"))?;
        Ok((alg.build)(&values))
    }

    /// DCTCP's α, the moving average of the marked fraction (0–1); `None` for other algorithms.
    pub fn dctcp_alpha(&self) -> Option<f64> {
        match self {
            Cc::Dctcp(d) => Some(d.alpha as f64 / dctcp::MAX_ALPHA as f64),
            _ => None,
        }
    }

    /// Hand the algorithm its random stream (Linux's `get_random_u32`), for those that draw.
    pub fn seed_rng(&mut self, rng: Rng) {
        if let Cc::Bbr(b) = self {
            b.rng = rng;
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::Reno($c) => $e,
            Cc::Bic($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::HighSpeed($c) => $e,
            Cc::Htcp($c) => $e,
            Cc::Scalable($c) => $e,
            Cc::Compound($c) => $e,
            Cc::Vegas($c) => $e,
            Cc::Veno($c) => $e,
            Cc::Westwood($c) => $e,
            Cc::Illinois($c) => $e,
            Cc::Yeah($c) => $e,
            Cc::Lp($c) => $e,
            Cc::Hybla($c) => $e,
            Cc::Bbr($c) => $e,
        }
    };
}

impl CongestionOps for Cc {
    #[inline]
    fn init(&mut self, tp: &mut TcpCcView) {
        dispatch!(self, c => c.init(tp))
    }
    #[inline]
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        dispatch!(self, c => c.ssthresh(tp))
    }
    #[inline]
    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, acked: u32) {
        dispatch!(self, c => c.cong_avoid(tp, ack, acked))
    }
    #[inline]
    fn undo_cwnd(&mut self, tp: &TcpCcView) -> u32 {
        dispatch!(self, c => c.undo_cwnd(tp))
    }
    #[inline]
    fn set_state(&mut self, tp: &mut TcpCcView, new_state: CaState) {
        dispatch!(self, c => c.set_state(tp, new_state))
    }
    #[inline]
    fn in_ack_event(&mut self, tp: &mut TcpCcView) {
        dispatch!(self, c => c.in_ack_event(tp))
    }
    #[inline]
    fn cwnd_event(&mut self, tp: &mut TcpCcView, ev: CaEvent) {
        dispatch!(self, c => c.cwnd_event(tp, ev))
    }
    #[inline]
    fn pkts_acked(&mut self, tp: &mut TcpCcView, sample: &AckSample) {
        dispatch!(self, c => c.pkts_acked(tp, sample))
    }
    #[inline]
    fn has_cong_control(&self) -> bool {
        dispatch!(self, c => c.has_cong_control())
    }
    #[inline]
    fn cong_control(&mut self, tp: &mut TcpCcView, rs: &RateSample) {
        dispatch!(self, c => c.cong_control(tp, rs))
    }
    #[inline]
    fn min_tso_segs(&self, tp: &TcpCcView) -> Option<u32> {
        dispatch!(self, c => c.min_tso_segs(tp))
    }
}

const _: () = assert!(std::mem::size_of::<Cc>() <= 256);

