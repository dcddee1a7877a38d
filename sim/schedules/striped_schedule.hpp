// Striped ring: causal load balancing by striping the tokens.
//
// plan.layout is LayoutKind::striped with P blocks: rank r owns tokens
// r, r+P, r+2P, ... (c = S/P of them). The ring is ring_schedule.hpp's. Under
// a causal mask block (q r, kv j) has c(c+1)/2 pairs for j <= r and c(c-1)/2
// for j > r, so rank r computes (P*c^2 + (2r + 2 - P)*c) / 2 pairs, the mean
// is (P*c^2 + c) / 2 and max/mean = (P*c + P) / (P*c + 1) = 1 + (P-1)/(P*c+1)
// (1.00085 at P = 8, c = 1024).
// Bytes received per rank: forward (P-1) * kv; backward (P-1) * kv + P * dkv.
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

Plan make_striped_plan(const AttentionShape& shape, int ranks);

}  // namespace tilesim
