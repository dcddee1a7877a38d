// Ring attention, pass-KV, double-buffered, forward and backward.
//
// Rank r owns token chunk r (Q, KV, dO and the final O, LSE, dQ, dKV). The
// ring of ring_passes.hpp runs over ranks 0..P-1 with one query and one key
// chunk per rank: in step s rank r computes Q[r] x KV[(r - s) mod P] while it
// passes that KV on to rank r+1. Pass `both` runs the forward ring, then the
// backward ring (which circulates KV again, with the dKV accumulators).
// Causal (plain ring, unbalanced): blocks with kv chunk > q chunk are skipped,
// the diagonal block is causal; the KV still travels the whole ring, and rank
// r computes r full blocks + 1 diagonal (max/mean work -> 2 as P grows).
// Bytes received per rank, c = S/P:
//   forward  (P-1) * kv
//   backward (P-1) * kv + P * dkv     (dkv = 2*b*c*Hkv*d*4, fp32; 0 when P = 1)
// Zigzag and striped (zigzag_schedule.hpp, striped_schedule.hpp) are the same
// ring over balanced chunk ownerships, with the same bytes.
#pragma once

#include <string>

#include "sim/plan/plan.hpp"
#include "sim/schedules/chunk_layouts.hpp"

namespace tilesim {

Plan make_ring_plan(const AttentionShape& shape, int ranks);

// The pass-KV ring over any one-chunk-per-rank ownership, named `schedule`.
Plan make_pass_kv_ring_plan(std::string schedule, const AttentionShape& shape, int ranks,
                            ChunkOwnership ownership);

// The forward ring's programs of ranks 0..classes-1 only, a quotient plan for symmetric
// simulation (sim/model/symmetric_simulation.hpp): plan.ranks = classes, the chunks and objects
// of all `ranks` (those homed on ranks beyond `classes` are never live), O(classes x ranks)
// ops. Only for a mask under which every rank's step costs the same (the full mask).
Plan make_pass_kv_ring_classes_plan(std::string schedule, const AttentionShape& shape, int ranks,
                                    ChunkOwnership ownership, int classes);

}  // namespace tilesim
