#include "sim/job/link_loads.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace tilesim {
namespace {

struct Use {
  int link;
  int group;
  Picoseconds begin_ps;
  Picoseconds end_ps;
};

double busy_ps_of(std::vector<std::pair<Picoseconds, Picoseconds>>& spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0.0;
  Picoseconds open = 0;
  Picoseconds close = -1;
  for (const auto& [b, e] : spans) {
    if (b > close) {
      if (close >= open) total += static_cast<double>(close - open);
      open = b;
      close = e;
    } else {
      close = std::max(close, e);
    }
  }
  if (close >= open) total += static_cast<double>(close - open);
  return total;
}

}  // namespace

LinkLoads most_loaded_links(const Plan& plan, const SimulationResult& result,
                            const Topology& topology, const CalibrationProfile& profile,
                            int ranks_per_group, std::size_t top) {
  auto gpu = [&](int rank) {
    return plan.placement.empty() ? rank : plan.placement[static_cast<std::size_t>(rank)];
  };
  Router router(topology);
  std::vector<double> bytes(static_cast<std::size_t>(topology.link_count()), 0.0);
  std::vector<Use> uses;
  for (const TransferRecord& t : result.transfers) {
    const int group = t.send.rank / std::max(ranks_per_group, 1);
    for (LinkId l : router.route(gpu(t.send.rank), gpu(t.recv.rank)).links) {
      bytes[static_cast<std::size_t>(l)] += t.bytes;
      uses.push_back({l, group, t.posted_ps, t.end_ps});
    }
  }
  std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) { return a.link < b.link; });
  const double makespan_s = static_cast<double>(result.makespan_ps) * 1e-12;
  std::vector<LinkLoad> loads;
  std::vector<std::pair<Picoseconds, Picoseconds>> spans;
  std::vector<int> groups;
  for (std::size_t i = 0; i < uses.size();) {
    const int l = uses[i].link;
    spans.clear();
    groups.clear();
    for (; i < uses.size() && uses[i].link == l; ++i) {
      spans.emplace_back(uses[i].begin_ps, uses[i].end_ps);
      groups.push_back(uses[i].group);
    }
    std::sort(groups.begin(), groups.end());
    LinkLoad load;
    load.link = l;
    const Link& link = topology.link(l);
    load.name = fmt::format("{} -> {}", topology.device(topology.link_source(l)).name,
                            topology.device(topology.link_target(l)).name);
    load.bytes = bytes[static_cast<std::size_t>(l)];
    load.capacity_bytes_per_s = link.bandwidth_bytes_per_s * profile.link(link.cls).efficiency;
    load.busy_s = busy_ps_of(spans) * 1e-12;
    load.busy_fraction = makespan_s > 0 ? load.busy_s / makespan_s : 0.0;
    load.utilisation = makespan_s > 0 ? load.bytes / (load.capacity_bytes_per_s * makespan_s) : 0.0;
    load.rate_while_busy_bytes_per_s = load.busy_s > 0 ? load.bytes / load.busy_s : 0.0;
    load.groups = static_cast<int>(std::unique(groups.begin(), groups.end()) - groups.begin());
    loads.push_back(std::move(load));
  }
  std::stable_sort(loads.begin(), loads.end(), [](const LinkLoad& a, const LinkLoad& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.groups != b.groups) return a.groups > b.groups;
    return a.link < b.link;
  });
  LinkLoads out;
  out.links_used = static_cast<int>(loads.size());
  for (const LinkLoad& l : loads) {
    out.links_shared += l.groups > 1 ? 1 : 0;
    out.max_groups = std::max(out.max_groups, l.groups);
  }
  if (loads.size() > top) loads.resize(top);
  out.top = std::move(loads);
  return out;
}

}  // namespace tilesim
