#include "sim/schedules/mesh_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "sim/schedules/schedule.hpp"

namespace tilesim {
namespace {

int cached(int ring_chunks, int window) {
  return window == 0 ? ring_chunks : std::min(ring_chunks, window);
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

double mesh_peak_bound_bytes(const AttentionShape& shape, MeshTile tile, MeshWindows windows) {
  const std::int64_t c = shape.seq_len / tile.ranks();
  const double q = shape.q_bytes(c);
  const double kv = shape.kv_bytes(c);
  const double out = shape.o_accumulator_bytes(c) + shape.lse_bytes(c);
  double bytes = q + kv + out;
  bytes += cached(tile.a - 1, windows.q) * q + cached(tile.b - 1, windows.kv) * kv;
  if (tile.a > 1) bytes += (tile.a + 1) * out;
  return bytes;
}

MeshWindows default_mesh_windows(MeshTile tile) {
  MeshWindows w;
  if (tile.a == 1 && tile.b > 1) w.kv = 2;
  if (tile.b == 1 && tile.a > 1) w.q = 2;
  return w;
}

MeshWindows mesh_windows_for_budget(const AttentionShape& shape, MeshTile tile,
                                    double budget_bytes) {
  std::vector<MeshWindows> choices = {default_mesh_windows(tile)};
  const MeshWindows stream_kv{choices[0].q, 2};
  const MeshWindows stream_q{2, choices[0].kv};
  const double save_kv = mesh_peak_bound_bytes(shape, tile, choices[0]) -
                         mesh_peak_bound_bytes(shape, tile, stream_kv);
  const double save_q =
      mesh_peak_bound_bytes(shape, tile, choices[0]) - mesh_peak_bound_bytes(shape, tile, stream_q);
  // Smaller saving first: the first choice that fits keeps the most cached.
  if (save_kv <= save_q) {
    choices.push_back(stream_kv);
    choices.push_back(stream_q);
  } else {
    choices.push_back(stream_q);
    choices.push_back(stream_kv);
  }
  if (budget_bytes <= 0) return choices[0];
  double smallest = mesh_peak_bound_bytes(shape, tile, choices[0]);
  for (const MeshWindows& w : choices) {
    if (w.q != 0 && w.kv != 0 && w.q < tile.a - 1 && w.kv < tile.b - 1) continue;
    const double need = mesh_peak_bound_bytes(shape, tile, w);
    smallest = std::min(smallest, need);
    if (need <= budget_bytes) return w;
  }
  throw ScheduleError(
      "schedule.memory_budget",
      fmt::format("mesh {}x{} may hold up to {} per rank even with its least caching (the "
                  "peak bound of its buffers; the simulated peak can be lower), which exceeds "
                  "the memory budget of {} by {}",
                  tile.a, tile.b, gib(smallest), gib(budget_bytes), gib(smallest - budget_bytes)));
}

}  // namespace tilesim
