// Mesh-Attention plans, forward and backward: a x b tiles (docs/schedules.md
// "Mesh-Attention").
//
// Chunks: non-causal, P contiguous chunks (chunk i = block i); causal, the
// zigzag layout of 2P blocks, chunk r = blocks {r, 2P-1-r}, so every pair of
// distinct chunks holds the same unmasked work (c^2/2 pairs) and every tile one
// diagonal pair: tiles are balanced. Blocks the mask removes entirely are not
// computed (none under a causal zigzag; a window or documents may leave many), and then
// each chunk goes straight to the ranks that read it and each partial straight home, in
// shift steps +1, -1, +2, ... instead of the rings (mesh_relay.hpp, direct): the closed
// forms below are the full-work case, an upper bound.
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
//
// Backward (`pass: backward`, and after the forward with `both`), the original design
// "dQ reduced in Q-groups and dK/dV in KV-groups": a block's backward reads
// Q, dO, the final O and LSE of its q chunk (D = rowsum(dO*O) is derived by
// the kernel) and KV, and adds into dQ of the q chunk and dKV of the kv chunk.
// A rank's program, with m = max(a, b) - 1:
//   gather, m comm groups: group s holds Q ring step s (s < a-1: sends the Q,
//     dO, O, LSE of Q position p-s to the next Q-group member, receives those
//     of p-1-s) and KV ring step s (s < b-1: KV of t-s out, t-1-s in); the
//     own block first, then after each group every block whose inputs are in
//     (partial dQ of Q position u and partial dKV of KV position v are
//     separate fp32 objects dQ[i]@g, dKV[j]@g; the own chunk's go straight
//     into dQ[g], dKV[g]); a received chunk is freed after the group that
//     forwards it once all its blocks are emitted (with a < b, KV streams
//     once every Q side is in, and vice versa), the rest after the gather;
//   reduce, m comm groups: group s holds dQ ring step s (s < a-1: sends the
//     partial dQ of Q position p-1-s, receives that of p-2-s) and dKV ring
//     step s (s < b-1, positions t-1-s and t-2-s on the KV-group ring); before
//     step s > 0 the partial received at step s-1 is merged (elementwise sum)
//     into the own partial it is forwarded with; after the last step the
//     received sums are merged into dQ[g] and dKV[g].
// Bytes received (= sent) per rank, backward, fp32 accumulators (o-sized dQ):
//   (a-1)*(q + do + o + dq + lse)   Q-group: Q, dO, O, LSE in; partial dQ reduced
// + (b-1)*(kv + dkv)        KV-group: KV in; partial dKV reduced
// and with `both` forward + backward (the backward gathers Q and KV again:
// the forward frees what it gathered). The backward holds up to every gathered
// chunk of its tile (a Q sides, b KV chunks), its a-1 + b-1 local partials
// and up to two received ones; memory windows and budgets apply to the forward.
// a = 1 is a KV all-gather with dKV reduced on a (P-1)-step ring, not the
// ring backward program.
#pragma once

#include <optional>
#include <vector>

#include "sim/plan/plan.hpp"
#include "sim/schedules/mesh_fold.hpp"
#include "sim/schedules/mesh_order.hpp"
#include "sim/schedules/mesh_tile.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

struct MeshOptions {
  MeshTile tile;
  MeshOrder order;  // empty = greedy_mesh_order
  MeshWindows windows;
  bool hold_back = true;
  // Blocks that become ready together run as one fused compute op
  // (fusing_builder.hpp); false emits one op per block pair.
  bool fuse_blocks = true;
  // Ranks numbered column by column (mesh_placement.hpp's rule): the program of position g is
  // rank column_rank(g)'s. Else rank = position.
  bool ranks_by_column = false;
  // Ranks numbered by the fold's rho (mesh_fold.hpp), for make_mesh_fold_plan's quotient only;
  // ranks_by_column is then unused.
  std::optional<MeshFold> fold;
};

// Throws ScheduleError if the tokens do not split into the tile's chunks or
// options.order is not allowed.
Plan make_mesh_plan(const AttentionShape& shape, const MeshOptions& options);

// The programs (forward, backward or both) of ranks 0..classes-1 only, a quotient plan for
// symmetric simulation (sim/model/symmetric_simulation.hpp): classes a multiple of the shift
// the programs are equivariant under, dividing a*b: a, whole Q-groups (tr + 1 maps every
// rank's program onto the shifted rank's), or b where ranks are numbered by column, whole
// KV-groups (tc + 1 mod a: every Q-group's ring turned by one place, the KV chunks relabelled
// alike, so a rank's program maps onto its image's with the chunks' labels permuted; the
// backward's Q and KV rings have the forward's peers). plan.ranks = classes, each send and
// recv naming its full peer mod classes (class_plan.hpp), the chunks of all a*b ranks (those
// homed beyond `classes` never live), the forward partials of the representatives and the
// backward partials of the representatives and their ring predecessors. The programs are the
// full plan's; std::invalid_argument for classes not allowed. first_rank w > 0 (a multiple of
// the same shift; a work-block quotient of the causal mask): the programs are those of ranks
// w..w+classes-1 of the full plan relabelled r -> r - w (by Q-groups, chunk r holds chunk
// r + w's tokens: rotate_chunk_contents; by column, chunk (tr, tc) holds chunk
// (tr, tc + w / b mod a)'s, which maps every rank's Q and KV chunk sets onto its image's).
Plan make_mesh_classes_plan(const AttentionShape& shape, const MeshOptions& options, int classes,
                            int first_rank = 0);

// The quotient of the fold (mesh_fold.hpp) for a given tile, full mask: ranks 0..K-1 of rho's
// numbering (positions tr < x, tc < y), each send and recv naming its full peer's rho mod K
// (class_plan.hpp), the chunks of all a*b positions, the forward partials of the
// representatives and the backward partials of the representatives and their ring
// predecessors, as make_mesh_classes_plan. The programs are the full plan's, renumbered.
Plan make_mesh_fold_plan(const AttentionShape& shape, const ScheduleSpec& spec, MeshFold fold);

// The closed forms above, c = S/(a*b): forward (a-1)*q + (b-1)*kv + (a-1)*(o + lse),
// backward (a-1)*(2q + 2o + lse) + (b-1)*(kv + dkv); mesh_bytes_in_per_rank sums the
// passes of shape.pass.
double mesh_forward_bytes_in_per_rank(const AttentionShape& shape, MeshTile tile);
double mesh_backward_bytes_in_per_rank(const AttentionShape& shape, MeshTile tile);
double mesh_bytes_in_per_rank(const AttentionShape& shape, MeshTile tile);

// The tile with the fewest received bytes per rank over shape.pass (smallest a on ties): the
// closed forms above, or under a window or documents the busiest rank's bytes as the direct
// sends of mesh_relay.hpp move them.
MeshTile fewest_bytes_tile(const AttentionShape& shape, int ranks);

// The dispatcher's entry: tile from the spec (auto = the tile with the fewest
// received bytes), windows from the memory budget, the ranks numbered and placed as
// mesh_numbering says for the spec's placement (mesh_placement.hpp).
Plan make_mesh_plan(const AttentionShape& shape, const ScheduleSpec& spec);
// Its quotient (make_mesh_classes_plan) for a given tile, numbered likewise (the symmetry holds
// the placement).
Plan make_mesh_classes_plan(const AttentionShape& shape, const ScheduleSpec& spec, int classes,
                            int first_rank = 0);

}  // namespace tilesim
