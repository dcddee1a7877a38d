#include "sim/model/ring_roles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/core/interrupt.hpp"

namespace tilesim {
namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

// latency + bytes over the route's narrowest link, in whole picoseconds.
Picoseconds step_time_ps(const Topology& topology, const Route& route, double bytes) {
  double narrowest = std::numeric_limits<double>::infinity();
  for (LinkId l : route.links)
    narrowest = std::min(narrowest, topology.link(l).bandwidth_bytes_per_s);
  const double transfer_ps = std::isfinite(narrowest) ? bytes / narrowest * 1e12 : 0.0;
  return route.latency_ps + static_cast<Picoseconds>(std::llround(transfer_ps));
}

// Ranks per node when every block of that many consecutive ranks is one node, else 0.
int ranks_per_node(const Topology& topology, int ranks) {
  const int node0 = topology.node_of_gpu(0);
  int k = 0;
  while (k < ranks && topology.node_of_gpu(k) == node0) ++k;
  if (node0 < 0 || k < 2 || k == ranks || ranks % k != 0) return 0;
  for (int block = 0; block < ranks / k; ++block) {
    const int node = topology.node_of_gpu(block * k);
    for (int r = block * k; r < (block + 1) * k; ++r) {
      if (topology.node_of_gpu(r) != node || node < 0) return 0;
    }
  }
  return k;
}

}  // namespace

std::optional<RankShiftSymmetry> find_ring_roles(const Topology& topology,
                                                 const RingRoleSearch& search,
                                                 std::string& why_not) {
  const int p = search.ranks;
  if (p > topology.gpu_count()) {
    why_not = fmt::format("{} ranks on {} GPUs", p, topology.gpu_count());
    return std::nullopt;
  }
  const int k = ranks_per_node(topology, p);
  if (k == 0) {
    why_not =
        "the ring's ranks do not fill whole nodes in blocks of one node each (or one node "
        "holds them all)";
    return std::nullopt;
  }
  Router router(topology);
  std::vector<int> owner(at(topology.link_count()), -1);
  std::vector<Picoseconds> step_ps(at(p));
  std::vector<std::vector<LinkId>> links(at(p));
  for (int r = 0; r < p; ++r) {
    throw_if_interrupted();
    const Route& route = router.route(r, (r + 1) % p);
    for (LinkId l : route.links) {
      int& o = owner[at(l)];
      if (o >= 0 && o != r) {
        why_not = fmt::format(
            "link {} carries the transfers of ranks {} and {}: the quotient would miss their "
            "contention",
            l, o, r);
        return std::nullopt;
      }
      o = r;
    }
    step_ps[at(r)] = step_time_ps(topology, route, search.step_bytes);
    links[at(r)] = route.links;
  }
  // The block holding the slowest step transfer (the first such block on a tie).
  const auto slowest = std::max_element(step_ps.begin(), step_ps.end());
  const int first = static_cast<int>(slowest - step_ps.begin()) / k * k;
  RankShiftSymmetry sym;
  sym.full_ranks = p;
  sym.classes = k;
  sym.full_placement.resize(at(p));
  for (int i = 0; i < p; ++i) sym.full_placement[at(i)] = (first + i) % p;
  const int copies = p / k;
  sym.link_canonical.assign(at(topology.link_count()), -1);
  sym.link_orbit_size.assign(at(topology.link_count()), 0);
  for (int i = 0; i < k; ++i) {
    for (LinkId l : links[at(first + i)]) {
      sym.link_canonical[at(l)] = l;
      sym.link_orbit_size[at(l)] = copies;
    }
  }
  sym.gpu_canonical.assign(at(topology.gpu_count()), -1);
  for (int i = 0; i < p; ++i) {
    sym.gpu_canonical[at(sym.full_placement[at(i)])] = sym.full_placement[at(i % k)];
  }
  sym.full_peers.assign(at(k), {});
  for (int s = 0; s < k; ++s) sym.full_peers[at(s)].emplace_back((s + 1) % k, s + 1);
  Picoseconds spread_ps = 0;
  for (int i = 0; i < k; ++i) {
    Picoseconds lo = step_ps[at(i)], hi = step_ps[at(i)];
    for (int r = i; r < p; r += k) {
      lo = std::min(lo, step_ps[at(r)]);
      hi = std::max(hi, step_ps[at(r)]);
    }
    spread_ps = std::max(spread_ps, hi - lo);
  }
  sym.roles = RoleApproximation{first, *slowest, spread_ps};
  return sym;
}

}  // namespace tilesim
