//! The engine spec: the scenario as the engine reads it (JSON, integer SI units with the unit in
//! the key). See `docs/engine-spec.md`. Python validates a user's scenario and lowers it to this;
//! the engine checks it again, builds the topology and resolves routes.

use serde::{Deserialize, Serialize};

use crate::error::SpecError;
use crate::time::{Nanos, NS_PER_MS, NS_PER_SEC};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub duration_ns: Nanos,
    #[serde(default = "default_interval")]
    pub interval_ns: Nanos,
    /// Each flow starts uniformly in [start, start + jitter).
    #[serde(default = "default_start_jitter")]
    pub start_jitter_ns: Nanos,
    /// Host processing delay, uniform in [0, jitter), drawn once per send (everything an endpoint
    /// emits at once shares it), FIFO per host.
    #[serde(default)]
    pub host_jitter_ns: Nanos,
    /// With probability `host_stall_prob` a send is held uniformly in [0, `host_stall_ns`)
    /// instead of the jitter: a host's rare stalls (softirq deferral, preemption).
    #[serde(default)]
    pub host_stall_ns: Nanos,
    #[serde(default)]
    pub host_stall_prob: f64,
    /// The hosts' holds of a data send (a sender's segments, DCCP or UDP datagrams, a preamble's
    /// request) as a quantile table: the holds at probabilities 0, 1/(n-1), ..., 1, drawn by
    /// linear interpolation between them, one draw per send. Empty: `host_jitter_ns` instead.
    /// A stall (`host_stall_prob`) replaces the draw as it replaces the jitter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_data_holds_ns: Vec<Nanos>,
    /// The same for an ACK send (a receiver's ACKs, DCCP Acks, the preamble's answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_ack_holds_ns: Vec<Nanos>,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    /// Record one flow's packets on some links (`capture.rs`); off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureSpec>,
}

/// Which packets a capture records: those of flow `flow` crossing any of `links` (link ids).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureSpec {
    pub flow: u32,
    pub links: Vec<u32>,
}

fn default_seed() -> u64 {
    1
}
fn default_interval() -> Nanos {
    NS_PER_SEC
}
fn default_start_jitter() -> Nanos {
    5 * NS_PER_MS
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Topology {
    Dumbbell(Dumbbell),
    Graph(Graph),
}

/// N sender/receiver pairs, two routers, one bottleneck in each direction.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    pub pairs: u32,
    pub bottleneck_rate_bps: u64,
    pub bottleneck_delay_ns: Nanos,
    pub access_rate_bps: u64,
    /// One-way, per pair, on both the sender and the receiver side.
    pub access_delay_ns: Vec<Nanos>,
    pub queue: QueueSpec,
    pub access_queue: QueueSpec,
    #[serde(default)]
    pub loss: f64,
    #[serde(default)]
    pub reverse_loss: f64,
    /// The bottleneck's rate over time, both directions: `(time_ns, rate_bps)` from the run's
    /// start, in increasing time; `bottleneck_rate_bps` until the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bottleneck_schedule: Vec<(Nanos, u64)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_ns: Nanos,
    pub queue: QueueSpec,
    #[serde(default)]
    pub loss: f64,
    /// The link's rate over time: `(time_ns, rate_bps)` from the run's start, in increasing
    /// time; `rate_bps` until the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_schedule: Vec<(Nanos, u64)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum QueueSpec {
    Droptail {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
    },
    /// Random Early Detection as ns-2.35's `Queue/RED` (`docs/queues/red.md`); the limit is the
    /// hard one, as DropTail's.
    Red {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        red: RedSpec,
    },
    /// CoDel as Linux's `sch_codel` (`docs/queues/codel.md`); the limit drops arrivals as
    /// DropTail's does.
    Codel {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        codel: CodelSpec,
    },
    /// Deficit Round Robin as ns-2.35's `Queue/DRR` (`docs/queues/drr.md`): a queue per source,
    /// the limit shared, the longest source's head pushed out when it is exceeded.
    Drr {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        drr: DrrSpec,
    },
    /// FQ-CoDel as Linux's `sch_fq_codel` (`docs/queues/fq_codel.md`): a queue and a CoDel per
    /// flow, the limit shared, the fattest flow's head dropped in a batch when it is exceeded.
    #[serde(rename = "fq_codel")]
    FqCodel {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        fq_codel: FqCodelSpec,
    },
    /// FRED (Lin and Morris, SIGCOMM 1997; `docs/queues/fred.md`): RED's average with a count of
    /// each flow's packets queued; the limit is the hard one, as DropTail's.
    Fred {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        fred: FredSpec,
    },
    /// CSFQ (Stoica, Shenker and Zhang, SIGCOMM 1998; `docs/queues/csfq.md`): arrivals dropped by
    /// their flow's rate label against the link's fair share; the limit is the hard one.
    Csfq {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        csfq: CsfqSpec,
    },
    /// PIE as Linux's `sch_pie` (`docs/queues/pie.md`); the limit is the hard one, as DropTail's.
    Pie {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        pie: PieSpec,
    },
    /// FQ-PIE as Linux's `sch_fq_pie` (`docs/queues/fq_pie.md`): a queue and a PIE per flow,
    /// served by deficit round robin; the limit is shared and drops the arrival.
    #[serde(rename = "fq_pie")]
    FqPie {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        fq_pie: FqPieSpec,
    },
    /// DualPI2 as Linux's `sch_dualpi2` (RFC 9332, `docs/queues/dualpi2.md`): an L4S queue and a
    /// classic one, coupled by one PI2 controller, served by weighted round robin; the limit is
    /// shared and drops the arrival.
    Dualpi2 {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        dualpi2: Dualpi2Spec,
    },
    /// CAKE as Linux's `sch_cake` (`docs/queues/cake.md`): tins by DSCP, in each a queue per
    /// flow (or host) with COBALT, served by DRR++ with host isolation; the limit is shared and
    /// drops from the fattest queue's head.
    Cake {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        #[serde(default)]
        cake: CakeSpec,
    },
}

/// CAKE's parameters, defaults those of Linux's `sch_cake` (`tc qdisc add ... cake`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CakeSpec {
    /// COBALT's `target` (5 ms) and `rtt`, its interval (100 ms), before tuning to the rate.
    #[serde(default = "default_codel_target")]
    pub target_ns: Nanos,
    #[serde(default = "default_codel_interval")]
    pub interval_ns: Nanos,
    /// What a queue is (`flows`, hosts, or both with fairness between hosts; Linux's default
    /// `triple-isolate`).
    #[serde(default)]
    pub flow_mode: CakeFlowMode,
    /// `unlimited` (Linux's default: no shaper, COBALT untuned); `link`: as `bandwidth` set to
    /// the link's rate, which tunes the target, interval and quantum to it (the link serialises);
    /// or `{"rate_bps": N}`: the shaper at N bit/s of Ethernet frames, tuned to it.
    #[serde(default)]
    pub bandwidth: CakeBandwidth,
    /// Overhead compensation, as `tc ... cake overhead N mpu M atm|ptm`: with `overhead` set
    /// (−64 to 256 bytes) a packet counts as its IP packet plus that many bytes, without it (Linux's
    /// default, and `raw`) as its Ethernet frame, IP + 14; then at least `mpu` bytes (0 to 256);
    /// then in ATM cells (48 bytes carried in 53) or with PTM's 64b/65b coding. The shaper and the
    /// per-flow deficits count these lengths.
    #[serde(default)]
    pub overhead: Option<i32>,
    #[serde(default)]
    pub mpu: u32,
    #[serde(default)]
    pub atm: CakeAtm,
    /// `ingress`: CAKE shapes what has already crossed the link it models (a download shaped on
    /// the receiving side), so its drops count against the shaper and its target grows with the
    /// bulk flows. Off (`egress`) by default.
    #[serde(default)]
    pub ingress: bool,
    /// `ack-filter`: an arriving pure ACK may take out an older one of its flow that it makes
    /// redundant; `aggressive` also the one just before it. `none` by default.
    #[serde(default)]
    pub ack_filter: CakeAckFilter,
    /// The tins and which DSCP goes to which (Linux's default `diffserv3`: bulk for CS1 and LE,
    /// voice for EF, VA, CS6, CS7 …, best effort for the rest); `besteffort` is one tin.
    #[serde(default)]
    pub diffserv: CakeDiffserv,
    /// `wash`: packets leave with DSCP 0 (their ECN field kept), after choosing their tin by it.
    #[serde(default)]
    pub wash: bool,
}

/// CAKE's tin modes (Linux `CAKE_DIFFSERV_*`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CakeDiffserv {
    Besteffort,
    Precedence,
    Diffserv8,
    Diffserv4,
    #[default]
    Diffserv3,
}

/// CAKE's ACK filter (Linux `CAKE_ACK_*`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CakeAckFilter {
    #[default]
    None,
    Filter,
    Aggressive,
}

/// CAKE's link-layer cell framing (Linux `CAKE_ATM_*`): none (`noatm`), ATM's 53-byte cells with
/// 48 bytes of payload (ADSL), or PTM's 64b/65b coding (VDSL2).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CakeAtm {
    #[default]
    None,
    Atm,
    Ptm,
}

impl Default for CakeSpec {
    /// Every key at its serde default (Linux's), as an empty `cake` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

/// CAKE's flow isolation modes (Linux `CAKE_FLOW_*`): the bits say whether a queue is keyed by
/// the source host (1), the destination host (2) or the flow (4); with the flow bit, the host
/// bits add fairness between the hosts' flows.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CakeFlowMode {
    Flowblind,
    Srchost,
    Dsthost,
    Hosts,
    Flows,
    DualSrchost,
    DualDsthost,
    #[default]
    TripleIsolate,
}

impl CakeFlowMode {
    /// Linux's `CAKE_FLOW_*` value.
    pub fn bits(self) -> u8 {
        self as u8
    }
}

/// CAKE's `bandwidth`: none (`unlimited`), the link's own rate (tuning only: the link
/// serialises at it), or a shaper's rate in bit/s (`{"rate_bps": N}`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CakeBandwidth {
    #[default]
    Unlimited,
    Link,
    #[serde(rename = "rate_bps")]
    RateBps(u64),
}

/// DualPI2's parameters, defaults those of Linux's `sch_dualpi2` (`tc qdisc add ... dualpi2`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Dualpi2Spec {
    /// The PI2 controller: the queueing delay it steers to (`target`, 15 ms), how often it
    /// updates its probability (`tupdate`, 16 ms), and its gains `alpha` and `beta` in 1/256 Hz
    /// as `tc` passes them (41 and 819: 0.16 and 3.2 Hz).
    #[serde(default = "default_dualpi2_target")]
    pub target_ns: Nanos,
    #[serde(default = "default_dualpi2_tupdate")]
    pub tupdate_ns: Nanos,
    #[serde(default = "default_dualpi2_alpha")]
    pub alpha: u32,
    #[serde(default = "default_dualpi2_beta")]
    pub beta: u32,
    /// The L queue's step: an L4S packet that waited longer than `step_thresh` (1 ms) is marked
    /// CE (dropped when not ECN-capable), while the L queue holds at least `min_qlen_step`
    /// packets (0) at its arrival.
    #[serde(default = "default_dualpi2_step")]
    pub step_thresh_ns: Nanos,
    #[serde(default)]
    pub min_qlen_step: u32,
    /// `coupling_factor` k (2): the L4S marking probability is k times the PI2 probability,
    /// the classic one its square.
    #[serde(default = "default_dualpi2_coupling")]
    pub coupling_factor: u32,
    /// `drop_overload` (on): once k times the probability exceeds 1, L4S packets are dropped
    /// as classic ones are instead of all being marked.
    #[serde(default = "default_true")]
    pub drop_overload: bool,
    /// `drop_early` (off): the probabilities are applied at enqueue instead of dequeue.
    #[serde(default)]
    pub drop_early: bool,
    /// `c_protection`: the classic queue's weight in the round robin, percent (10).
    #[serde(default = "default_dualpi2_c_protection")]
    pub c_protection: u32,
    /// `ecn_mask`: which ECN codepoints go to the L queue (`l4s_ect`: ECT(1) and CE).
    #[serde(default)]
    pub ecn_mask: Dualpi2EcnMask,
    /// The device's MTU: nothing is dropped or marked while less than twice it is queued
    /// (Linux `psched_mtu`), and the round robin's starting credit is counted in it. 1500 IP bytes.
    #[serde(default = "default_codel_mtu")]
    pub mtu_bytes: u32,
}

/// DualPI2's classifier (Linux `TC_DUALPI2_ECN_MASK_*`): the packets whose ECN field shares a
/// bit with the mask go to the L queue.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Dualpi2EcnMask {
    /// ECT(1) and CE (mask 0b01), the L4S identifier of RFC 9331.
    #[default]
    L4sEct,
    /// ECT(0) and CE (mask 0b10).
    ClaEct,
    /// Every ECN-capable packet (mask 0b11).
    AnyEct,
}

impl Dualpi2EcnMask {
    pub fn bits(self) -> u8 {
        match self {
            Dualpi2EcnMask::L4sEct => 0b01,
            Dualpi2EcnMask::ClaEct => 0b10,
            Dualpi2EcnMask::AnyEct => 0b11,
        }
    }
}

impl Default for Dualpi2Spec {
    /// Every key at its serde default (Linux's), as an empty `dualpi2` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

fn default_dualpi2_target() -> Nanos {
    15_000_000
}

fn default_dualpi2_tupdate() -> Nanos {
    16_000_000
}

fn default_dualpi2_alpha() -> u32 {
    41
}

fn default_dualpi2_beta() -> u32 {
    819
}

fn default_dualpi2_step() -> Nanos {
    1_000_000
}

fn default_dualpi2_coupling() -> u32 {
    2
}

fn default_dualpi2_c_protection() -> u32 {
    10
}

/// FQ-PIE's parameters, defaults those of Linux's `sch_fq_pie`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqPieSpec {
    /// Each flow's PIE: `target` (15 ms), `tupdate` (15 ms), `alpha` and `beta` in sixteenths
    /// (2 and 20), and two `mtu_bytes` of the flow's own queued at least before it drops (1500).
    #[serde(default = "default_pie_target")]
    pub target_ns: Nanos,
    #[serde(default = "default_pie_target")]
    pub tupdate_ns: Nanos,
    #[serde(default = "default_pie_alpha")]
    pub alpha: u32,
    #[serde(default = "default_pie_beta")]
    pub beta: u32,
    #[serde(default = "default_codel_mtu")]
    pub mtu_bytes: u32,
    /// `quantum`: bytes per flow per round (Linux: the device's MTU with its header, 1514; 1500
    /// IP bytes as tcplab counts packets).
    #[serde(default = "default_codel_mtu")]
    pub quantum_bytes: u32,
    /// `ecn`: an early drop of an ECN-capable packet becomes a CE mark while the flow's drop
    /// probability is at most `ecn_prob` percent (Linux's defaults: off, 10).
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "default_fq_pie_ecn_prob")]
    pub ecn_prob: u32,
}

impl Default for FqPieSpec {
    /// Every key at its serde default (Linux's), as an empty `fq_pie` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

fn default_fq_pie_ecn_prob() -> u32 {
    10
}

/// FQ-CoDel's parameters, defaults those of Linux's `sch_fq_codel` (and RFC 8290).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqCodelSpec {
    /// Each flow's CoDel: `target` (5 ms), `interval` (100 ms), and the bytes left queued (the
    /// whole queue's) at or below which it drops nothing (1500).
    #[serde(default = "default_codel_target")]
    pub target_ns: Nanos,
    #[serde(default = "default_codel_interval")]
    pub interval_ns: Nanos,
    #[serde(default = "default_codel_mtu")]
    pub mtu_bytes: u32,
    /// `quantum`: bytes per flow per round (Linux: the device's MTU with its header, 1514; 1500
    /// IP bytes as tcplab counts packets).
    #[serde(default = "default_codel_mtu")]
    pub quantum_bytes: u32,
    /// `drop_batch`: at most this many packets dropped from the fattest flow per overflow (64).
    #[serde(default = "default_fq_codel_batch")]
    pub drop_batch: u32,
    /// `ecn`: CoDel marks an ECN-capable packet CE instead of dropping it (Linux's default: on).
    #[serde(default = "default_true")]
    pub ecn: bool,
    /// `ce_threshold`, each flow's CoDel's (`CodelSpec::ce_threshold_ns`), and which packets it
    /// marks (`ce_threshold_selector`/`mask`, Linux ≥ 5.16: `CodelSpec`'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold_ns: Option<Nanos>,
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub ce_threshold_selector: u8,
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub ce_threshold_mask: u8,
}

impl Default for FqCodelSpec {
    /// Every key at its serde default (Linux's), as an empty `fq_codel` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

fn default_fq_codel_batch() -> u32 {
    64
}

/// FRED's parameters, defaults Lin and Morris's.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FredSpec {
    /// Thresholds on the average queue, packets (default a quarter of the buffer, and twice
    /// `min_thresh_pkts`).
    #[serde(default)]
    pub min_thresh_pkts: Option<f64>,
    #[serde(default)]
    pub max_thresh_pkts: Option<f64>,
    /// `max_p` (0.02) and the average's weight `w_q` (0.002).
    #[serde(default = "default_fred_max_p")]
    pub max_p: f64,
    #[serde(default = "default_fred_weight")]
    pub weight: f64,
    /// `min_q`: packets a flow may queue before random drops can fall on it (2).
    #[serde(default = "default_fred_min_q")]
    pub min_q: u32,
    /// The packet size the idle decay counts in, and a byte limit's packets (500, ns-2's).
    #[serde(default = "default_fred_mean_pkt")]
    pub mean_pkt_bytes: u32,
    /// The variant for many flows (FREDL): above `max_thresh_pkts` a flow keeps `min_q` packets.
    #[serde(default)]
    pub many_flows: bool,
}

impl Default for FredSpec {
    /// Every key at its serde default, as an empty `fred` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

fn default_fred_max_p() -> f64 {
    0.02
}
fn default_fred_weight() -> f64 {
    0.002
}
fn default_fred_min_q() -> u32 {
    2
}
fn default_fred_mean_pkt() -> u32 {
    500
}

/// CSFQ's parameters, defaults those of paper 004's runs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CsfqSpec {
    /// K: the time constant of each flow's rate estimate at its edge (100 ms).
    #[serde(default = "default_csfq_k")]
    pub k_ns: Nanos,
    /// Kc: the time constant of the aggregate rates and the period over which congestion is
    /// judged and α updated (100 ms).
    #[serde(default = "default_csfq_k")]
    pub kc_ns: Nanos,
    /// The queue's threshold, a fraction of its limit: an uncongested link below it stops
    /// dropping, and starts again at it (0.75).
    #[serde(default = "default_csfq_threshold")]
    pub threshold: f64,
}

impl Default for CsfqSpec {
    /// Every key at its serde default, as an empty `csfq` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

fn default_csfq_k() -> Nanos {
    100_000_000
}
fn default_csfq_threshold() -> f64 {
    0.75
}

/// DRR's parameters, defaults those of ns-2.35's `Queue/DRR`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DrrSpec {
    /// `quantum_`: bytes a source may send per turn (250).
    #[serde(default = "default_drr_quantum")]
    pub quantum_bytes: u32,
}

impl Default for DrrSpec {
    /// Every key at its serde default (ns-2.35's), as an empty `drr` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

fn default_drr_quantum() -> u32 {
    250
}

/// PIE's parameters, defaults those of Linux's `sch_pie` (and RFC 8033).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PieSpec {
    /// `target`: the queueing delay PIE steers towards (15 ms).
    #[serde(default = "default_pie_target")]
    pub target_ns: Nanos,
    /// `tupdate`: how often the drop probability is recalculated (15 ms).
    #[serde(default = "default_pie_target")]
    pub tupdate_ns: Nanos,
    /// `alpha` and `beta`, in sixteenths (2 and 20: 0.125 and 1.25 per second of delay).
    #[serde(default = "default_pie_alpha")]
    pub alpha: u32,
    #[serde(default = "default_pie_beta")]
    pub beta: u32,
    /// Two of these queued at least before PIE drops anything (Linux: the device's MTU; 1500,
    /// IP bytes as tcplab counts packets).
    #[serde(default = "default_codel_mtu")]
    pub mtu_bytes: u32,
    /// `ecn`: an early drop of an ECN-capable packet becomes a CE mark while the drop
    /// probability is at most 10% (Linux's default: off).
    #[serde(default)]
    pub ecn: bool,
}

impl Default for PieSpec {
    /// Every key at its serde default (Linux's), as an empty `pie` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

fn default_pie_target() -> Nanos {
    15_000_000
}
fn default_pie_alpha() -> u32 {
    2
}
fn default_pie_beta() -> u32 {
    20
}

/// CoDel's parameters, defaults those of Linux's `sch_codel` (and RFC 8289).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CodelSpec {
    /// `target`: the sojourn time CoDel tolerates (5 ms).
    #[serde(default = "default_codel_target")]
    pub target_ns: Nanos,
    /// `interval`: how long the sojourn must stay above target before the first drop, and the
    /// control law's base (100 ms).
    #[serde(default = "default_codel_interval")]
    pub interval_ns: Nanos,
    /// Bytes left queued at or below which nothing is dropped (Linux: the device's MTU; 1500,
    /// IP bytes as tcplab counts packets).
    #[serde(default = "default_codel_mtu")]
    pub mtu_bytes: u32,
    /// `ecn`: an ECN-capable packet due to be dropped is marked CE instead (Linux's default: off).
    #[serde(default)]
    pub ecn: bool,
    /// `ce_threshold`: an ECN-capable packet leaving after a sojourn longer than this is marked
    /// CE, whatever CoDel's state (the shallow step marking DCTCP expects); unset: off, as
    /// Linux's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold_ns: Option<Nanos>,
    /// With a `ce_threshold_mask` other than 0, `ce_threshold` marks only packets whose TOS
    /// byte (DSCP and ECN) masked equals `ce_threshold_selector` (Linux's codel parameters,
    /// which `fq_codel` sets: `ce_threshold_selector 0x1/0x1` marks only ECT(1) and CE).
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub ce_threshold_selector: u8,
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub ce_threshold_mask: u8,
}

fn is_zero_u8(v: &u8) -> bool {
    *v == 0
}

impl Default for CodelSpec {
    /// Every key at its serde default (Linux's), as an empty `codel` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

fn default_codel_target() -> Nanos {
    5_000_000
}
fn default_codel_interval() -> Nanos {
    100_000_000
}
fn default_codel_mtu() -> u32 {
    1500
}

/// RED's parameters, defaults those of ns-2.35 (`ns-default.tcl`). A threshold or weight left
/// out is set from the link's rate and delay as ns-2 sets it (`initialize_params`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    /// `thresh_`: in packets (of `mean_pkt_bytes` in byte mode); absent: max(5, 2.5 ms of packets).
    #[serde(default)]
    pub min_thresh_pkts: Option<f64>,
    /// `maxthresh_`: absent: 3 × min_thresh.
    #[serde(default)]
    pub max_thresh_pkts: Option<f64>,
    /// 1 / `linterm_`.
    #[serde(default = "default_red_max_p")]
    pub max_p: f64,
    /// `q_weight_`: absent: 1 − exp(−1 / (10 · max(0.1 s, 3 · (delay + 1/C)) · C)), C = packets/s.
    #[serde(default)]
    pub weight: Option<f64>,
    #[serde(default = "default_true")]
    pub gentle: bool,
    #[serde(default = "default_true")]
    pub wait: bool,
    /// `bytes_` and `queue_in_bytes_`: the average counts bytes, and a packet's drop
    /// probability scales with its size.
    #[serde(default = "default_true")]
    pub byte_mode: bool,
    /// `mean_pktsize_`.
    #[serde(default = "default_red_mean_pkt")]
    pub mean_pkt_bytes: u32,
    /// Adaptive RED (`adaptive_ 1`): `max_p` tuned every `interval` to keep the average between
    /// the thresholds; absent: RED's fixed `max_p`.
    #[serde(default)]
    pub adaptive: Option<AredSpec>,
    /// `setbit_` (Linux `ecn`): an early drop of an ECN-capable packet becomes a CE mark; the
    /// buffer's limit still drops.
    #[serde(default)]
    pub ecn: bool,
}

/// Adaptive RED's parameters (Floyd, Gummadi and Shenker 2001), defaults ns-2.35's.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AredSpec {
    /// `alpha_`: max_p's additive increase, at most a quarter of max_p (0.01).
    #[serde(default = "default_ared_alpha")]
    pub alpha: f64,
    /// `beta_`: max_p's multiplicative decrease (0.9).
    #[serde(default = "default_ared_beta")]
    pub beta: f64,
    /// `interval_`: at least this long between changes of max_p (0.5 s).
    #[serde(default = "default_ared_interval")]
    pub interval_ns: Nanos,
    /// `top_` and `bottom_`: max_p is raised only while below `top` (0.5) and lowered only while
    /// above `bottom` (absent: min(0.01, 80 000 / the link's bit/s)).
    #[serde(default = "default_ared_top")]
    pub top: f64,
    #[serde(default)]
    pub bottom: Option<f64>,
}

impl Default for AredSpec {
    /// Every key at its serde default (ns-2.35's), as an empty `adaptive` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

fn default_ared_alpha() -> f64 {
    0.01
}
fn default_ared_beta() -> f64 {
    0.9
}
fn default_ared_interval() -> Nanos {
    500_000_000
}
fn default_ared_top() -> f64 {
    0.5
}

impl RedSpec {
    /// ns-2's automatic `thresh_` for a link of `rate_bps`: max(5, half of 5 ms of packets of
    /// `mean_pkt_bytes`).
    pub fn auto_min_thresh_pkts(rate_bps: u64, mean_pkt_bytes: u32) -> f64 {
        (0.005 * rate_bps as f64 / (8.0 * mean_pkt_bytes as f64) / 2.0).max(5.0)
    }
}

impl Default for RedSpec {
    /// Every key at its serde default (ns-2.35's), as an empty `red` table reads.
    fn default() -> Self {
        serde_defaults()
    }
}

/// A table with every key at its serde default, as an empty table reads.
fn serde_defaults<T: serde::de::DeserializeOwned>() -> T {
    serde_json::from_value(serde_json::json!({})).expect("every key has a default")
}

fn default_true() -> bool {
    true
}
fn default_red_max_p() -> f64 {
    0.1
}
fn default_red_mean_pkt() -> u32 {
    500
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum FlowSpec {
    Tcp(TcpSpec),
    Cbr(CbrSpec),
    Dccp(DccpSpec),
}

impl From<TcpSpec> for FlowSpec {
    fn from(t: TcpSpec) -> Self {
        FlowSpec::Tcp(t)
    }
}

impl From<CbrSpec> for FlowSpec {
    fn from(c: CbrSpec) -> Self {
        FlowSpec::Cbr(c)
    }
}

impl From<DccpSpec> for FlowSpec {
    fn from(d: DccpSpec) -> Self {
        FlowSpec::Dccp(d)
    }
}

impl FlowSpec {
    pub fn endpoints(&self) -> (u32, u32) {
        match self {
            FlowSpec::Tcp(t) => (t.src, t.dst),
            FlowSpec::Cbr(c) => (c.src, c.dst),
            FlowSpec::Dccp(d) => (d.src, d.dst),
        }
    }
    /// The DSCP its data packets carry.
    pub fn dscp(&self) -> u8 {
        match self {
            FlowSpec::Tcp(t) => t.dscp,
            FlowSpec::Cbr(c) => c.dscp,
            FlowSpec::Dccp(d) => d.dscp,
        }
    }
    pub fn start_stop(&self) -> (Nanos, Option<Nanos>) {
        match self {
            FlowSpec::Tcp(t) => (t.start_ns, t.stop_ns),
            FlowSpec::Cbr(c) => (c.start_ns, c.stop_ns),
            FlowSpec::Dccp(d) => (d.start_ns, d.stop_ns),
        }
    }
}

/// What crosses the path before a TCP flow's data (transport::tcp::setup, docs/tcp.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preamble {
    /// None: the data starts at the flow's start.
    #[default]
    None,
    /// A three-way handshake: SYN, SYN-ACK, then the data with the handshake's last ACK.
    Handshake,
    /// What iperf3 sends first: its control connection's handshake, cookie and parameters, then
    /// the data connection's handshake and cookie; the data starts when the server's answer to
    /// that cookie arrives (its test-start message leaves with it).
    Iperf3,
}

/// Loss recovery, chosen independently of congestion control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment (Jacobson 1988).
    Tahoe,
    /// RFC 5681 fast recovery; leaves recovery on the first new ACK, partial or not.
    Reno,
    /// RFC 6582: stays in recovery until the whole window is acknowledged, one hole per RTT.
    Newreno,
    /// RFC 6675 scoreboard (with RFC 6937 PRR when `prr`). With `sack` off, Linux's recovery of
    /// a connection without SACK: duplicate ACKs stand in for SACKed segments and each partial
    /// ACK marks the next hole lost (`tcp_add_reno_sack`, `tcp_newreno_mark_lost`).
    Sack,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    pub src: u32,
    pub dst: u32,
    /// The DSCP of the flow's data packets (RFC 2474; 0 best effort, 46 EF, 8 CS1 …), as
    /// `iperf3 --dscp` marks them: the handshake and the receiver's ACKs stay at 0.
    #[serde(default)]
    pub dscp: u8,
    #[serde(default)]
    pub start_ns: Nanos,
    #[serde(default)]
    pub stop_ns: Option<Nanos>,
    #[serde(default = "default_cc")]
    pub cc: String,
    /// Parameter profile: "linux" (today's defaults) or an older kernel's, e.g. "linux-2.6.22".
    #[serde(default = "default_profile")]
    pub cc_profile: String,
    /// Overrides of the congestion control's parameters, by name (`tcplab variants NAME`).
    #[serde(default)]
    pub cc_params: std::collections::BTreeMap<String, f64>,
    #[serde(default = "default_recovery")]
    pub recovery: Recovery,
    #[serde(default = "yes")]
    pub prr: bool,
    /// RACK-TLP loss detection (RFC 8985, Linux `tcp_recovery.c`, its default since 4.18):
    /// segments are lost by time once a later-sent one is delivered, lost retransmissions are
    /// found, and a tail loss probe replaces most RTOs. Needs `recovery` "sack". Off: RFC 6675's
    /// duplicate-ACK threshold.
    #[serde(default)]
    pub rack: bool,
    /// A retransmission timeout that proves spurious is undone, as Linux undoes it
    /// (`tcp_try_undo_loss` with Eifel detection, RFC 3522): when the first ACK of new data after
    /// it echoes a timestamp from before the first retransmission, the window and ssthresh go
    /// back to what they were and no segment stays marked lost. Needs `recovery` "sack" with
    /// `sack` on; without `timestamps` only a timeout whose retransmission has not left yet is
    /// undone. Off: every timeout stands.
    #[serde(default)]
    pub undo: bool,
    /// ECN (RFC 3168; Linux `net.ipv4.tcp_ecn = 1`): new data leaves ECN-capable (ECT(0)), the
    /// receiver echoes a CE mark with ECE until the sender's CWR, and the sender reduces its
    /// window once per window of data on ECE.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`: the flow's ECN-capable packets carry ECT(1), the L4S identifier (RFC 9331),
    /// instead of ECT(0), as Linux sends them for a congestion control that asks for it.
    #[serde(default)]
    pub ect1: bool,
    #[serde(default = "default_mss")]
    pub mss_bytes: u32,
    #[serde(default = "default_header")]
    pub header_bytes: u32,
    #[serde(default = "default_iw")]
    pub init_cwnd_pkts: u32,
    #[serde(default = "default_rwnd")]
    pub rwnd_bytes: u64,
    #[serde(default = "default_sndbuf")]
    pub sndbuf_bytes: u64,
    /// The receiver's window grows as Linux's receive-buffer autotuning grows it, from
    /// `tcp_rmem[1]` (128 KB) up to `rwnd_bytes` (`tcp_rmem[2]`), and each ACK advertises it
    /// (transport::tcp::rcvbuf). Off (the default): the window is `rwnd_bytes` from the start.
    #[serde(default)]
    pub rcvbuf_autotuning: bool,
    /// The send buffer is sized as Linux sizes it, from cwnd, up to `sndbuf_bytes`
    /// (`tcp_wmem[2]`), and holds the queued data in memory terms; the writer (iperf3) refills it
    /// once a third is free (transport::tcp::sndbuf). Off (the default): `sndbuf_bytes` of
    /// payload caps the data in flight and there is always data to send.
    #[serde(default)]
    pub sndbuf_autotuning: bool,
    /// What crosses the path before the data: nothing (the default), a handshake, or iperf3's
    /// connection set-up (`Preamble`).
    #[serde(default)]
    pub preamble: Preamble,
    #[serde(default = "yes")]
    pub delayed_ack: bool,
    #[serde(default = "default_delack")]
    pub delack_timeout_ns: Nanos,
    #[serde(default = "yes")]
    pub timestamps: bool,
    /// With timestamps, the receiver adds a random per-connection offset to its TSvals, as
    /// Linux does with `net.ipv4.tcp_timestamps = 1` (the default of today's kernels); off: the clock
    /// as it is (`tcp_timestamps = 2`, older kernels). Only TCP-LP reads the peer's TSval.
    #[serde(default)]
    pub timestamp_offsets: bool,
    /// The receiver sends SACK blocks (RFC 2018). Off with recovery "sack": Linux's SACK-less
    /// recovery (`Recovery::Sack`).
    #[serde(default = "yes")]
    pub sack: bool,
    /// The receiver ACKs as Linux ≥ 4.20 does: quick-ACK mode at the start, SACK compression
    /// while out-of-order data is held (`tcp_comp_sack_nr` 44, 1 ms + 100 µs of timer slack; the
    /// held ACKs sent before a SACK block would fall below the two most recent, Linux ≥ 5.8).
    /// Off (the default): every out-of-order segment is ACKed at once (RFC 5681 §4.2, ns-2). The
    /// fidelity experiment turns it on, as the testbed's kernel has it (docs/validation.md).
    #[serde(default)]
    pub sack_compression: bool,
    #[serde(default = "default_min_rto")]
    pub min_rto_ns: Nanos,
    #[serde(default = "default_initial_rto")]
    pub initial_rto_ns: Nanos,
    #[serde(default = "default_max_rto")]
    pub max_rto_ns: Nanos,
    /// Pace segments (Linux internal TCP pacing). Algorithms that pace by design (BBR) always do;
    /// the others then pace at Linux's default rate (`tcp_update_pacing_rate`).
    #[serde(default)]
    pub pacing: bool,
    /// Paced segments are paced as by Linux's fq qdisc: the sender hands them down up to 2^-10 s
    /// before their departure times (TCP Small Queues) and the host holds each until it is due.
    /// Off (the default): the sender paces itself, as Linux's TCP does under a qdisc that does
    /// not pace (its default ones; the testbed), sending each burst when its time has come.
    #[serde(default)]
    pub fq_pacing: bool,
    /// Send as Linux's TCP does with GSO/TSO (always, since 4.x, whatever the device offers):
    /// new data leaves in bursts of about 1 ms of data at the pacing rate (`tcp_tso_autosize`,
    /// at least `tcp_min_tso_segs`), each burst one pacing slot; a sender with less cwnd room
    /// than a burst waits for the next ACK when one is due within min(1 ms, srtt/2) and it
    /// sent within the last 1 ms (`tcp_tso_should_defer`). Off: one segment at a time.
    #[serde(default)]
    pub tso: bool,
    /// Test hook: the first transmission of each of these segments (0-based) is dropped.
    #[serde(default)]
    pub drop_segments: Vec<u32>,
    /// Test hook: the first retransmission of each of these segments is dropped too.
    #[serde(default)]
    pub drop_retransmits: Vec<u32>,
}

fn yes() -> bool {
    true
}
fn default_cc() -> String {
    "reno".into()
}
fn default_profile() -> String {
    "linux".into()
}
fn default_recovery() -> Recovery {
    Recovery::Sack
}
fn default_mss() -> u32 {
    1448
}
fn default_header() -> u32 {
    52
}
fn default_iw() -> u32 {
    10
}
fn default_rwnd() -> u64 {
    6 * 1024 * 1024
}
fn default_sndbuf() -> u64 {
    4 * 1024 * 1024
}
fn default_delack() -> Nanos {
    40 * NS_PER_MS
}
fn default_min_rto() -> Nanos {
    200 * NS_PER_MS
}
fn default_initial_rto() -> Nanos {
    NS_PER_SEC
}
fn default_max_rto() -> Nanos {
    120 * NS_PER_SEC
}

impl TcpSpec {
    /// A Linux-like TCP flow from `src` to `dst` with every other field at its default.
    pub fn new(src: u32, dst: u32) -> Self {
        serde_json::from_value(serde_json::json!({"src": src, "dst": dst})).expect("defaults")
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrSpec {
    pub src: u32,
    pub dst: u32,
    /// The DSCP of the flow's data packets (RFC 2474; 0 best effort, 46 EF, 8 CS1 …), as
    /// `iperf3 --dscp` marks them: the handshake and the receiver's ACKs stay at 0.
    #[serde(default)]
    pub dscp: u8,
    #[serde(default)]
    pub start_ns: Nanos,
    #[serde(default)]
    pub stop_ns: Option<Nanos>,
    #[serde(default = "default_cbr_size")]
    pub packet_bytes: u32,
    /// (time_ns, rate_bps), piecewise constant from each time on.
    pub schedule: Vec<(Nanos, u64)>,
    /// ns-2's `random_`: each gap between datagrams is its mean times a uniform draw from
    /// [0.5, 1.5), so the rate holds on average while sources lose their fixed phase.
    #[serde(default)]
    pub random: bool,
}

fn default_cbr_size() -> u32 {
    1000
}

/// A DCCP bulk transfer (RFC 4340) with CCID 2 (RFC 4341): datagrams of `packet_bytes` while
/// the window allows, like iperf's DCCP mode.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DccpSpec {
    pub src: u32,
    pub dst: u32,
    /// The DSCP of the flow's data packets (RFC 2474; 0 best effort, 46 EF, 8 CS1 …), as
    /// `iperf3 --dscp` marks them: the handshake and the receiver's ACKs stay at 0.
    #[serde(default)]
    pub dscp: u8,
    #[serde(default)]
    pub start_ns: Nanos,
    #[serde(default)]
    pub stop_ns: Option<Nanos>,
    /// Congestion Control ID (RFC 4340 §10); the engine has CCID 2.
    #[serde(default = "default_ccid")]
    pub ccid: u8,
    /// IP packet size of a data packet.
    #[serde(default = "default_dccp_packet")]
    pub packet_bytes: u32,
    /// Headers of a data packet; the payload is `packet_bytes − header_bytes`.
    #[serde(default = "default_dccp_header")]
    pub header_bytes: u32,
    /// Initial window; `null`: RFC 3390 by payload size, as Linux.
    #[serde(default)]
    pub init_cwnd_pkts: Option<u32>,
    /// Ack Ratio at the start (RFC 4340 §11.3 default 2).
    #[serde(default = "default_ack_ratio")]
    pub init_ack_ratio: u32,
    /// How the sender adapts Ack Ratio.
    #[serde(default)]
    pub ack_ratio_policy: AckRatioPolicy,
    /// The receiver's Sequence Window (RFC 4340 §7.5.2 default 100), which sets Ack Ratio
    /// under the "linux" policy.
    #[serde(default = "default_seq_window")]
    pub seq_window_pkts: u32,
    /// ECN (RFC 4340 §12, RFC 4341 §5): data and Acks leave ECN-capable (ECT(0)), the receiver
    /// reports CE-marked packets in its Ack Vector, and the sender halves its window on them
    /// once per window, as on a loss.
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "default_min_rto")]
    pub min_rto_ns: Nanos,
    #[serde(default = "default_dccp_initial_rto")]
    pub initial_rto_ns: Nanos,
    #[serde(default = "default_dccp_max_rto")]
    pub max_rto_ns: Nanos,
}

/// How a CCID 2 sender sets Ack Ratio (RFC 4341 §6.1.2 bounds it by ⌈cwnd/2⌉ either way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AckRatioPolicy {
    /// RFC 4341 §6.1.2 Ack congestion control, as Linux 2.6.22 ran it: double Ack Ratio in a
    /// window with lost Acks, decrease it by 1 after cwnd/(R² − R) windows without.
    #[default]
    Rfc4341,
    /// Linux since 2.6.38 (Ack congestion control compiled out): about 10–20 Acks per window,
    /// so that five windows of Acks fit the receiver's Sequence Window.
    Linux,
}

fn default_ccid() -> u8 {
    2
}
/// 1500-byte packets, as TCP's: Linux's payload limit at a 1500-byte MTU is 1424 B
/// (`dccp_sync_mss`: 1500 − 20 IP − 16 DCCP − 40 B kept for options).
fn default_dccp_packet() -> u32 {
    1500
}
fn default_dccp_header() -> u32 {
    76
}
fn default_ack_ratio() -> u32 {
    2
}
fn default_seq_window() -> u32 {
    100
}
/// Linux `DCCP_TIMEOUT_INIT` (RFC 4340 §8.1.2).
fn default_dccp_initial_rto() -> Nanos {
    3 * NS_PER_SEC
}
/// Linux `DCCP_RTO_MAX`.
fn default_dccp_max_rto() -> Nanos {
    64 * NS_PER_SEC
}

impl DccpSpec {
    /// A CCID 2 flow from `src` to `dst` with every other field at its default.
    pub fn new(src: u32, dst: u32) -> Self {
        serde_json::from_value(serde_json::json!({"src": src, "dst": dst})).expect("defaults")
    }

    pub fn payload_bytes(&self) -> u32 {
        self.packet_bytes - self.header_bytes
    }
}

/// A link of the built topology.
#[derive(Clone, Debug)]
pub struct BuiltLink {
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_ns: Nanos,
    pub queue: QueueSpec,
    pub loss: f64,
    /// Rate changes: `(time_ns, rate_bps)`, in increasing time.
    pub rate_schedule: Vec<(Nanos, u64)>,
}

/// The topology as nodes and one-way links, whatever way it was given.
#[derive(Clone, Debug)]
pub struct Built {
    pub node_names: Vec<String>,
    pub links: Vec<BuiltLink>,
}

impl Dumbbell {
    /// Node and link numbering as documented in `docs/engine-spec.md`.
    pub fn build(&self) -> Built {
        let n = self.pairs;
        let mut node_names: Vec<String> = (1..=n).map(|i| format!("sender{i}")).collect();
        node_names.extend((1..=n).map(|i| format!("receiver{i}")));
        node_names.push("router1".into());
        node_names.push("router2".into());
        let (r1, r2) = (2 * n, 2 * n + 1);
        let bottleneck = |from, to, loss| BuiltLink {
            from,
            to,
            rate_bps: self.bottleneck_rate_bps,
            delay_ns: self.bottleneck_delay_ns,
            queue: self.queue.clone(),
            loss,
            rate_schedule: self.bottleneck_schedule.clone(),
        };
        let mut links = vec![bottleneck(r1, r2, self.loss), bottleneck(r2, r1, self.reverse_loss)];
        for i in 0..n {
            let d = self.access_delay_ns.get(i as usize).copied().unwrap_or(0);
            let access = |from, to| BuiltLink {
                from,
                to,
                rate_bps: self.access_rate_bps,
                delay_ns: d,
                queue: self.access_queue.clone(),
                loss: 0.0,
                rate_schedule: Vec::new(),
            };
            links.push(access(i, r1));
            links.push(access(r1, i));
            links.push(access(r2, n + i));
            links.push(access(n + i, r2));
        }
        Built { node_names, links }
    }
}

/// A link's rate changes: rates at strictly increasing times (`field` names them in the error).
/// A rate of 0 takes the link down until the next change.
pub fn check_rate_schedule(schedule: &[(Nanos, u64)], field: &str) -> Result<(), SpecError> {
    if let Some(i) = schedule.windows(2).position(|w| w[1].0 <= w[0].0) {
        return Err(SpecError::new(format!("{field}[{}]", i + 1), format!("{:?}", schedule[i + 1]), format!("a time after the step before ({} ns)", schedule[i].0)));
    }
    Ok(())
}

/// A queue on a link of `rate_bps` (RED's automatic threshold depends on it).
fn check_queue(q: &QueueSpec, field: &str, rate_bps: u64) -> Result<(), SpecError> {
    let (kind, limit_pkts, limit_bytes) = match q {
        QueueSpec::Droptail { limit_pkts, limit_bytes } => ("droptail", limit_pkts, limit_bytes),
        QueueSpec::Red { limit_pkts, limit_bytes, red } => {
            check_red(red, &format!("{field}.red"), rate_bps)?;
            ("red", limit_pkts, limit_bytes)
        }
        QueueSpec::Codel { limit_pkts, limit_bytes, codel } => {
            for (name, v) in [("target_ns", codel.target_ns), ("interval_ns", codel.interval_ns)] {
                if v == 0 {
                    return Err(SpecError::new(format!("{field}.codel.{name}"), v, "a time above 0 ns"));
                }
            }
            ("codel", limit_pkts, limit_bytes)
        }
        QueueSpec::FqCodel { limit_pkts, limit_bytes, fq_codel: f } => {
            for (name, v) in [("target_ns", f.target_ns), ("interval_ns", f.interval_ns), ("quantum_bytes", f.quantum_bytes as u64), ("drop_batch", f.drop_batch as u64)] {
                if v == 0 {
                    return Err(SpecError::new(format!("{field}.fq_codel.{name}"), v, "above 0"));
                }
            }
            if f.ce_threshold_selector & !f.ce_threshold_mask != 0 {
                return Err(SpecError::new(format!("{field}.fq_codel.ce_threshold_selector"), f.ce_threshold_selector, format!("bits within ce_threshold_mask ({:#x})", f.ce_threshold_mask)));
            }
            ("fq_codel", limit_pkts, limit_bytes)
        }
        QueueSpec::Drr { limit_pkts, limit_bytes, drr } => {
            if drr.quantum_bytes == 0 {
                return Err(SpecError::new(format!("{field}.drr.quantum_bytes"), 0, "at least 1 byte"));
            }
            ("drr", limit_pkts, limit_bytes)
        }
        QueueSpec::Fred { limit_pkts, limit_bytes, fred } => {
            check_fred(fred, &format!("{field}.fred"))?;
            ("fred", limit_pkts, limit_bytes)
        }
        QueueSpec::Csfq { limit_pkts, limit_bytes, csfq } => {
            for (name, v) in [("k_ns", csfq.k_ns), ("kc_ns", csfq.kc_ns)] {
                if v == 0 {
                    return Err(SpecError::new(format!("{field}.csfq.{name}"), v, "a time above 0 ns"));
                }
            }
            if !(csfq.threshold > 0.0 && csfq.threshold <= 1.0) {
                return Err(SpecError::new(format!("{field}.csfq.threshold"), csfq.threshold, "a fraction of the buffer in (0, 1]"));
            }
            ("csfq", limit_pkts, limit_bytes)
        }
        QueueSpec::Pie { limit_pkts, limit_bytes, pie } => {
            for (name, v) in [("target_ns", pie.target_ns), ("tupdate_ns", pie.tupdate_ns)] {
                if v == 0 {
                    return Err(SpecError::new(format!("{field}.pie.{name}"), v, "a time above 0 ns"));
                }
            }
            for (name, v) in [("alpha", pie.alpha), ("beta", pie.beta)] {
                if v > 32 {
                    return Err(SpecError::new(format!("{field}.pie.{name}"), v, "sixteenths from 0 to 32 (0 to 2)"));
                }
            }
            ("pie", limit_pkts, limit_bytes)
        }
        QueueSpec::FqPie { limit_pkts, limit_bytes, fq_pie: f } => {
            for (name, v) in [("target_ns", f.target_ns), ("tupdate_ns", f.tupdate_ns), ("quantum_bytes", f.quantum_bytes as u64)] {
                if v == 0 {
                    return Err(SpecError::new(format!("{field}.fq_pie.{name}"), v, "above 0"));
                }
            }
            for (name, v) in [("alpha", f.alpha), ("beta", f.beta)] {
                if v > 32 {
                    return Err(SpecError::new(format!("{field}.fq_pie.{name}"), v, "sixteenths from 0 to 32 (0 to 2)"));
                }
            }
            if f.ecn_prob > 100 {
                return Err(SpecError::new(format!("{field}.fq_pie.ecn_prob"), f.ecn_prob, "a percentage from 0 to 100"));
            }
            ("fq_pie", limit_pkts, limit_bytes)
        }
        QueueSpec::Dualpi2 { limit_pkts, limit_bytes, dualpi2: d } => {
            for (name, v) in [("tupdate_ns", d.tupdate_ns), ("mtu_bytes", d.mtu_bytes as u64)] {
                if v == 0 {
                    return Err(SpecError::new(format!("{field}.dualpi2.{name}"), v, "above 0"));
                }
            }
            // Linux's netlink ranges: alpha and beta 1 to 2^31 - 1 (in 1/256 Hz), coupling 1 to 255, weights 0 to 100.
            for (name, v) in [("alpha", d.alpha), ("beta", d.beta)] {
                if !(1..=(1 << 31) - 1).contains(&v) {
                    return Err(SpecError::new(format!("{field}.dualpi2.{name}"), v, "1 to 2147483647 (1/256 Hz)"));
                }
            }
            if !(1..=255).contains(&d.coupling_factor) {
                return Err(SpecError::new(format!("{field}.dualpi2.coupling_factor"), d.coupling_factor, "1 to 255"));
            }
            if d.c_protection > 100 {
                return Err(SpecError::new(format!("{field}.dualpi2.c_protection"), d.c_protection, "a percentage from 0 to 100"));
            }
            for (name, v) in [("target_ns", d.target_ns), ("step_thresh_ns", d.step_thresh_ns)] {
                if v > u32::MAX as u64 * 1000 {
                    return Err(SpecError::new(format!("{field}.dualpi2.{name}"), v, "at most 4294967295 us"));
                }
            }
            ("dualpi2", limit_pkts, limit_bytes)
        }
        QueueSpec::Cake { limit_pkts, limit_bytes, cake } => {
            for (name, v) in [("target_ns", cake.target_ns), ("interval_ns", cake.interval_ns)] {
                if v == 0 {
                    return Err(SpecError::new(format!("{field}.cake.{name}"), v, "a time above 0 ns"));
                }
            }
            if cake.bandwidth == CakeBandwidth::RateBps(0) {
                return Err(SpecError::new(format!("{field}.cake.bandwidth.rate_bps"), 0, "a rate above 0 bit/s"));
            }
            if let Some(v) = cake.overhead.filter(|v| !(-64..=256).contains(v)) {
                return Err(SpecError::new(format!("{field}.cake.overhead"), v, "-64 to 256 bytes"));
            }
            if cake.mpu > 256 {
                return Err(SpecError::new(format!("{field}.cake.mpu"), cake.mpu, "0 to 256 bytes"));
            }
            ("cake", limit_pkts, limit_bytes)
        }
    };
    match (limit_pkts, limit_bytes) {
        (Some(p), None) if *p >= 1 => Ok(()),
        (None, Some(b)) if *b >= 1 => Ok(()),
        (Some(p), None) => Err(SpecError::new(format!("{field}.limit_pkts"), p, "at least 1 packet")),
        (None, Some(b)) => Err(SpecError::new(format!("{field}.limit_bytes"), b, "at least 1 byte")),
        _ => Err(SpecError::new(field, kind, "exactly one of limit_pkts or limit_bytes")),
    }
}

fn check_fred(fred: &FredSpec, field: &str) -> Result<(), SpecError> {
    for (name, v) in [("min_thresh_pkts", fred.min_thresh_pkts), ("max_thresh_pkts", fred.max_thresh_pkts)] {
        if let Some(v) = v {
            if !(v.is_finite() && v > 0.0) {
                return Err(SpecError::new(format!("{field}.{name}"), v, "a number of packets above 0"));
            }
        }
    }
    if let (Some(min), Some(max)) = (fred.min_thresh_pkts, fred.max_thresh_pkts) {
        if max <= min {
            return Err(SpecError::new(format!("{field}.max_thresh_pkts"), max, format!("more than min_thresh_pkts ({min})")));
        }
    }
    if !(fred.max_p > 0.0 && fred.max_p <= 1.0) {
        return Err(SpecError::new(format!("{field}.max_p"), fred.max_p, "a probability in (0, 1]"));
    }
    if !(fred.weight > 0.0 && fred.weight < 1.0) {
        return Err(SpecError::new(format!("{field}.weight"), fred.weight, "a number in (0, 1)"));
    }
    if fred.mean_pkt_bytes == 0 {
        return Err(SpecError::new(format!("{field}.mean_pkt_bytes"), 0, "at least 1 byte"));
    }
    Ok(())
}

fn check_red(red: &RedSpec, field: &str, rate_bps: u64) -> Result<(), SpecError> {
    for (name, v) in [("min_thresh_pkts", red.min_thresh_pkts), ("max_thresh_pkts", red.max_thresh_pkts)] {
        if let Some(v) = v {
            if !(v.is_finite() && v > 0.0) {
                return Err(SpecError::new(format!("{field}.{name}"), v, "a number of packets above 0"));
            }
        }
    }
    if red.mean_pkt_bytes == 0 {
        return Err(SpecError::new(format!("{field}.mean_pkt_bytes"), 0, "at least 1 byte"));
    }
    if let Some(hi) = red.max_thresh_pkts {
        let lo = red.min_thresh_pkts.unwrap_or_else(|| RedSpec::auto_min_thresh_pkts(rate_bps, red.mean_pkt_bytes));
        if hi <= lo {
            let how = if red.min_thresh_pkts.is_some() { "" } else { ", set from the link's rate" };
            return Err(SpecError::new(format!("{field}.max_thresh_pkts"), hi, format!("above min_thresh_pkts ({lo}{how})")));
        }
    }
    if !(red.max_p > 0.0 && red.max_p <= 1.0) {
        return Err(SpecError::new(format!("{field}.max_p"), red.max_p, "a probability in (0, 1]"));
    }
    if let Some(w) = red.weight {
        if !(w > 0.0 && w < 1.0) {
            return Err(SpecError::new(format!("{field}.weight"), w, "a weight in (0, 1)"));
        }
    }
    if let Some(a) = &red.adaptive {
        let at = |name: &str| format!("{field}.adaptive.{name}");
        if !(a.alpha > 0.0 && a.alpha <= 1.0) {
            return Err(SpecError::new(at("alpha"), a.alpha, "a number in (0, 1]"));
        }
        if !(a.beta > 0.0 && a.beta < 1.0) {
            return Err(SpecError::new(at("beta"), a.beta, "a factor in (0, 1)"));
        }
        if a.interval_ns == 0 {
            return Err(SpecError::new(at("interval_ns"), 0, "a time above 0 ns"));
        }
        if !(a.top > 0.0 && a.top <= 1.0) {
            return Err(SpecError::new(at("top"), a.top, "a probability in (0, 1]"));
        }
        if let Some(b) = a.bottom {
            if !(b > 0.0 && b < a.top) {
                return Err(SpecError::new(at("bottom"), b, format!("a probability above 0 and below top ({})", a.top)));
            }
        }
    }
    Ok(())
}

fn check_prob(p: f64, field: &str) -> Result<(), SpecError> {
    if (0.0..1.0).contains(&p) {
        Ok(())
    } else {
        Err(SpecError::new(field, p, "a probability in [0, 1)"))
    }
}

impl Spec {
    pub fn from_json(text: &str) -> Result<Spec, SpecError> {
        serde_json::from_str(text).map_err(|e| SpecError::new("spec", e, "a tcplab engine spec (docs/engine-spec.md)"))
    }

    /// Check every field the engine relies on and build the topology.
    pub fn validate(&self) -> Result<Built, SpecError> {
        if self.duration_ns == 0 {
            return Err(SpecError::new("duration_ns", 0, "a positive duration"));
        }
        if self.interval_ns == 0 {
            return Err(SpecError::new("interval_ns", 0, "a positive interval"));
        }
        if !(0.0..=1.0).contains(&self.host_stall_prob) {
            return Err(SpecError::new("host_stall_prob", self.host_stall_prob, "a probability in [0, 1]"));
        }
        if self.host_stall_prob > 0.0 && self.host_stall_ns == 0 {
            return Err(SpecError::new("host_stall_ns", 0, "a positive stall when host_stall_prob is above 0"));
        }
        for (field, table) in [("host_data_holds_ns", &self.host_data_holds_ns), ("host_ack_holds_ns", &self.host_ack_holds_ns)] {
            if table.len() == 1 || table.windows(2).any(|w| w[0] > w[1]) || table.last().is_some_and(|&h| h > NS_PER_SEC) {
                return Err(SpecError::new(field, format!("{table:?}"), "no holds, or at least 2 in increasing order (quantiles), none over 1 s"));
            }
        }
        let built = match &self.topology {
            Topology::Dumbbell(d) => {
                if d.pairs == 0 {
                    return Err(SpecError::new("topology.pairs", 0, "at least 1 pair"));
                }
                if d.bottleneck_rate_bps == 0 {
                    return Err(SpecError::new("topology.bottleneck_rate_bps", 0, "a positive rate"));
                }
                if d.access_rate_bps == 0 {
                    return Err(SpecError::new("topology.access_rate_bps", 0, "a positive rate"));
                }
                if !d.access_delay_ns.is_empty() && d.access_delay_ns.len() != d.pairs as usize {
                    return Err(SpecError::new(
                        "topology.access_delay_ns",
                        format!("{} values", d.access_delay_ns.len()),
                        format!("one value per pair ({})", d.pairs),
                    ));
                }
                check_queue(&d.queue, "topology.queue", d.bottleneck_rate_bps)?;
                check_queue(&d.access_queue, "topology.access_queue", d.access_rate_bps)?;
                check_prob(d.loss, "topology.loss")?;
                check_prob(d.reverse_loss, "topology.reverse_loss")?;
                check_rate_schedule(&d.bottleneck_schedule, "topology.bottleneck_schedule")?;
                d.build()
            }
            Topology::Graph(g) => {
                if g.nodes.is_empty() {
                    return Err(SpecError::new("topology.nodes", "[]", "at least one node"));
                }
                let n = g.nodes.len() as u32;
                for (i, l) in g.links.iter().enumerate() {
                    let f = format!("topology.links[{i}]");
                    if l.from >= n {
                        return Err(SpecError::new(format!("{f}.from"), l.from, format!("a node index below {n}")));
                    }
                    if l.to >= n || l.to == l.from {
                        return Err(SpecError::new(format!("{f}.to"), l.to, format!("a node index below {n}, not the link's own source")));
                    }
                    if l.rate_bps == 0 {
                        return Err(SpecError::new(format!("{f}.rate_bps"), 0, "a positive rate"));
                    }
                    check_queue(&l.queue, &format!("{f}.queue"), l.rate_bps)?;
                    check_prob(l.loss, &format!("{f}.loss"))?;
                    check_rate_schedule(&l.rate_schedule, &format!("{f}.rate_schedule"))?;
                }
                Built { node_names: g.nodes.clone(), links: g.links.iter().map(|l| BuiltLink {
                    from: l.from, to: l.to, rate_bps: l.rate_bps, delay_ns: l.delay_ns, queue: l.queue.clone(), loss: l.loss,
                    rate_schedule: l.rate_schedule.clone(),
                }).collect() }
            }
        };
        let n = built.node_names.len() as u32;
        for (i, f) in self.flows.iter().enumerate() {
            let (src, dst) = f.endpoints();
            if src >= n {
                return Err(SpecError::new(format!("flows[{i}].src"), src, format!("a node index below {n}")));
            }
            if dst >= n || dst == src {
                return Err(SpecError::new(format!("flows[{i}].dst"), dst, format!("a node index below {n}, not the flow's source")));
            }
            if f.dscp() > 63 {
                return Err(SpecError::new(format!("flows[{i}].dscp"), f.dscp(), "0 to 63 (the DS field's six bits)"));
            }
            let (start, stop) = f.start_stop();
            if let Some(stop) = stop {
                if stop <= start {
                    return Err(SpecError::new(format!("flows[{i}].stop_ns"), stop, "a stop time after the start"));
                }
            }
            match f {
                FlowSpec::Tcp(t) => {
                    if t.mss_bytes < 64 || t.mss_bytes > 65_000 {
                        return Err(SpecError::new(format!("flows[{i}].mss_bytes"), t.mss_bytes, "64 to 65000 bytes"));
                    }
                    if t.init_cwnd_pkts == 0 {
                        return Err(SpecError::new(format!("flows[{i}].init_cwnd_pkts"), 0, "at least 1 segment"));
                    }
                    if t.rwnd_bytes < t.mss_bytes as u64 {
                        return Err(SpecError::new(format!("flows[{i}].rwnd_bytes"), t.rwnd_bytes, "at least one MSS"));
                    }
                    if t.sndbuf_bytes < t.mss_bytes as u64 {
                        return Err(SpecError::new(format!("flows[{i}].sndbuf_bytes"), t.sndbuf_bytes, "at least one MSS"));
                    }
                    if t.rack && !t.sack {
                        return Err(SpecError::new(format!("flows[{i}].rack"), true, "false when sack is false (RACK-TLP needs SACK blocks; Linux runs it only with SACK)"));
                    }
                    if t.undo && (t.recovery != Recovery::Sack || !t.sack) {
                        return Err(SpecError::new(format!("flows[{i}].undo"), true, "false unless recovery is \"sack\" with sack on (undo is modelled for SACK connections)"));
                    }
                    if t.rack && t.recovery != Recovery::Sack {
                        return Err(SpecError::new(format!("flows[{i}].rack"), true, "false unless recovery is \"sack\" (RACK-TLP needs SACK)"));
                    }
                    if t.min_rto_ns == 0 || t.max_rto_ns < t.min_rto_ns {
                        return Err(SpecError::new(format!("flows[{i}].min_rto_ns"), t.min_rto_ns, "positive and at most max_rto_ns"));
                    }
                    crate::cc::Cc::new(&t.cc, &t.cc_profile, &t.cc_params, &format!("flows[{i}]"))?;
                    if t.ect1 && !t.ecn {
                        return Err(SpecError::new(format!("flows[{i}].ect1"), true, "false without ecn (ECT(1) is an ECN codepoint)"));
                    }
                    if !t.ecn && crate::cc::algorithm(&t.cc).is_some_and(|a| a.needs_ecn) {
                        return Err(SpecError::new(format!("flows[{i}].ecn"), false, format!("true for cc \"{}\" (it needs ECN; Linux negotiates ECN for it whatever tcp_ecn says)", t.cc)));
                    }
                }
                FlowSpec::Cbr(c) => {
                    if c.packet_bytes < 28 {
                        return Err(SpecError::new(format!("flows[{i}].packet_bytes"), c.packet_bytes, "at least 28 bytes (IP + UDP headers)"));
                    }
                    if c.schedule.is_empty() {
                        return Err(SpecError::new(format!("flows[{i}].schedule"), "[]", "at least one (time_ns, rate_bps) step"));
                    }
                    if c.schedule.windows(2).any(|w| w[1].0 <= w[0].0) {
                        return Err(SpecError::new(format!("flows[{i}].schedule"), "unsorted", "steps in increasing time order"));
                    }
                }
                FlowSpec::Dccp(d) => d.check(&format!("flows[{i}]"))?,
            }
        }
        if let Some(c) = &self.capture {
            if c.flow as usize >= self.flows.len() {
                return Err(SpecError::new("capture.flow", c.flow, format!("a flow index below {}", self.flows.len())));
            }
            let nl = built.links.len() as u32;
            if c.links.is_empty() {
                return Err(SpecError::new("capture.links", "[]", "at least one link id"));
            }
            if let Some(l) = c.links.iter().find(|&&l| l >= nl) {
                return Err(SpecError::new("capture.links", l, format!("link ids below {nl}")));
            }
        }
        Ok(built)
    }
}

impl DccpSpec {
    fn check(&self, at: &str) -> Result<(), SpecError> {
        if self.ccid != 2 {
            return Err(SpecError::new(format!("{at}.ccid"), self.ccid, "2 (TCP-like, RFC 4341), the only CCID the engine has"));
        }
        if self.header_bytes < 36 {
            return Err(SpecError::new(format!("{at}.header_bytes"), self.header_bytes, "at least 36 bytes (IP 20 + DCCP 16)"));
        }
        if self.packet_bytes <= self.header_bytes || self.packet_bytes > 65_535 {
            return Err(SpecError::new(
                format!("{at}.packet_bytes"),
                self.packet_bytes,
                format!("more than header_bytes ({}) and at most 65535 bytes", self.header_bytes),
            ));
        }
        if self.init_cwnd_pkts == Some(0) {
            return Err(SpecError::new(format!("{at}.init_cwnd_pkts"), 0, "at least 1 packet, or null for RFC 3390"));
        }
        if !(1..=0xFFFF).contains(&self.init_ack_ratio) {
            return Err(SpecError::new(format!("{at}.init_ack_ratio"), self.init_ack_ratio, "1 to 65535 (RFC 4340 §11.3)"));
        }
        if self.seq_window_pkts < 32 {
            return Err(SpecError::new(format!("{at}.seq_window_pkts"), self.seq_window_pkts, "at least 32 packets (RFC 4340 §7.5.2)"));
        }
        if self.min_rto_ns == 0 || self.max_rto_ns < self.min_rto_ns {
            return Err(SpecError::new(format!("{at}.min_rto_ns"), self.min_rto_ns, "positive and at most max_rto_ns"));
        }
        if self.initial_rto_ns == 0 {
            return Err(SpecError::new(format!("{at}.initial_rto_ns"), 0, "a positive time"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cakes_overhead_and_mpu_are_checked_against_tcs_ranges() {
        let check = |cake: CakeSpec| check_queue(&QueueSpec::Cake { limit_pkts: Some(100), limit_bytes: None, cake }, "topology.queue", 20_000_000);
        for (overhead, mpu) in [(Some(-64), 0), (Some(256), 256), (None, 84)] {
            assert!(check(CakeSpec { overhead, mpu, ..CakeSpec::default() }).is_ok(), "{overhead:?} {mpu}");
        }
        for (overhead, mpu, field) in [(Some(-65), 0, "overhead"), (Some(257), 0, "overhead"), (None, 257, "mpu")] {
            let e = check(CakeSpec { overhead, mpu, ..CakeSpec::default() }).expect_err("refused");
            assert_eq!(e.field, format!("topology.queue.cake.{field}"));
        }
    }
}
