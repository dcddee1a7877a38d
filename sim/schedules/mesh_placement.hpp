// Which GPU plays which logical rank of a mesh tile (Plan::placement).
//
// Rank g = tr*a + tc (mesh_tile.hpp), GPUs numbered node by node.
//   node-major      GPU g = rank g (identity).
//   q-group-major   each Q-group's a ranks on consecutive GPUs. With the rank
//                   numbering above the Q-group of g is ranks tr*a .. tr*a+a-1,
//                   already consecutive, so this is the identity as well: a
//                   Q-group lies inside one node when a divides gpus_per_node.
//   kv-group-major  each KV-group's b ranks on consecutive GPUs:
//                   GPU(g) = tc*b + tr (the transpose), so the KV ring stays
//                   inside a node when b divides gpus_per_node and the Q and
//                   R rings cross nodes instead.
// Identity placements are returned empty (the simulator's default).
#pragma once

#include <string_view>
#include <vector>

#include "sim/schedules/mesh_tile.hpp"

namespace tilesim {

inline constexpr const char* kMeshPlacements[] = {"node-major", "q-group-major", "kv-group-major"};

// Throws ScheduleError at schedule.placement for an unknown name.
std::vector<int> mesh_placement(MeshTile tile, std::string_view name);

}  // namespace tilesim
