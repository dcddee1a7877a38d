// Mesh-Attention forward plans: a x b tiles (DESIGN.md "Mesh-Attention").
//
// Chunks: non-causal, P contiguous chunks (chunk i = block i); causal, the
// zigzag layout of 2P blocks, chunk r = blocks {r, 2P-1-r}, so every pair of
// distinct chunks holds the same unmasked work (c^2/2 pairs) and every tile one
// diagonal pair: tiles are balanced. Blocks the mask removes entirely are not
// computed (none under zigzag; kept as a rule for other layouts).
// Tiles and rings: mesh_tile.hpp; the order of the ring steps: mesh_order.hpp
// (greedy unless options.order is given).
//
// What a rank sends and receives (forward, q/kv/o/lse of one chunk as in
// attention_shape.hpp, o = fp32 accumulator):
//   Q ring  a-1 steps x q         (sends its own Q, then forwards what it got)
//   KV ring b-1 steps x kv
//   R ring  a-1 steps x (o + lse) (partial O and LSE of one Q chunk per step)
// so bytes_in = bytes_out = (a-1)*q + (b-1)*kv + (a-1)*(o + lse) per rank.
// a = 1 emits exactly the ring program (make_ring_plan, same ops in the same
// order, KV window 2); b = 1 is pass-Q with the partials reduced on the ring.
//
// Program of a rank, phase by phase (phase k precedes comm group k):
//   before group k: for an R step sending the partial of Q chunk u, every
//     remaining block of u, then the merge of the partial of u received at the
//     previous R step; frees a window needs before this group's recv;
//   group k: one send and one recv (two of each for an R step: O, then LSE);
//   after group k: every block whose inputs arrived in groups < k, in the order
//     the R ring needs them; then frees of chunks that are used up and
//     forwarded, and of partials already sent.
// Hold-back (the compute side of the greedy): with a > 1 the blocks of the
// rank's own Q chunk are needed only at the very end (their partial is never
// sent). min(b-1, a-1) of them (one per R step, never all) are held back and spread evenly
// over the R steps, so the compute stream has work while partials travel; the
// others run as soon as their KV arrives (holding back more starves the
// compute stream during the all-gathers when communication is the bottleneck,
// which the exhaustive comparison in tests/test_mesh_sim.cpp showed).
// Memory per rank is bounded by mesh_peak_bound_bytes (mesh_memory.hpp).
#pragma once

#include <vector>

#include "sim/plan/mesh_order.hpp"
#include "sim/plan/mesh_tile.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/schedule.hpp"

namespace tilesim {

struct MeshOptions {
  MeshTile tile;
  MeshOrder order;  // empty = greedy_mesh_order
  MeshWindows windows;
  bool hold_back = true;
};

// Throws ScheduleError if the tokens do not split into the tile's chunks, the
// pass is not forward, or options.order is not allowed.
Plan make_mesh_plan(const AttentionShape& shape, const MeshOptions& options);

// The closed form above: (a-1)*q + (b-1)*kv + (a-1)*(o + lse), c = S/(a*b).
double mesh_bytes_in_per_rank(const AttentionShape& shape, MeshTile tile);

// The tile with the fewest received bytes per rank (smallest a on ties).
MeshTile fewest_bytes_tile(const AttentionShape& shape, int ranks);

// The dispatcher's entry: tile from the spec (auto = the tile with the fewest
// received bytes), windows from the memory budget, placement from the spec.
Plan make_mesh_plan(const AttentionShape& shape, const ScheduleSpec& spec);

}  // namespace tilesim
