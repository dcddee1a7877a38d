#include "sim/model/rank_shift_symmetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include "sim/core/interrupt.hpp"

namespace tilesim {
namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

bool same_link(const Link& a, const Link& b) {
  return a.bandwidth_bytes_per_s == b.bandwidth_bytes_per_s && a.latency_ps == b.latency_ps &&
         a.cls == b.cls;
}

int gpu_at(const Topology& topology, VertexId v) {
  const Device& d = topology.device(v);
  return d.kind == DeviceKind::gpu ? d.gpu_index : -1;
}

// The routes of every rank's peers, routes[s][i] for peers[s][i] (null for a peer that is s).
using PeerRoutes = std::vector<std::vector<const Route*>>;

}  // namespace

bool peers_equivariant(const RankPeers& peers, int k, bool by_offset) {
  const int p = static_cast<int>(peers.size());
  for (int s = 0; s < p; ++s) {
    const std::vector<int>& mine = peers[at(s)];
    const std::vector<int>& shifted = peers[at((s + k) % p)];
    if (mine.size() != shifted.size()) return false;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (shifted[i] != (mine[i] + k) % p) return false;
    }
    if (s >= k || by_offset) continue;
    std::vector<int> folded;
    for (int d : mine) {
      if (d != s) folded.push_back(d % k);
    }
    std::sort(folded.begin(), folded.end());
    if (std::adjacent_find(folded.begin(), folded.end()) != folded.end()) return false;
    if (std::find(folded.begin(), folded.end(), s) != folded.end()) return false;
  }
  return true;
}

namespace {

// The link map of a shift by k, or empty when the shift is not a symmetry (see the header).
std::vector<int> shift_map(const Topology& topology, const PeerRoutes& routes,
                           const std::vector<int>& placement, const std::vector<int>& rank_of_gpu,
                           int k) {
  const int p = static_cast<int>(routes.size());
  std::vector<int> image(static_cast<std::size_t>(topology.link_count()), -1);
  std::vector<int> preimage(image.size(), -1);
  for (int r = 0; r < p; ++r) {
    for (std::size_t peer = 0; peer < routes[at(r)].size(); ++peer) {
      const Route* from_route = routes[at(r)][peer];
      const Route* to_route = routes[at((r + k) % p)][peer];
      if ((from_route == nullptr) != (to_route == nullptr)) return {};
      if (from_route == nullptr) continue;
      const Route& from = *from_route;
      const Route& to = *to_route;
      if (from.links.size() != to.links.size() || from.latency_ps != to.latency_ps) return {};
      for (std::size_t i = 0; i < from.links.size(); ++i) {
        const int a = from.links[i];
        const int b = to.links[i];
        auto& fwd = image[at(a)];
        auto& back = preimage[at(b)];
        if ((fwd != -1 && fwd != b) || (back != -1 && back != a)) return {};
        if (!same_link(topology.link(a), topology.link(b))) return {};
        // A GPU the route relays through (or ends at) maps to the shifted rank's GPU.
        const int ga = gpu_at(topology, topology.link_target(a));
        const int gb = gpu_at(topology, topology.link_target(b));
        if ((ga < 0) != (gb < 0)) return {};
        if (ga >= 0) {
          const int ra = rank_of_gpu[at(ga)];
          if (ra < 0 || placement[at((ra + k) % p)] != gb) return {};
        }
        fwd = b;
        back = a;
      }
    }
  }
  return image;
}

// Every rank that shares a node with one of ranks 0..k-1 is below k.
bool nodes_closed(const Topology& topology, const std::vector<int>& placement, int k) {
  std::map<int, int> max_rank_of_node;
  for (int r = 0; r < static_cast<int>(placement.size()); ++r) {
    const int node = topology.node_of_gpu(placement[at(r)]);
    if (node < 0) continue;
    max_rank_of_node[node] = std::max(max_rank_of_node[node], r);
  }
  for (int r = 0; r < k; ++r) {
    const int node = topology.node_of_gpu(placement[at(r)]);
    if (node >= 0 && max_rank_of_node[node] >= k) return false;
  }
  return true;
}

// Orbits of the link map, the GPU representatives and the representatives' full peers.
void describe_classes(RankShiftSymmetry& sym, const std::vector<int>& image, const RankPeers& peers,
                      int gpu_count, bool by_offset) {
  const int k = sym.classes;
  sym.link_canonical.assign(image.size(), -1);
  sym.link_orbit_size.assign(image.size(), 0);
  for (std::size_t l = 0; l < image.size(); ++l) {
    if (image[l] < 0 || sym.link_canonical[l] >= 0) continue;
    std::vector<int> orbit;
    for (int x = static_cast<int>(l); sym.link_canonical[at(x)] < 0; x = image[at(x)]) {
      sym.link_canonical[at(x)] = static_cast<int>(l);
      orbit.push_back(x);
    }
    for (int x : orbit) sym.link_orbit_size[at(x)] = static_cast<int>(orbit.size());
  }
  sym.gpu_canonical.assign(at(gpu_count), -1);
  for (int r = 0; r < sym.full_ranks; ++r) {
    sym.gpu_canonical[at(sym.full_placement[at(r)])] = sym.full_placement[at(r % k)];
  }
  sym.full_peers.assign(at(k), {});
  sym.peers_by_offset = by_offset;
  if (by_offset) return;
  for (int s = 0; s < k; ++s) {
    for (int d : peers[at(s)]) {
      if (d != s) sym.full_peers[at(s)].emplace_back(d % k, d);
    }
  }
}

}  // namespace

int RankShiftSymmetry::full_destination(int send_rank, int recv_rank) const {
  for (const auto& [quotient, full] : full_peers[at(send_rank)]) {
    if (quotient == recv_rank) return full;
  }
  throw std::logic_error(fmt::format(
      "quotient rank {} sends to rank {}, which is none of its peers", send_rank, recv_rank));
}

RankShiftSymmetry find_rank_shift_symmetry(const Topology& topology, ShiftSearch search) {
  const int ranks = static_cast<int>(search.peers.size());
  std::vector<int>& placement = search.placement;
  RankShiftSymmetry sym;
  sym.full_ranks = ranks;
  sym.classes = ranks;
  if (placement.empty()) {
    placement.resize(at(ranks));
    std::iota(placement.begin(), placement.end(), 0);
  }
  sym.full_placement = placement;
  if (ranks < 4 || static_cast<int>(placement.size()) != ranks) return sym;
  for (int gpu : placement) {
    if (gpu < 0 || gpu >= topology.gpu_count()) return sym;  // the simulator names it
  }
  for (const std::vector<int>& peers : search.peers) {
    for (int d : peers) {
      if (d < 0 || d >= ranks) throw std::invalid_argument("a peer outside the ranks");
    }
  }
  std::vector<int> sorted = placement;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return sym;
  std::vector<int> rank_of_gpu(at(topology.gpu_count()), -1);
  for (int r = 0; r < ranks; ++r) rank_of_gpu[at(placement[at(r)])] = r;
  Router router(topology);
  if (search.peers_by_offset) {
    // Every rank talks to (nearly) every other: route by destination, one backward search
    // each, instead of one search per pair (pass-Q on 4096 GPUs: 16.8M pairs; the ring
    // successors' search of all_peers_classes_lower_bound, one source each, keeps the pairwise
    // searches: Router::prefetch_to).
    std::vector<std::vector<int>> sources(at(ranks));
    for (int r = 0; r < ranks; ++r) {
      for (int d : search.peers[at(r)]) {
        if (d != r) sources[at(d)].push_back(placement[at(r)]);
      }
    }
    for (int d = 0; d < ranks; ++d) {
      throw_if_interrupted();
      router.prefetch_to(placement[at(d)], sources[at(d)]);
      std::vector<int>().swap(sources[at(d)]);
    }
  }
  PeerRoutes routes(at(ranks));
  for (int r = 0; r < ranks; ++r) {
    // Per-pair searches for the other schedules: a signal is honoured rank by rank here too.
    throw_if_interrupted();
    for (int d : search.peers[at(r)]) {
      if (d == r) {
        routes[at(r)].push_back(nullptr);
        continue;
      }
      const Route& route = router.route(placement[at(r)], placement[at(d)]);
      if (route.links.empty()) return sym;
      routes[at(r)].push_back(&route);
    }
  }
  for (int k = 2; k < ranks && (search.max_classes <= 0 || k <= search.max_classes); ++k) {
    if (ranks % k != 0) continue;
    if (search.shift_allowed && !search.shift_allowed(k)) continue;
    if (search.node_cores_shared && !nodes_closed(topology, placement, k)) continue;
    if (!peers_equivariant(search.peers, k, search.peers_by_offset)) continue;
    throw_if_interrupted();  // each candidate maps every route once
    const std::vector<int> image = shift_map(topology, routes, placement, rank_of_gpu, k);
    if (image.empty()) continue;
    sym.classes = k;
    describe_classes(sym, image, search.peers, topology.gpu_count(), search.peers_by_offset);
    return sym;
  }
  return sym;
}

}  // namespace tilesim
