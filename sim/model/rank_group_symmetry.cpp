#include "sim/model/rank_group_symmetry.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "sim/core/interrupt.hpp"
#include "sim/model/rank_link_map.hpp"

namespace tilesim {
namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

void check_contract(const RankGroupSearch& search) {
  const int p = static_cast<int>(search.peers.size());
  const int k = search.classes;
  if (k < 1 || k >= p || p % k != 0 || static_cast<int>(search.placement.size()) != p) {
    throw std::invalid_argument("a group quotient takes K classes dividing P, below it");
  }
  for (const std::vector<int>& peers : search.peers) {
    for (int d : peers) {
      if (d < 0 || d >= p) throw std::invalid_argument("a peer outside the ranks");
    }
  }
  for (const std::vector<int>& pi : search.generators) {
    if (static_cast<int>(pi.size()) != p) throw std::invalid_argument("a generator of P ranks");
    std::vector<char> seen(at(p), 0);
    for (int r = 0; r < p; ++r) {
      const int image = pi[at(r)];
      if (image < 0 || image >= p || seen[at(image)] || image % k != r % k) {
        throw std::invalid_argument("a generator must permute the ranks within their classes");
      }
      seen[at(image)] = 1;
    }
  }
}

// The peers of every representative fold onto distinct classes other than its own, and every
// generator maps peers onto peers.
bool peers_fold(const RankGroupSearch& search) {
  const int p = static_cast<int>(search.peers.size());
  const int k = search.classes;
  for (int s = 0; s < k; ++s) {
    std::vector<int> folded;
    for (int d : search.peers[at(s)]) {
      if (d != s) folded.push_back(d % k);
    }
    std::sort(folded.begin(), folded.end());
    if (std::adjacent_find(folded.begin(), folded.end()) != folded.end()) return false;
    if (std::find(folded.begin(), folded.end(), s) != folded.end()) return false;
  }
  for (const std::vector<int>& pi : search.generators) {
    for (int r = 0; r < p; ++r) {
      const std::vector<int>& mine = search.peers[at(r)];
      const std::vector<int>& image = search.peers[at(pi[at(r)])];
      if (mine.size() != image.size()) return false;
      for (std::size_t i = 0; i < mine.size(); ++i) {
        if (image[i] != pi[at(mine[i])]) return false;
      }
    }
  }
  return true;
}

int find_root(std::vector<int>& parent, int x) {
  while (parent[at(x)] != x) {
    parent[at(x)] = parent[at(parent[at(x)])];
    x = parent[at(x)];
  }
  return x;
}

}  // namespace

std::optional<RankShiftSymmetry> find_rank_group_symmetry(const Topology& topology, Router& router,
                                                          const RankGroupSearch& search) {
  check_contract(search);
  const int p = static_cast<int>(search.peers.size());
  const int k = search.classes;
  const std::vector<int>& placement = search.placement;
  std::vector<int> rank_of_gpu(at(topology.gpu_count()), -1);
  for (int r = 0; r < p; ++r) {
    const int gpu = placement[at(r)];
    if (gpu < 0 || gpu >= topology.gpu_count() || rank_of_gpu[at(gpu)] >= 0) return std::nullopt;
    rank_of_gpu[at(gpu)] = r;
  }
  if (!peers_fold(search)) return std::nullopt;
  const std::optional<PeerRoutes> routes = route_peers(router, placement, search.peers);
  if (!routes) return std::nullopt;
  // Link orbits: components of the union of the generators' link maps.
  std::vector<int> parent(at(topology.link_count()));
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<char> used(parent.size(), 0);
  for (const std::vector<int>& pi : search.generators) {
    throw_if_interrupted();
    RankLinkMap map(topology, placement, rank_of_gpu, pi);
    for (int r = 0; r < p; ++r) {
      for (std::size_t i = 0; i < (*routes)[at(r)].size(); ++i) {
        const Route* from = (*routes)[at(r)][i];
        const Route* to = (*routes)[at(pi[at(r)])][i];
        if ((from == nullptr) != (to == nullptr)) return std::nullopt;
        if (from != nullptr && !map.add(*from, *to)) return std::nullopt;
      }
    }
    const std::vector<int> image = map.take();
    for (std::size_t l = 0; l < image.size(); ++l) {
      if (image[l] < 0) continue;
      used[l] = 1;
      const int a = find_root(parent, static_cast<int>(l));
      const int b = find_root(parent, image[l]);
      // The smaller index is the root, so a component's root is its smallest link.
      if (a != b) parent[at(std::max(a, b))] = std::min(a, b);
    }
  }
  RankShiftSymmetry sym;
  sym.full_ranks = p;
  sym.classes = k;
  sym.full_placement = placement;
  sym.link_canonical.assign(parent.size(), -1);
  sym.link_orbit_size.assign(parent.size(), 0);
  std::vector<int> size(parent.size(), 0);
  for (std::size_t l = 0; l < parent.size(); ++l) {
    if (used[l]) ++size[at(find_root(parent, static_cast<int>(l)))];
  }
  for (std::size_t l = 0; l < parent.size(); ++l) {
    if (!used[l]) continue;
    const int root = find_root(parent, static_cast<int>(l));
    sym.link_canonical[l] = root;
    sym.link_orbit_size[l] = size[at(root)];
  }
  sym.gpu_canonical.assign(at(topology.gpu_count()), -1);
  for (int r = 0; r < p; ++r) sym.gpu_canonical[at(placement[at(r)])] = placement[at(r % k)];
  sym.full_peers.assign(at(k), {});
  for (int s = 0; s < k; ++s) {
    for (int d : search.peers[at(s)]) {
      if (d != s) sym.full_peers[at(s)].emplace_back(d % k, d);
    }
  }
  return sym;
}

}  // namespace tilesim
