//! CAKE, "Common Applications Kept Enhanced" (Høiland-Jørgensen, Täht and Morton, "Piece of
//! CAKE", IEEE LANMAN 2018), as Linux's `sch_cake` runs it (`net/sched/sch_cake.c`):
//!
//! - Tins (`diffserv`): each packet goes to a tin by its DSCP; each tin has all that follows of
//!   its own, and a threshold, a share of the rate. With a rate the highest tin within its
//!   threshold's schedule is served, else the one nearest to it; without, the tins take turns by
//!   their quanta. `wash` clears the DSCP once the tin is chosen.
//!
//! - A queue per flow, per host or per host pair (`flow_mode`; Linux hashes into 1024 queues,
//!   8-way set-associative; tcplab never puts two in one). With the flow bit and a host bit
//!   (`dual-srchost`, `dual-dsthost`, `triple-isolate`, the default) each flow's quantum is
//!   divided by the number of bulk flows its host has, so that hosts share before flows do.
//! - DRR++ over three lists: new (sparse) flows first, then old (bulk) ones; a flow whose queue
//!   empties while its COBALT is not at rest waits on the decaying list, one of which is visited
//!   at the start of each dequeue.
//! - COBALT per queue: CoDel's control law run with a 32-bit 1/√count (a cache for counts below
//!   16, one Newton step above), with its "drop next" time doubling as an activity timeout and
//!   its count decaying while the queue is below target; plus BLUE, a drop probability raised
//!   by 1/256 when the queue overflows and lowered by 1/4096 when it is found empty, each at most
//!   once per target. CoDel marks ECN-capable packets CE (always: CAKE has no `ecn` switch); BLUE
//!   drops. The last packet of a queue is never dropped by COBALT.
//! - When an arrival takes the queue over its limit, the queue holding the most bytes loses its
//!   head packet, one at a time until it is under, and its COBALT is told the queue overflowed.
//!
//! - The shaper (`bandwidth` a rate): in deficit mode, each packet handed out moves the time of
//!   the next on by its frame's time at the rate (a failsafe time by 1.5 times that), and the
//!   queue hands out nothing before it; the link waits (`hold_until`). A queue that empties and
//!   then gets a packet after that time starts afresh from the packet's arrival, with no credit.
//!   `bandwidth = "link"` tunes COBALT and the quantum to the link's rate without a shaper (the
//!   link serialises at that rate).
//!
//! - Overhead compensation (`overhead`, `mpu`, `atm`): the length the shaper and the deficits
//!   count, as `cake_calc_overhead` (the queue's byte counts stay the frames').
//!
//! - `ingress`: the packets CAKE drops count against the shaper (and the deficits, for COBALT's)
//!   as if sent, since they crossed the shaped link before CAKE saw them; COBALT's target
//!   becomes at least two MTU times per bulk flow.
//!
//! - The ACK filter (`ack_filter`): an arriving pure ACK may take out an older one of its flow
//!   that it makes redundant (`cake_ack_filter`).
//!
//! Not modelled: `autorate-ingress`, `nat`, fwmarks and tc filters, GSO splitting, and the memory
//! limit (Linux counts each packet's `truesize`; tcplab's buffer counts packets or IP bytes).

use std::collections::{HashMap, VecDeque};

use super::droptail::DropTail;
use crate::net::packet::{Flags, Packet};
use crate::rng::Rng;
use crate::spec::{CakeAckFilter, CakeAtm, CakeBandwidth, CakeDiffserv, CakeSpec};
use crate::time::Nanos;

/// `psched_mtu` of an Ethernet device: 1500 + its 14-byte header.
const MTU_BYTES: u64 = 1514;
/// The Ethernet header Linux's lengths include (`qdisc_pkt_len`) and tcplab's IP sizes do not.
const ETH_HEADER_BYTES: u32 = 14;

/// A packet's length as CAKE counts it: its frame on an Ethernet device.
fn frame_len(pkt: &Packet) -> u32 {
    pkt.size_bytes + ETH_HEADER_BYTES
}

/// `before(a, b)` of TCP's sequence space: `a` comes first, modulo 2^32.
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `cake_tcph_sack_compare(a, b)`: −1 when `a` SACKs something `b` does not (or `a` carries a
/// DSACK, a block below its ACK), 1 when `b` SACKs everything `a` does and more, 0 when they SACK
/// the same. Blocks are compared in the packets' own units (segments in the simulator, bytes in
/// the router), which gives the same order.
fn sack_compare(a: &Packet, b: &Packet) -> i32 {
    let (sa, sb) = (a.sack_blocks(), b.sack_blocks());
    match (sa.is_empty(), sb.is_empty()) {
        (false, true) => return -1,
        (true, false) => return 1,
        (true, true) => return 0,
        (false, false) => {}
    }
    let bytes_b: u64 = sb.iter().map(|&(s, e)| e.wrapping_sub(s) as u64).sum();
    let mut bytes_a = 0u64;
    for &(start_a, end_a) in sa {
        if before(start_a, a.ack) {
            return -1;
        }
        bytes_a += end_a.wrapping_sub(start_a) as u64;
        if !sb.iter().any(|&(start_b, end_b)| !before(start_a, start_b) && !before(end_b, end_a)) {
            return -1;
        }
    }
    i32::from(bytes_b > bytes_a)
}

/// `cake_tcph_may_drop`: `ack` has no flag but ACK, ECE and CWR, and its timestamps are no newer
/// than the arriving ACK's (`new`).
fn may_drop(ack: &Packet, new: &Packet) -> bool {
    !ack.has(Flags::OTHER_TCP) && !ack.has(Flags::PUSH) && ack.ts_val_ns <= new.ts_val_ns && ack.ts_ecr_ns <= new.ts_ecr_ns
}

/// `cake_ack_filter`: the ACK the one just queued at the tail of `queue` makes redundant, if
/// any: a pure ACK of the same flow (and direction) acknowledging no more, SACKing nothing the
/// new one does not, with no newer timestamps and no other flags, where the new one tells
/// something more. The one nearest the head goes, once a second such is found (ECN's ECE and
/// CWR unchanged between them); `aggressive` also takes a lone one just before the new ACK.
fn ack_to_filter(queue: &VecDeque<Packet>, aggressive: bool) -> Option<usize> {
    const ECN_FLAGS: u8 = Flags::ECE | Flags::CWR;
    let n = queue.len();
    let new = queue.back()?;
    if n < 2 || !new.is_pure_ack() {
        return None;
    }
    let (mut elig, mut elig_flags, mut num_found) = (None, 0u8, 0i32);
    for (i, c) in queue.iter().enumerate().take(n - 1) {
        if !c.is_pure_ack() || c.flow != new.flow || c.dst != new.dst {
            continue;
        }
        if elig.is_some() && c.flags & ECN_FLAGS != elig_flags {
            elig = None;
            num_found -= 1;
        }
        if !may_drop(c, new) || before(new.ack, c.ack) {
            continue;
        }
        let cmp = sack_compare(c, new);
        if cmp < 0 || (c.ack == new.ack && cmp == 0) {
            continue;
        }
        if elig.is_none() {
            elig = Some(i);
            elig_flags = c.flags & ECN_FLAGS;
        }
        num_found += 1;
        if num_found > 1 {
            return elig;
        }
    }
    match elig {
        Some(e) if aggressive && e == n - 2 && elig_flags == new.flags & ECN_FLAGS => Some(e),
        _ => None,
    }
}

/// `cake_calc_overhead`'s settings: the link layer a packet is charged for.
#[derive(Debug, Clone, Copy)]
struct Framing {
    /// Bytes added to the IP packet (`overhead`); `None` counts the Ethernet frame (`raw`).
    overhead: Option<i32>,
    mpu: u32,
    atm: CakeAtm,
}

impl Framing {
    /// `cake_calc_overhead`: the length `pkt` is charged. With an overhead set the Ethernet
    /// header Linux's length includes is taken off first. A length the overhead takes below 0
    /// counts 0 (Linux's unsigned sum would wrap).
    fn adjusted_len(&self, pkt: &Packet) -> u32 {
        let mut len = match self.overhead {
            None => frame_len(pkt),
            Some(o) => (pkt.size_bytes as i64 + o as i64).max(0) as u32,
        };
        len = len.max(self.mpu);
        match self.atm {
            CakeAtm::None => len,
            CakeAtm::Atm => len.div_ceil(48) * 53,
            CakeAtm::Ptm => len + len.div_ceil(64),
        }
    }
}

/// Entries of `cobalt_rec_inv_sqrt_cache`.
const REC_INV_SQRT_CACHE: usize = 16;

/// The flow isolation bits (Linux `CAKE_FLOW_SRC_IP`, `_DST_IP`, `_FLOWS`).
const SRC_IP: u8 = 1;
const DST_IP: u8 = 2;
const FLOWS: u8 = 4;
/// `CAKE_FLOW_DUAL_SRC` and `_DUAL_DST`: flows, with fairness between source (destination) hosts.
const DUAL_SRC: u8 = FLOWS | SRC_IP;
const DUAL_DST: u8 = FLOWS | DST_IP;

/// `cobalt_newton_step`: one Newton step towards 1/√count in Q0.32.
const fn newton_step(count: u32, rec_inv_sqrt: u32) -> u32 {
    let invsqrt = rec_inv_sqrt as u64;
    let invsqrt2 = (invsqrt * invsqrt) >> 32;
    let val = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2) >> 2;
    ((val * invsqrt) >> (32 - 2 + 1)) as u32
}

/// `cobalt_cache_init`: 1/√count for counts 0–15, four Newton steps each from the last.
const fn rec_inv_sqrt_cache() -> [u32; REC_INV_SQRT_CACHE] {
    let mut cache = [0; REC_INV_SQRT_CACHE];
    let mut v = u32::MAX;
    cache[0] = v;
    let mut count = 1;
    while count < REC_INV_SQRT_CACHE {
        let mut step = 0;
        while step < 4 {
            v = newton_step(count as u32, v);
            step += 1;
        }
        cache[count] = v;
        count += 1;
    }
    cache
}

/// The cache, computed when tcplab is compiled.
const REC_INV_SQRT: [u32; REC_INV_SQRT_CACHE] = rec_inv_sqrt_cache();

/// `cobalt_params`.
#[derive(Debug, Clone, Copy)]
struct CobaltParams {
    target_ns: Nanos,
    interval_ns: Nanos,
    /// Serialisation time of an MTU at the rate (0 unlimited).
    mtu_time_ns: Nanos,
    p_inc: u32,
    p_dec: u32,
}

/// `cobalt_vars`: one queue's CoDel and BLUE state.
#[derive(Debug, Clone, Copy, Default)]
struct Cobalt {
    count: u32,
    /// 1/√count, Q0.32; 0 until the count first changes (Linux zeroes it at init).
    rec_inv_sqrt: u32,
    drop_next_ns: Nanos,
    blue_timer_ns: Nanos,
    /// BLUE's drop probability, Q0.32.
    p_drop: u32,
    dropping: bool,
}

/// `cobalt_control`: `t` + interval/√count.
fn control(t: Nanos, interval_ns: Nanos, rec_inv_sqrt: u32) -> Nanos {
    t + ((interval_ns * rec_inv_sqrt as u64) >> 32)
}

/// `ktime_sub(a, b)` as a signed difference.
fn diff(a: Nanos, b: Nanos) -> i64 {
    a.wrapping_sub(b) as i64
}

impl Cobalt {
    fn invsqrt(&mut self) {
        self.rec_inv_sqrt = match REC_INV_SQRT.get(self.count as usize) {
            Some(&v) => v,
            None => newton_step(self.count, self.rec_inv_sqrt),
        };
    }

    /// `cobalt_queue_full`: the queue overflowed and its head was dropped.
    fn queue_full(&mut self, p: &CobaltParams, now: Nanos) {
        if diff(now, self.blue_timer_ns) > p.target_ns as i64 {
            self.p_drop = self.p_drop.checked_add(p.p_inc).unwrap_or(u32::MAX);
            self.blue_timer_ns = now;
        }
        self.dropping = true;
        self.drop_next_ns = now;
        if self.count == 0 {
            self.count = 1;
        }
    }

    /// `cobalt_queue_empty`: the queue was served and found empty.
    fn queue_empty(&mut self, p: &CobaltParams, now: Nanos) {
        if self.p_drop != 0 && diff(now, self.blue_timer_ns) > p.target_ns as i64 {
            self.p_drop = self.p_drop.saturating_sub(p.p_dec);
            self.blue_timer_ns = now;
        }
        self.dropping = false;
        if self.count != 0 && diff(now, self.drop_next_ns) >= 0 {
            self.count -= 1;
            self.invsqrt();
            self.drop_next_ns = control(self.drop_next_ns, p.interval_ns, self.rec_inv_sqrt);
        }
    }

    /// `cobalt_should_drop` for `pkt`, just dequeued: whether to drop it, and whether CoDel's
    /// signal marked it CE instead (an ECN-capable packet); BLUE's always drops. `bulk_flows`
    /// (0 without `ingress`) raises the target to two MTU times per bulk flow.
    fn should_drop(&mut self, p: &CobaltParams, now: Nanos, pkt: &mut Packet, rng: &mut Rng, bulk_flows: u64) -> (bool, bool) {
        let sojourn = now.saturating_sub(pkt.enq_ns);
        let mut schedule = diff(now, self.drop_next_ns);
        let over_target = sojourn > p.target_ns && sojourn > p.mtu_time_ns * bulk_flows * 2 && sojourn > p.mtu_time_ns * 4;
        let mut next_due = self.count != 0 && schedule >= 0;
        let (mut drop, mut marked) = (false, false);
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next_ns = control(now, p.interval_ns, self.rec_inv_sqrt);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        if next_due && self.dropping {
            marked = pkt.mark_ce();
            drop = !marked;
            self.count = self.count.checked_add(1).unwrap_or(self.count);
            self.invsqrt();
            self.drop_next_ns = control(self.drop_next_ns, p.interval_ns, self.rec_inv_sqrt);
            schedule = diff(now, self.drop_next_ns);
        } else {
            while next_due {
                self.count -= 1;
                self.invsqrt();
                self.drop_next_ns = control(self.drop_next_ns, p.interval_ns, self.rec_inv_sqrt);
                schedule = diff(now, self.drop_next_ns);
                next_due = self.count != 0 && schedule >= 0;
            }
        }
        // BLUE, drawn only for a packet CoDel did not drop (Linux since CAKE's drop reasons,
        // 2025; before, it drew for every packet: the same drops, another use of the stream).
        if self.p_drop != 0 && !drop {
            drop = (rng.next_u64() >> 32) < self.p_drop as u64;
        }
        // The drop-next time doubles as an activity timeout.
        if self.count == 0 {
            self.drop_next_ns = now + p.interval_ns;
        } else if schedule > 0 && !drop {
            self.drop_next_ns = now;
        }
        (drop, marked)
    }
}

/// Where a queue is in DRR++ (Linux `CAKE_SET_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Set {
    None,
    Sparse,
    /// Counted as sparse, but in the bulk rotation.
    SparseWait,
    Bulk,
    Decaying,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    New,
    Old,
    Decaying,
}

#[derive(Debug)]
struct Flow {
    pkts: VecDeque<Packet>,
    bytes: u64,
    deficit: i32,
    set: Set,
    cobalt: Cobalt,
    srchost: u32,
    dsthost: u32,
}

/// `precedence`: the tin is the IP precedence, the DSCP's three high bits.
const PRECEDENCE: [u8; 64] = {
    let mut t = [0; 64];
    let mut d = 0;
    while d < 64 {
        t[d] = (d >> 3) as u8;
        d += 1;
    }
    t
};

/// `diffserv8`: 0 background (LE), 1 high throughput (CS1, AF1x, TOS2), 2 best effort, 3 video
/// (AF3x, AF4x, CS3), 4 low-latency transactions (AF2x, TOS4), 5 interactive shell (CS2),
/// 6 minimum latency (EF, VA, CS4, CS5), 7 network control (CS6, CS7).
#[rustfmt::skip]
const DIFFSERV8: [u8; 64] = [
    2, 0, 1, 2, 4, 2, 2, 2,
    1, 2, 1, 2, 1, 2, 1, 2,
    5, 2, 4, 2, 4, 2, 4, 2,
    3, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 2, 2, 6, 2, 6, 2,
    7, 2, 2, 2, 2, 2, 2, 2,
    7, 2, 2, 2, 2, 2, 2, 2,
];

/// `diffserv4`: 0 best effort, 1 bulk (LE, CS1), 2 video (AF2x–AF4x, CS2, CS3, TOS4),
/// 3 voice (EF, VA, CS4–CS7).
#[rustfmt::skip]
const DIFFSERV4: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 2, 0, 2, 0, 2, 0,
    2, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 0, 0, 3, 0, 3, 0,
    3, 0, 0, 0, 0, 0, 0, 0,
    3, 0, 0, 0, 0, 0, 0, 0,
];

/// `diffserv3`: 0 best effort, 1 bulk (LE, CS1), 2 voice (EF, VA, CS6, CS7, TOS4).
#[rustfmt::skip]
const DIFFSERV3: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 2, 0, 2, 0,
    2, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 0, 0, 0, 0, 0, 0,
];

const BESTEFFORT: [u8; 64] = [0; 64];

/// The tins of a mode (`cake_config_*`): the DSCP-to-tin table, and each tin's share of the
/// rate (its threshold, numerator over 2^shift) and its quantum for sharing without a rate.
fn tins_of(mode: CakeDiffserv, rate: u64) -> (&'static [u8; 64], Vec<(u64, u16)>) {
    // Precedence and diffserv8: each tin has 7/8 of the rate and the quantum of the one below.
    let sevenths = |n: usize, quantum: u32| {
        let (mut r, mut q) = (rate, quantum);
        (0..n).map(|_| {
            let tin = (r, q.max(1) as u16);
            (r, q) = (r * 7 >> 3, q * 7 >> 3);
            tin
        }).collect()
    };
    match mode {
        CakeDiffserv::Besteffort => (&BESTEFFORT, vec![(rate, 65535)]),
        CakeDiffserv::Precedence => (&PRECEDENCE, sevenths(8, 256)),
        CakeDiffserv::Diffserv8 => (&DIFFSERV8, sevenths(8, 256)),
        CakeDiffserv::Diffserv4 => (&DIFFSERV4, vec![(rate, 1024), (rate >> 4, 64), (rate >> 1, 512), (rate >> 2, 256)]),
        CakeDiffserv::Diffserv3 => (&DIFFSERV3, vec![(rate, 1024), (rate >> 4, 64), (rate >> 2, 256)]),
    }
}

/// `cake_set_rate` for `rate` bytes a second (0 unlimited): ns a byte scaled by 2^shift, the
/// flow quantum and COBALT's tuning.
fn set_rate(spec: &CakeSpec, rate: u64) -> (u64, u32, u32, CobaltParams) {
    let (mut flow_quantum, mut mtu_time_ns, mut rate_ns, mut rate_shft) = (MTU_BYTES as u32, 0, 0, 0);
    if rate > 0 {
        flow_quantum = (rate >> 12).clamp(300, MTU_BYTES) as u32;
        rate_shft = 34;
        rate_ns = (1_000_000_000u64 << 34) / rate.max(64);
        while rate_ns >> 34 != 0 {
            rate_ns >>= 1;
            rate_shft -= 1;
        }
        mtu_time_ns = (MTU_BYTES * rate_ns) >> rate_shft;
    }
    let target_ns = (mtu_time_ns * 3 / 2).max(spec.target_ns);
    let interval_ns = (spec.interval_ns + target_ns - spec.target_ns).max(target_ns * 2);
    (rate_ns, rate_shft, flow_quantum, CobaltParams { target_ns, interval_ns, mtu_time_ns, p_inc: 1 << 24, p_dec: 1 << 20 })
}

/// A tin (Linux `cake_tin_data`): its own queues, DRR++ lists, host counts and COBALT tuning;
/// its threshold rate's schedule (shaped), or its weight in the round between tins (not).
#[derive(Debug)]
struct Tin {
    params: CobaltParams,
    flow_quantum: u32,
    /// Queues; which queue each flow's packets go to (modes with the flow bit), or each host or
    /// host pair's (the others: key (source + 1) << 32 | (destination + 1), 0 for a host left out).
    flows: Vec<Flow>,
    by_flow: Vec<Option<usize>>,
    by_hosts: HashMap<u64, usize>,
    /// Bulk queues per source and per destination host.
    src_bulk: Vec<u16>,
    dst_bulk: Vec<u16>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    decaying_flows: VecDeque<usize>,
    sparse_count: u32,
    bulk_count: u32,
    /// Packets in its queues (Linux tracks the bytes, `tin_backlog`; only whether it is 0 counts).
    qlen: usize,
    /// The threshold: ns a byte scaled by 2^`rate_shft`, and when the tin is next within it.
    rate_ns: u64,
    rate_shft: u32,
    time_next_ns: Nanos,
    /// `tin_quantum` and `tin_deficit`: the round between tins when nothing is shaped.
    quantum: i32,
    deficit: i32,
    /// Packets and bytes (charged lengths not counted) it handed out.
    sent_pkts: u64,
    sent_bytes: u64,
}

impl Tin {
    fn new(spec: &CakeSpec, rate: u64, quantum: u16) -> Tin {
        let (rate_ns, rate_shft, flow_quantum, params) = set_rate(spec, rate);
        Tin {
            params,
            flow_quantum,
            flows: Vec::new(),
            by_flow: Vec::new(),
            by_hosts: HashMap::new(),
            src_bulk: Vec::new(),
            dst_bulk: Vec::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            decaying_flows: VecDeque::new(),
            sparse_count: 0,
            bulk_count: 0,
            qlen: 0,
            rate_ns,
            rate_shft,
            time_next_ns: 0,
            quantum: quantum as i32,
            deficit: 0,
            sent_pkts: 0,
            sent_bytes: 0,
        }
    }

    fn active(&self) -> bool {
        self.sparse_count + self.bulk_count > 0
    }

    fn list(&mut self, l: List) -> &mut VecDeque<usize> {
        match l {
            List::New => &mut self.new_flows,
            List::Old => &mut self.old_flows,
            List::Decaying => &mut self.decaying_flows,
        }
    }

    /// `cake_hash` without collisions: the queue for `pkt`, made on first use; `hosts` are the
    /// flows' hosts (`Cake::set_hosts`), `mode` the isolation bits.
    fn queue_of(&mut self, pkt: &Packet, mode: u8, hosts: &[(u32, u32)]) -> usize {
        let f = pkt.flow.idx();
        if mode & FLOWS != 0 {
            if let Some(&Some(i)) = self.by_flow.get(f) {
                return i;
            }
        }
        let (a, b) = hosts.get(f).copied().unwrap_or((f as u32, f as u32));
        let (src, dst) = if pkt.kind.is_data() { (a, b) } else { (b, a) };
        let key = if mode & SRC_IP != 0 { src as u64 + 1 } else { 0 } << 32 | if mode & DST_IP != 0 { dst as u64 + 1 } else { 0 };
        if mode & FLOWS == 0 {
            if let Some(&i) = self.by_hosts.get(&key) {
                return i;
            }
        }
        let i = self.flows.len();
        self.flows.push(Flow { pkts: VecDeque::new(), bytes: 0, deficit: 0, set: Set::None, cobalt: Cobalt::default(), srchost: src, dsthost: dst });
        if mode & FLOWS != 0 {
            if self.by_flow.len() <= f {
                self.by_flow.resize(f + 1, None);
            }
            self.by_flow[f] = Some(i);
        } else {
            self.by_hosts.insert(key, i);
        }
        for (bulk, h) in [(&mut self.src_bulk, src), (&mut self.dst_bulk, dst)] {
            if bulk.len() <= h as usize {
                bulk.resize(h as usize + 1, 0);
            }
        }
        i
    }

    /// `cake_get_flow_quantum`: the flow quantum divided by the most bulk queues either of queue
    /// `k`'s hosts has (as the mode counts them), dithered by a random 16-bit fraction.
    fn flow_quantum_of(&self, k: usize, mode: u8, rng: &mut Rng) -> i32 {
        let div = 65535 / self.host_load(k, mode);
        let dither = (rng.next_u64() >> 48) as u32;
        ((self.flow_quantum * div + dither) >> 16) as i32
    }

    /// The most bulk queues either of queue `k`'s hosts has, as the mode counts them (≥ 1).
    fn host_load(&self, k: usize, mode: u8) -> u32 {
        let f = &self.flows[k];
        let mut load = 1;
        if mode & DUAL_SRC == DUAL_SRC {
            load = load.max(self.src_bulk[f.srchost as usize] as u32);
        }
        if mode & DUAL_DST == DUAL_DST {
            load = load.max(self.dst_bulk[f.dsthost as usize] as u32);
        }
        load
    }

    /// Count queue `k` as a bulk queue of its hosts (`up`) or no longer.
    fn host_bulk(&mut self, k: usize, up: bool, mode: u8) {
        let (s, d) = (self.flows[k].srchost as usize, self.flows[k].dsthost as usize);
        // Linux caps the counts at 0 and at its 1024 queues.
        let step = |c: &mut u16| *c = if up { (*c + 1).min(1024) } else { c.saturating_sub(1) };
        if mode & DUAL_SRC == DUAL_SRC {
            step(&mut self.src_bulk[s]);
        }
        if mode & DUAL_DST == DUAL_DST {
            step(&mut self.dst_bulk[d]);
        }
    }

    /// Queue `k` is to go into the bulk rotation with a deficit spent: a sparse queue with
    /// packets becomes a bulk one (one without waits there, still counted sparse).
    fn to_bulk(&mut self, k: usize, mode: u8) {
        if self.flows[k].set == Set::Sparse {
            if self.flows[k].pkts.is_empty() {
                self.flows[k].set = Set::SparseWait;
            } else {
                self.sparse_count -= 1;
                self.bulk_count += 1;
                self.host_bulk(k, true, mode);
                self.flows[k].set = Set::Bulk;
            }
        }
    }

    /// Queue `k`, served and found empty, leaves the sparse or bulk count; it stays on the
    /// decaying list until its COBALT is at rest, else leaves every list.
    fn emptied(&mut self, k: usize, list: List, mode: u8, now: Nanos) {
        let f = &mut self.flows[k];
        f.cobalt.queue_empty(&self.params, now);
        let Cobalt { p_drop, count, drop_next_ns, .. } = f.cobalt;
        let set = f.set;
        self.list(list).pop_front();
        match set {
            Set::Bulk => {
                self.bulk_count -= 1;
                self.host_bulk(k, false, mode);
            }
            Set::Sparse | Set::SparseWait => self.sparse_count -= 1,
            Set::None | Set::Decaying => {}
        }
        self.flows[k].set = if p_drop != 0 || count != 0 || now < drop_next_ns {
            self.decaying_flows.push_back(k);
            Set::Decaying
        } else {
            Set::None
        };
    }
}

#[derive(Debug)]
pub struct Cake {
    mode: u8,
    framing: Framing,
    /// `ingress`: packets dropped here have crossed the link being shaped already, so the shaper
    /// and the deficits count them too, and COBALT's target grows with the bulk flows.
    ingress: bool,
    ack_filter: CakeAckFilter,
    /// `wash`: a packet's DSCP is cleared once it has chosen its tin.
    wash: bool,
    /// Which tin each DSCP goes to, and the tins (in Linux's order: a higher index wins a tie).
    tin_index: &'static [u8; 64],
    tins: Vec<Tin>,
    cur_tin: usize,
    /// Each flow's hosts (by flow index: the data's source and destination node); without a
    /// table, a flow is a host of its own at each end.
    flow_hosts: Vec<(u32, u32)>,
    /// Packets in the queues (Linux `sch->q.qlen`).
    qlen: usize,
    /// The shaper: ns a byte, scaled by 2^`rate_shft` (0: no shaper); when the next packet may
    /// leave, and the failsafe time (Linux `time_next_packet`, `failsafe_next_packet`).
    rate_ns: u64,
    rate_shft: u32,
    time_next_ns: Nanos,
    failsafe_next_ns: Nanos,
    /// Dequeues the shaper refused (Linux `overlimits`).
    overlimits: u64,
    rng: Rng,
    /// Packets dropped beyond the one `enqueue` hands back: COBALT's and the overflow's.
    pub(super) dropped: Vec<Packet>,
    cobalt_drops: u64,
    overlimit_drops: u64,
    ack_drops: u64,
    marks: u64,
}

impl Cake {
    /// CAKE on a link of `rate_bps` (tuning COBALT when `bandwidth` is `link` or a rate, and
    /// shaping at a rate).
    pub fn new(spec: &CakeSpec, rate_bps: u64, rng: Rng) -> Self {
        // `cake_reconfigure`, with the rate in bytes a second.
        let rate = match spec.bandwidth {
            CakeBandwidth::Unlimited => 0,
            CakeBandwidth::Link => rate_bps / 8,
            CakeBandwidth::RateBps(bps) => bps / 8,
        };
        let (tin_index, shares) = tins_of(spec.diffserv, rate);
        let tins: Vec<Tin> = shares.into_iter().map(|(r, q)| Tin::new(spec, r, q)).collect();
        // Any rate tunes; only a rate of its own shapes (with `link` the link serialises at it).
        let (rate_ns, rate_shft) = match spec.bandwidth {
            CakeBandwidth::RateBps(_) => (tins[0].rate_ns, tins[0].rate_shft),
            _ => (0, 0),
        };
        Cake {
            mode: spec.flow_mode.bits(),
            framing: Framing { overhead: spec.overhead, mpu: spec.mpu, atm: spec.atm },
            ingress: spec.ingress,
            ack_filter: spec.ack_filter,
            wash: spec.wash,
            tin_index,
            tins,
            cur_tin: 0,
            flow_hosts: Vec::new(),
            qlen: 0,
            rate_ns,
            rate_shft,
            time_next_ns: 0,
            failsafe_next_ns: 0,
            overlimits: 0,
            rng,
            dropped: Vec::new(),
            cobalt_drops: 0,
            overlimit_drops: 0,
            ack_drops: 0,
            marks: 0,
        }
    }

    /// Each flow's source and destination host (node), by flow index, for host isolation.
    pub fn set_hosts(&mut self, hosts: Vec<(u32, u32)>) {
        self.flow_hosts = hosts;
    }

    /// COBALT's target, interval and the MTU's serialisation time, and the flow quantum (bytes),
    /// of the first tin (the one the rate is given for).
    pub fn tuning(&self) -> (Nanos, Nanos, Nanos, u32) {
        self.tin_tuning(0)
    }

    /// The same for tin `t`, tuned to its threshold rate.
    pub fn tin_tuning(&self, t: usize) -> (Nanos, Nanos, Nanos, u32) {
        let b = &self.tins[t];
        (b.params.target_ns, b.params.interval_ns, b.params.mtu_time_ns, b.flow_quantum)
    }

    /// Whether the tins choose by their thresholds' schedules (any rate, the shaper's or the
    /// link's: the first tin's threshold is the whole rate) or, with no rate, by their weights in
    /// turn from `cur_tin`.
    fn tins_shaped(&self) -> bool {
        self.tins[0].rate_ns != 0
    }

    /// The tins (1 for `besteffort`, 3 for `diffserv3` …).
    pub fn tin_count(&self) -> usize {
        self.tins.len()
    }

    /// `cake_select_tin`: the tin a packet with DSCP `dscp` goes to.
    pub fn tin_of(&self, dscp: u8) -> usize {
        let t = self.tin_index[dscp as usize & 63] as usize;
        if t < self.tins.len() { t } else { 0 }
    }

    /// Packets and bytes tin `t` handed out.
    pub fn tin_sent(&self, t: usize) -> (u64, u64) {
        (self.tins[t].sent_pkts, self.tins[t].sent_bytes)
    }

    /// Packets COBALT dropped at the head (CoDel's and BLUE's).
    pub fn cobalt_drops(&self) -> u64 {
        self.cobalt_drops
    }

    /// Packets COBALT marked CE instead of dropping them.
    pub fn marks(&self) -> u64 {
        self.marks
    }

    /// Packets dropped because an arrival took the queue over its limit.
    pub fn overlimit_drops(&self) -> u64 {
        self.overlimit_drops
    }

    /// Pure ACKs the ACK filter took out of the queue.
    pub fn ack_drops(&self) -> u64 {
        self.ack_drops
    }

    /// Dequeues the shaper refused.
    pub fn overlimits(&self) -> u64 {
        self.overlimits
    }

    /// The shaper's time: no packet leaves before it (0 without a shaper). A dequeue at or after
    /// it is not refused.
    pub fn hold_until(&self) -> Nanos {
        if self.rate_ns == 0 {
            return 0;
        }
        self.time_next_ns.min(self.failsafe_next_ns)
    }

    /// Queues on the new, old and decaying lists (of every tin), for tests.
    pub fn lists(&self) -> (usize, usize, usize) {
        self.tins.iter().fold((0, 0, 0), |(n, o, d), b| (n + b.new_flows.len(), o + b.old_flows.len(), d + b.decaying_flows.len()))
    }

    /// `cake_enqueue`: queue `pkt`, counted in `fifo`; over the limit, drop the fattest queue's
    /// head until under. `Err` hands back the first packet dropped (the rest wait in `dropped`).
    pub fn enqueue(&mut self, fifo: &mut DropTail, pkt: Packet, now: Nanos) -> Result<(), Packet> {
        fifo.hold(pkt.size_bytes);
        let (t, k) = self.add(pkt, now);
        if self.ack_filter != CakeAckFilter::None {
            let b = &mut self.tins[t];
            if let Some(i) = ack_to_filter(&b.flows[k].pkts, self.ack_filter == CakeAckFilter::Aggressive) {
                let ack = b.flows[k].pkts.remove(i).expect("a queued packet");
                b.flows[k].bytes -= frame_len(&ack) as u64;
                b.qlen -= 1;
                fifo.release(ack.size_bytes);
                self.qlen -= 1;
                self.ack_drops += 1;
                self.ingress_drop(t, &ack, now);
                self.dropped.push(ack);
            }
        }
        let mut first = None;
        while fifo.over_limit() {
            // `cake_drop`: the queue with the most bytes, of any tin (the first such on a tie).
            let (mut ft, mut fk, mut most) = (0, 0, 0);
            for (t, b) in self.tins.iter().enumerate() {
                for (k, f) in b.flows.iter().enumerate() {
                    if f.bytes > most {
                        (ft, fk, most) = (t, k, f.bytes);
                    }
                }
            }
            let b = &mut self.tins[ft];
            let f = &mut b.flows[fk];
            let Some(out) = f.pkts.pop_front() else { break };
            f.bytes -= frame_len(&out) as u64;
            f.cobalt.queue_full(&b.params, now);
            b.qlen -= 1;
            self.ingress_drop(ft, &out, now);
            fifo.release(out.size_bytes);
            self.qlen -= 1;
            self.overlimit_drops += 1;
            match first {
                None => first = Some(out),
                Some(_) => self.dropped.push(out),
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// The queueing half of `cake_enqueue`: the packet joins its tin's queue, which joins the
    /// new list as a sparse flow if it was on none or decaying. Into an empty tin, it restarts
    /// the tin's schedule from now if that has passed; into an empty CAKE, the shaper's too (no
    /// credit for idle time). With `wash` the packet's DSCP is cleared once its tin is chosen
    /// (`cake_handle_diffserv`). Returns the tin and the queue.
    fn add(&mut self, mut pkt: Packet, now: Nanos) -> (usize, usize) {
        let t = self.tin_of(pkt.dscp());
        if self.wash {
            pkt.set_dscp(0);
        }
        let mode = self.mode;
        let b = &mut self.tins[t];
        if b.qlen == 0 {
            b.time_next_ns = b.time_next_ns.max(now);
            if self.qlen == 0 && self.time_next_ns < now {
                self.time_next_ns = now;
                self.failsafe_next_ns = now;
            }
        }
        let k = b.queue_of(&pkt, mode, &self.flow_hosts);
        let f = &mut b.flows[k];
        f.bytes += frame_len(&pkt) as u64;
        f.pkts.push_back(pkt);
        b.qlen += 1;
        self.qlen += 1;
        match f.set {
            Set::None | Set::Decaying => {
                if f.set == Set::Decaying {
                    b.decaying_flows.retain(|&x| x != k);
                }
                b.new_flows.push_back(k);
                b.flows[k].set = Set::Sparse;
                b.sparse_count += 1;
                // Dithered as every refill (Linux since the host-count fix of January 2025; before,
                // a new flow's quantum was not).
                b.flows[k].deficit = b.flow_quantum_of(k, mode, &mut self.rng);
            }
            Set::SparseWait => {
                f.set = Set::Bulk;
                b.sparse_count -= 1;
                b.bulk_count += 1;
                b.host_bulk(k, true, mode);
            }
            Set::Sparse | Set::Bulk => {}
        }
        (t, k)
    }

    /// A packet that arrived to an empty queue and an idle link, past the shaper's time
    /// (`hold_until`), goes straight out: Linux's enqueue and dequeue at once (COBALT keeps the
    /// last packet of a queue, so it is sent).
    pub fn pass(&mut self, pkt: &mut Packet, now: Nanos) {
        self.add(*pkt, now);
        *pkt = self.serve(None, now).expect("the packet just queued");
    }

    /// `cake_dequeue`.
    pub fn dequeue(&mut self, fifo: &mut DropTail, now: Nanos) -> Option<Packet> {
        self.serve(Some(fifo), now)
    }

    /// `cake_dequeue`'s choice of tin: with a rate, the highest tin within its threshold's
    /// schedule, else the one nearest to it; without, the next in turn with a deficit left
    /// (each passed over gets its quantum). `None` when no tin has a queue on its lists.
    fn choose_tin(&mut self, now: Nanos) -> Option<usize> {
        if self.tins_shaped() {
            let (mut best_time, mut best) = (i64::MAX, None);
            for (t, b) in self.tins.iter().enumerate() {
                if b.active() {
                    let time_to = diff(b.time_next_ns, now);
                    if time_to <= 0 || time_to <= best_time {
                        (best_time, best) = (time_to, Some(t));
                    }
                }
            }
            self.cur_tin = best.unwrap_or(0);
            return best;
        }
        let (mut wrapped, mut empty) = (false, true);
        loop {
            let b = &mut self.tins[self.cur_tin];
            if b.deficit >= 0 && b.active() {
                return Some(self.cur_tin);
            }
            if b.deficit <= 0 {
                b.deficit += b.quantum;
            }
            empty &= !b.active();
            self.cur_tin += 1;
            if self.cur_tin == self.tins.len() {
                self.cur_tin = 0;
                if wrapped && empty {
                    return None;
                }
                wrapped = true;
            }
        }
    }

    fn serve(&mut self, mut fifo: Option<&mut DropTail>, now: Nanos) -> Option<Packet> {
        let mut first_flow = true;
        let mode = self.mode;
        'begin: loop {
            if self.qlen == 0 {
                return None;
            }
            // The shaper: nothing before its time.
            if self.rate_ns != 0 && self.time_next_ns > now && self.failsafe_next_ns > now {
                self.overlimits += 1;
                return None;
            }
            let t = self.choose_tin(now)?;
            'retry: loop {
                let b = &mut self.tins[t];
                // Retry: one decaying queue first in a dequeue, then new, old, decaying.
                let list = if first_flow && !b.decaying_flows.is_empty() {
                    List::Decaying
                } else if !b.new_flows.is_empty() {
                    List::New
                } else if !b.old_flows.is_empty() {
                    List::Old
                } else if !b.decaying_flows.is_empty() {
                    List::Decaying
                } else {
                    return None;
                };
                let k = b.list(list)[0];
                first_flow = false;
                if b.flows[k].deficit <= 0 {
                    b.to_bulk(k, mode);
                    b.flows[k].deficit += b.flow_quantum_of(k, mode, &mut self.rng);
                    b.list(list).pop_front();
                    b.old_flows.push_back(k);
                    continue;
                }
                // Take a packet through COBALT.
                let pkt = loop {
                    let b = &mut self.tins[t];
                    let f = &mut b.flows[k];
                    let Some(mut pkt) = f.pkts.pop_front() else {
                        b.emptied(k, list, mode, now);
                        continue 'begin;
                    };
                    f.bytes -= frame_len(&pkt) as u64;
                    b.qlen -= 1;
                    self.qlen -= 1;
                    if let Some(q) = fifo.as_deref_mut() {
                        q.release(pkt.size_bytes);
                    }
                    let bulk_flows = if self.ingress { b.bulk_count as u64 } else { 0 };
                    let (drop, marked) = f.cobalt.should_drop(&b.params, now, &mut pkt, &mut self.rng, bulk_flows);
                    if !drop || f.pkts.is_empty() {
                        self.marks += u64::from(marked);
                        break pkt;
                    }
                    self.cobalt_drops += 1;
                    if self.ingress {
                        // The dropped packet is charged as if sent (but for the failsafe), and the
                        // choice of queue starts again.
                        self.charge(t, k, &pkt, true, now);
                        self.dropped.push(pkt);
                        continue 'retry;
                    }
                    self.dropped.push(pkt);
                };
                self.charge(t, k, &pkt, false, now);
                let b = &mut self.tins[t];
                b.sent_pkts += 1;
                b.sent_bytes += pkt.size_bytes as u64;
                return Some(pkt);
            }
        }
    }

    /// A packet queue `k` of tin `t` hands out (or, with `ingress`, COBALT drops) is charged its
    /// length, to the queue's and the tin's deficits and the shaper (Linux: `len =
    /// cake_advance_shaper(...)`, then `flow->deficit -= len`, `b->tin_deficit -= len`).
    fn charge(&mut self, t: usize, k: usize, pkt: &Packet, dropped: bool, now: Nanos) {
        let len = self.framing.adjusted_len(pkt);
        self.tins[t].flows[k].deficit -= len as i32;
        self.tins[t].deficit -= len as i32;
        self.advance_shaper(t, len, dropped, now);
    }

    /// A packet dropped from a queue of tin `t` (the overflow's, the ACK filter's): with
    /// `ingress` it has used the shaped link, so the shaper is charged for it.
    fn ingress_drop(&mut self, t: usize, pkt: &Packet, now: Nanos) {
        if self.ingress {
            self.advance_shaper(t, self.framing.adjusted_len(pkt), true, now);
        }
    }

    /// `cake_advance_shaper`: tin `t`'s schedule moves on by `len` bytes' time at its threshold
    /// (from now, at most, when it was ahead of now), the shaper's time by their time at the
    /// rate, and for a packet sent (not `dropped`) the failsafe's by 1.5 times that.
    fn advance_shaper(&mut self, t: usize, len: u32, dropped: bool, now: Nanos) {
        if self.tins_shaped() {
            let b = &mut self.tins[t];
            let tin_dur = (len as u64 * b.rate_ns) >> b.rate_shft;
            if b.time_next_ns < now {
                b.time_next_ns += tin_dur;
            } else if b.time_next_ns < now + tin_dur {
                b.time_next_ns = now + tin_dur;
            }
        }
        if self.rate_ns != 0 {
            let dur = (len as u64 * self.rate_ns) >> self.rate_shft;
            self.time_next_ns += dur;
            if !dropped {
                self.failsafe_next_ns += dur + (dur >> 1);
            }
        }
    }

    /// Every queued packet, queue by queue.
    pub fn for_each(&self, f: &mut dyn FnMut(&Packet)) {
        self.tins.iter().flat_map(|b| b.flows.iter()).flat_map(|fl| fl.pkts.iter()).for_each(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::QueueDisc;
    use crate::ids::{FlowId, NodeId};
    use crate::net::packet::{Ecn, Kind};
    use crate::rng::Stream;
    use crate::spec::CakeFlowMode;
    use crate::time::{NS_PER_MS, NS_PER_SEC};

    fn pkt(flow: u32, seq: u32, enq_ns: Nanos) -> Packet {
        let mut p = Packet::new(FlowId(flow), NodeId(1), Kind::Data, 1500);
        p.seq = seq;
        p.enq_ns = enq_ns;
        p
    }

    fn cake_with(spec: CakeSpec, rate_bps: u64) -> Cake {
        Cake::new(&spec, rate_bps, Rng::stream(1, Stream::Queue, 0))
    }

    fn cake() -> Cake {
        cake_with(CakeSpec::default(), 20_000_000)
    }

    #[test]
    fn defaults_are_linuxs_and_a_rate_tunes_them_as_cake_set_rate_does() {
        let s = CakeSpec::default();
        assert_eq!((s.target_ns, s.interval_ns, s.flow_mode, s.bandwidth), (5 * NS_PER_MS, 100 * NS_PER_MS, CakeFlowMode::TripleIsolate, CakeBandwidth::Unlimited));
        // Unlimited: no MTU time, a quantum of one Ethernet MTU.
        assert_eq!(cake().tuning(), (5 * NS_PER_MS, 100 * NS_PER_MS, 0, 1514));
        let link = CakeSpec { bandwidth: CakeBandwidth::Link, ..CakeSpec::default() };
        // 20 Mb/s = 2.5 MB/s: quantum rate >> 12 = 610 bytes; an MTU takes 605.6 µs, 1.5 of
        // which is below the 5-ms target, which stays.
        let (target, interval, mtu_time, quantum) = cake_with(link.clone(), 20_000_000).tuning();
        assert_eq!((target, interval, quantum), (5 * NS_PER_MS, 100 * NS_PER_MS, 610));
        assert!(mtu_time.abs_diff(605_600) <= 2, "{mtu_time}");
        // 1 Mb/s: the quantum's floor of 300 bytes; an MTU takes 12.112 ms, the target becomes
        // 1.5 of it and the interval grows by as much.
        let (target, interval, mtu_time, quantum) = cake_with(link.clone(), 1_000_000).tuning();
        assert_eq!(quantum, 300);
        assert!(mtu_time.abs_diff(12_112_000) <= 2, "{mtu_time}");
        assert_eq!(target, mtu_time * 3 / 2);
        assert_eq!(interval, 100 * NS_PER_MS + target - 5 * NS_PER_MS);
        // 1 Gb/s: the quantum's ceiling, one MTU.
        assert_eq!(cake_with(link, 1_000_000_000).tuning().3, 1514);
    }

    #[test]
    fn the_shaper_spaces_frames_at_its_rate_and_gives_no_credit_for_idle_time() {
        // 10 Mb/s = 1.25 MB/s: 800 ns a byte, exactly (rate_ns 800 << 24), so a 1500-byte packet's
        // 1514-byte frame takes 1.2112 ms; on a 1-Gb/s link, which would send it in 12 µs.
        let spec = CakeSpec { bandwidth: CakeBandwidth::RateBps(10_000_000), flow_mode: CakeFlowMode::Flows, ..CakeSpec::default() };
        let mut c = cake_with(spec, 1_000_000_000);
        // Tuned to its own rate, not the link's: quantum 1.25 MB/s >> 12 = 305 bytes.
        assert_eq!(c.tuning().3, 305);
        const FRAME_NS: Nanos = 1_211_200;
        let mut q = DropTail::new(Some(100), None);
        for seq in 0..4 {
            c.enqueue(&mut q, pkt(seq % 2, seq, 0), 0).unwrap();
        }
        let mut sent = Vec::new();
        let mut now = 0;
        while sent.len() < 4 {
            match c.dequeue(&mut q, now) {
                Some(p) => sent.push((now, p.seq)),
                None => assert!(now < c.hold_until(), "refused at {now}, past the hold {}", c.hold_until()),
            }
            now += 1000;
        }
        // One frame time apart (to the µs of the polling); the failsafe runs 1.5 times as far.
        let times: Vec<Nanos> = sent.iter().map(|&(t, _)| t).collect();
        assert_eq!(times, vec![0, 1_212_000, 2_423_000, 3_634_000]);
        assert_eq!((c.time_next_ns, c.failsafe_next_ns), (4 * FRAME_NS, 6 * FRAME_NS));
        assert_eq!(c.hold_until(), 4 * FRAME_NS);
        // Every poll in between was refused: 1211 before the second frame, 1210 before each other.
        assert_eq!(c.overlimits(), 1211 + 1210 + 1210);
        // Empty again: a packet arriving before the shaper's time waits for it ...
        c.enqueue(&mut q, pkt(0, 10, 4 * FRAME_NS - 5), 4 * FRAME_NS - 5).unwrap();
        assert!(c.dequeue(&mut q, 4 * FRAME_NS - 1).is_none());
        assert_eq!(c.dequeue(&mut q, 4 * FRAME_NS).map(|p| p.seq), Some(10));
        // ... and one arriving long after goes at once, and the next a frame time after it: the
        // idle time is not credit.
        let later = 100 * NS_PER_MS;
        c.enqueue(&mut q, pkt(0, 11, later), later).unwrap();
        c.enqueue(&mut q, pkt(0, 12, later), later).unwrap();
        assert_eq!(c.dequeue(&mut q, later).map(|p| p.seq), Some(11));
        assert!(c.dequeue(&mut q, later + FRAME_NS - 1).is_none());
        assert_eq!(c.dequeue(&mut q, later + FRAME_NS).map(|p| p.seq), Some(12));
        // Without a rate there is no shaper.
        for bandwidth in [CakeBandwidth::Unlimited, CakeBandwidth::Link] {
            let mut c = cake_with(CakeSpec { bandwidth, ..CakeSpec::default() }, 1_000_000_000);
            let mut q = DropTail::new(Some(100), None);
            c.enqueue(&mut q, pkt(0, 0, 0), 0).unwrap();
            c.enqueue(&mut q, pkt(0, 1, 0), 0).unwrap();
            assert!(c.dequeue(&mut q, 0).is_some() && c.dequeue(&mut q, 0).is_some() && c.hold_until() == 0);
        }
    }

    #[test]
    fn overhead_compensation_charges_the_link_layers_bytes() {
        let len = |overhead, mpu, atm, ip| {
            let f = Framing { overhead, mpu, atm };
            f.adjusted_len(&Packet::new(FlowId(0), NodeId(1), Kind::Data, ip))
        };
        // Linux's default (and `raw`): the Ethernet frame, IP + 14, whatever the mpu.
        assert_eq!(len(None, 0, CakeAtm::None, 1500), 1514);
        assert_eq!(len(None, 64, CakeAtm::None, 40), 64);
        // `ethernet` (overhead 38 mpu 84): preamble, gap and FCS on the IP packet, 84 at least.
        assert_eq!(len(Some(38), 84, CakeAtm::None, 1500), 1538);
        assert_eq!(len(Some(38), 84, CakeAtm::None, 40), 84);
        // `pppoe-llcsnap` (atm overhead 40): 1540 bytes fill 32 cells and 4 bytes of a 33rd, of 53
        // bytes each; a 40-byte ACK's 80 bytes two cells.
        assert_eq!(len(Some(40), 0, CakeAtm::Atm, 1500), 33 * 53);
        assert_eq!(len(Some(40), 0, CakeAtm::Atm, 40), 2 * 53);
        // Exactly 48 bytes fit one cell; one more byte takes another.
        assert_eq!(len(Some(8), 0, CakeAtm::Atm, 40), 53);
        assert_eq!(len(Some(9), 0, CakeAtm::Atm, 40), 106);
        // `bridged-ptm` (ptm overhead 22): a byte per 64 or part of 64, 1522 + 24.
        assert_eq!(len(Some(22), 0, CakeAtm::Ptm, 1500), 1546);
        assert_eq!(len(Some(24), 0, CakeAtm::Ptm, 40), 65);
        // A negative overhead, and one that takes a length below 0.
        assert_eq!(len(Some(-20), 0, CakeAtm::None, 1500), 1480);
        assert_eq!(len(Some(-64), 0, CakeAtm::None, 40), 0);

        // The shaper spaces packets by the charged length: at 10 Mb/s (800 ns a byte) ATM cells
        // of `pppoe-llcsnap` take 1.3992 ms for a 1500-byte packet where its frame took 1.2112.
        let spec = CakeSpec {
            bandwidth: CakeBandwidth::RateBps(10_000_000),
            flow_mode: CakeFlowMode::Flows,
            overhead: Some(40),
            atm: CakeAtm::Atm,
            ..CakeSpec::default()
        };
        let mut c = cake_with(spec, 1_000_000_000);
        // The tuning stays the device's: an MTU of 1514 bytes at the rate.
        assert_eq!(c.tuning().2, 1_211_200);
        let mut q = DropTail::new(Some(100), None);
        for seq in 0..3 {
            c.enqueue(&mut q, pkt(0, seq, 0), 0).unwrap();
        }
        assert!(c.dequeue(&mut q, 0).is_some());
        assert_eq!(c.hold_until(), 1_399_200);
        assert!(c.dequeue(&mut q, 1_399_199).is_none());
        assert!(c.dequeue(&mut q, 1_399_200).is_some());
        assert_eq!(c.hold_until(), 2 * 1_399_200);

        // Unshaped, the deficits count the charged length too: a flow of 40-byte packets and one
        // of 1500-byte packets, both backlogged, share the rounds by cells, not IP bytes. With
        // `pppoe-llcsnap` an ACK costs 106 bytes and a full packet 1749: each gets a quantum's
        // (1514) worth of those a round.
        let spec = CakeSpec { flow_mode: CakeFlowMode::Flows, overhead: Some(40), atm: CakeAtm::Atm, ..CakeSpec::default() };
        let mut c = cake_with(spec, 1_000_000_000);
        let mut q = DropTail::new(Some(100_000), None);
        for seq in 0..2000 {
            c.enqueue(&mut q, pkt(0, seq, 0), 0).unwrap();
            let mut small = Packet::new(FlowId(1), NodeId(1), Kind::Data, 40);
            small.seq = seq;
            c.enqueue(&mut q, small, 0).unwrap();
        }
        let mut charged = [0u64; 2];
        for _ in 0..1000 {
            let p = c.dequeue(&mut q, 0).unwrap();
            charged[p.flow.idx()] += c.framing.adjusted_len(&p) as u64;
        }
        // Equal charged bytes to within one packet's charge of each over the rounds.
        let diff = charged[0].abs_diff(charged[1]);
        assert!(diff <= 2 * 1749, "{charged:?}");
    }

    #[test]
    fn ingress_charges_the_shaper_for_what_it_drops() {
        // 10 Mb/s: a 1514-byte frame takes 1.2112 ms. Packets that have waited 20 ms: COBALT
        // passes the first (the dropping state starts) and drops the second, whose frame the
        // ingress shaper charges as if it had been sent (not its failsafe), then sends the third.
        const FRAME_NS: Nanos = 1_211_200;
        let run = |ingress: bool| {
            let spec = CakeSpec { bandwidth: CakeBandwidth::RateBps(10_000_000), flow_mode: CakeFlowMode::Flows, ingress, ..CakeSpec::default() };
            let mut c = cake_with(spec, 1_000_000_000);
            let mut q = DropTail::new(Some(100), None);
            let t0 = 100 * NS_PER_MS;
            for seq in 0..4 {
                c.enqueue(&mut q, pkt(0, seq, t0 - 20 * NS_PER_MS), t0).unwrap();
            }
            assert_eq!(c.dequeue(&mut q, t0).map(|p| p.seq), Some(0));
            assert_eq!(c.dequeue(&mut q, t0 + FRAME_NS).map(|p| p.seq), Some(2));
            assert_eq!(c.cobalt_drops(), 1);
            (c.time_next_ns - t0, c.failsafe_next_ns - t0)
        };
        assert_eq!(run(false), (2 * FRAME_NS, 3 * FRAME_NS));
        assert_eq!(run(true), (3 * FRAME_NS, 3 * FRAME_NS));

        // An overflow drop moves the shaper on too (only with ingress).
        for ingress in [false, true] {
            let spec = CakeSpec { bandwidth: CakeBandwidth::RateBps(10_000_000), ingress, ..CakeSpec::default() };
            let mut c = cake_with(spec, 1_000_000_000);
            let mut q = DropTail::new(Some(2), None);
            for seq in 0..3 {
                let r = c.enqueue(&mut q, pkt(0, seq, 0), 0);
                assert_eq!(r.is_err(), seq == 2);
            }
            assert_eq!(c.time_next_ns, if ingress { FRAME_NS } else { 0 });
        }

        // COBALT's target with ingress: at least two MTU times per bulk flow. At 10 Mb/s an MTU
        // takes 1.2112 ms, so with four bulk flows a 9-ms sojourn is under it; without ingress
        // it is over the 5-ms target.
        let p = CobaltParams { target_ns: 5 * NS_PER_MS, interval_ns: 100 * NS_PER_MS, mtu_time_ns: FRAME_NS, p_inc: 1 << 24, p_dec: 1 << 20 };
        let mut rng = Rng::stream(1, Stream::Queue, 0);
        for (bulk_flows, over) in [(0, true), (4, false), (3, true)] {
            let mut cobalt = Cobalt::default();
            let mut p9 = pkt(0, 0, 0);
            cobalt.should_drop(&p, 9 * NS_PER_MS, &mut p9, &mut rng, bulk_flows);
            assert_eq!(cobalt.dropping, over, "{bulk_flows} bulk flows");
        }
    }

    /// A pure ACK of flow `flow` acknowledging `ack`, SACKing `sack`, stamped `ts`.
    fn ack(flow: u32, ack: u32, sack: &[(u32, u32)], ts: Nanos) -> Packet {
        let mut p = Packet::new(FlowId(flow), NodeId(0), Kind::Ack, 52);
        p.ack = ack;
        p.n_sack = sack.len() as u8;
        p.sack[..sack.len()].copy_from_slice(sack);
        p.ts_val_ns = ts;
        p.ts_ecr_ns = ts;
        p
    }

    #[test]
    fn the_ack_filter_takes_out_the_acks_a_newer_one_makes_redundant() {
        let filter = |queue: &[Packet], aggressive: bool| ack_to_filter(&queue.iter().copied().collect(), aggressive);
        let (a10, a11, a12) = (ack(0, 10, &[], 1), ack(0, 11, &[], 2), ack(0, 12, &[], 3));
        // Two older ACKs the new one covers: the one nearest the head goes.
        assert_eq!(filter(&[a10, a11, a12], false), Some(0));
        // One: only the aggressive filter takes it, and only when it is just before the new one.
        assert_eq!(filter(&[a10, a12], false), None);
        assert_eq!(filter(&[a10, a12], true), Some(0));
        let data = Packet::new(FlowId(0), NodeId(0), Kind::Data, 1500);
        assert_eq!(filter(&[a10, data, a12], true), None);
        assert_eq!(filter(&[a10, data, a11, a12], false), Some(0));
        // Another flow's ACKs, a data packet as the newcomer, and a newcomer alone: nothing.
        assert_eq!(filter(&[ack(1, 10, &[], 1), ack(1, 11, &[], 2), a12], false), None);
        assert_eq!(filter(&[a10, a11, data], false), None);
        assert_eq!(filter(&[a12], true), None);
        // An older ACK that acknowledges more (reordered), or has a newer timestamp: kept.
        assert_eq!(filter(&[ack(0, 13, &[], 1), a11, a12], false), None);
        assert_eq!(filter(&[ack(0, 10, &[], 9), a11, a12], false), None);
        // ECE or another flag on the older ACK: kept. ECE changing between two candidates
        // starts the count again.
        let mut ece = a10;
        ece.set_flag(Flags::ECE, true);
        assert_eq!(filter(&[ece, a11, a12], false), None);
        let mut fin = a10;
        fin.set_flag(Flags::OTHER_TCP, true);
        assert_eq!(filter(&[fin, a11, a12], true), Some(1));

        // SACK: the same cumulative ACK with the same blocks tells nothing more; a block the new
        // ACK does not cover (a hole it no longer reports) keeps the old one; more SACKed in
        // blocks that cover the old ones makes it redundant; a DSACK (below the ACK) is kept.
        let s = |blocks: &[(u32, u32)], ts| ack(0, 10, blocks, ts);
        assert_eq!(filter(&[s(&[(12, 13)], 1), s(&[(12, 13)], 2), s(&[(12, 13)], 3)], false), None);
        assert_eq!(filter(&[s(&[(12, 13)], 1), s(&[(12, 14)], 2), s(&[(12, 15)], 3)], false), Some(0));
        assert_eq!(filter(&[s(&[(20, 21)], 1), s(&[(12, 14)], 2), s(&[(12, 15)], 3)], true), Some(1));
        assert_eq!(filter(&[s(&[(12, 14)], 1), s(&[(12, 15)], 2), s(&[], 3)], true), None);
        assert_eq!(filter(&[s(&[(12, 14)], 1), s(&[(12, 15), (16, 17)], 3)], true), Some(0));
        assert_eq!(filter(&[s(&[(12, 15)], 1), s(&[(12, 14), (16, 17)], 3)], true), None);
        assert_eq!(filter(&[s(&[(8, 9)], 1), s(&[(12, 14)], 3)], true), None);
        // Sequence numbers wrap (the router's are bytes from a random start).
        assert_eq!(filter(&[ack(0, u32::MAX - 5, &[], 1), ack(0, u32::MAX, &[], 2), ack(0, 3, &[], 3)], false), Some(0));

        // In CAKE: three ACKs of a flow queue as two, the filter's drop counted and handed out
        // (and with `ingress`, charged to the shaper).
        for ingress in [false, true] {
            let spec = CakeSpec {
                ack_filter: CakeAckFilter::Filter,
                ingress,
                bandwidth: CakeBandwidth::RateBps(10_000_000),
                flow_mode: CakeFlowMode::Flows,
                ..CakeSpec::default()
            };
            let mut c = cake_with(spec, 1_000_000_000);
            let mut q = DropTail::new(Some(100), None);
            for a in [a10, a11, a12] {
                c.enqueue(&mut q, a, 0).unwrap();
            }
            assert_eq!((c.ack_drops(), q.len_pkts(), c.qlen), (1, 2, 2));
            assert_eq!(c.dropped.iter().map(|p| p.ack).collect::<Vec<_>>(), vec![10]);
            // 10 Mb/s: 66 bytes take 52.8 µs.
            assert_eq!(c.time_next_ns, if ingress { 52_800 } else { 0 });
            let out: Vec<u32> = std::iter::from_fn(|| c.dequeue(&mut q, 1_000_000_000)).map(|p| p.ack).collect();
            assert_eq!(out, vec![11, 12]);
        }
    }

    #[test]
    fn the_inverse_square_root_cache_is_one_over_root_count() {
        let cache = REC_INV_SQRT;
        // Counts 0 and 1 are as close to 1.0 as Q0.32 gets.
        assert_eq!(cache[0], u32::MAX);
        assert!(cache[1] >= u32::MAX - 4, "{:#x}", cache[1]);
        for (count, &v) in cache.iter().enumerate().skip(2) {
            let want = (1u64 << 32) as f64 / (count as f64).sqrt();
            // Four Newton steps from the last count's value: within 0.06% (count 2: 0.9994).
            assert!((v as f64 / want - 1.0).abs() < 1e-3, "count {count}: {v} against {want}");
        }
        // Beyond the cache, one Newton step from the last value: count 16 within 0.2% of 1/4.
        let v16 = newton_step(16, cache[15]);
        assert!((v16 as f64 / ((1u64 << 32) as f64 / 4.0) - 1.0).abs() < 2e-3, "{v16}");
    }

    /// A queue standing 20 ms deep: two packets offered per one served, each served packet's
    /// sojourn over the target. The times (ms from the start) at which COBALT drops.
    fn drop_times(mut c: Cake, ecn: Ecn) -> (Vec<Nanos>, Cake) {
        let mut q = DropTail::new(Some(100_000), None);
        let mut drops = Vec::new();
        let mut seq = 0;
        for ms in 0..400 {
            let now = ms * NS_PER_MS;
            for _ in 0..2 {
                let mut p = pkt(0, seq, now.saturating_sub(20 * NS_PER_MS));
                p.set_ecn(ecn);
                c.enqueue(&mut q, p, now).unwrap();
                seq += 1;
            }
            c.dequeue(&mut q, now).unwrap();
            drops.extend(c.dropped.drain(..).map(|_| ms));
        }
        (drops, c)
    }

    #[test]
    fn cobalt_signals_a_fresh_queue_at_once_then_at_interval_over_root_count() {
        // The packets served from 6 ms on have waited over the 5-ms target. A queue never
        // signalled has 1/√count = 0 (Linux zeroes it at init), so its first drop is due as soon
        // as it goes over the target: on the second packet over it (7 ms). Then count 2
        // schedules the next 100/√2 = 70.7 ms later, count 3 57.7 ms later, count 4 50 ms...
        let (drops, c) = drop_times(cake(), Ecn::NOT_ECT);
        assert_eq!(&drops[..4], &[7, 77, 135, 185], "{drops:?}");
        assert_eq!(c.cobalt_drops(), drops.len() as u64);
        let gaps: Vec<Nanos> = drops.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.windows(2).all(|g| g[1] <= g[0]), "{gaps:?}");
    }

    #[test]
    fn cobalt_marks_ecn_capable_packets_where_it_would_drop() {
        let (drops, c) = drop_times(cake(), Ecn::ECT0);
        assert!(drops.is_empty(), "{drops:?}");
        let (dropped, _) = drop_times(cake(), Ecn::NOT_ECT);
        assert_eq!(c.marks(), dropped.len() as u64);
    }

    #[test]
    fn cobalt_never_drops_the_last_packet_of_a_queue() {
        // One packet at a time, each 50 ms old: always over the target, never two queued.
        let (mut c, mut q) = (cake(), DropTail::new(Some(1000), None));
        for i in 0..100 {
            let now = (i + 1) * 10 * NS_PER_MS;
            c.enqueue(&mut q, pkt(0, i as u32, now - 50 * NS_PER_MS), now).unwrap();
            assert_eq!(c.dequeue(&mut q, now).unwrap().seq, i as u32);
        }
        assert_eq!((c.cobalt_drops(), c.dropped.len()), (0, 0));
    }

    #[test]
    fn an_overflow_drops_the_fattest_queues_head_and_raises_blue() {
        let (mut c, mut q) = (cake(), DropTail::new(Some(10), None));
        for s in 0..8 {
            c.enqueue(&mut q, pkt(0, s, 0), 0).unwrap();
        }
        c.enqueue(&mut q, pkt(1, 20, 0), 0).unwrap();
        c.enqueue(&mut q, pkt(1, 21, 0), 0).unwrap();
        // The eleventh packet: flow 0 holds the most bytes and loses its head, one packet.
        assert_eq!(c.enqueue(&mut q, pkt(1, 22, 0), 0).unwrap_err().seq, 0);
        assert_eq!((c.overlimit_drops(), q.len_pkts(), c.dropped.len()), (1, 10, 0));
        // BLUE: +1/256 once per target at most; the overflow also puts COBALT in dropping state.
        let k = c.tins[0].by_flow[0].unwrap();
        let v = c.tins[0].flows[k].cobalt;
        assert_eq!((v.p_drop, v.dropping, v.count), (0, true, 1)); // blue_timer 0: not yet a target since
        c.enqueue(&mut q, pkt(1, 23, 0), 6 * NS_PER_MS).unwrap_err();
        assert_eq!(c.tins[0].flows[k].cobalt.p_drop, 1 << 24);
        c.enqueue(&mut q, pkt(1, 24, 0), 7 * NS_PER_MS).unwrap_err();
        assert_eq!(c.tins[0].flows[k].cobalt.p_drop, 1 << 24);
        // Found empty more than a target later (by a dequeue that serves another packet: a
        // dequeue of an empty CAKE looks at no queue), it comes down by 1/4096.
        while c.dequeue(&mut q, 20 * NS_PER_MS).is_some() {}
        assert_eq!(c.tins[0].flows[k].cobalt.p_drop, 1 << 24);
        for s in 30..40 {
            c.enqueue(&mut q, pkt(1, s, 20 * NS_PER_MS), 20 * NS_PER_MS).unwrap();
            c.dequeue(&mut q, 20 * NS_PER_MS).unwrap();
        }
        assert_eq!(c.tins[0].flows[k].cobalt.p_drop, (1 << 24) - (1 << 20));
    }

    #[test]
    fn a_sparse_flow_goes_before_the_bulk_ones() {
        let (mut c, mut q) = (cake(), DropTail::new(Some(1000), None));
        for s in 0..5 {
            c.enqueue(&mut q, pkt(0, s, 0), 0).unwrap();
        }
        assert_eq!(c.dequeue(&mut q, 0).unwrap().seq, 0);
        assert_eq!(c.dequeue(&mut q, 0).unwrap().seq, 1); // its quantum spent: now bulk, on the old list
        assert_eq!(c.lists(), (0, 1, 0));
        c.enqueue(&mut q, pkt(1, 99, 0), 0).unwrap();
        assert_eq!(c.lists(), (1, 1, 0));
        assert_eq!(c.dequeue(&mut q, 0).unwrap().seq, 99);
        let rest: Vec<u32> = std::iter::from_fn(|| c.dequeue(&mut q, 0)).map(|p| p.seq).collect();
        assert_eq!(rest, [2, 3, 4]);
    }

    /// Bytes served per flow when four flows between `hosts` (source, destination node) keep
    /// backlogs, in `mode`.
    fn shares(mode: CakeFlowMode, hosts: &[(u32, u32)]) -> [f64; 4] {
        let mut c = cake_with(CakeSpec { flow_mode: mode, ..CakeSpec::default() }, 20_000_000);
        c.set_hosts(hosts.to_vec());
        let mut q = DropTail::new(Some(100_000), None);
        let mut served = [0u64; 4];
        let mut seq = 0;
        for _ in 0..3000 {
            for f in 0..4 {
                c.enqueue(&mut q, pkt(f, seq, 0), 0).unwrap();
                seq += 1;
            }
            for _ in 0..2 {
                let p = c.dequeue(&mut q, 0).unwrap();
                served[p.flow.idx()] += p.size_bytes as u64;
            }
        }
        served.map(|b| b as f64 / served.iter().sum::<u64>() as f64)
    }

    fn near(got: [f64; 4], want: [f64; 4]) -> bool {
        got.iter().zip(want).all(|(g, w)| (g - w).abs() < 0.02)
    }

    #[test]
    fn triple_isolation_shares_between_hosts_before_flows() {
        let (q, sixth) = ([0.25; 4], 1.0 / 6.0);
        let three_to_one = [sixth, sixth, sixth, 0.5];
        // Host 10 runs three flows (to hosts 20–22), host 11 one (to 23). Per flow: a quarter
        // each. Isolating source hosts (triple-isolate, dual-srchost): host 10's flows share
        // half, host 11's has the other half. Destination hosts all have one flow: per flow.
        let uploads = [(10, 20), (10, 21), (10, 22), (11, 23)];
        for (mode, want) in [
            (CakeFlowMode::Flows, q),
            (CakeFlowMode::TripleIsolate, three_to_one),
            (CakeFlowMode::DualSrchost, three_to_one),
            (CakeFlowMode::DualDsthost, q),
        ] {
            let got = shares(mode, &uploads);
            assert!(near(got, want), "{mode:?}: {got:?}");
        }
        // The same flows all to host 20: triple-isolate takes the larger of a flow's two hosts'
        // loads, 4 at the destination, so every flow gets a quarter of the quantum: per flow.
        // Downloads from hosts 20–22 to host 10 and from 23 to 11: the destinations share.
        let to_one = [(10, 20), (10, 20), (10, 20), (11, 20)];
        assert!(near(shares(CakeFlowMode::TripleIsolate, &to_one), q));
        let downloads = [(20, 10), (21, 10), (22, 10), (23, 11)];
        for mode in [CakeFlowMode::TripleIsolate, CakeFlowMode::DualDsthost] {
            let got = shares(mode, &downloads);
            assert!(near(got, three_to_one), "{mode:?}: {got:?}");
        }
    }

    #[test]
    fn host_modes_queue_by_host() {
        let mut c = cake_with(CakeSpec { flow_mode: CakeFlowMode::Srchost, ..CakeSpec::default() }, 20_000_000);
        c.set_hosts(vec![(10, 20), (10, 21), (11, 20)]);
        let mut q = DropTail::new(Some(1000), None);
        for f in 0..3 {
            c.enqueue(&mut q, pkt(f, f, 0), 0).unwrap();
        }
        assert_eq!(c.tins[0].flows.len(), 2);
        let mut c = cake_with(CakeSpec { flow_mode: CakeFlowMode::Flowblind, ..CakeSpec::default() }, 20_000_000);
        for f in 0..3 {
            c.enqueue(&mut q, pkt(f, f, 0), 0).unwrap();
        }
        assert_eq!(c.tins[0].flows.len(), 1);
    }

    #[test]
    fn dscps_go_to_linuxs_tins() {
        let tins = |diffserv| cake_with(CakeSpec { diffserv, ..CakeSpec::default() }, 20_000_000);
        // (DSCP, tin): best effort 0, LE 1, TOS4 4, CS1 8, AF11 10, CS2 16, AF21 18, CS3 24,
        // AF31 26, CS4 32, AF41 34, CS5 40, VA 44, EF 46, CS6 48, CS7 56.
        let codepoints = [0, 1, 4, 8, 10, 16, 18, 24, 26, 32, 34, 40, 44, 46, 48, 56];
        for (diffserv, n, want) in [
            (CakeDiffserv::Diffserv3, 3, [0, 1, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2]),
            (CakeDiffserv::Diffserv4, 4, [0, 1, 2, 1, 0, 2, 2, 2, 2, 3, 2, 3, 3, 3, 3, 3]),
            (CakeDiffserv::Diffserv8, 8, [2, 0, 4, 1, 1, 5, 4, 3, 3, 6, 3, 6, 6, 6, 7, 7]),
            (CakeDiffserv::Precedence, 8, [0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 5, 6, 7]),
            (CakeDiffserv::Besteffort, 1, [0; 16]),
        ] {
            let c = tins(diffserv);
            assert_eq!(c.tin_count(), n, "{diffserv:?}");
            assert_eq!(codepoints.map(|d| c.tin_of(d)), want, "{diffserv:?}");
        }
    }

    #[test]
    fn wash_clears_the_dscp_after_the_tin_is_chosen() {
        for wash in [false, true] {
            let (mut c, mut q) = (cake_with(CakeSpec { wash, ..CakeSpec::default() }, 20_000_000), DropTail::new(Some(10), None));
            let mut p = pkt(0, 0, 0);
            p.set_dscp(46);
            p.set_ecn(Ecn::ECT0);
            c.enqueue(&mut q, p, 0).unwrap();
            let out = c.dequeue(&mut q, 0).expect("the packet");
            assert_eq!((out.dscp(), out.ecn(), c.tin_sent(2).0), (if wash { 0 } else { 46 }, Ecn::ECT0, 1), "wash {wash}");
        }
    }

    #[test]
    fn each_tin_is_tuned_to_its_threshold() {
        // diffserv3 at 20 Mb/s: best effort at 2.5 MB/s, bulk at 1/16 of it (156,250 B/s: an MTU
        // in 9.690 ms, a target of 1.5 of that, the quantum's floor), voice at 1/4 (625,000 B/s).
        let c = cake_with(CakeSpec { bandwidth: CakeBandwidth::Link, ..CakeSpec::default() }, 20_000_000);
        assert_eq!(c.tin_tuning(0), c.tuning());
        assert_eq!((c.tuning().0, c.tuning().3), (5 * NS_PER_MS, 610));
        let (target, interval, mtu_time, quantum) = c.tin_tuning(1);
        assert!(mtu_time.abs_diff(9_689_600) <= 2, "{mtu_time}");
        assert_eq!((target, interval, quantum), (mtu_time * 3 / 2, 100 * NS_PER_MS + target - 5 * NS_PER_MS, 300));
        let (target, _, mtu_time, quantum) = c.tin_tuning(2);
        assert!(mtu_time.abs_diff(2_422_400) <= 2, "{mtu_time}");
        assert_eq!((target, quantum), (5 * NS_PER_MS, 300));
        // Precedence: each tin 7/8 of the one below (bytes a second, rounded down as Linux's
        // integers): tin 7 has 2,500,000 · (7/8)^7 ≈ 981,814 B/s, a quantum of 239.
        let c = cake_with(CakeSpec { bandwidth: CakeBandwidth::Link, diffserv: CakeDiffserv::Precedence, ..CakeSpec::default() }, 20_000_000);
        let mut rate = 2_500_000u64;
        for t in 0..8 {
            assert_eq!(c.tin_tuning(t).3 as u64, (rate >> 12).clamp(300, 1514), "tin {t}");
            rate = rate * 7 >> 3;
        }
        assert_eq!(c.tin_tuning(7).3, 300);
    }

    /// Bytes each tin hands out over `n` packets, with every flow (flow `i` marked `dscps[i]`)
    /// kept at three 1500-byte packets queued, and time moved on to the shaper's at each dequeue.
    /// COBALT's target is 1 s, so that it drops nothing.
    fn tin_bytes(spec: CakeSpec, dscps: &[u8], n: usize) -> Vec<f64> {
        let spec = CakeSpec { target_ns: NS_PER_SEC, interval_ns: 2 * NS_PER_SEC, flow_mode: CakeFlowMode::Flows, ..spec };
        let (mut c, mut q) = (cake_with(spec, 10_000_000), DropTail::new(Some(1000), None));
        let marked = |flow: usize, now| {
            let mut p = pkt(flow as u32, 0, now);
            p.set_dscp(dscps[flow]);
            p
        };
        for f in 0..dscps.len() {
            for _ in 0..3 {
                c.enqueue(&mut q, marked(f, 0), 0).unwrap();
            }
        }
        let mut now = 0;
        for _ in 0..n {
            now = now.max(c.hold_until());
            let p = c.dequeue(&mut q, now).expect("every flow is backlogged");
            c.enqueue(&mut q, marked(p.flow.idx(), now), now).unwrap();
        }
        let bytes: Vec<u64> = (0..c.tin_count()).map(|t| c.tin_sent(t).1).collect();
        let total: u64 = bytes.iter().sum();
        bytes.iter().map(|&b| b as f64 / total as f64).collect()
    }

    #[test]
    fn shaped_a_tin_has_priority_up_to_its_threshold_and_no_more() {
        // diffserv3 shaped at 10 Mb/s, best effort (two flows), bulk (CS1) and voice (EF) all
        // backlogged: voice goes first while within 1/4 of the rate, bulk while within 1/16,
        // best effort takes the rest.
        let shaped = CakeSpec { bandwidth: CakeBandwidth::RateBps(10_000_000), ..CakeSpec::default() };
        let got = tin_bytes(shaped.clone(), &[0, 0, 8, 46], 20_000);
        for (t, want) in [(0, 11.0 / 16.0), (1, 1.0 / 16.0), (2, 0.25)] {
            assert!((got[t] - want).abs() < 0.005, "tin {t}: {got:?}");
        }
        // Alone with best effort, bulk still gets no more than 1/16.
        let got = tin_bytes(shaped.clone(), &[0, 8], 20_000);
        assert!((got[1] - 1.0 / 16.0).abs() < 0.005, "{got:?}");
        // diffserv4's video tin (AF41) has half.
        let got = tin_bytes(CakeSpec { diffserv: CakeDiffserv::Diffserv4, ..shaped.clone() }, &[0, 34], 20_000);
        assert!((got[2] - 0.5).abs() < 0.005, "{got:?}");
        // The shaper holds the sum to its rate: one 1514-byte frame every 1.2112 ms at 10 Mb/s,
        // whichever tin it comes from.
        let mut c = cake_with(CakeSpec { target_ns: NS_PER_SEC, interval_ns: 2 * NS_PER_SEC, flow_mode: CakeFlowMode::Flows, ..shaped }, 10_000_000);
        let mut q = DropTail::new(Some(1000), None);
        for (f, d) in [(0, 0), (1, 8), (2, 46)] {
            for s in 0..100 {
                let mut p = pkt(f, s, 0);
                p.set_dscp(d);
                c.enqueue(&mut q, p, 0).unwrap();
            }
        }
        let mut now = 0;
        for _ in 0..300 {
            now = now.max(c.hold_until());
            c.dequeue(&mut q, now).expect("packets left");
        }
        assert!(now.abs_diff(299 * 1_211_200) <= 300, "{now}");
    }

    #[test]
    fn unshaped_the_tins_share_by_their_quanta() {
        // No rate: a deficit round over the tins, diffserv3's quanta 1024, 64 and 256 bytes.
        let got = tin_bytes(CakeSpec::default(), &[0, 8, 46], 30_000);
        for (t, want) in [(0, 1024.0 / 1344.0), (1, 64.0 / 1344.0), (2, 256.0 / 1344.0)] {
            assert!((got[t] - want).abs() < 0.005, "tin {t}: {got:?}");
        }
        // besteffort: one tin, the flows share it.
        let got = tin_bytes(CakeSpec { diffserv: CakeDiffserv::Besteffort, ..CakeSpec::default() }, &[0, 8, 46], 3_000);
        assert_eq!(got, vec![1.0]);
    }
}
