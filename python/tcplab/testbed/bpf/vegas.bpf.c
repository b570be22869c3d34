// SPDX-License-Identifier: MIT OR GPL-2.0
/* TCP Vegas (Brakmo, Peterson, 1995) as a BPF congestion control, registered as "vegas" by the
 * testbed when the kernel was built without tcp_vegas (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_vegas.c hook for hook, as tcplab's simulator does
 * (crates/tcplab-sim/src/cc/vegas.rs). Every RTT sample (+1 µs) updates baseRTT (the minimum ever)
 * and the round's minimum rtt. Once per round (the ACK passes the snd_nxt of a round ago), with
 * three samples or more, diff = cwnd·(rtt − baseRTT)/baseRTT queued segments: in slow start,
 * diff > gamma leaves it at cwnd = min(cwnd, cwnd·baseRTT/rtt + 1); in congestion avoidance
 * diff > beta takes a segment off, diff < alpha adds one. With fewer samples, and outside the
 * Open state, Reno's growth; a loss halves cwnd (tcp_reno_ssthresh). The defaults are Linux's
 * module parameters: alpha 2, beta 4, gamma 1 (segments).
 * Not here: get_info (ss -i shows no Vegas RTT figures).
 */
#include "vegas.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define ALPHA 2U
#define BETA 4U
#define GAMMA 1U
SEC("struct_ops/tcplab_vegas_init")
void BPF_PROG(tcplab_vegas_init, struct sock *sk)
{
	vegas_init(sk, CA_STATE(struct vegas, sk));
}

SEC("struct_ops/tcplab_vegas_pkts_acked")
void BPF_PROG(tcplab_vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	vegas_pkts_acked(CA_STATE(struct vegas, sk), sample);
}

SEC("struct_ops/tcplab_vegas_set_state")
void BPF_PROG(tcplab_vegas_set_state, struct sock *sk, __u8 new_state)
{
	vegas_state(sk, CA_STATE(struct vegas, sk), new_state);
}

SEC("struct_ops/tcplab_vegas_cwnd_event")
void BPF_PROG(tcplab_vegas_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	vegas_cwnd_event(sk, CA_STATE(struct vegas, sk), ev);
}

/* Once per round, from its samples. */
static __always_inline void vegas_round(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct vegas *ca = CA_STATE(struct vegas, sk);
	__u32 rtt = ca->min_rtt, base = ca->base_rtt, cwnd = tp->snd_cwnd;
	/* The window that would give the actual rate at the propagation delay. */
	__u32 target_cwnd = (__u32)((__u64)cwnd * base / rtt);
	/* Queued segments, scaled by rtt/baseRTT; a 32-bit product as in Linux. */
	__u32 diff = cwnd * (rtt - base) / base;

	if (diff > GAMMA && in_slow_start(tp)) {
		/* Going too fast: the actual rate (+1 for truncation), and out of slow start. */
		tp->snd_cwnd = min_u32(tp->snd_cwnd, target_cwnd + 1);
		tp->snd_ssthresh = min_u32(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	} else if (diff > BETA) {
		tp->snd_cwnd = tp->snd_cwnd - 1;
		tp->snd_ssthresh = min_u32(tp->snd_ssthresh, tp->snd_cwnd);
	} else if (diff < ALPHA) {
		tp->snd_cwnd = tp->snd_cwnd + 1;
	}
	if (tp->snd_cwnd < 2)
		tp->snd_cwnd = 2;
	else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
		tp->snd_cwnd = tp->snd_cwnd_clamp;
	tp->snd_ssthresh = current_ssthresh(sk);
}

SEC("struct_ops/tcplab_vegas_cong_avoid")
void BPF_PROG(tcplab_vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct vegas *ca = CA_STATE(struct vegas, sk);

	if (!ca->doing_vegas_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (seq_after(ack, ca->beg_snd_nxt)) {
		/* One or two samples: delayed ACKs only, act as Reno. */
		if (ca->cnt_rtt <= 2)
			tcp_reno_cong_avoid(sk, ack, acked);
		else
			vegas_round(sk, acked);
		/* The next round ends at snd_nxt, which the hook leaves as it found it. */
		vegas_next_round(sk, ca);
	} else if (in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	}
}

SEC("struct_ops/tcplab_vegas_ssthresh")
__u32 BPF_PROG(tcplab_vegas_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/tcplab_vegas_undo_cwnd")
__u32 BPF_PROG(tcplab_vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_vegas = {
	.init = (void *)tcplab_vegas_init,
	.ssthresh = (void *)tcplab_vegas_ssthresh,
	.cong_avoid = (void *)tcplab_vegas_cong_avoid,
	.set_state = (void *)tcplab_vegas_set_state,
	.cwnd_event = (void *)tcplab_vegas_cwnd_event,
	.pkts_acked = (void *)tcplab_vegas_pkts_acked,
	.undo_cwnd = (void *)tcplab_vegas_undo_cwnd,
	.name = "vegas",
};
