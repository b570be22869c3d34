// SPDX-License-Identifier: MIT OR GPL-2.0
/* TCP-Illinois (Liu, Başar, Srikant, 2006) as a BPF congestion control, registered as "illinois"
 * by the testbed when the kernel was built without tcp_illinois (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_illinois.c hook for hook, as tcplab's simulator does (crates/tcplab-sim/
 * src/cc/illinois.rs): AIMD whose increase alpha (cwnd += alpha/cwnd per ACK, 0.3 to 10, 7
 * fractional bits) and decrease beta (1/8 to 1/2, 6 fractional bits) follow the average queueing
 * delay of the last RTT against the largest seen, recomputed once per RTT; below win_thresh
 * segments, and after a timeout, it is Reno (alpha 1, beta 1/2). The defaults are Linux's module
 * parameters: win_thresh 15, theta 5.
 * Not here: get_info (ss -i shows no Illinois RTT counters), and the module parameters
 * (win_thresh and theta are constants).
 */
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define WIN_THRESH 15U
#define THETA 5U

#define ALPHA_SHIFT 7
#define ALPHA_SCALE (1U << ALPHA_SHIFT)
#define ALPHA_MIN ((3 * ALPHA_SCALE) / 10)	/* ~0.3 */
#define ALPHA_MAX (10 * ALPHA_SCALE)		/* 10.0 */
#define ALPHA_BASE ALPHA_SCALE			/* 1.0 */
#define RTT_MAX (0xffffffffU / ALPHA_MAX)	/* µs; keeps the alpha arithmetic in 32 bits */

#define BETA_SHIFT 6
#define BETA_SCALE (1U << BETA_SHIFT)
#define BETA_MIN (BETA_SCALE / 8)		/* 0.125 */
#define BETA_MAX (BETA_SCALE / 2)		/* 0.5 */
#define BETA_BASE BETA_MAX

#define RTT_NONE 0x7fffffffU

struct illinois {
	__u64 sum_rtt;		/* this RTT's samples, µs */
	__u16 cnt_rtt;		/* samples this RTT */
	__u8 rtt_above;		/* the average delay has been above d1 */
	__u8 rtt_low;		/* consecutive RTTs below d1 */
	__u32 base_rtt;		/* minimum RTT ever, µs */
	__u32 max_rtt;		/* maximum RTT ever, µs */
	__u32 end_seq;		/* snd_nxt at the start of this RTT */
	__u32 alpha;		/* additive increase, x ALPHA_SCALE */
	__u32 beta;		/* multiplicative decrease, x BETA_SCALE */
	__u32 acked;		/* segments acknowledged by the current ACK */
};

static __always_inline void rtt_reset(struct sock *sk)
{
	struct illinois *ca = CA_STATE(struct illinois, sk);

	ca->end_seq = tcp_of(sk)->snd_nxt;
	ca->cnt_rtt = 0;
	ca->sum_rtt = 0;
}

SEC("struct_ops/tcplab_illinois_init")
void BPF_PROG(tcplab_illinois_init, struct sock *sk)
{
	struct illinois *ca = CA_STATE(struct illinois, sk);

	ca->alpha = ALPHA_MAX;
	ca->beta = BETA_BASE;
	ca->base_rtt = RTT_NONE;
	ca->max_rtt = 0;
	ca->acked = 0;
	ca->rtt_low = 0;
	ca->rtt_above = 0;
	rtt_reset(sk);
}

SEC("struct_ops/tcplab_illinois_pkts_acked")
void BPF_PROG(tcplab_illinois_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct illinois *ca = CA_STATE(struct illinois, sk);
	__s32 rtt_signed = sample->rtt_us;
	__u32 rtt;

	ca->acked = sample->pkts_acked;
	/* Duplicate ACK: no RTT sample. */
	if (rtt_signed < 0)
		return;
	/* Bogus values are capped so that the alpha arithmetic cannot wrap. */
	rtt = min_u32((__u32)rtt_signed, RTT_MAX);
	if (rtt < ca->base_rtt)
		ca->base_rtt = rtt;
	if (rtt > ca->max_rtt)
		ca->max_rtt = rtt;
	ca->cnt_rtt++;
	ca->sum_rtt += rtt;
}

/* alpha from the average delay da and the maximum delay dm (µs): ALPHA_MAX at or below
 * d1 = dm/100 (after THETA such RTTs once it was above), else k1/(k2 + da), down to ALPHA_MIN. */
static __always_inline __u32 alpha_of(struct illinois *ca, __u32 da, __u32 dm)
{
	__u32 d1 = dm / 100;

	if (da <= d1) {
		if (!ca->rtt_above)
			return ALPHA_MAX;
		if (++ca->rtt_low < THETA)
			return ca->alpha;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		return ALPHA_MAX;
	}
	ca->rtt_above = 1;
	dm -= d1;
	da -= d1;
	return (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN);
}

/* beta: BETA_MIN up to d2 = dm/10, BETA_MAX from d3 = 8dm/10, linear between. */
static __always_inline __u32 beta_of(__u32 da, __u32 dm)
{
	__u32 d2 = dm / 10, d3;

	if (da <= d2)
		return BETA_MIN;
	d3 = (8 * dm) / 10;
	if (da >= d3 || d3 <= d2)
		return BETA_MAX;
	return (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2);
}

/* Once per RTT. */
static __always_inline void update_params(struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct illinois *ca = CA_STATE(struct illinois, sk);

	if (tp->snd_cwnd < WIN_THRESH) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
	} else if (ca->cnt_rtt > 0) {
		__u32 dm = ca->max_rtt - ca->base_rtt;
		__u32 da = (__u32)(ca->sum_rtt / ca->cnt_rtt) - ca->base_rtt;

		ca->alpha = alpha_of(ca, da, dm);
		ca->beta = beta_of(da, dm);
	}
	rtt_reset(sk);
}

SEC("struct_ops/tcplab_illinois_cong_avoid")
void BPF_PROG(tcplab_illinois_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct illinois *ca = CA_STATE(struct illinois, sk);
	__u32 delta;

	if (seq_after(ack, ca->end_seq))
		update_params(sk);
	/* RFC 2861: grow only when the window is used. */
	if (!is_cwnd_limited(sk))
		return;
	if (in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* snd_cwnd_cnt counts segments since the last increase; cwnd += alpha/cwnd per segment. */
	tp->snd_cwnd_cnt += ca->acked;
	ca->acked = 1;
	delta = (tp->snd_cwnd_cnt * ca->alpha) >> ALPHA_SHIFT;
	if (delta >= tp->snd_cwnd) {
		tp->snd_cwnd = min_u32(tp->snd_cwnd + delta / tp->snd_cwnd, tp->snd_cwnd_clamp);
		tp->snd_cwnd_cnt = 0;
	}
}

/* Multiplicative decrease by beta. */
SEC("struct_ops/tcplab_illinois_ssthresh")
__u32 BPF_PROG(tcplab_illinois_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct illinois *ca = CA_STATE(struct illinois, sk);

	return max_u32(tp->snd_cwnd - ((tp->snd_cwnd * ca->beta) >> BETA_SHIFT), 2U);
}

/* A timeout resets alpha and beta to Reno's. */
SEC("struct_ops/tcplab_illinois_set_state")
void BPF_PROG(tcplab_illinois_set_state, struct sock *sk, __u8 new_state)
{
	struct illinois *ca = CA_STATE(struct illinois, sk);

	if (new_state == TCP_CA_Loss) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		rtt_reset(sk);
	}
}

SEC("struct_ops/tcplab_illinois_undo_cwnd")
__u32 BPF_PROG(tcplab_illinois_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_illinois = {
	.init = (void *)tcplab_illinois_init,
	.ssthresh = (void *)tcplab_illinois_ssthresh,
	.cong_avoid = (void *)tcplab_illinois_cong_avoid,
	.set_state = (void *)tcplab_illinois_set_state,
	.pkts_acked = (void *)tcplab_illinois_pkts_acked,
	.undo_cwnd = (void *)tcplab_illinois_undo_cwnd,
	.name = "illinois",
};
