// Wave quantisation of one attention call on a GPU (profile key compute.occupancy).
//
// A FlashAttention-style call launches c = batch x heads x ceil(n / cta_tokens) CTAs, n being
// the call's query tokens in the forward (the kernel tiles queries) and its key tokens in the
// backward (the dK/dV pass tiles keys). The GPU holds slots = sms x ctas_per_sm CTAs at once and
// runs the call in ceil(c / slots) waves; the last wave leaves slots idle, so the call keeps
//   occupancy(c) = c / (slots x ceil(c / slots))
// of the GPU busy (one wave of 40 CTAs on 132 SMs: 0.30). The efficiency tables were measured at
// reference_ctas CTAs (the FlashAttention benchmark keeps batch x seq_len = 16K tokens and
// 2048 / head_dim heads: 2048 CTAs at d128, tile 128), so a call runs at
//   e_table(size) x occupancy(c) / occupancy(reference_ctas)      (at most 1).
// A head-split schedule (Ulysses, USP) calls with heads / u heads; a small chunk has few tiles.
// sms = 0: no occupancy model (factor 1), as in profiles without the key (CPU hosts).
#pragma once

namespace tilesim {

struct OccupancyModel {
  int sms = 0;
  int ctas_per_sm = 1;
  int cta_tokens = 128;
  double reference_ctas = 0.0;

  bool enabled() const { return sms > 0; }
  // CTAs of a call over `tokens` tiled tokens (rounded up to whole tiles).
  double ctas(int batch, int heads, double tokens) const;
  // occupancy(c) as above; 1 when disabled.
  double occupancy(double ctas) const;
  // occupancy(c) / occupancy(reference_ctas); 1 when disabled.
  double factor(double ctas) const;
};

}  // namespace tilesim
