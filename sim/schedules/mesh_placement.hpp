// Which GPU plays which position of a mesh tile, and how the plan numbers its ranks.
//
// Position g = tr*a + tc (mesh_tile.hpp), GPUs numbered node by node. A mesh plan's rank is
// the GPU that plays it (Plan::placement stays empty), so the placement is a numbering:
//   node-major      GPU g plays position g; ranks are positions.
//   q-group-major   each Q-group's a positions on consecutive GPUs. With the position
//                   numbering above the Q-group of g is tr*a .. tr*a+a-1, already
//                   consecutive, so this is node-major as well: a Q-group lies inside one
//                   node when a divides gpus_per_node.
//   kv-group-major  each KV-group's b positions on consecutive GPUs: position (tr, tc) on
//                   GPU tc*b + tr (the transpose), so the KV ring stays inside a node when b
//                   divides gpus_per_node and the Q and R rings cross nodes instead. Ranks
//                   are numbered column by column (MeshTile::column_rank), chunk g keeping
//                   position g's tokens. The tile's rotation tc -> tc + 1 mod a (every
//                   Q-group's ring turned by one place, every rank's program mapped onto its
//                   image's) then shifts the rank index by b: the shift quotient
//                   (rank_shift_symmetry.hpp) folds these meshes by whole KV-groups, which
//                   are whole nodes, as it folds node-major ones by whole Q-groups.
#pragma once

#include <string_view>
#include <vector>

#include "sim/schedules/mesh_tile.hpp"

namespace tilesim {

inline constexpr const char* kMeshPlacements[] = {"node-major", "q-group-major", "kv-group-major"};

// Whether the placement numbers ranks column by column (kv-group-major). Throws ScheduleError
// at schedule.placement for an unknown name.
bool mesh_ranks_by_column(std::string_view name);

// The GPU (the plan's rank) of every position; empty where it is the position itself.
// Throws as mesh_ranks_by_column.
std::vector<int> mesh_placement(MeshTile tile, std::string_view name);

}  // namespace tilesim
