#include "sim/model/rank_shift_symmetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include "sim/core/interrupt.hpp"
#include "sim/model/rank_link_map.hpp"

namespace tilesim {
namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

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
    if (s < k && !by_offset && !peers_fold_apart(mine, s, k)) return false;
  }
  return true;
}

bool peers_fold_apart(const std::vector<int>& peers, int representative, int k) {
  std::vector<int> folded;
  for (int d : peers) {
    if (d != representative) folded.push_back(d % k);
  }
  std::sort(folded.begin(), folded.end());
  if (std::adjacent_find(folded.begin(), folded.end()) != folded.end()) return false;
  return std::find(folded.begin(), folded.end(), representative) == folded.end();
}

namespace {

std::vector<int> shift_permutation(int ranks, int k) {
  std::vector<int> image(at(ranks));
  for (int r = 0; r < ranks; ++r) image[at(r)] = (r + k) % ranks;
  return image;
}

// The link map of a shift by k from the cached routes of every rank's peers, or empty when
// the shift is not a symmetry (see the header).
std::vector<int> shift_map(const Topology& topology, const PeerRoutes& routes,
                           const std::vector<int>& placement, const std::vector<int>& rank_of_gpu,
                           int k) {
  const int p = static_cast<int>(routes.size());
  RankLinkMap map(topology, placement, rank_of_gpu, shift_permutation(p, k));
  for (int r = 0; r < p; ++r) {
    for (std::size_t peer = 0; peer < routes[at(r)].size(); ++peer) {
      const Route* from = routes[at(r)][peer];
      const Route* to = routes[at((r + k) % p)][peer];
      if ((from == nullptr) != (to == nullptr)) return {};
      if (from != nullptr && !map.add(*from, *to)) return {};
    }
  }
  return map.take();
}

// The ranks whose peers name each destination rank (not itself), ascending: senders of d are
// ranks[begin[d] .. begin[d + 1]).
struct Senders {
  std::vector<std::size_t> begin;
  std::vector<int> ranks;
};

Senders senders_of(const RankPeers& peers) {
  const int p = static_cast<int>(peers.size());
  Senders senders;
  senders.begin.assign(at(p) + 1, 0);
  for (int r = 0; r < p; ++r) {
    for (int d : peers[at(r)]) {
      if (d != r) ++senders.begin[at(d) + 1];
    }
  }
  for (int d = 0; d < p; ++d) senders.begin[at(d) + 1] += senders.begin[at(d)];
  senders.ranks.resize(senders.begin.back());
  std::vector<std::size_t> next(senders.begin.begin(), senders.begin.end() - 1);
  for (int r = 0; r < p; ++r) {
    for (int d : peers[at(r)]) {
      if (d != r) senders.ranks[next[at(d)]++] = r;
    }
  }
  return senders;
}

// shift_map for peer sets where every rank talks to (nearly) every other, with routes made one
// destination at a time and not kept: for each orbit d, d + k, d + 2k, ... of destinations, the
// routes into d from its senders (in some order) pair with the routes into d + k from the same
// senders moved by k. The peers must be equivariant under k (so the senders of d + k are those
// of d moved by k). Holds three destinations' routes, O(P), where the cached routes were P^2.
std::vector<int> shift_map_by_destination(const Topology& topology, Router& router,
                                          const Senders& senders, const std::vector<int>& placement,
                                          const std::vector<int>& rank_of_gpu, int k) {
  const int p = static_cast<int>(placement.size());
  // Each orbit closes on its first destination only when k divides P.
  if (k < 1 || p % k != 0) return {};
  RankLinkMap map(topology, placement, rank_of_gpu, shift_permutation(p, k));
  auto gpus_of = [&](const std::vector<int>& ranks) {
    std::vector<int> gpus;
    gpus.reserve(ranks.size());
    for (int r : ranks) gpus.push_back(placement[at(r)]);
    return gpus;
  };
  for (int start = 0; start < k; ++start) {
    std::vector<int> order(
        senders.ranks.begin() + static_cast<std::ptrdiff_t>(senders.begin[at(start)]),
        senders.ranks.begin() + static_cast<std::ptrdiff_t>(senders.begin[at(start) + 1]));
    const std::vector<Route> first = router.routes_to(placement[at(start)], gpus_of(order));
    std::vector<Route> here = first;
    for (int d = start; d < p; d += k) {
      throw_if_interrupted();
      const int next_d = d + k;
      for (int& r : order) r = (r + k) % p;
      // After the last destination of the orbit the senders are back where they began.
      std::vector<Route> next =
          next_d < p ? router.routes_to(placement[at(next_d)], gpus_of(order)) : first;
      if (next.size() != here.size()) return {};
      for (std::size_t i = 0; i < here.size(); ++i) {
        if (!map.add(here[i], next[i])) return {};
      }
      here = std::move(next);
    }
  }
  return map.take();
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
  Router router(topology);
  return find_rank_shift_symmetry(topology, router, std::move(search));
}

RankShiftSymmetry find_rank_shift_symmetry(const Topology& topology, Router& router,
                                           ShiftSearch search) {
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
  // Every rank talks to (nearly) every other: routes by destination, made again for each
  // candidate shift rather than kept (a candidate that fails usually does so at its first
  // destination). The other schedules' few peers are routed pair by pair and cached.
  Senders senders;
  PeerRoutes routes;
  if (search.peers_by_offset) {
    senders = senders_of(search.peers);
  } else {
    std::optional<PeerRoutes> routed = route_peers(router, placement, search.peers);
    if (!routed) return sym;
    routes = std::move(*routed);
  }
  for (int k = 2; k < ranks && (search.max_classes <= 0 || k <= search.max_classes); ++k) {
    if (ranks % k != 0) continue;
    if (search.shift_allowed && !search.shift_allowed(k)) continue;
    if (search.node_cores_shared && !nodes_closed(topology, placement, k)) continue;
    if (!peers_equivariant(search.peers, k, search.peers_by_offset)) continue;
    throw_if_interrupted();  // each candidate maps every route once
    const std::vector<int> image =
        search.peers_by_offset
            ? shift_map_by_destination(topology, router, senders, placement, rank_of_gpu, k)
            : shift_map(topology, routes, placement, rank_of_gpu, k);
    if (image.empty()) continue;
    sym.classes = k;
    describe_classes(sym, image, search.peers, topology.gpu_count(), search.peers_by_offset);
    return sym;
  }
  return sym;
}

}  // namespace tilesim
