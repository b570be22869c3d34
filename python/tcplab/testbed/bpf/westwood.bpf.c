// SPDX-License-Identifier: MIT OR GPL-2.0
/* TCP Westwood+ (Mascolo et al., 2001; Grieco and Mascolo, 2004) as a BPF congestion control,
 * registered as "westwood" by the testbed when the kernel was built without tcp_westwood
 * (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_westwood.c hook for hook, as tcplab's simulator does
 * (crates/tcplab-sim/src/cc/westwood.rs): Reno's growth and Reno's halving on entering recovery;
 * the bytes acknowledged in each RTT-long window (at least HZ/20, 50 ms) give a bandwidth sample
 * bk/delta, in bytes per jiffy, filtered twice by 7/8 old + 1/8 new. When recovery completes
 * (CA_EVENT_COMPLETE_CWR), ssthresh = cwnd = max(bw_est * RTTmin / MSS, 2); on a timeout
 * (CA_EVENT_LOSS), ssthresh is that and RTTmin is taken afresh from the next ACK. RTTs are in
 * jiffies, rounded up as usecs_to_jiffies does; the initial RTT and RTTmin are 20 s (20 * HZ),
 * Linux's defaults.
 *
 * The bandwidth accounting runs from in_ack_event as Linux's does, fast path and slow path; the
 * simulator, which has no fast path, runs the slow path's from pkts_acked on every ACK that
 * acknowledges something (docs/algorithms/westwood.md). The products are 32-bit, as Linux's.
 * Not here: get_info (ss -i shows no bandwidth estimate).
 */
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

/* Shortest sampling window, 50 ms (TCP_WESTWOOD_RTT_MIN), and the RTT before any sample, 20 s
 * (TCP_WESTWOOD_INIT_RTT), in jiffies. */
#define RTT_MIN_JIFFIES (HZ / 20)
#define INIT_RTT_JIFFIES (20 * HZ)

struct westwood_state {
	__u32 bw_ns_est;	/* first filter stage, bytes per jiffy */
	__u32 bw_est;		/* bandwidth estimate, bytes per jiffy */
	__u32 rtt_win_sx;	/* start of the sampling window, jiffies */
	__u32 bk;		/* bytes acknowledged in the window */
	__u32 snd_una;		/* snd_una already accounted for */
	__u32 cumul_ack;
	__u32 accounted;	/* bytes credited for duplicate ACKs, not yet debited */
	__u32 rtt;		/* last RTT sample, jiffies */
	__u32 rtt_min;		/* minimum RTT, jiffies */
	__u8 first_ack;
	__u8 reset_rtt_min;	/* take the next RTT as RTTmin (after a timeout) */
};

/* 7/8 old + 1/8 new. */
static __always_inline __u32 do_filter(__u32 a, __u32 b)
{
	return (7 * a + b) >> 3;
}

static __always_inline void bw_filter(struct westwood_state *w, __u32 delta)
{
	__u32 sample = w->bk / delta;

	if (w->bw_ns_est == 0 && w->bw_est == 0) {
		w->bw_ns_est = sample;
		w->bw_est = sample;
	} else {
		w->bw_ns_est = do_filter(w->bw_ns_est, sample);
		w->bw_est = do_filter(w->bw_est, w->bw_ns_est);
	}
}

/* Close the sampling window once an RTT, and at least 50 ms, has passed. */
static __always_inline void update_window(struct tcp_sock *tp, struct westwood_state *w)
{
	__u32 now = tcp_jiffies32;
	__u32 delta = now - w->rtt_win_sx;

	if (w->first_ack) {
		w->snd_una = tp->snd_una;
		w->first_ack = 0;
	}
	if (w->rtt && delta > max_u32(w->rtt, RTT_MIN_JIFFIES)) {
		bw_filter(w, delta);
		w->bk = 0;
		w->rtt_win_sx = now;
	}
}

static __always_inline void update_rtt_min(struct westwood_state *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min = w->rtt;
		w->reset_rtt_min = 0;
	} else {
		w->rtt_min = min_u32(w->rtt_min, w->rtt);
	}
}

/* The bytes this ACK stands for, duplicate ACKs included. */
static __always_inline __u32 acked_count(struct tcp_sock *tp, struct westwood_state *w)
{
	__u32 mss = tp->mss_cache;

	w->cumul_ack = tp->snd_una - w->snd_una;
	if (w->cumul_ack == 0) {
		/* A duplicate ACK: one segment left the network. */
		w->accounted += mss;
		w->cumul_ack = mss;
	}
	if (w->cumul_ack > mss) {
		/* Partial or delayed ACK: debit what duplicate ACKs already credited. */
		if (w->accounted >= w->cumul_ack) {
			w->accounted -= w->cumul_ack;
			w->cumul_ack = mss;
		} else {
			w->cumul_ack -= w->accounted;
			w->accounted = 0;
		}
	}
	w->snd_una = tp->snd_una;
	return w->cumul_ack;
}

/* The window, in segments, the estimated bandwidth fills in RTTmin; at least 2. */
static __always_inline __u32 bw_rttmin(struct tcp_sock *tp, struct westwood_state *w)
{
	return max_u32((w->bw_est * w->rtt_min) / tp->mss_cache, 2U);
}

SEC("struct_ops/tcplab_westwood_init")
void BPF_PROG(tcplab_westwood_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct westwood_state *w = CA_STATE(struct westwood_state, sk);

	__builtin_memset(w, 0, sizeof(*w));
	w->rtt = INIT_RTT_JIFFIES;
	w->rtt_min = INIT_RTT_JIFFIES;
	w->first_ack = 1;
	w->reset_rtt_min = 1;
	w->rtt_win_sx = tcp_jiffies32;
	w->snd_una = tp->snd_una;
}

/* tcp_westwood_ack, called after the ACK's RTT sample (pkts_acked), as today's Linux calls
 * in_ack_event: the fast path counts the advance of snd_una; the slow path (duplicate ACKs,
 * SACK, ECE: CA_ACK_SLOWPATH) credits a duplicate ACK one MSS, debited from the next cumulative
 * ACK. */
SEC("struct_ops/tcplab_westwood_ack")
void BPF_PROG(tcplab_westwood_ack, struct sock *sk, __u32 ack_flags)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct westwood_state *w = CA_STATE(struct westwood_state, sk);

	update_window(tp, w);
	if (ack_flags & CA_ACK_SLOWPATH) {
		w->bk += acked_count(tp, w);
	} else {
		w->bk += tp->snd_una - w->snd_una;
		w->snd_una = tp->snd_una;
	}
	update_rtt_min(w);
}

SEC("struct_ops/tcplab_westwood_pkts_acked")
void BPF_PROG(tcplab_westwood_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct westwood_state *w = CA_STATE(struct westwood_state, sk);
	__u32 jiffy_us = USEC_PER_SEC / HZ;

	if (sample->rtt_us > 0)
		w->rtt = ((__u32)sample->rtt_us + jiffy_us - 1) / jiffy_us;
}

SEC("struct_ops/tcplab_westwood_cwnd_event")
void BPF_PROG(tcplab_westwood_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct westwood_state *w = CA_STATE(struct westwood_state, sk);

	if (ev == CA_EVENT_COMPLETE_CWR) {
		tp->snd_ssthresh = bw_rttmin(tp, w);
		tp->snd_cwnd = tp->snd_ssthresh;
	} else if (ev == CA_EVENT_LOSS) {
		tp->snd_ssthresh = bw_rttmin(tp, w);
		w->reset_rtt_min = 1;
	}
}

SEC("struct_ops/tcplab_westwood_ssthresh")
__u32 BPF_PROG(tcplab_westwood_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/tcplab_westwood_cong_avoid")
void BPF_PROG(tcplab_westwood_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/tcplab_westwood_undo_cwnd")
__u32 BPF_PROG(tcplab_westwood_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_westwood = {
	.init = (void *)tcplab_westwood_init,
	.ssthresh = (void *)tcplab_westwood_ssthresh,
	.cong_avoid = (void *)tcplab_westwood_cong_avoid,
	.cwnd_event = (void *)tcplab_westwood_cwnd_event,
	.pkts_acked = (void *)tcplab_westwood_pkts_acked,
	.in_ack_event = (void *)tcplab_westwood_ack,
	.undo_cwnd = (void *)tcplab_westwood_undo_cwnd,
	.name = "westwood",
};
