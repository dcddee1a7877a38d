// Ring attention, pass-KV, double-buffered (forward).
//
// Rank r owns token chunk r (Q, KV, and the final O and LSE). In step
// s = 0..P-1 it computes Q[r] x KV[(r - s) mod P] into its O/LSE accumulator
// while, in comm group s, it sends that KV chunk to rank r+1 and receives the
// next one from rank r-1. A received chunk is freed once computed and
// forwarded, and the recv of step s waits for the free of step s-1, so a rank
// holds its own KV plus at most two received chunks (current and incoming).
// Causal (plain ring, unbalanced): blocks with kv chunk > q chunk are skipped,
// the diagonal block is causal; the KV still travels the whole ring.
// Bytes received per rank: (P-1) * kv.
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

Plan make_ring_plan(const AttentionShape& shape, int ranks);

}  // namespace tilesim
