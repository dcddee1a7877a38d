// Zigzag ring: causal load balancing for the pass-KV ring.
//
// The sequence is cut into 2P contiguous blocks of S/2P tokens; rank r owns
// blocks r and 2P-1-r (chunk_layouts.hpp, plan.layout.blocks = 2P). The ring
// itself is ring_schedule.hpp's. Under a causal mask each rank then computes
// (2P-1) full blocks + 2 diagonal halves of (S/2P)^2 pairs: max/mean = 1.
// Bytes received per rank, c = S/P: forward (P-1) * kv; backward
// (P-1) * kv + P * dkv (fp32); the same as the plain ring.
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

Plan make_zigzag_plan(const AttentionShape& shape, int ranks);

}  // namespace tilesim
