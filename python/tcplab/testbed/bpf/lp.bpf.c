// SPDX-License-Identifier: MIT OR GPL-2.0
/* TCP-LP, Low Priority (Kuzmanovic and Knightly, 2003), as a BPF congestion control, registered
 * as "lp" by the testbed when the kernel was built without tcp_lp (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_lp.c step for step, as tcplab's simulator does
 * (crates/tcplab-sim/src/cc/lp.rs): from the ACK's timestamps it estimates the receiver's
 * timestamp clock rate ("remote HZ", smoothed 63/64) and takes the one-way delay (OWD) of the
 * data, TSval * (LP_RESOL / remote HZ) - TSecr; it smooths it (sowd = 7/8 sowd + 1/8 owd) and
 * tracks its minimum and maximum; when the smoothed OWD is not below min + 15% of (max - min), an
 * early congestion indication, it halves cwnd and starts an inference period of 3 RTTs (the RTT
 * from the echoed timestamp), and a second indication within that period sets cwnd to 1. During
 * the inference period cwnd does not grow; otherwise it grows as Reno, and losses are Reno's.
 * Without timestamps it is Reno. Linux has no module parameters for TCP-LP.
 *
 * The arithmetic is Linux's, with its types: the OWD is a 32-bit difference taken as a
 * non-negative 64-bit number, so TSval's per-connection random offset (net.ipv4.tcp_timestamps
 * = 1, Linux's default; TSecr arrives with this host's offset taken off) is part of it; the
 * smoothed OWD, 8 times the OWD, is kept in 32 bits; a remote HZ estimated above LP_RESOL makes
 * LP_RESOL / remote HZ zero. With an offset, the minimum and maximum an early indication
 * restarts from are the offset's size, and LP does not back off early again
 * (docs/algorithms/lp.md).
 */
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

/* Early congestion threshold: 15% of the OWD range above its minimum. */
#define LP_THRESHOLD_PCT 15U
/* Inference period: 3 RTTs. */
#define LP_INFERENCE_RTTS 3U

/* The OWD's unit: the timestamp clock's (TCP_TS_HZ, 1 kHz). */
#define LP_RESOL 1000U

/* Linux's state flags. */
#define LP_VALID_RHZ (1U << 0)
#define LP_VALID_OWD (1U << 1)
#define LP_WITHIN_THR (1U << 3)
#define LP_WITHIN_INF (1U << 4)

struct lp_state {
	__u32 flag;
	__u32 sowd;		/* smoothed OWD << 3 */
	__u32 owd_min;
	__u32 owd_max;
	__u32 owd_max_rsv;
	__u32 remote_hz;
	__u32 remote_ref_time;	/* TSval and TSecr of the last ACK seen */
	__u32 local_ref_time;
	__u32 last_drop;	/* time of the last early reduction (0: none) */
	__u32 inference;	/* inference period */
};

/* tcp_time_stamp_ts: now on the connection's timestamp clock (without its offset, as TSecr
 * arrives with the offset taken off). */
static __always_inline __u32 ts_now(struct tcp_sock *tp)
{
	if (BPF_CORE_READ_BITFIELD(tp, tcp_usec_ts))
		return (__u32)tp->tcp_mstamp;
	return (__u32)(tp->tcp_mstamp / 1000);
}

/* tcp_lp_remote_hz_estimator: the receiver's timestamp rate from the TSval and TSecr steps
 * between this ACK and the last one that moved both; LP_VALID_RHZ says whether there is one. */
static __always_inline __u32 remote_hz_of(struct tcp_sock *tp, struct lp_state *lp)
{
	__u32 tsval = tp->rx_opt.rcv_tsval, tsecr = tp->rx_opt.rcv_tsecr;
	__s64 rhz = (__u32)(lp->remote_hz << 6);
	__s64 m;

	if (lp->remote_ref_time != 0 && lp->local_ref_time != 0 &&
	    tsval != lp->remote_ref_time && tsecr != lp->local_ref_time) {
		/* 32-bit, as in Linux: never negative. */
		m = (__u32)(LP_RESOL * (tsval - lp->remote_ref_time)) / (tsecr - lp->local_ref_time);
		if (rhz > 0) {
			m -= rhz >> 6;	/* the error in the estimate */
			rhz += m;	/* 63/64 old + 1/64 new */
		} else {
			rhz = m << 6;
		}
	}
	if ((rhz >> 6) > 0)
		lp->flag |= LP_VALID_RHZ;
	else
		lp->flag &= ~LP_VALID_RHZ;
	lp->remote_ref_time = tsval;
	lp->local_ref_time = tsecr;
	return (__u32)(rhz >> 6);
}

/* tcp_lp_owd_calculator: the OWD of the data this ACK acknowledges, a 32-bit difference (never
 * negative as Linux computes it); LP_VALID_OWD says whether there is one. */
static __always_inline __u32 owd_of(struct tcp_sock *tp, struct lp_state *lp)
{
	__u32 owd = 0;

	lp->remote_hz = remote_hz_of(tp, lp);
	if (lp->flag & LP_VALID_RHZ)
		owd = tp->rx_opt.rcv_tsval * (LP_RESOL / lp->remote_hz) - tp->rx_opt.rcv_tsecr;
	if (owd > 0)
		lp->flag |= LP_VALID_OWD;
	else
		lp->flag &= ~LP_VALID_OWD;
	return owd;
}

/* Record the OWD's minimum and maximum, and smooth it. */
static __always_inline void owd_sample(struct tcp_sock *tp, struct lp_state *lp)
{
	__s64 mowd = owd_of(tp, lp);

	if (!(lp->flag & LP_VALID_RHZ) || !(lp->flag & LP_VALID_OWD))
		return;
	if (mowd < lp->owd_min)
		lp->owd_min = mowd;
	/* Always forget the largest maximum: keep the one below it. */
	if (mowd > lp->owd_max) {
		if (mowd > lp->owd_max_rsv) {
			lp->owd_max = lp->owd_max_rsv == 0 ? mowd : lp->owd_max_rsv;
			lp->owd_max_rsv = mowd;
		} else {
			lp->owd_max = mowd;
		}
	}
	/* In 64 bits, kept in 32. */
	if (lp->sowd != 0)
		lp->sowd = (__u32)(lp->sowd + (mowd - (lp->sowd >> 3)));
	else
		lp->sowd = (__u32)(mowd << 3);
}

SEC("struct_ops/tcplab_lp_init")
void BPF_PROG(tcplab_lp_init, struct sock *sk)
{
	struct lp_state *lp = CA_STATE(struct lp_state, sk);

	__builtin_memset(lp, 0, sizeof(*lp));
	lp->owd_min = 0xffffffff;
}

SEC("struct_ops/tcplab_lp_ssthresh")
__u32 BPF_PROG(tcplab_lp_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

/* Reno's growth, except during an inference period. */
SEC("struct_ops/tcplab_lp_cong_avoid")
void BPF_PROG(tcplab_lp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct lp_state *lp = CA_STATE(struct lp_state, sk);

	if (!(lp->flag & LP_WITHIN_INF))
		tcp_reno_cong_avoid(sk, ack, acked);
}

/* The early congestion reaction. */
SEC("struct_ops/tcplab_lp_pkts_acked")
void BPF_PROG(tcplab_lp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct lp_state *lp = CA_STATE(struct lp_state, sk);
	__u32 now = ts_now(tp);
	__u32 delta, thr;

	if (sample->rtt_us > 0)
		owd_sample(tp, lp);
	/* The inference period: 3 RTTs, the RTT from the echoed timestamp. */
	delta = now - tp->rx_opt.rcv_tsecr;
	if ((__s32)delta > 0)
		lp->inference = LP_INFERENCE_RTTS * delta;
	if (lp->last_drop && now - lp->last_drop < lp->inference)
		lp->flag |= LP_WITHIN_INF;
	else
		lp->flag &= ~LP_WITHIN_INF;
	/* Within the threshold? (32-bit: before any sample the range wraps to 1 and the threshold
	 * is the maximum.) */
	thr = lp->owd_min + LP_THRESHOLD_PCT * (lp->owd_max - lp->owd_min) / 100;
	if ((lp->sowd >> 3) < thr)
		lp->flag |= LP_WITHIN_THR;
	else
		lp->flag &= ~LP_WITHIN_THR;
	if (lp->flag & LP_WITHIN_THR)
		return;
	/* Start the minimum and maximum afresh around the current delay. */
	lp->owd_min = lp->sowd >> 3;
	lp->owd_max = lp->sowd >> 2;
	lp->owd_max_rsv = lp->sowd >> 2;
	if (lp->flag & LP_WITHIN_INF)
		/* A second indication within the inference period. */
		tp->snd_cwnd = 1;
	else
		tp->snd_cwnd = max_u32(tp->snd_cwnd >> 1, 1U);
	lp->last_drop = now;
}

SEC("struct_ops/tcplab_lp_undo_cwnd")
__u32 BPF_PROG(tcplab_lp_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_lp = {
	.init = (void *)tcplab_lp_init,
	.ssthresh = (void *)tcplab_lp_ssthresh,
	.cong_avoid = (void *)tcplab_lp_cong_avoid,
	.pkts_acked = (void *)tcplab_lp_pkts_acked,
	.undo_cwnd = (void *)tcplab_lp_undo_cwnd,
	.name = "lp",
};
