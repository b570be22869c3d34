// SPDX-License-Identifier: MIT OR GPL-2.0
/* BIC-TCP (Xu, Harfoush, Rhee, 2004) as a BPF congestion control, registered as "bic" by the
 * testbed when the kernel was built without tcp_bic (python/tcplab/testbed/bpf.py).
 *
 * It follows net/ipv4/tcp_bic.c hook for hook, as tcplab's simulator does (crates/tcplab-sim/
 * src/cc/bic.rs): after a loss cwnd searches for the window of that loss (W_max) by binary
 * search, a quarter of the distance per RTT but at most max_increment and at least
 * B/smooth_part segments, then probes above it slowly, faster, then linearly; at or below
 * low_window it is Reno. The increase is given to tcp_cong_avoid_ai as cnt, ACKed segments per
 * one-segment increase, corrected by the delayed-ACK ratio (segments per ACK, in 1/16). A loss
 * keeps beta = 819/1024 of cwnd, and with fast convergence a W_max that fell is remembered as
 * only (1 + beta)/2 of it. The defaults are Linux's module parameters: fast_convergence 1,
 * max_increment 16, low_window 14, beta 819, initial_ssthresh 0 (none), smooth_part 20.
 *
 * Not here: the module parameters (they are constants).
 */
#include "tcplab_ca.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define BETA_SCALE 1024U
#define BICTCP_B 4U
#define ACK_RATIO_SHIFT 4
#define FAST_CONVERGENCE 1
#define MAX_INCREMENT 16U
#define LOW_WINDOW 14U
#define BETA 819U
#define INITIAL_SSTHRESH 0U
#define SMOOTH_PART 20U

struct bic_state {
	__u32 cnt;		/* ACKed segments per one-segment increase */
	__u32 last_max_cwnd;	/* W_max, segments (0 before the first loss) */
	__u32 last_cwnd;	/* cwnd when cnt was last computed */
	__u32 last_time;	/* when cnt was last computed, jiffies */
	__u32 epoch_start;	/* start of the epoch since the last loss, jiffies; 0 = none */
	__u32 delayed_ack;	/* segments per ACK, in 1/16 */
};

static __always_inline void bic_reset(struct bic_state *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->epoch_start = 0;
	/* Start by assuming delayed ACKs: two segments per ACK. */
	ca->delayed_ack = 2 << ACK_RATIO_SHIFT;
}

/* The ACKed segments per one-segment increase at window cwnd. */
static __always_inline void bic_update(struct bic_state *ca, __u32 cwnd, __u32 now)
{
	__u32 w_max = ca->last_max_cwnd, dist;

	/* Recompute at most every HZ/32 jiffies while cwnd stands still. */
	if (ca->last_cwnd == cwnd && (__s32)(now - ca->last_time) <= (__s32)(HZ / 32))
		return;
	ca->last_cwnd = cwnd;
	ca->last_time = now;
	if (!ca->epoch_start)
		ca->epoch_start = now;
	if (cwnd <= LOW_WINDOW) {
		ca->cnt = cwnd; /* Reno */
		return;
	}
	if (cwnd < w_max) {
		/* Binary search toward W_max. */
		dist = (w_max - cwnd) / BICTCP_B;
		if (dist > MAX_INCREMENT)
			ca->cnt = cwnd / MAX_INCREMENT;
		else if (dist <= 1U)
			ca->cnt = cwnd * SMOOTH_PART / BICTCP_B;
		else
			ca->cnt = cwnd / dist;
	} else if (cwnd < w_max + BICTCP_B) {
		/* Max probing: creep just above W_max. */
		ca->cnt = cwnd * SMOOTH_PART / BICTCP_B;
	} else if (cwnd < w_max + MAX_INCREMENT * (BICTCP_B - 1)) {
		ca->cnt = cwnd * (BICTCP_B - 1) / (cwnd - w_max);
	} else {
		ca->cnt = cwnd / MAX_INCREMENT;
	}
	/* Before the first loss (or at very low utilisation) grow at least 5% per RTT. */
	if (!ca->last_max_cwnd && ca->cnt > 20)
		ca->cnt = 20;
	/* Count segments, not ACKs: divide by the delayed-ACK ratio. */
	ca->cnt = max_u32((ca->cnt << ACK_RATIO_SHIFT) / ca->delayed_ack, 1U);
}

SEC("struct_ops/tcplab_bic_init")
void BPF_PROG(tcplab_bic_init, struct sock *sk)
{
	bic_reset(CA_STATE(struct bic_state, sk));
	if (INITIAL_SSTHRESH)
		tcp_of(sk)->snd_ssthresh = INITIAL_SSTHRESH;
}

SEC("struct_ops/tcplab_bic_ssthresh")
__u32 BPF_PROG(tcplab_bic_ssthresh, struct sock *sk)
{
	struct bic_state *ca = CA_STATE(struct bic_state, sk);
	__u32 cwnd = tcp_of(sk)->snd_cwnd;

	ca->epoch_start = 0;
	/* Fast convergence: a flow whose W_max shrank leaves bandwidth to newcomers. */
	if (cwnd < ca->last_max_cwnd && FAST_CONVERGENCE)
		ca->last_max_cwnd = cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;
	if (cwnd <= LOW_WINDOW)
		return max_u32(cwnd >> 1, 2U);
	return max_u32(cwnd * BETA / BETA_SCALE, 2U);
}

SEC("struct_ops/tcplab_bic_cong_avoid")
void BPF_PROG(tcplab_bic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct bic_state *ca = CA_STATE(struct bic_state, sk);

	if (!slow_start_leftover(sk, &acked))
		return;
	bic_update(ca, tp->snd_cwnd, tcp_jiffies32);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

SEC("struct_ops/tcplab_bic_set_state")
void BPF_PROG(tcplab_bic_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		bic_reset(CA_STATE(struct bic_state, sk));
}

/* The delayed-ACK ratio as a moving average: ratio = (15 ratio + sample)/16. */
SEC("struct_ops/tcplab_bic_pkts_acked")
void BPF_PROG(tcplab_bic_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct bic_state *ca = CA_STATE(struct bic_state, sk);

	if (ca_state_of(sk) == TCP_CA_Open)
		ca->delayed_ack += sample->pkts_acked - (ca->delayed_ack >> ACK_RATIO_SHIFT);
}

SEC("struct_ops/tcplab_bic_undo_cwnd")
__u32 BPF_PROG(tcplab_bic_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops tcplab_bic = {
	.init = (void *)tcplab_bic_init,
	.ssthresh = (void *)tcplab_bic_ssthresh,
	.cong_avoid = (void *)tcplab_bic_cong_avoid,
	.set_state = (void *)tcplab_bic_set_state,
	.pkts_acked = (void *)tcplab_bic_pkts_acked,
	.undo_cwnd = (void *)tcplab_bic_undo_cwnd,
	.name = "bic",
};
