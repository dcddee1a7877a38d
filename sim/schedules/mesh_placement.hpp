// Which GPU plays which position of a mesh tile, and how the plan numbers its ranks.
//
// Position g = tr*a + tc (mesh_tile.hpp), GPUs numbered node by node:
//   node-major      GPU g plays position g.
//   q-group-major   each Q-group's a positions on consecutive GPUs. With the position
//                   numbering above the Q-group of g is tr*a .. tr*a+a-1, already
//                   consecutive, so this is node-major as well: a Q-group lies inside one
//                   node when a divides gpus_per_node.
//   kv-group-major  each KV-group's b positions on consecutive GPUs: position (tr, tc) on
//                   GPU tc*b + tr (the transpose), so the KV ring stays inside a node when b
//                   divides gpus_per_node and the Q and R rings cross nodes instead.
// The numbering. The tile's programs map onto each other under two shifts: tr + 1 (whole
// Q-groups, a ranks apart by position) and tc + 1 mod a (every Q-group's ring turned by one
// place, the KV chunks relabelled alike). The shift quotient (rank_shift_symmetry.hpp) folds by
// a shift of the rank index, so the plan numbers its ranks by position (rank g, shift a) or
// column by column (rank tc*b + tr, MeshTile::column_rank, shift b), chunk g keeping position
// g's tokens either way, and Plan::placement maps each rank to its GPU. Either numbering runs
// the same programs on the same GPUs; the plan takes the one whose quotient can be smaller on
// nodes of n GPUs, the other's where they tie:
//   - ranks in GPU order (node-major by position, kv-group-major by column), groups of s
//     consecutive GPUs (s = a, or b): K = max(2s, lcm(s, n)) (K >= 2s, or the peer s ranks on
//     folds onto the representative; whole nodes);
//   - the other numbering, shift t (the other side): a shift by t ranks moves every GPU one
//     place inside its group, and K = max(2, n) t is whole nodes only when n divides s.
// So node-major numbers by column when n | a and max(2, n) b < max(2a, lcm(a, n)) (256 x 16 on
// 8-GPU nodes: 128 < 512), kv-group-major by position when n | b and max(2, n) a <
// max(2b, lcm(b, n)) (32 x 512: 256 < 1024). The rule only picks the numbering; the quotient
// itself is the shift search's.
#pragma once

#include <string_view>
#include <vector>

#include "sim/schedules/mesh_tile.hpp"

namespace tilesim {

inline constexpr const char* kMeshPlacements[] = {"node-major", "q-group-major", "kv-group-major"};

// The GPU of every position; empty where it is the position itself. Throws ScheduleError at
// schedule.placement for an unknown name.
std::vector<int> mesh_placement(MeshTile tile, std::string_view name);

// Whether the plan numbers the tile's ranks by column (the rule above). Throws as
// mesh_placement.
bool mesh_ranks_by_column(MeshTile tile, std::string_view placement, int gpus_per_node);

// How a mesh plan numbers its ranks (the rule above) and where each runs.
struct MeshNumbering {
  bool by_column = false;      // rank of position g: tile.column_rank(g), else g
  std::vector<int> placement;  // rank -> GPU (Plan::placement); empty where rank = GPU
  int rank_of(MeshTile tile, int position) const {
    return by_column ? tile.column_rank(position) : position;
  }
};

// Throws as mesh_placement.
MeshNumbering mesh_numbering(MeshTile tile, std::string_view placement, int gpus_per_node);

}  // namespace tilesim
