#include "sim/model/occupancy.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

namespace tilesim {

double OccupancyModel::lone_share() const {
  return lone_cta_throughput > 0.0 ? lone_cta_throughput : 1.0 / ctas_per_sm;
}

double OccupancyModel::sm_throughput(int resident) const {
  return std::min(1.0, resident * lone_share());
}

double OccupancyModel::ctas(int batch, int heads, double tokens) const {
  return static_cast<double>(batch) * heads * std::ceil(tokens / cta_tokens);
}

double OccupancyModel::occupancy(double ctas) const {
  if (!enabled() || ctas <= 0) return 1.0;
  // Full waves take ctas_per_sm work units each (every SM at throughput 1); the r CTAs left
  // are dealt to the SMs least loaded first, so the busiest SM holds k = ceil(r / sms) and
  // finishes its k units at throughput s(k).
  const double slots = static_cast<double>(sms) * ctas_per_sm;
  const double full_waves = std::floor(ctas / slots);
  const double rest = ctas - full_waves * slots;
  double makespan = full_waves * ctas_per_sm;
  if (rest > 0) {
    const int k = static_cast<int>(std::ceil(rest / sms));
    makespan += k / sm_throughput(k);
  }
  return ctas / (sms * makespan);
}

double OccupancyModel::scheduled_occupancy(std::span<const double> tile_work, double groups) const {
  if (!enabled() || tile_work.empty() || groups <= 0) return 1.0;
  const auto group_count = static_cast<long long>(groups);
  const long long total_ctas = group_count * static_cast<long long>(tile_work.size());
  long long next = 0;  // the next CTA in grid order: tile tile_work[next % size], any group
  const auto work_of = [&](long long cta) {
    return tile_work[static_cast<std::size_t>(cta % static_cast<long long>(tile_work.size()))];
  };
  double total = 0.0;
  double largest = 0.0;
  for (double w : tile_work) {
    total += w;
    largest = std::max(largest, w);
  }
  total *= static_cast<double>(group_count);
  if (largest <= 0.0) return 1.0;
  const double done_tolerance = 1e-12 * largest;
  const double tie_tolerance = 1e-12 * largest * ctas_per_sm;

  // Per SM: the work left of each resident CTA, as of `since`; the SM runs them at s(k)/k each.
  struct Sm {
    std::vector<double> left;
    double since = 0.0;
    long long version = 0;
  };
  std::vector<Sm> sm(static_cast<std::size_t>(sms));
  using Event = std::tuple<double, int, long long>;  // (finish time, SM, version)
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  const auto per_cta_rate = [&](const Sm& s) {
    const int k = static_cast<int>(s.left.size());
    return sm_throughput(k) / k;
  };
  const auto schedule = [&](int j) {
    Sm& s = sm[static_cast<std::size_t>(j)];
    ++s.version;
    if (s.left.empty()) return;
    const double first = *std::min_element(s.left.begin(), s.left.end());
    events.emplace(s.since + first / per_cta_rate(s), j, s.version);
  };
  // Deal CTAs to the SMs in `freed`, those with fewest residents first (one per SM per round,
  // in SM order, as the block scheduler spreads a launch over the SMs), until every freed SM
  // is full or the grid is exhausted.
  std::vector<int> freed;
  for (int j = 0; j < sms; ++j) freed.push_back(j);
  const auto deal_all = [&]() {
    for (int level = 0; level < ctas_per_sm && next < total_ctas; ++level) {
      for (int j : freed) {
        Sm& s = sm[static_cast<std::size_t>(j)];
        if (static_cast<int>(s.left.size()) <= level && next < total_ctas) {
          s.left.push_back(work_of(next++));
        }
      }
    }
    for (int j : freed) schedule(j);
  };
  deal_all();

  double now = 0.0;
  while (!events.empty()) {
    now = std::get<0>(events.top());
    freed.clear();
    // Every SM with a completion at this instant frees its slots before any is refilled.
    while (!events.empty() && std::get<0>(events.top()) <= now + tie_tolerance) {
      const auto [t, j, version] = events.top();
      events.pop();
      Sm& s = sm[static_cast<std::size_t>(j)];
      if (version != s.version) continue;
      const double ran = (t - s.since) * per_cta_rate(s);
      for (double& w : s.left) w -= ran;
      std::erase_if(s.left, [&](double w) { return w <= done_tolerance; });
      s.since = t;
      freed.push_back(j);
    }
    deal_all();
  }
  return total / (static_cast<double>(sms) * now);
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
