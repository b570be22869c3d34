// SPDX-License-Identifier: MIT OR GPL-2.0
/* tcp_vegas.c's per-round RTT sampling, shared by vegas.bpf.c and yeah.bpf.c as Linux's
 * tcp_yeah.c calls tcp_vegas.c's hooks: every RTT sample (+1 µs, never zero) lowers baseRTT (the
 * minimum ever) and the round's minimum; a round ends when the ACK passes the snd_nxt of its
 * start. Outside the Open state Vegas is off (set_state), and a restart after idle starts over. */
#ifndef TCPLAB_VEGAS_H
#define TCPLAB_VEGAS_H

#include "tcplab_ca.h"

/* No RTT sample yet (µs). */
#define VEGAS_RTT_NONE 0x7fffffffU

struct vegas {
	__u32 beg_snd_nxt;	/* right edge of the round being measured */
	__u32 cnt_rtt;		/* RTT samples in this round */
	__u32 min_rtt;		/* minimum RTT of this round, µs + 1 */
	__u32 base_rtt;		/* minimum RTT ever, µs + 1 */
	__u8 doing_vegas_now;	/* Open state: Vegas decides */
};

/* vegas_enable: sample a fresh round ending at the current snd_nxt. */
static __always_inline void vegas_enable(struct sock *sk, struct vegas *v)
{
	v->doing_vegas_now = 1;
	v->beg_snd_nxt = tcp_of(sk)->snd_nxt;
	v->cnt_rtt = 0;
	v->min_rtt = VEGAS_RTT_NONE;
}

/* tcp_vegas_init. */
static __always_inline void vegas_init(struct sock *sk, struct vegas *v)
{
	v->base_rtt = VEGAS_RTT_NONE;
	vegas_enable(sk, v);
}

/* tcp_vegas_pkts_acked. */
static __always_inline void vegas_pkts_acked(struct vegas *v, const struct ack_sample *sample)
{
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	vrtt = (__u32)sample->rtt_us + 1;
	v->base_rtt = min_u32(v->base_rtt, vrtt);
	v->min_rtt = min_u32(v->min_rtt, vrtt);
	v->cnt_rtt++;
}

/* tcp_vegas_state. */
static __always_inline void vegas_state(struct sock *sk, struct vegas *v, __u8 new_state)
{
	if (new_state == TCP_CA_Open)
		vegas_enable(sk, v);
	else
		v->doing_vegas_now = 0;
}

/* tcp_vegas_cwnd_event. */
static __always_inline void vegas_cwnd_event(struct sock *sk, struct vegas *v, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		vegas_init(sk, v);
}

/* The next round ends at the current snd_nxt; its samples start afresh. */
static __always_inline void vegas_next_round(struct sock *sk, struct vegas *v)
{
	v->beg_snd_nxt = tcp_of(sk)->snd_nxt;
	v->cnt_rtt = 0;
	v->min_rtt = VEGAS_RTT_NONE;
}

#endif
