// SPDX-License-Identifier: MIT OR GPL-2.0
/* HighSpeed TCP (Floyd, RFC 3649) as a BPF congestion control, registered as "highspeed" by the
 * testbed when the kernel was built without tcp_highspeed (python/tcplab/testbed/bpf.py).
 *
 * net/ipv4/tcp_highspeed.c's rule, as tcplab's simulator runs it (crates/tcplab-sim/src/cc/
 * highspeed.rs): Reno's slow start, then RFC 3649 Appendix B's table. The row ai is kept so that
 * table[ai - 1].cwnd < cwnd <= table[ai].cwnd; congestion avoidance adds a(w) = ai + 1 segments
 * per RTT (snd_cwnd_cnt += ai + 1 per ACK, one segment when it reaches cwnd), and a loss keeps
 * cwnd - cwnd * md / 256. Below 38 segments it is Reno. Linux has no module parameters for it.
 * Not here: lowering snd_cwnd_clamp to 2^32/128 at init (a BPF program may not write it; the
 * decrease multiplies in 64 bits instead, so it cannot wrap).
 */
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define MD_SCALE_SHIFT 8
#define AIMD_ROWS 72U

/* RFC 3649 Appendix B: the top window of each row and its decrease b(w) x 256; a(w) is the
 * row's index + 1. */
static const __u32 aimd_cwnd[AIMD_ROWS] = {
	38, 118, 221, 347, 495, 663, 851, 1058, 1284, 1529, 1793, 2076, 2378, 2699, 3039, 3399,
	3778, 4177, 4596, 5036, 5497, 5979, 6483, 7009, 7558, 8130, 8726, 9346, 9991, 10661, 11358,
	12082, 12834, 13614, 14424, 15265, 16137, 17042, 17981, 18955, 19965, 21013, 22101, 23230,
	24402, 25618, 26881, 28193, 29557, 30975, 32450, 33986, 35586, 37253, 38992, 40808, 42707,
	44694, 46776, 48961, 51258, 53677, 56230, 58932, 61799, 64851, 68113, 71617, 75401, 79517,
	84035, 89053,
};

static const __u32 aimd_md[AIMD_ROWS] = {
	128, 112, 104, 98, 93, 89, 86, 83, 81, 78, 76, 74, 72, 71, 69, 68, 66, 65, 64, 62, 61, 60,
	59, 58, 57, 56, 55, 54, 53, 52, 52, 51, 50, 49, 48, 48, 47, 46, 45, 45, 44, 43, 43, 42, 41,
	41, 40, 39, 39, 38, 38, 37, 36, 36, 35, 35, 34, 33, 33, 32, 32, 31, 30, 30, 29, 28, 28, 27,
	26, 26, 25, 24,
};

struct hstcp {
	__u32 ai;	/* row of the table for the current window */
};

/* The row, bounded for the verifier (it never leaves the table). */
static __always_inline __u32 row_of(struct sock *sk)
{
	__u32 ai = CA_STATE(struct hstcp, sk)->ai;

	return ai < AIMD_ROWS ? ai : AIMD_ROWS - 1;
}

/* Move ai to the row whose window range holds cwnd (ai < AIMD_ROWS). barrier_var keeps clang
 * from turning the index into a pointer the verifier cannot bound. */
static __always_inline __u32 update_row(__u32 ai, __u32 cwnd)
{
	__u32 i;

	for (i = 0; i < AIMD_ROWS && ai < AIMD_ROWS - 1; i++) {
		barrier_var(ai);
		if (ai >= AIMD_ROWS || cwnd <= aimd_cwnd[ai])
			break;
		ai++;
	}
	for (i = 0; i < AIMD_ROWS && ai > 0; i++) {
		__u32 below = ai - 1;

		barrier_var(below);
		if (below >= AIMD_ROWS || cwnd > aimd_cwnd[below])
			break;
		ai = below;
	}
	return ai;
}

SEC("struct_ops/tcplab_highspeed_init")
void BPF_PROG(tcplab_highspeed_init, struct sock *sk)
{
	CA_STATE(struct hstcp, sk)->ai = 0;
}

SEC("struct_ops/tcplab_highspeed_cong_avoid")
void BPF_PROG(tcplab_highspeed_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	__u32 ai;

	if (!is_cwnd_limited(sk))
		return;
	if (in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	ai = update_row(row_of(sk), tp->snd_cwnd);
	CA_STATE(struct hstcp, sk)->ai = ai;
	/* RFC 3649 section 5: w += a(w)/w per ACK. */
	if (tp->snd_cwnd < tp->snd_cwnd_clamp) {
		tp->snd_cwnd_cnt += ai + 1;
		if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
			tp->snd_cwnd_cnt -= tp->snd_cwnd;
			tp->snd_cwnd++;
		}
	}
}

/* RFC 3649 section 5: w = (1 - b(w)) w, with the row of the last congestion-avoidance ACK. */
SEC("struct_ops/tcplab_highspeed_ssthresh")
__u32 BPF_PROG(tcplab_highspeed_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	__u32 cwnd = tp->snd_cwnd;
	__u32 cut = ((__u64)cwnd * aimd_md[row_of(sk)]) >> MD_SCALE_SHIFT;

	return max_u32(cwnd - cut, 2U);
}

SEC("struct_ops/tcplab_highspeed_undo_cwnd")
__u32 BPF_PROG(tcplab_highspeed_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_highspeed = {
	.init = (void *)tcplab_highspeed_init,
	.ssthresh = (void *)tcplab_highspeed_ssthresh,
	.cong_avoid = (void *)tcplab_highspeed_cong_avoid,
	.undo_cwnd = (void *)tcplab_highspeed_undo_cwnd,
	.name = "highspeed",
};
