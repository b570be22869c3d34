// SPDX-License-Identifier: MIT OR GPL-2.0
/* TCP Veno (Fu, Liew, 2003) as a BPF congestion control, registered as "veno" by the testbed
 * when the kernel was built without tcp_veno (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_veno.c hook for hook, as tcplab's simulator does
 * (crates/tcplab-sim/src/cc/veno.rs). From the minimum RTT sample (+1 µs) since the last window
 * update and the minimum ever (baseRTT), the backlog N = cwnd − cwnd·baseRTT/rtt (segments, ×2):
 * below beta (3 segments) the path is not congested, cwnd grows one segment per RTT and a loss
 * keeps 4/5 of it; otherwise one segment every other RTT and a loss halves it. Until three RTT
 * samples have been seen, and outside the Open state, Reno's growth. Linux has no module
 * parameters for Veno; beta is its constant.
 * Not here: nothing of tcp_veno.c is left out.
 */
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

/* Fixed-point shift of diff and BETA. */
#define V_PARAM_SHIFT 1
#define BETA (3U << V_PARAM_SHIFT)
/* No RTT sample yet (µs). */
#define RTT_NONE 0x7fffffffU

struct veno {
	__u8 doing_veno_now;	/* Open state: Veno decides */
	__u16 cnt_rtt;		/* RTT samples seen, never reset after init (u16 as Linux) */
	__u32 min_rtt;		/* minimum RTT since the last window update, µs + 1 */
	__u32 base_rtt;		/* minimum RTT ever, µs + 1 */
	__u32 inc;		/* whether the next congestive-state increase is taken */
	__u32 diff;		/* backlog N, segments << V_PARAM_SHIFT */
};

static __always_inline void veno_enable(struct sock *sk)
{
	struct veno *ca = CA_STATE(struct veno, sk);

	ca->doing_veno_now = 1;
	ca->min_rtt = RTT_NONE;
}

static __always_inline void veno_reset(struct sock *sk)
{
	struct veno *ca = CA_STATE(struct veno, sk);

	ca->base_rtt = RTT_NONE;
	ca->inc = 1;
	veno_enable(sk);
}

SEC("struct_ops/tcplab_veno_init")
void BPF_PROG(tcplab_veno_init, struct sock *sk)
{
	veno_reset(sk);
}

SEC("struct_ops/tcplab_veno_pkts_acked")
void BPF_PROG(tcplab_veno_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct veno *ca = CA_STATE(struct veno, sk);
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	/* Never a zero rtt or baseRTT. */
	vrtt = (__u32)sample->rtt_us + 1;
	ca->base_rtt = min_u32(ca->base_rtt, vrtt);
	ca->min_rtt = min_u32(ca->min_rtt, vrtt);
	ca->cnt_rtt++;
}

SEC("struct_ops/tcplab_veno_set_state")
void BPF_PROG(tcplab_veno_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Open)
		veno_enable(sk);
	else
		CA_STATE(struct veno, sk)->doing_veno_now = 0;
}

SEC("struct_ops/tcplab_veno_cwnd_event")
void BPF_PROG(tcplab_veno_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		veno_reset(sk);
}

/* A window update with enough samples: estimate the backlog, then grow by its state. */
static __always_inline void veno_update(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct veno *ca = CA_STATE(struct veno, sk);
	__u64 target_cwnd = (((__u64)tp->snd_cwnd * ca->base_rtt) << V_PARAM_SHIFT) / ca->min_rtt;

	ca->diff = (tp->snd_cwnd << V_PARAM_SHIFT) - (__u32)target_cwnd;
	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			goto done;
	}
	if (ca->diff < BETA) {
		/* Not congested: one segment per RTT. */
		tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
	} else if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
		/* Congested: one segment every other RTT. */
		if (ca->inc && tp->snd_cwnd < tp->snd_cwnd_clamp) {
			tp->snd_cwnd = tp->snd_cwnd + 1;
			ca->inc = 0;
		} else {
			ca->inc = 1;
		}
		tp->snd_cwnd_cnt = 0;
	} else {
		tp->snd_cwnd_cnt += acked;
	}
done:
	if (tp->snd_cwnd < 2)
		tp->snd_cwnd = 2;
	else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
		tp->snd_cwnd = tp->snd_cwnd_clamp;
}

SEC("struct_ops/tcplab_veno_cong_avoid")
void BPF_PROG(tcplab_veno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct veno *ca = CA_STATE(struct veno, sk);

	if (!ca->doing_veno_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	/* Limited by the application. */
	if (!is_cwnd_limited(sk))
		return;
	if (ca->cnt_rtt <= 2)
		tcp_reno_cong_avoid(sk, ack, acked);
	else
		veno_update(sk, acked);
	/* Wipe the slate clean for the next window update. */
	ca->min_rtt = RTT_NONE;
}

/* Veno's multiplicative decrease: 1/5 off when not congested, 1/2 when congested. */
SEC("struct_ops/tcplab_veno_ssthresh")
__u32 BPF_PROG(tcplab_veno_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct veno *ca = CA_STATE(struct veno, sk);

	if (ca->diff < BETA)
		return max_u32(tp->snd_cwnd * 4 / 5, 2U);
	return max_u32(tp->snd_cwnd >> 1, 2U);
}

SEC("struct_ops/tcplab_veno_undo_cwnd")
__u32 BPF_PROG(tcplab_veno_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_veno = {
	.init = (void *)tcplab_veno_init,
	.ssthresh = (void *)tcplab_veno_ssthresh,
	.cong_avoid = (void *)tcplab_veno_cong_avoid,
	.set_state = (void *)tcplab_veno_set_state,
	.cwnd_event = (void *)tcplab_veno_cwnd_event,
	.pkts_acked = (void *)tcplab_veno_pkts_acked,
	.undo_cwnd = (void *)tcplab_veno_undo_cwnd,
	.name = "veno",
};
