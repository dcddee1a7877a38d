// Wave quantisation of one attention call on a GPU (profile key compute.occupancy).
//
// Launch geometry (FlashAttention 2, csrc/flash_attn/src/flash_fwd_launch_template.h: grid
// (ceil(seqlen_q / kBlockM), batch, heads), m_block = blockIdx.x; d128 on sm80/sm90 uses
// kBlockM 128, kBlockN 64, 4 warps, 64 KB shared memory): a call launches
//   c = batch x heads x ceil(n / cta_tokens)
// CTAs, n being the call's query tokens in the forward and its key tokens in the backward
// (the dK/dV pass tiles keys). An SM holds up to ctas_per_sm CTAs; with k resident it runs
// at throughput
//   s(k) = min(1, k x lone)          (1 = the SM full, the rate the tables were measured at)
// shared equally by its k CTAs, `lone` (compute.occupancy.lone_cta_throughput) being what one
// CTA alone gets. FA2's CTA is 4 warps, one per SM sub-partition: alone, its matmuls wait on
// its own softmax (exp on the special function units); a co-resident CTA fills those gaps, so
//   lone = t_mma / (t_mma + t_exp),   t_exp / t_mma = peak / (4 d x sfu_rate)
// (one exp per (q, k) pair against 4 d matmul FLOPs). Without the key lone = 1 / ctas_per_sm:
// a CTA runs as fast alone as in company, a partial last wave costing a whole one.
// The block scheduler hands CTAs out in grid order (tile index fastest, then batch, then head)
// and gives each freed slot the next one; slots freed at one instant are filled least loaded
// SM first (the launch spreads a grid one CTA per SM before doubling up). The call's time is
// the makespan T of that schedule, and it keeps
//   occupancy = sum(w) / (sms x T)
// of the GPU busy, w the CTAs' work in full-SM time units. For c equal CTAs: W = floor(c /
// slots) full waves of ctas_per_sm units, then r = c - W x slots CTAs, the busiest SM holding
// k = ceil(r / sms): T = W x ctas_per_sm + k / s(k). (320 CTAs of a 5-head 8K call on 132 SMs
// x 2, lone 2/3: T = 2 + 1.5, occupancy 0.693; a whole second wave, lone 1/2: 0.606.) For a
// causal call (tile i of n has work ~i + 1/2 in the forward, ~n - i - 1/2 in the backward) the
// tail follows the work, and the forward's small-first order leaves a long one.
// The efficiency tables were measured at reference_ctas CTAs (the FlashAttention benchmark:
// batch x seq_len = 16K tokens, 2048 / head_dim heads: 2048 CTAs at d128, tile 128), and the
// causal factor at that benchmark's causal launch, so a call runs at
//   e_table(size) x occupancy(call) / occupancy(reference launch)      (at most 1),
// the reference launch being the benchmark's at the call's size, causal when the call's CTAs
// differ in work. sms = 0: no occupancy model (factor 1), as in profiles without the key.
#pragma once

#include <span>

namespace tilesim {

struct OccupancyModel {
  int sms = 0;
  int ctas_per_sm = 1;
  int cta_tokens = 128;
  double reference_ctas = 0.0;
  double lone_cta_throughput = 0.0;  // s(1); 0: 1 / ctas_per_sm (no gain alone)

  bool enabled() const { return sms > 0; }
  // s(1), the SM's throughput with one resident CTA (above).
  double lone_share() const;
  // s(k) = min(1, k x s(1)).
  double sm_throughput(int resident) const;
  // CTAs of a call over `tokens` tiled tokens (rounded up to whole tiles).
  double ctas(int batch, int heads, double tokens) const;
  // occupancy of c equal CTAs, as above; 1 when disabled.
  double occupancy(double ctas) const;
  // occupancy of `groups` (batch x heads) repeats of the CTAs of `tile_work`, in grid order.
  double scheduled_occupancy(std::span<const double> tile_work, double groups) const;
  // occupancy(c) / occupancy(reference_ctas); 1 when disabled.
  double factor(double ctas) const;
  // The factor of a call whose tiles differ in work (`tile_work`, one (batch, head) group's
  // tiles in grid order), against the benchmark's causal launch of `size_tokens` tokens.
  double causal_factor(std::span<const double> tile_work, double groups, bool forward,
                       double size_tokens) const;
};

}  // namespace tilesim
