#include "sim/network/max_min_fair.hpp"

#include <algorithm>
#include <limits>

namespace tilesim {

void FairShareProblem::add_flow(std::span<const int> links, double cap_bytes_per_s) {
  route_links.insert(route_links.end(), links.begin(), links.end());
  route_offsets.push_back(route_links.size());
  rate_cap_bytes_per_s.push_back(cap_bytes_per_s);
}

std::span<const int> FairShareProblem::route(std::size_t flow) const {
  return std::span<const int>(route_links)
      .subspan(route_offsets[flow], route_offsets[flow + 1] - route_offsets[flow]);
}

void FairShareProblem::clear() {
  route_links.clear();
  route_offsets.assign(1, 0);
  rate_cap_bytes_per_s.clear();
}

void MaxMinFairSolver::index_links(std::size_t link_count, const FairShareProblem& problem) {
  if (local_of_link_.size() < link_count) local_of_link_.resize(link_count, -1);
  link_ids_.clear();
  for (int link : problem.route_links) {
    if (local_of_link_[link] < 0) {
      local_of_link_[link] = static_cast<int>(link_ids_.size());
      link_ids_.push_back(link);
    }
  }
  const std::size_t m = link_ids_.size();
  remaining_bytes_per_s_.resize(m);
  unfrozen_.assign(m, 0);
  version_.assign(m, 0);
  is_touched_.assign(m, 0);
  member_offsets_.assign(m + 1, 0);
  for (std::size_t j = 0; j < problem.route_links.size(); ++j) {
    const int local = local_of_link_[problem.route_links[j]];
    ++unfrozen_[local];
    ++member_offsets_[static_cast<std::size_t>(local) + 1];
  }
  for (std::size_t k = 0; k < m; ++k) member_offsets_[k + 1] += member_offsets_[k];
  fill_.assign(member_offsets_.begin(), member_offsets_.end() - 1);
  members_.resize(problem.route_links.size());
  // Filling in flow order keeps every link's member list in flow order.
  for (std::size_t f = 0; f < problem.flow_count(); ++f) {
    for (int link : problem.route(f)) members_[fill_[local_of_link_[link]]++] = f;
  }
}

// Adds the link's current share; with keep_heap false the caller heapifies later.
void MaxMinFairSolver::push_link(int local, bool keep_heap) {
  const double share = remaining_bytes_per_s_[local] / static_cast<double>(unfrozen_[local]);
  heap_.push_back({std::max(share, 0.0), link_ids_[local], ++version_[local]});
  if (keep_heap) std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void MaxMinFairSolver::freeze(const FairShareProblem& problem, std::size_t flow,
                              double rate_bytes_per_s, std::vector<double>& rates_bytes_per_s) {
  frozen_[flow] = 1;
  rates_bytes_per_s[flow] = rate_bytes_per_s;
  for (std::size_t j = problem.route_offsets[flow]; j < problem.route_offsets[flow + 1]; ++j) {
    const int local = local_of_link_[problem.route_links[j]];
    remaining_bytes_per_s_[local] -= rate_bytes_per_s;
    --unfrozen_[local];
    if (!is_touched_[local]) {
      is_touched_[local] = 1;
      touched_.push_back(local);
    }
  }
}

// Re-keys, once per pop, every link whose share changed.
void MaxMinFairSolver::rekey_touched(int skip_local) {
  for (int local : touched_) {
    is_touched_[local] = 0;
    if (local != skip_local && unfrozen_[local] > 0) push_link(local, true);
  }
  touched_.clear();
}

void MaxMinFairSolver::solve(std::span<const double> link_capacity_bytes_per_s,
                             const FairShareProblem& problem,
                             std::vector<double>& rates_bytes_per_s) {
  const std::size_t n = problem.flow_count();
  const auto link_count = static_cast<std::int64_t>(link_capacity_bytes_per_s.size());
  rates_bytes_per_s.assign(n, std::numeric_limits<double>::infinity());
  frozen_.assign(n, 0);
  index_links(link_capacity_bytes_per_s.size(), problem);

  heap_.clear();
  for (std::size_t k = 0; k < link_ids_.size(); ++k) {
    remaining_bytes_per_s_[k] = link_capacity_bytes_per_s[link_ids_[k]];
    push_link(static_cast<int>(k), false);
  }
  for (std::size_t f = 0; f < n; ++f) {
    const double cap = problem.rate_cap_bytes_per_s[f];
    if (cap > 0.0) heap_.push_back({cap, link_count + static_cast<std::int64_t>(f), 0});
  }
  std::make_heap(heap_.begin(), heap_.end(), Later{});

  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const HeapEntry top = heap_.back();
    heap_.pop_back();
    if (top.tag >= link_count) {
      const auto flow = static_cast<std::size_t>(top.tag - link_count);
      if (frozen_[flow]) continue;
      freeze(problem, flow, top.share_bytes_per_s, rates_bytes_per_s);
      rekey_touched(-1);
      continue;
    }
    const int local = local_of_link_[top.tag];
    if (top.version != version_[local] || unfrozen_[local] == 0) continue;
    for (std::size_t i = member_offsets_[local]; i < member_offsets_[local + 1]; ++i) {
      if (!frozen_[members_[i]]) {
        freeze(problem, members_[i], top.share_bytes_per_s, rates_bytes_per_s);
      }
    }
    rekey_touched(local);
  }

  for (int link : link_ids_) local_of_link_[link] = -1;
}

std::vector<double> max_min_fair_rates(std::span<const double> link_capacity_bytes_per_s,
                                       const FairShareProblem& problem) {
  MaxMinFairSolver solver;
  std::vector<double> rates;
  solver.solve(link_capacity_bytes_per_s, problem, rates);
  return rates;
}

}  // namespace tilesim
