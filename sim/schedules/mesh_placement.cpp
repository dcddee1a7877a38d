#include "sim/schedules/mesh_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "sim/schedules/schedule.hpp"

namespace tilesim {
namespace {

bool kv_group_major(std::string_view name) {
  if (name == "node-major" || name == "q-group-major") return false;
  if (name != "kv-group-major") {
    throw ScheduleError(
        "schedule.placement",
        fmt::format("expected node-major, q-group-major or kv-group-major, got '{}'", name));
  }
  return true;
}

// The smallest quotient the header's rule gives each numbering: groups of `s` consecutive GPUs,
// `t` groups, nodes of n GPUs; in long long, where 2s, lcm(s, n) and n t cannot overflow.
long long in_gpu_order(long long s, long long n) { return std::max(2 * s, std::lcm(s, n)); }
long long across_groups(long long s, long long t, long long n) {
  return s % n == 0 ? std::max(2LL, n) * t : std::numeric_limits<long long>::max();
}

}  // namespace

std::vector<int> mesh_placement(MeshTile tile, std::string_view name) {
  if (!kv_group_major(name)) return {};
  std::vector<int> gpu(static_cast<std::size_t>(tile.ranks()));
  for (int g = 0; g < tile.ranks(); ++g) gpu[static_cast<std::size_t>(g)] = tile.column_rank(g);
  return gpu;
}

bool mesh_ranks_by_column(MeshTile tile, std::string_view placement, int gpus_per_node) {
  const bool kv = kv_group_major(placement);
  const long long n = std::max(1, gpus_per_node);
  const long long s = kv ? tile.b : tile.a, t = kv ? tile.a : tile.b;
  const bool other = across_groups(s, t, n) < in_gpu_order(s, n);
  return kv != other;
}

MeshNumbering mesh_numbering(MeshTile tile, std::string_view placement, int gpus_per_node) {
  MeshNumbering numbering;
  numbering.by_column = mesh_ranks_by_column(tile, placement, gpus_per_node);
  const std::vector<int> gpu_of_position = mesh_placement(tile, placement);
  // Ranks in GPU order: by position with GPU = position, by column with GPU = column rank.
  if (numbering.by_column != gpu_of_position.empty()) return numbering;
  numbering.placement.resize(static_cast<std::size_t>(tile.ranks()));
  for (int g = 0; g < tile.ranks(); ++g) {
    numbering.placement[static_cast<std::size_t>(numbering.rank_of(tile, g))] =
        gpu_of_position.empty() ? g : gpu_of_position[static_cast<std::size_t>(g)];
  }
  return numbering;
}

}  // namespace tilesim
