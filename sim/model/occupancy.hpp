// Wave quantisation of one attention call on a GPU (profile key compute.occupancy).
//
// Launch geometry (FlashAttention 2, csrc/flash_attn/src/flash_fwd_launch_template.h: grid
// (ceil(seqlen_q / kBlockM), batch, heads), m_block = blockIdx.x; d128 on sm80/sm90 uses
// kBlockM 128, kBlockN 64, 4 warps, 64 KB shared memory): a call launches
//   c = batch x heads x ceil(n / cta_tokens)
// CTAs, n being the call's query tokens in the forward and its key tokens in the backward
// (the dK/dV pass tiles keys). The GPU holds slots = sms x ctas_per_sm CTAs at once. The
// block scheduler hands CTAs out in grid order (tile index fastest, then batch, then head)
// and gives each freed slot the next one, so the call's time is the makespan of that greedy
// list schedule, and a call keeps
//   occupancy = sum(w) / (slots x makespan)
// of the GPU busy, w the CTAs' work. A CTA runs at the same speed whatever else is resident
// (its time is its work): for equal CTAs this is c / (slots x ceil(c / slots)), a partial
// last wave costed as a full one (one wave of 40 CTAs on 132 slots: 0.30); for a causal call
// (tile i of n has work ~i + 1/2 in the forward, ~n - i - 1/2 in the backward) the tail
// follows the work, and the forward's small-first order leaves a long one.
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

  bool enabled() const { return sms > 0; }
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
