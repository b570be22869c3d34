// SPDX-License-Identifier: MIT OR GPL-2.0
/* H-TCP (Leith, Shorten, 2004) as a BPF congestion control, registered as "htcp" by the testbed
 * when the kernel was built without tcp_htcp (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_htcp.c hook for hook, as tcplab's simulator does (crates/tcplab-sim/
 * src/cc/htcp.rs): the increase per RTT alpha grows with the time since the last congestion
 * event (1 + 10(d - 1 s) + ((d - 1 s)/2)^2, scaled by RTT_min/100 ms and by 2(1 - beta)), and a
 * loss keeps beta of cwnd, beta = RTT_min/RTT_max within [0.5, 0.8], or 0.5 when the achieved
 * throughput moved by more than 20%. alpha and beta are in 1/128, RTTs and times in jiffies, the
 * throughput in segments per second. The defaults are Linux's: use_rtt_scaling and
 * use_bandwidth_switch on, BETA_MIN 64/128, BETA_MAX 102/128.
 *
 * As in Linux, the time since the last congestion event starts at connection set-up (init); the
 * simulator, which has no handshake, starts it when the flow first sends.
 *
 * Not here: the module parameters (use_rtt_scaling, use_bandwidth_switch are constants).
 */
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define SCALE_SHIFT 7
#define ALPHA_BASE (1U << SCALE_SHIFT)
#define BETA_MIN (1U << (SCALE_SHIFT - 1))
#define BETA_MAX 102U
#define USE_RTT_SCALING 1
#define USE_BANDWIDTH_SWITCH 1

struct htcp_state {
	__u32 alpha;		/* increase per RTT, segments in 1/128 */
	__u32 beta;		/* backoff factor, 1/128 */
	__u32 modeswitch;	/* adaptive backoff only after one congestion event */
	__u32 pkts_acked;	/* segments acknowledged by the last Open-state ACK */
	__u32 packetcount;	/* segments acknowledged since lasttime */
	__u32 min_rtt;		/* jiffies */
	__u32 max_rtt;
	__u32 last_cong;	/* start of the last congestion event, jiffies */
	__u32 undo_last_cong;
	__u32 undo_max_rtt;
	__u32 undo_old_max_b;
	__u32 min_b;		/* throughput estimates, segments per second */
	__u32 max_b;
	__u32 old_max_b;
	__u32 bi;
	__u32 lasttime;		/* start of the throughput sample, jiffies */
};

/* include/linux/jiffies.h msecs_to_jiffies: rounded up (10 ms is 3 jiffies at HZ = 250). */
static __always_inline __u32 msecs_to_jiffies(__u32 ms)
{
	__u32 per = 1000U / HZ;

	return (ms + per - 1) / per;
}

/* include/linux/jiffies.h usecs_to_jiffies: rounded up. */
static __always_inline __u32 usecs_to_jiffies(__u32 us)
{
	__u32 per = 1000000U / HZ;

	return (us + per - 1) / per;
}

/* include/net/tcp.h between(): lo <= a <= hi in sequence space. */
static __always_inline int between(__u32 a, __u32 lo, __u32 hi)
{
	return hi - lo >= a - lo;
}

/* The start of a congestion event, remembering what an undo restores. */
static __always_inline void htcp_reset(struct htcp_state *ca, __u32 now)
{
	ca->undo_last_cong = ca->last_cong;
	ca->undo_max_rtt = ca->max_rtt;
	ca->undo_old_max_b = ca->old_max_b;
	ca->last_cong = now;
}

static __always_inline void measure_rtt(struct htcp_state *ca, __u8 state, __u32 rtt)
{
	if (ca->min_rtt > rtt || !ca->min_rtt)
		ca->min_rtt = rtt;
	if (state == TCP_CA_Open) {
		if (ca->max_rtt < ca->min_rtt)
			ca->max_rtt = ca->min_rtt;
		/* Grow the max only by samples within 20 ms of it, ignoring outliers. */
		if (ca->max_rtt < rtt && rtt <= ca->max_rtt + msecs_to_jiffies(20))
			ca->max_rtt = rtt;
	}
}

/* The adaptive backoff factor, at a congestion event. */
static __always_inline void beta_update(struct htcp_state *ca)
{
	if (USE_BANDWIDTH_SWITCH) {
		__u32 max_b = ca->max_b, old_max_b = ca->old_max_b;

		ca->old_max_b = max_b;
		/* Throughput moved by more than 20%: the path changed, back off by half. */
		if (!between(5 * max_b, 4 * old_max_b, 6 * old_max_b)) {
			ca->beta = BETA_MIN;
			ca->modeswitch = 0;
			return;
		}
	}
	if (ca->modeswitch && ca->min_rtt > msecs_to_jiffies(10) && ca->max_rtt) {
		/* RTT_min/RTT_max: the part of the window that was not queue. */
		ca->beta = min_u32(max_u32((ca->min_rtt << SCALE_SHIFT) / ca->max_rtt, BETA_MIN), BETA_MAX);
	} else {
		ca->beta = BETA_MIN;
		ca->modeswitch = 1;
	}
}

/* alpha(d) at jiffy now, d the time since the last congestion event. */
static __always_inline void alpha_update(struct htcp_state *ca, __u32 now)
{
	__u32 factor = 1, diff = now - ca->last_cong;

	if (diff > HZ) {
		diff -= HZ;
		factor = 1 + (10 * diff + (diff / 2) * (diff / 2) / HZ) / HZ;
	}
	if (USE_RTT_SCALING && ca->min_rtt) {
		/* 100 ms / RTT_min in 1/8, within [0.5, 10]. */
		__u32 scale = min_u32(max_u32((HZ << 3) / (10 * ca->min_rtt), 1U << 2), 10U << 3);

		factor = max_u32((factor << 3) / scale, 1);
	}
	ca->alpha = 2 * factor * ((1U << SCALE_SHIFT) - ca->beta);
	if (!ca->alpha)
		ca->alpha = ALPHA_BASE;
}

SEC("struct_ops/tcplab_htcp_init")
void BPF_PROG(tcplab_htcp_init, struct sock *sk)
{
	struct htcp_state *ca = CA_STATE(struct htcp_state, sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->alpha = ALPHA_BASE;
	ca->beta = BETA_MIN;
	ca->pkts_acked = 1;
	ca->last_cong = tcp_jiffies32;
}

SEC("struct_ops/tcplab_htcp_ssthresh")
__u32 BPF_PROG(tcplab_htcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct htcp_state *ca = CA_STATE(struct htcp_state, sk);
	__u32 min_rtt = ca->min_rtt, max_rtt = ca->max_rtt;

	beta_update(ca);
	alpha_update(ca, tcp_jiffies32);
	/* Let the maximum RTT fade slowly (route changes). */
	if (min_rtt > 0 && max_rtt > min_rtt)
		ca->max_rtt = min_rtt + (max_rtt - min_rtt) * 95 / 100;
	return max_u32((tp->snd_cwnd * ca->beta) >> SCALE_SHIFT, 2U);
}

SEC("struct_ops/tcplab_htcp_cong_avoid")
void BPF_PROG(tcplab_htcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct htcp_state *ca = CA_STATE(struct htcp_state, sk);

	if (!is_cwnd_limited(sk))
		return;
	if (in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* cwnd += alpha/cwnd per segment acknowledged. */
	if ((tp->snd_cwnd_cnt * ca->alpha) >> SCALE_SHIFT >= tp->snd_cwnd) {
		if (tp->snd_cwnd < tp->snd_cwnd_clamp)
			tp->snd_cwnd++;
		tp->snd_cwnd_cnt = 0;
		alpha_update(ca, tcp_jiffies32);
	} else {
		tp->snd_cwnd_cnt += ca->pkts_acked;
	}
	ca->pkts_acked = 1;
}

SEC("struct_ops/tcplab_htcp_undo_cwnd")
__u32 BPF_PROG(tcplab_htcp_undo_cwnd, struct sock *sk)
{
	struct htcp_state *ca = CA_STATE(struct htcp_state, sk);

	if (ca->undo_last_cong) {
		ca->last_cong = ca->undo_last_cong;
		ca->max_rtt = ca->undo_max_rtt;
		ca->old_max_b = ca->undo_old_max_b;
		ca->undo_last_cong = 0;
	}
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops/tcplab_htcp_set_state")
void BPF_PROG(tcplab_htcp_set_state, struct sock *sk, __u8 new_state)
{
	struct htcp_state *ca = CA_STATE(struct htcp_state, sk);
	__u32 now = tcp_jiffies32;

	switch (new_state) {
	case TCP_CA_Open:
		if (ca->undo_last_cong) {
			ca->last_cong = now;
			ca->undo_last_cong = 0;
		}
		break;
	case TCP_CA_CWR:
	case TCP_CA_Recovery:
	case TCP_CA_Loss:
		htcp_reset(ca, now);
		break;
	}
}

/* Linux's measure_achieved_throughput: the RTTs and the throughput estimate. */
SEC("struct_ops/tcplab_htcp_pkts_acked")
void BPF_PROG(tcplab_htcp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct htcp_state *ca = CA_STATE(struct htcp_state, sk);
	__u8 state = ca_state_of(sk);
	__u32 now = tcp_jiffies32;
	__u32 acked = sample->pkts_acked;
	__s32 rtt_us = sample->rtt_us;
	__u32 cur_bi;

	if (state == TCP_CA_Open)
		ca->pkts_acked = acked;
	if (rtt_us > 0)
		measure_rtt(ca, state, usecs_to_jiffies(rtt_us));
	if (!USE_BANDWIDTH_SWITCH)
		return;
	if (state != TCP_CA_Open && state != TCP_CA_Disorder) {
		ca->packetcount = 0;
		ca->lasttime = now;
		return;
	}
	ca->packetcount += acked;
	if (ca->packetcount >= tp->snd_cwnd - max_u32(ca->alpha >> SCALE_SHIFT, 1) &&
	    now - ca->lasttime >= ca->min_rtt && ca->min_rtt > 0) {
		/* Segments per second over the last window. */
		cur_bi = ca->packetcount * HZ / (now - ca->lasttime);
		if ((now - ca->last_cong) / ca->min_rtt <= 3) {
			/* Just after a backoff. */
			ca->min_b = cur_bi;
			ca->max_b = cur_bi;
			ca->bi = cur_bi;
		} else {
			ca->bi = (3 * ca->bi + cur_bi) / 4;
			ca->max_b = max_u32(ca->max_b, ca->bi);
			if (ca->min_b > ca->max_b)
				ca->min_b = ca->max_b;
		}
		ca->packetcount = 0;
		ca->lasttime = now;
	}
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_htcp = {
	.init = (void *)tcplab_htcp_init,
	.ssthresh = (void *)tcplab_htcp_ssthresh,
	.cong_avoid = (void *)tcplab_htcp_cong_avoid,
	.set_state = (void *)tcplab_htcp_set_state,
	.pkts_acked = (void *)tcplab_htcp_pkts_acked,
	.undo_cwnd = (void *)tcplab_htcp_undo_cwnd,
	.name = "htcp",
};
