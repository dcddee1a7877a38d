#include "sim/schedules/mesh_placement.hpp"

#include <fmt/format.h>

#include "sim/schedules/schedule.hpp"

namespace tilesim {

bool mesh_ranks_by_column(std::string_view name) {
  if (name == "node-major" || name == "q-group-major") return false;
  if (name != "kv-group-major") {
    throw ScheduleError(
        "schedule.placement",
        fmt::format("expected node-major, q-group-major or kv-group-major, got '{}'", name));
  }
  return true;
}

std::vector<int> mesh_placement(MeshTile tile, std::string_view name) {
  if (!mesh_ranks_by_column(name)) return {};
  std::vector<int> gpu(static_cast<std::size_t>(tile.ranks()));
  for (int g = 0; g < tile.ranks(); ++g) gpu[static_cast<std::size_t>(g)] = tile.column_rank(g);
  return gpu;
}

}  // namespace tilesim
