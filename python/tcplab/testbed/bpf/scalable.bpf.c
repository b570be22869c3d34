// SPDX-License-Identifier: MIT OR GPL-2.0
/* Scalable TCP (Kelly, 2003) as a BPF congestion control, registered as "scalable" by the
 * testbed when the kernel was built without tcp_scalable (python/tcplab/testbed/bpf.py).
 *
 * net/ipv4/tcp_scalable.c's rule, as tcplab's simulator runs it (crates/tcplab-sim/src/cc/
 * scalable.rs): Reno's slow start, then one segment per min(cwnd, 100) segments acknowledged
 * (a = 0.01), and a loss keeps cwnd - cwnd/8 (b = 0.125).
 */
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define AI_CNT 100U
#define MD_SHIFT 3

SEC("struct_ops/tcplab_scalable_cong_avoid")
void BPF_PROG(tcplab_scalable_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);

	if (!slow_start_leftover(sk, &acked))
		return;
	tcp_cong_avoid_ai(tp, min_u32(tp->snd_cwnd, AI_CNT), acked);
}

SEC("struct_ops/tcplab_scalable_ssthresh")
__u32 BPF_PROG(tcplab_scalable_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);

	return max_u32(tp->snd_cwnd - (tp->snd_cwnd >> MD_SHIFT), 2U);
}

SEC("struct_ops/tcplab_scalable_undo_cwnd")
__u32 BPF_PROG(tcplab_scalable_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_scalable = {
	.ssthresh = (void *)tcplab_scalable_ssthresh,
	.cong_avoid = (void *)tcplab_scalable_cong_avoid,
	.undo_cwnd = (void *)tcplab_scalable_undo_cwnd,
	.name = "scalable",
};
