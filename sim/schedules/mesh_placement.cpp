#include "sim/schedules/mesh_placement.hpp"

#include <fmt/format.h>

#include "sim/schedules/schedule.hpp"

namespace tilesim {

std::vector<int> mesh_placement(MeshTile tile, std::string_view name) {
  if (name == "node-major" || name == "q-group-major") return {};
  if (name != "kv-group-major") {
    throw ScheduleError(
        "schedule.placement",
        fmt::format("expected node-major, q-group-major or kv-group-major, got '{}'", name));
  }
  std::vector<int> gpu(static_cast<std::size_t>(tile.ranks()));
  for (int g = 0; g < tile.ranks(); ++g) {
    gpu[static_cast<std::size_t>(g)] = tile.q_pos(g) * tile.b + tile.kv_pos(g);
  }
  return gpu;
}

}  // namespace tilesim
