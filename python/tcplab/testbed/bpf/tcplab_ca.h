// SPDX-License-Identifier: MIT OR GPL-2.0
/* What tcplab's BPF congestion controls share: the kernel's helpers a BPF congestion control may
 * call (kfuncs), and the inline functions of include/net/tcp.h the programs need, written for
 * BPF. Each program is one file beside this one (python/tcplab/testbed/bpf.py builds them). */
#ifndef TCPLAB_CA_H
#define TCPLAB_CA_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* net/ipv4/tcp_cong.c, exported to BPF congestion controls. */
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

#define TCP_INFINITE_SSTHRESH 0x7fffffff
#define USEC_PER_SEC 1000000ULL
/* The kernel's HZ and jiffies (tcp_jiffies32), for the algorithms that count in them. */
extern unsigned long CONFIG_HZ __kconfig;
#define HZ ((__u32)CONFIG_HZ)
#define tcp_jiffies32 ((__u32)bpf_jiffies64())

static __always_inline struct tcp_sock *tcp_of(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *icsk_of(struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/* The program's private state: icsk_ca_priv, ICSK_CA_PRIV_SIZE (104) bytes. */
#define CA_STATE(type, sk) ((type *)icsk_of(sk)->icsk_ca_priv)

static __always_inline __u32 min_u32(__u32 a, __u32 b)
{
	return a < b ? a : b;
}

static __always_inline __u32 max_u32(__u32 a, __u32 b)
{
	return a > b ? a : b;
}

/* include/net/tcp.h before()/after(): sequence-space order. */
static __always_inline int seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline int seq_after(__u32 a, __u32 b)
{
	return seq_before(b, a);
}

static __always_inline int in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* tcp_is_cwnd_limited: in slow start, whether cwnd is below twice what was in flight. */
static __always_inline int is_cwnd_limited(struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);

	if (in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

/* The start of most cong_avoid hooks (the simulator's helpers::slow_start_leftover): nothing to
 * do unless cwnd is the limit; in slow start, grow by *acked up to ssthresh and leave in *acked
 * what is left for congestion avoidance. 0 when nothing is left to do. */
static __always_inline int slow_start_leftover(struct sock *sk, __u32 *acked)
{
	struct tcp_sock *tp = tcp_of(sk);

	if (!is_cwnd_limited(sk))
		return 0;
	if (in_slow_start(tp)) {
		*acked = tcp_slow_start(tp, *acked);
		if (!*acked)
			return 0;
	}
	return 1;
}

static __always_inline __u8 ca_state_of(struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(icsk_of(sk), icsk_ca_state);
}

/* tcp_current_ssthresh: outside a cwnd reduction, at least three quarters of cwnd. */
static __always_inline __u32 current_ssthresh(struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	__u8 state = ca_state_of(sk);

	if (state == TCP_CA_CWR || state == TCP_CA_Recovery)
		return tp->snd_ssthresh;
	return max_u32(tp->snd_ssthresh, (tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2));
}

/* The clock of tcp_sock, in microseconds (tcp_mstamp, set per incoming ACK). */
static __always_inline __u32 now_us(const struct tcp_sock *tp)
{
	return (__u32)tp->tcp_mstamp;
}

#endif
