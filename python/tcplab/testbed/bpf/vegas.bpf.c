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
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define ALPHA 2U
#define BETA 4U
#define GAMMA 1U
/* No RTT sample yet (µs). */
#define RTT_NONE 0x7fffffffU

struct vegas {
	__u32 beg_snd_nxt;	/* right edge of the round being measured */
	__u32 cnt_rtt;		/* RTT samples in this round */
	__u32 min_rtt;		/* minimum RTT of this round, µs + 1 */
	__u32 base_rtt;		/* minimum RTT ever, µs + 1 */
	__u8 doing_vegas_now;	/* Open state: Vegas decides */
};

/* vegas_enable: sample a fresh round ending at the current snd_nxt. */
static __always_inline void vegas_enable(struct sock *sk)
{
	struct vegas *ca = CA_STATE(struct vegas, sk);

	ca->doing_vegas_now = 1;
	ca->beg_snd_nxt = tcp_of(sk)->snd_nxt;
	ca->cnt_rtt = 0;
	ca->min_rtt = RTT_NONE;
}

static __always_inline void vegas_reset(struct sock *sk)
{
	CA_STATE(struct vegas, sk)->base_rtt = RTT_NONE;
	vegas_enable(sk);
}

SEC("struct_ops/tcplab_vegas_init")
void BPF_PROG(tcplab_vegas_init, struct sock *sk)
{
	vegas_reset(sk);
}

SEC("struct_ops/tcplab_vegas_pkts_acked")
void BPF_PROG(tcplab_vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *ca = CA_STATE(struct vegas, sk);
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	/* Never a zero rtt or baseRTT. */
	vrtt = (__u32)sample->rtt_us + 1;
	ca->base_rtt = min_u32(ca->base_rtt, vrtt);
	ca->min_rtt = min_u32(ca->min_rtt, vrtt);
	ca->cnt_rtt++;
}

SEC("struct_ops/tcplab_vegas_set_state")
void BPF_PROG(tcplab_vegas_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Open)
		vegas_enable(sk);
	else
		CA_STATE(struct vegas, sk)->doing_vegas_now = 0;
}

SEC("struct_ops/tcplab_vegas_cwnd_event")
void BPF_PROG(tcplab_vegas_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		vegas_reset(sk);
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
		/* Where the next round ends. */
		ca->beg_snd_nxt = tp->snd_nxt;
		/* One or two samples: delayed ACKs only, act as Reno. */
		if (ca->cnt_rtt <= 2)
			tcp_reno_cong_avoid(sk, ack, acked);
		else
			vegas_round(sk, acked);
		ca->cnt_rtt = 0;
		ca->min_rtt = RTT_NONE;
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
