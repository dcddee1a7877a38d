#include "sim/job/link_loads.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace tilesim {
namespace {

// One transfer's use of one link: `link` is the link whose figures it adds to (its orbit's
// representative under a symmetry), `hop` the link it crosses, `copies` how many of the full
// run's transfers it stands for on `link` (1 without a symmetry).
struct Use {
  int link;
  int group;
  int hop;
  double copies;
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
                            int ranks_per_group, std::size_t top,
                            const RankShiftSymmetry* symmetry) {
  auto gpu = [&](int rank) {
    if (symmetry != nullptr) return symmetry->full_placement[static_cast<std::size_t>(rank)];
    return plan.placement.empty() ? rank : plan.placement[static_cast<std::size_t>(rank)];
  };
  auto destination_gpu = [&](const TransferRecord& t) {
    if (symmetry == nullptr) return gpu(t.recv.rank);
    return symmetry->full_placement[static_cast<std::size_t>(
        symmetry->full_destination(t.send.rank, t.recv.rank))];
  };
  Router router(topology);
  std::vector<double> bytes(static_cast<std::size_t>(topology.link_count()), 0.0);
  std::vector<Use> uses;
  for (const TransferRecord& t : result.transfers) {
    const int group = t.send.rank / std::max(ranks_per_group, 1);
    for (LinkId l : router.route(gpu(t.send.rank), destination_gpu(t)).links) {
      const auto at = static_cast<std::size_t>(l);
      // The copies of this transfer on the orbit representative c of its hop's link: each of
      // the N / K images of the transfer crosses the image of that link, and |orbit| links
      // share them (rank_shift_symmetry.hpp's multiplicity, one hop at a time).
      const int link = symmetry != nullptr ? symmetry->link_canonical[at] : l;
      const double copies =
          symmetry != nullptr
              ? static_cast<double>(symmetry->copies() / symmetry->link_orbit_size[at])
              : 1.0;
      // Equal to the every-group run's sum of `copies` additions bit for bit while transfer
      // sizes are whole bytes (every dtype is) and the sums stay below 2^53 (9 PB a link).
      bytes[static_cast<std::size_t>(link)] += t.bytes * copies;
      uses.push_back({link, group, l, copies, t.posted_ps, t.end_ps});
    }
  }
  std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) {
    if (a.link != b.link) return a.link < b.link;
    if (a.group != b.group) return a.group < b.group;
    return a.hop < b.hop;
  });
  const double makespan_s = static_cast<double>(result.makespan_ps) * 1e-12;
  std::vector<LinkLoad> loads;
  std::vector<std::pair<Picoseconds, Picoseconds>> spans;
  for (std::size_t i = 0; i < uses.size();) {
    const int l = uses[i].link;
    spans.clear();
    // Distinct groups on l: each (representative group, hop link) pair stands for `copies`
    // distinct groups of the full run (two hop links of one orbit reach l under different
    // shifts, so their groups differ).
    double groups = 0.0;
    for (std::size_t first = i; i < uses.size() && uses[i].link == l; ++i) {
      spans.emplace_back(uses[i].begin_ps, uses[i].end_ps);
      const bool repeat =
          i > first && uses[i].group == uses[i - 1].group && uses[i].hop == uses[i - 1].hop;
      if (!repeat) groups += uses[i].copies;
    }
    LinkLoad load;
    load.link = l;
    const Link& link = topology.link(l);
    load.bytes = bytes[static_cast<std::size_t>(l)];
    load.capacity_bytes_per_s = link.bandwidth_bytes_per_s * profile.link(link.cls).efficiency;
    load.busy_s = busy_ps_of(spans) * 1e-12;
    load.busy_fraction = makespan_s > 0 ? load.busy_s / makespan_s : 0.0;
    load.utilisation = makespan_s > 0 ? load.bytes / (load.capacity_bytes_per_s * makespan_s) : 0.0;
    load.rate_while_busy_bytes_per_s = load.busy_s > 0 ? load.bytes / load.busy_s : 0.0;
    load.groups = static_cast<int>(groups);
    loads.push_back(std::move(load));
  }
  if (symmetry != nullptr) {
    // Every link of an orbit carries its representative's figures (the shift maps the whole run
    // onto itself): list each one, as the full run does.
    std::vector<int> load_of(static_cast<std::size_t>(topology.link_count()), -1);
    for (std::size_t k = 0; k < loads.size(); ++k) {
      load_of[static_cast<std::size_t>(loads[k].link)] = static_cast<int>(k);
    }
    std::vector<LinkLoad> all;
    for (std::size_t l = 0; l < symmetry->link_canonical.size(); ++l) {
      const int c = symmetry->link_canonical[l];
      if (c < 0 || load_of[static_cast<std::size_t>(c)] < 0) continue;
      all.push_back(loads[static_cast<std::size_t>(load_of[static_cast<std::size_t>(c)])]);
      all.back().link = static_cast<int>(l);
    }
    loads = std::move(all);
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
  for (LinkLoad& l : loads) {
    l.name = fmt::format("{} -> {}", topology.device(topology.link_source(l.link)).name,
                         topology.device(topology.link_target(l.link)).name);
  }
  out.top = std::move(loads);
  return out;
}

}  // namespace tilesim
