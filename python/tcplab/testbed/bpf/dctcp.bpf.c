// SPDX-License-Identifier: MIT OR GPL-2.0
/* DCTCP (RFC 8257) as a BPF congestion control (struct_ops), registered as "dctcp" by the
 * testbed when the kernel was built without tcp_dctcp (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_dctcp.c hook for hook, as tcplab's simulator does
 * (crates/tcplab-sim/src/cc/dctcp.rs), so that the testbed runs DCTCP through the real Linux
 * stack: the kernel negotiates ECN for it (TCP_CONG_NEEDS_ECN), keeps ECT on every packet, runs
 * CWR and PRR, and calls these hooks where it calls tcp_dctcp.c's. The defaults are Linux's
 * module parameters: g = 1/16 (dctcp_shift_g 4), alpha starting at 1 (dctcp_alpha_on_init 1024).
 * Not here: the fallback to Reno without ECN (the testbed's flows always negotiate it), PLB and
 * get_info (ss -i shows no alpha). Instead each connection's alpha is published in the map
 * tcplab_alpha at every update, which the testbed reads at each interval's end.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* GPL-compatible, as the kernel requires of a congestion control; MIT as the rest of tcplab. */
char _license[] SEC("license") = "Dual MIT/GPL";

#define MAX_ALPHA 1024U
#define SHIFT_G 4
/* include/net/tcp.h: the receiver echoes ECE while set. */
#define ECN_DEMAND_CWR 4
#define CONG_NEEDS_ECN 0x2

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

struct dctcp_state {
	__u32 old_delivered;
	__u32 old_delivered_ce;
	__u32 prior_rcv_nxt;
	__u32 alpha;
	__u32 next_seq;
	__u32 ce_state;
	__u32 loss_cwnd;
};

/* A connection: its addresses and ports as the socket holds them (the local port in host order,
 * the remote one in network order). */
struct alpha_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
};

struct alpha_value {
	__u32 alpha;		/* in 1/1024 */
	__u32 delivered;	/* tp->delivered at the update */
	__u64 born_ns;		/* CLOCK_MONOTONIC at init: tells this connection from an older one */
};

/* Least recently updated connections make way, so the map never fills. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct alpha_key);
	__type(value, struct alpha_value);
} tcplab_alpha SEC(".maps");

static __always_inline struct tcp_sock *tp_of(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct dctcp_state *state_of(struct sock *sk)
{
	return (struct dctcp_state *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline void publish(struct sock *sk, __u32 alpha, __u64 born_ns)
{
	struct alpha_key key = {
		.saddr = sk->__sk_common.skc_rcv_saddr,
		.daddr = sk->__sk_common.skc_daddr,
		.sport = sk->__sk_common.skc_num,
		.dport = sk->__sk_common.skc_dport,
	};
	struct alpha_value value = { .alpha = alpha, .delivered = tp_of(sk)->delivered, .born_ns = born_ns };
	struct alpha_value *old = bpf_map_lookup_elem(&tcplab_alpha, &key);

	if (old && !born_ns)
		value.born_ns = old->born_ns;
	bpf_map_update_elem(&tcplab_alpha, &key, &value, BPF_ANY);
}

static __always_inline void window_starts(struct tcp_sock *tp, struct dctcp_state *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops/tcplab_dctcp_init")
void BPF_PROG(tcplab_dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = tp_of(sk);
	struct dctcp_state *ca = state_of(sk);

	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->alpha = MAX_ALPHA;
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	window_starts(tp, ca);
	publish(sk, ca->alpha, bpf_ktime_get_ns());
}

SEC("struct_ops/tcplab_dctcp_ssthresh")
__u32 BPF_PROG(tcplab_dctcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tp_of(sk);
	struct dctcp_state *ca = state_of(sk);
	__u32 cwnd = tp->snd_cwnd;
	__u32 kept = cwnd - ((cwnd * ca->alpha) >> 11U);

	ca->loss_cwnd = cwnd;
	return kept > 2 ? kept : 2;
}

SEC("struct_ops/tcplab_dctcp_update_alpha")
void BPF_PROG(tcplab_dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tp_of(sk);
	struct dctcp_state *ca = state_of(sk);
	__u32 delivered, delivered_ce, alpha, decay;

	if ((__s32)(tp->snd_una - ca->next_seq) < 0)
		return;
	delivered = tp->delivered - ca->old_delivered;
	delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
	alpha = ca->alpha;
	decay = alpha >> SHIFT_G;
	alpha -= decay ? decay : alpha;
	if (delivered_ce) {
		delivered_ce <<= (10 - SHIFT_G);
		delivered_ce /= delivered ? delivered : 1;
		alpha += delivered_ce;
		if (alpha > MAX_ALPHA)
			alpha = MAX_ALPHA;
	}
	ca->alpha = alpha;
	window_starts(tp, ca);
	publish(sk, alpha, 0);
}

static __always_inline void react_to_loss(struct sock *sk)
{
	struct tcp_sock *tp = tp_of(sk);
	struct dctcp_state *ca = state_of(sk);
	__u32 half = tp->snd_cwnd >> 1U;

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = half > 2 ? half : 2;
}

SEC("struct_ops/tcplab_dctcp_state")
void BPF_PROG(tcplab_dctcp_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Recovery &&
	    new_state != BPF_CORE_READ_BITFIELD((struct inet_connection_sock *)sk, icsk_ca_state))
		react_to_loss(sk);
}

static __always_inline void echo(struct tcp_sock *tp, __u32 ce_state)
{
	if (ce_state)
		tp->ecn_flags |= ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~ECN_DEMAND_CWR;
}

SEC("struct_ops/tcplab_dctcp_cwnd_event")
void BPF_PROG(tcplab_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	struct tcp_sock *tp = tp_of(sk);
	struct dctcp_state *ca = state_of(sk);
	__u32 ce;

	if (ev == CA_EVENT_LOSS) {
		react_to_loss(sk);
		return;
	}
	if (ev != CA_EVENT_ECN_IS_CE && ev != CA_EVENT_ECN_NO_CE)
		return;
	ce = ev == CA_EVENT_ECN_IS_CE;
	/* dctcp_ece_ack_update: ECE follows the CE state of the last segment; a change is
	 * acknowledged at once, after the held delayed ACK with the state it was held under. */
	if (ca->ce_state != ce) {
		if (icsk->icsk_ack.pending & ICSK_ACK_TIMER) {
			echo(tp, ca->ce_state);
			bpf_tcp_send_ack(tp, ca->prior_rcv_nxt);
		}
		icsk->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->ce_state = ce;
	echo(tp, ce);
}

SEC("struct_ops/tcplab_dctcp_cong_avoid")
void BPF_PROG(tcplab_dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/tcplab_dctcp_undo_cwnd")
__u32 BPF_PROG(tcplab_dctcp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tp_of(sk);
	struct dctcp_state *ca = state_of(sk);

	return tp->snd_cwnd > ca->loss_cwnd ? tp->snd_cwnd : ca->loss_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_dctcp = {
	.init = (void *)tcplab_dctcp_init,
	.in_ack_event = (void *)tcplab_dctcp_update_alpha,
	.cwnd_event = (void *)tcplab_dctcp_cwnd_event,
	.ssthresh = (void *)tcplab_dctcp_ssthresh,
	.cong_avoid = (void *)tcplab_dctcp_cong_avoid,
	.undo_cwnd = (void *)tcplab_dctcp_undo_cwnd,
	.set_state = (void *)tcplab_dctcp_state,
	.flags = CONG_NEEDS_ECN,
	.name = "dctcp",
};
