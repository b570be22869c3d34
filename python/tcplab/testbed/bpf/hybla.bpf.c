// SPDX-License-Identifier: MIT OR GPL-2.0
/* TCP Hybla (Caini and Firrincieli, 2004) as a BPF congestion control, registered as "hybla" by
 * the testbed when the kernel was built without tcp_hybla (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_hybla.c as tcplab's simulator does (crates/tcplab-sim/src/cc/
 * hybla.rs): with rho = max(RTT / RTT0, 1), RTT the smallest smoothed RTT seen and RTT0 = 25 ms
 * (Linux's module parameter rtt0), slow start adds 2^rho - 1 segments per ACK and congestion
 * avoidance rho^2 / cwnd, in 1/128 segment (snd_cwnd_cents keeps the fractions); rho has 3
 * fractional bits, rho^2 7, and 2^fraction comes from an 8-entry table. Outside Open state it
 * grows as Reno; losses are Reno's. At init (the connection established) rho comes from the
 * handshake's RTT and cwnd = rho; cwnd stays at most 65535, the clamp Linux sets.
 * Not here: setting snd_cwnd_clamp to 65535 (a BPF congestion control may not write it; the
 * program caps cwnd at 65535 where Linux's clamp does, in cong_avoid, but the kernel's other
 * uses of the clamp see the socket's own).
 */
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define RTT0_MS 25U
#define CWND_CLAMP 65535U

struct hybla_state {
	__u32 hybla_en;		/* in Open state */
	__u32 snd_cwnd_cents;	/* fractions of a segment not yet added, 1/128 segment */
	__u32 rho;		/* integer part of rho */
	__u32 rho2;		/* integer part of rho^2 */
	__u32 rho_3ls;		/* rho << 3 */
	__u32 rho2_7ls;		/* rho^2 << 7 */
	__u32 minrtt_us;	/* smallest srtt_us seen (8 * µs, as srtt_us) */
};

/* 2^(k/8) << 7 for k = 0..7: the fractional part of 2^rho. */
static __always_inline __u32 fraction(__u32 odds)
{
	switch (odds) {
	case 1: return 139;
	case 2: return 152;
	case 3: return 165;
	case 4: return 181;
	case 5: return 197;
	case 6: return 215;
	case 7: return 234;
	default: return 128;
	}
}

/* rho << 3 = max(srtt_us / RTT0 in µs, 8): srtt_us is already 8 times the smoothed RTT. */
static __always_inline void recalc_param(struct tcp_sock *tp, struct hybla_state *ca)
{
	ca->rho_3ls = max_u32(tp->srtt_us / (RTT0_MS * 1000), 8U);
	ca->rho = ca->rho_3ls >> 3;
	ca->rho2_7ls = (ca->rho_3ls * ca->rho_3ls) << 1;
	ca->rho2 = ca->rho2_7ls >> 7;
}

SEC("struct_ops/tcplab_hybla_init")
void BPF_PROG(tcplab_hybla_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct hybla_state *ca = CA_STATE(struct hybla_state, sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->hybla_en = 1;
	ca->minrtt_us = 0xffffffff;
	if (tp->srtt_us > 0) {
		/* The first rho from the handshake's RTT, and cwnd = rho. */
		recalc_param(tp, ca);
		ca->minrtt_us = tp->srtt_us;
		tp->snd_cwnd = ca->rho;
	}
}

SEC("struct_ops/tcplab_hybla_set_state")
void BPF_PROG(tcplab_hybla_set_state, struct sock *sk, __u8 new_state)
{
	struct hybla_state *ca = CA_STATE(struct hybla_state, sk);

	ca->hybla_en = new_state == TCP_CA_Open;
}

SEC("struct_ops/tcplab_hybla_cong_avoid")
void BPF_PROG(tcplab_hybla_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct hybla_state *ca = CA_STATE(struct hybla_state, sk);
	__u32 increment, odd, rho_fractions, cwnd;
	int slow_start;

	/* Recalculate rho only when this srtt is the lowest. */
	if (tp->srtt_us > 0 && tp->srtt_us < ca->minrtt_us) {
		recalc_param(tp, ca);
		ca->minrtt_us = tp->srtt_us;
	}
	if (!is_cwnd_limited(sk))
		return;
	if (!ca->hybla_en) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (ca->rho == 0)
		recalc_param(tp, ca);

	rho_fractions = ca->rho_3ls - (ca->rho << 3);
	slow_start = in_slow_start(tp);
	/* The increment in 1/128 segment. */
	if (slow_start) {
		/* 2^rho - 1 = 2^int * 2^fraction - 1. */
		increment = (1U << min_u32(ca->rho, 16U)) * fraction(rho_fractions) - 128;
	} else {
		/* rho^2 / cwnd. */
		increment = ca->rho2_7ls / tp->snd_cwnd;
		if (increment < 128)
			tp->snd_cwnd_cnt++;
	}
	odd = increment % 128;
	cwnd = tp->snd_cwnd + (increment >> 7);
	ca->snd_cwnd_cents += odd;
	/* Whole segments from the accumulated fractions (Linux's loop, at most once: the cents
	 * stay below 128 between ACKs). */
	if (ca->snd_cwnd_cents >= 128) {
		cwnd += ca->snd_cwnd_cents >> 7;
		ca->snd_cwnd_cents &= 127;
		tp->snd_cwnd_cnt = 0;
	}
	/* A window so large that the increment rounds to 0: one segment per window of ACKs. */
	if (increment == 0 && odd == 0 && tp->snd_cwnd_cnt >= cwnd) {
		cwnd++;
		tp->snd_cwnd_cnt = 0;
	}
	if (slow_start)
		cwnd = min_u32(cwnd, tp->snd_ssthresh);
	tp->snd_cwnd = min_u32(cwnd, min_u32(tp->snd_cwnd_clamp, CWND_CLAMP));
}

SEC("struct_ops/tcplab_hybla_ssthresh")
__u32 BPF_PROG(tcplab_hybla_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/tcplab_hybla_undo_cwnd")
__u32 BPF_PROG(tcplab_hybla_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_hybla = {
	.init = (void *)tcplab_hybla_init,
	.ssthresh = (void *)tcplab_hybla_ssthresh,
	.cong_avoid = (void *)tcplab_hybla_cong_avoid,
	.set_state = (void *)tcplab_hybla_set_state,
	.undo_cwnd = (void *)tcplab_hybla_undo_cwnd,
	.name = "hybla",
};
