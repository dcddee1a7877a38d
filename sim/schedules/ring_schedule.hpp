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
#include <vector>

#include "sim/plan/plan.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/ring_passes.hpp"

namespace tilesim {

Plan make_ring_plan(const AttentionShape& shape, int ranks);

// The pass-KV ring over any one-chunk-per-rank ownership, named `schedule`.
Plan make_pass_kv_ring_plan(std::string schedule, const AttentionShape& shape, int ranks,
                            ChunkOwnership ownership);

// The forward ring's programs of ranks 0..classes-1 only, a quotient plan for symmetric
// simulation (sim/model/symmetric_simulation.hpp): plan.ranks = classes, the chunks and objects
// of all `ranks` (those homed on ranks beyond `classes` are never live), O(classes x ranks)
// ops. Exact for a mask under which every rank's step costs the same (the full mask).
// first_rank w > 0 (a work-block quotient, rank_shift_symmetry.hpp WorkApproximation): the
// programs are those of ranks w..w+classes-1 of the full plan relabelled r -> r - w (mod P),
// every chunk's owner and object's home with them (relabel_ranks_from), so the quotient's
// representatives do the work of that block where a causal mask gives blocks different work.
Plan make_pass_kv_ring_classes_plan(std::string schedule, const AttentionShape& shape, int ranks,
                                    ChunkOwnership ownership, int classes, int first_rank = 0);

// The full plan relabelled so that rank `first_rank` is rank 0: chunk owners and object homes
// move to (r - first_rank) mod P. Call before any program is built; 0 changes nothing.
void relabel_ranks_from(Plan& plan, int first_rank);

// The ring's members over the plan's one chunk per rank: member i is rank i with the query and
// key items of the chunk it owns (after relabel_ranks_from, chunk (first_rank + i) mod P).
std::vector<RingMember> ring_members(const Plan& plan, const AttentionObjects& objs, bool bwd);

}  // namespace tilesim
