#include "sim/model/rank_roles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "sim/core/interrupt.hpp"

namespace tilesim {
namespace {

// (Named apart from rank_shift_symmetry.cpp's `at`: unity builds join the two files.)
std::size_t role_slot(int i) { return static_cast<std::size_t>(i); }

// latency + bytes over the route's narrowest link, in whole picoseconds.
Picoseconds transfer_time_ps(const Topology& topology, const Route& route, double bytes) {
  double narrowest = std::numeric_limits<double>::infinity();
  for (LinkId l : route.links) {
    narrowest = std::min(narrowest, topology.link(l).bandwidth_bytes_per_s);
  }
  const double transfer_ps = std::isfinite(narrowest) ? bytes / narrowest * 1e12 : 0.0;
  return route.latency_ps + static_cast<Picoseconds>(std::llround(transfer_ps));
}

// The ranks of the node of rank 0 when every block of that many consecutive ranks is one
// node, else 0.
int ranks_per_node(const Topology& topology, const std::vector<int>& placement) {
  const int ranks = static_cast<int>(placement.size());
  const auto node_of = [&](int r) { return topology.node_of_gpu(placement[role_slot(r)]); };
  int n = 0;
  while (n < ranks && node_of(n) == node_of(0)) ++n;
  if (node_of(0) < 0 || ranks % n != 0) return 0;
  std::vector<int> block_of_node;
  for (int r = 0; r < ranks; ++r) {
    const int node = node_of(r);
    if (node < 0 || node_of(r / n * n) != node) return 0;
    if (role_slot(node) >= block_of_node.size()) block_of_node.resize(role_slot(node) + 1, -1);
    int& block = block_of_node[role_slot(node)];
    if (block >= 0 && block != r / n) return 0;  // a node split over two blocks
    block = r / n;
  }
  return n;
}

}  // namespace

std::optional<RankShiftSymmetry> find_rank_roles(const Topology& topology, ShiftSearch search,
                                                 double step_bytes, std::string& why_not) {
  const int p = static_cast<int>(search.peers.size());
  std::vector<int>& placement = search.placement;
  if (placement.empty()) {
    placement.resize(role_slot(p));
    std::iota(placement.begin(), placement.end(), 0);
  }
  for (int gpu : placement) {
    if (gpu < 0 || gpu >= topology.gpu_count()) {
      why_not = fmt::format("{} ranks on {} GPUs", p, topology.gpu_count());
      return std::nullopt;
    }
  }
  const int node_ranks = ranks_per_node(topology, placement);
  if (node_ranks == 0) {
    why_not = "the ranks do not fill whole nodes in blocks of consecutive ranks";
    return std::nullopt;
  }
  int k = 0;
  for (int c = node_ranks; c < p && k == 0; c += node_ranks) {
    const bool allowed = !search.shift_allowed || search.shift_allowed(c);
    if (p % c == 0 && allowed && peers_equivariant(search.peers, c, false)) k = c;
  }
  if (k == 0) {
    why_not = fmt::format(
        "no block of whole nodes ({} ranks each) short of all {} ranks that the programs shift "
        "by and onto which no two peers of a rank fold",
        node_ranks, p);
    return std::nullopt;
  }
  std::vector<int> rank_of_gpu(role_slot(topology.gpu_count()), -1);
  for (int r = 0; r < p; ++r) rank_of_gpu[role_slot(placement[role_slot(r)])] = r;
  // Every rank's transfer routes: links owned by one block each, and their times.
  Router router(topology);
  std::vector<int> owner(role_slot(topology.link_count()), -1);
  std::vector<std::vector<Picoseconds>> step_ps(role_slot(p));
  for (int r = 0; r < p; ++r) {
    throw_if_interrupted();
    for (int d : search.peers[role_slot(r)]) {
      if (d == r) continue;
      const Route& route = router.route(placement[role_slot(r)], placement[role_slot(d)]);
      if (route.links.empty()) {
        why_not = fmt::format("ranks {} and {} share GPU {}", r, d, placement[role_slot(r)]);
        return std::nullopt;
      }
      for (LinkId l : route.links) {
        // A GPU the route relays through must run a rank: the quotient counts traffic on GPUs
        // by their ranks' roles (gpu_canonical).
        const Device& via = topology.device(topology.link_target(l));
        if (via.kind == DeviceKind::gpu && rank_of_gpu[role_slot(via.gpu_index)] < 0) {
          why_not = fmt::format("ranks {} -> {} relay through GPU {}, which runs no rank", r, d,
                                via.gpu_index);
          return std::nullopt;
        }
        int& o = owner[role_slot(l)];
        if (o >= 0 && o != r / k) {
          why_not = fmt::format(
              "link {} carries transfers of ranks {}..{} and of ranks {}..{}: the quotient "
              "would miss their contention",
              l, o * k, o * k + k - 1, r / k * k, r / k * k + k - 1);
          return std::nullopt;
        }
        o = r / k;
      }
      step_ps[role_slot(r)].push_back(transfer_time_ps(topology, route, step_bytes));
    }
  }
  // The block holding the slowest transfer (the first such block on a tie), and the largest
  // spread of one role's transfer times (peer i of ranks r = r' mod K).
  int slowest_rank = 0;
  Picoseconds slowest_ps = -1;
  Picoseconds spread_ps = 0;
  for (int s = 0; s < k; ++s) {
    for (std::size_t i = 0; i < step_ps[role_slot(s)].size(); ++i) {
      Picoseconds lo = step_ps[role_slot(s)][i], hi = lo;
      for (int r = s; r < p; r += k) {
        const Picoseconds t = step_ps[role_slot(r)][i];
        lo = std::min(lo, t);
        hi = std::max(hi, t);
      }
      spread_ps = std::max(spread_ps, hi - lo);
    }
  }
  for (int r = 0; r < p; ++r) {
    for (Picoseconds t : step_ps[role_slot(r)]) {
      if (t > slowest_ps || (t == slowest_ps && r < slowest_rank)) {
        slowest_ps = t;
        slowest_rank = r;
      }
    }
  }
  const int first = slowest_rank / k * k;
  RankShiftSymmetry sym;
  sym.full_ranks = p;
  sym.classes = k;
  sym.full_placement.resize(role_slot(p));
  for (int i = 0; i < p; ++i)
    sym.full_placement[role_slot(i)] = placement[role_slot((first + i) % p)];
  const int copies = p / k;
  sym.link_canonical.assign(role_slot(topology.link_count()), -1);
  sym.link_orbit_size.assign(role_slot(topology.link_count()), 0);
  for (std::size_t l = 0; l < owner.size(); ++l) {
    if (owner[l] != first / k) continue;
    sym.link_canonical[l] = static_cast<int>(l);
    sym.link_orbit_size[l] = copies;
  }
  sym.gpu_canonical.assign(role_slot(topology.gpu_count()), -1);
  for (int i = 0; i < p; ++i) {
    sym.gpu_canonical[role_slot(sym.full_placement[role_slot(i)])] =
        sym.full_placement[role_slot(i % k)];
  }
  // The rotated ranks' peers are the original ones (peers are equivariant under K | first).
  sym.full_peers.assign(role_slot(k), {});
  for (int s = 0; s < k; ++s) {
    for (int d : search.peers[role_slot(s)]) {
      if (d != s) sym.full_peers[role_slot(s)].emplace_back(d % k, d);
    }
  }
  sym.roles = RoleApproximation{first, slowest_ps, spread_ps};
  return sym;
}

}  // namespace tilesim
