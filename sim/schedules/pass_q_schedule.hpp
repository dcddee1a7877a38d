// Pass-Q ring (forward): Q chunks travel, KV stays, partial outputs return.
//
// Rank r owns chunk r (contiguous; zigzag ownership under a causal mask, so
// every (Q, KV) chunk pair has work). In step s = 0..P-1 rank r holds Q[i],
// i = (r - s) mod P, and computes Q[i] x KV[r]:
//   * s = 0: into its own final accumulators O[r], LSE[r];
//   * s > 0: into the partials O[i]@peer, LSE[i]@peer (two objects per chunk, by
//     step parity, each computing rank writing its own copy, fp32; pass_q_member.hpp), which a
//     comm group of the same step sends straight to the owner i = r - s, while
//     rank r receives the partials of its own chunk from rank r + s. The owner
//     merges each partial into O[r], LSE[r] (merge op) one step later and frees it.
// Q moves on the ring as KV does in ring_schedule.hpp (double-buffered).
// A partial whose block is fully masked is neither computed nor sent.
// Bytes received per rank, c = S/P, every block unmasked:
//   (P-1) * q  +  (P-1) * (o + lse)      with o = b*c*H*d*4, lse = b*c*H*4.
// Window or documents: contiguous chunks, and Q[i] travels h_i hops, to its farthest reader,
// in the direction that needs fewer steps (towards r-1 for these causal-within masks: a
// chunk's readers hold the keys before it); the ring runs 1 + max h_i steps. Rank r then
// receives the Q chunks whose trip passes it and one partial per rank with work on Q[r]:
//   W <= c:  [r <= P-2] * q  +  [r >= 1] * (o + lse).
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

Plan make_pass_q_plan(const AttentionShape& shape, int ranks);

// The offset quotient (class_plan.hpp keep_class_programs): the programs of ranks
// 0..classes-1, peers named as full ranks. Rank r + K runs rank r's program shifted by K (Q to
// r + 1, step s's partial to r - s and from r + s) for every K; the compute costs are equal
// across ranks only under the full mask (symmetric_plan.hpp says why not causal).
// std::invalid_argument for classes not dividing `ranks` or not below it.
Plan make_pass_q_classes_plan(const AttentionShape& shape, int ranks, int classes);

}  // namespace tilesim
