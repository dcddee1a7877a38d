#include "sim/model/occupancy.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <vector>

namespace tilesim {

double OccupancyModel::ctas(int batch, int heads, double tokens) const {
  return static_cast<double>(batch) * heads * std::ceil(tokens / cta_tokens);
}

double OccupancyModel::occupancy(double ctas) const {
  if (!enabled() || ctas <= 0) return 1.0;
  const double slots = static_cast<double>(sms) * ctas_per_sm;
  return ctas / (slots * std::ceil(ctas / slots));
}

double OccupancyModel::scheduled_occupancy(std::span<const double> tile_work, double groups) const {
  if (!enabled() || tile_work.empty() || groups <= 0) return 1.0;
  const auto slots = static_cast<std::size_t>(sms) * static_cast<std::size_t>(ctas_per_sm);
  // Free times of the busy slots (min-heap); idle slots take CTAs first, at time 0.
  std::priority_queue<double, std::vector<double>, std::greater<>> busy;
  double makespan = 0.0;
  double total = 0.0;
  const auto group_count = static_cast<long long>(groups);
  for (long long g = 0; g < group_count; ++g) {
    for (double w : tile_work) {
      double start = 0.0;
      if (busy.size() == slots) {
        start = busy.top();
        busy.pop();
      }
      busy.push(start + w);
      makespan = std::max(makespan, start + w);
      total += w;
    }
  }
  if (makespan <= 0.0) return 1.0;
  return total / (static_cast<double>(slots) * makespan);
}

double OccupancyModel::factor(double ctas) const {
  if (!enabled()) return 1.0;
  return occupancy(ctas) / occupancy(reference_ctas);
}

double OccupancyModel::causal_factor(std::span<const double> tile_work, double groups, bool forward,
                                     double size_tokens) const {
  if (!enabled()) return 1.0;
  // The benchmark's causal launch at this size: n tiles per (batch, head), as many groups as
  // keep reference_ctas CTAs (at least one). Work counted as the calls' is (unmasked pairs, in
  // tile^2 units): forward tile i sees i full key tiles and half of its own (t(t+1)/2 of t^2
  // pairs), grid order small first; backward key tile i is seen by n - 1 - i full query tiles
  // and half of its own, large first.
  const double n = std::max(1.0, std::ceil(size_tokens / cta_tokens));
  const double reference_groups = std::max(1.0, std::floor(reference_ctas / n));
  const double diagonal = (cta_tokens + 1.0) / (2.0 * cta_tokens);
  std::vector<double> reference(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const auto full_tiles = forward ? static_cast<double>(i) : n - 1.0 - static_cast<double>(i);
    reference[i] = full_tiles + diagonal;
  }
  return scheduled_occupancy(tile_work, groups) / scheduled_occupancy(reference, reference_groups);
}

}  // namespace tilesim
