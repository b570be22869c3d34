// SPDX-License-Identifier: MIT OR GPL-2.0
/* YeAH-TCP (Baiocchi, Castellani, Vacirca, 2007) as a BPF congestion control, registered as "yeah"
 * by the testbed when the kernel was built without tcp_yeah (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_yeah.c hook for hook, as tcplab's simulator does
 * (crates/tcplab-sim/src/cc/yeah.rs), with tcp_vegas.c's RTT sampling (vegas.h: init, pkts_acked,
 * set_state, cwnd_event) embedded as Linux embeds it. Once per round, with three samples or more,
 * Q = cwnd·(rtt − baseRTT)/rtt queued segments: Q <= alpha and a queueing delay at most baseRTT/phy
 * is Fast mode (Scalable TCP's growth, one segment per min(cwnd, 100) acknowledged); otherwise Slow
 * mode (Reno's growth), and above alpha a precautionary decongestion of min(Q/gamma,
 * cwnd/2^epsilon), not below reno_count, with ssthresh = cwnd. A loss takes off max(min(Q, cwnd/2),
 * cwnd/2^delta), or half when rho Slow rounds in a row say a Reno flow shares the path. The
 * constants are Linux's (compile-time there too): alpha 80, gamma 1, delta 3, epsilon 1, phy 8,
 * rho 16, zeta 50.
 * Not here: init's cap of snd_cwnd_clamp at 0xffffffff/128 (a BPF program may not write it; it only
 * guards arithmetic against windows of 33 million segments), and get_info.
 */
#include "vegas.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define YEAH_ALPHA 80U		/* queued segments above which YeAH decongests */
#define YEAH_GAMMA 1U		/* 1/gamma of the queue removed per round */
#define YEAH_DELTA 3		/* log2 of the least fraction of cwnd a loss removes */
#define YEAH_EPSILON 1		/* log2 of the most fraction of cwnd decongestion removes */
#define YEAH_PHY 8U		/* the largest queueing delay of Fast mode: baseRTT/phy */
#define YEAH_RHO 16U		/* Slow rounds in a row that make a loss halve cwnd */
#define YEAH_ZETA 50U		/* Fast rounds in a row that reset reno_count */
#define SCALABLE_AI_CNT 100U

struct yeah {
	struct vegas vegas;	/* first, as in Linux; YeAH's cong_avoid never reads doing_vegas_now */
	__u32 last_q;		/* the queue of the last measured round, segments */
	__u32 doing_reno_now;	/* Slow rounds in a row; 0 is Fast mode */
	__u32 reno_count;	/* the window a competing Reno flow would have, segments */
	__u32 fast_count;	/* Fast rounds in a row */
};

SEC("struct_ops/tcplab_yeah_init")
void BPF_PROG(tcplab_yeah_init, struct sock *sk)
{
	struct yeah *ca = CA_STATE(struct yeah, sk);

	vegas_init(sk, &ca->vegas);
	ca->doing_reno_now = 0;
	ca->last_q = 0;
	ca->reno_count = 2;
}

SEC("struct_ops/tcplab_yeah_pkts_acked")
void BPF_PROG(tcplab_yeah_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	vegas_pkts_acked(&CA_STATE(struct yeah, sk)->vegas, sample);
}

SEC("struct_ops/tcplab_yeah_set_state")
void BPF_PROG(tcplab_yeah_set_state, struct sock *sk, __u8 new_state)
{
	vegas_state(sk, &CA_STATE(struct yeah, sk)->vegas, new_state);
}

SEC("struct_ops/tcplab_yeah_cwnd_event")
void BPF_PROG(tcplab_yeah_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	vegas_cwnd_event(sk, &CA_STATE(struct yeah, sk)->vegas, ev);
}

/* The end of a round with enough samples: choose the mode from the queue. */
static __always_inline void yeah_round(struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct yeah *ca = CA_STATE(struct yeah, sk);
	__u32 rtt = ca->vegas.min_rtt, base = ca->vegas.base_rtt;
	/* Segments above what the bandwidth needs: the flow's queue. */
	__u32 queue = (__u32)((__u64)tp->snd_cwnd * (rtt - base) / rtt);

	if (queue > YEAH_ALPHA || rtt - base > base / YEAH_PHY) {
		if (queue > YEAH_ALPHA && tp->snd_cwnd > ca->reno_count) {
			/* Precautionary decongestion. */
			__u32 reduction = min_u32(queue / YEAH_GAMMA, tp->snd_cwnd >> YEAH_EPSILON);

			tp->snd_cwnd = max_u32(tp->snd_cwnd - reduction, ca->reno_count);
			tp->snd_ssthresh = tp->snd_cwnd;
		}
		if (ca->reno_count <= 2)
			ca->reno_count = max_u32(tp->snd_cwnd >> 1, 2U);
		else
			ca->reno_count++;
		ca->doing_reno_now = min_u32(ca->doing_reno_now + 1, 0xffffffU);
	} else {
		ca->fast_count++;
		if (ca->fast_count > YEAH_ZETA) {
			ca->reno_count = 2;
			ca->fast_count = 0;
		}
		ca->doing_reno_now = 0;
	}
	ca->last_q = queue;
}

SEC("struct_ops/tcplab_yeah_cong_avoid")
void BPF_PROG(tcplab_yeah_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct yeah *ca = CA_STATE(struct yeah, sk);
	int grow = 1;

	if (!is_cwnd_limited(sk))
		return;
	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		grow = acked > 0;
	}
	if (grow) {
		if (!ca->doing_reno_now)	/* Fast mode: Scalable TCP */
			tcp_cong_avoid_ai(tp, min_u32(tp->snd_cwnd, SCALABLE_AI_CNT), acked);
		else			/* Slow mode: Reno */
			tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
	}

	/* Once per round, from its Vegas samples. */
	if (seq_after(ack, ca->vegas.beg_snd_nxt)) {
		/* Three samples or more: at least one was not from a delayed ACK. */
		if (ca->vegas.cnt_rtt > 2)
			yeah_round(sk);
		vegas_next_round(sk, &ca->vegas);
	}
}

SEC("struct_ops/tcplab_yeah_ssthresh")
__u32 BPF_PROG(tcplab_yeah_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct yeah *ca = CA_STATE(struct yeah, sk);
	__u32 cwnd = tp->snd_cwnd, reduction;
	__s32 kept;

	if (ca->doing_reno_now < YEAH_RHO)
		reduction = max_u32(min_u32(ca->last_q, max_u32(cwnd >> 1, 2U)), cwnd >> YEAH_DELTA);
	else
		reduction = max_u32(cwnd >> 1, 2U);
	ca->fast_count = 0;
	ca->reno_count = max_u32(ca->reno_count >> 1, 2U);
	/* Signed, as Linux's max_t(int, ...): a window of one less two is still two. */
	kept = (__s32)(cwnd - reduction);
	return kept > 2 ? (__u32)kept : 2U;
}

SEC("struct_ops/tcplab_yeah_undo_cwnd")
__u32 BPF_PROG(tcplab_yeah_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_yeah = {
	.init = (void *)tcplab_yeah_init,
	.ssthresh = (void *)tcplab_yeah_ssthresh,
	.cong_avoid = (void *)tcplab_yeah_cong_avoid,
	.set_state = (void *)tcplab_yeah_set_state,
	.cwnd_event = (void *)tcplab_yeah_cwnd_event,
	.pkts_acked = (void *)tcplab_yeah_pkts_acked,
	.undo_cwnd = (void *)tcplab_yeah_undo_cwnd,
	.name = "yeah",
};
