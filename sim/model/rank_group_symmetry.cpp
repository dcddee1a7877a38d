#include "sim/model/rank_group_symmetry.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "sim/core/interrupt.hpp"
#include "sim/model/rank_link_map.hpp"

namespace tilesim {
namespace {

std::size_t ix(int i) { return static_cast<std::size_t>(i); }

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
    std::vector<char> seen(ix(p), 0);
    for (int r = 0; r < p; ++r) {
      const int image = pi[ix(r)];
      if (image < 0 || image >= p || seen[ix(image)] || image % k != r % k) {
        throw std::invalid_argument("a generator must permute the ranks within their classes");
      }
      seen[ix(image)] = 1;
    }
  }
}

// The peers of every representative fold onto distinct classes other than its own, and every
// generator maps peers onto peers.
bool peers_fold(const RankGroupSearch& search) {
  const int p = static_cast<int>(search.peers.size());
  const int k = search.classes;
  for (int s = 0; s < k; ++s) {
    if (!peers_fold_apart(search.peers[ix(s)], s, k)) return false;
  }
  for (const std::vector<int>& pi : search.generators) {
    for (int r = 0; r < p; ++r) {
      const std::vector<int>& mine = search.peers[ix(r)];
      const std::vector<int>& image = search.peers[ix(pi[ix(r)])];
      if (mine.size() != image.size()) return false;
      for (std::size_t i = 0; i < mine.size(); ++i) {
        if (image[i] != pi[ix(mine[i])]) return false;
      }
    }
  }
  return true;
}

int find_root(std::vector<int>& parent, int x) {
  while (parent[ix(x)] != x) {
    parent[ix(x)] = parent[ix(parent[ix(x)])];
    x = parent[ix(x)];
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
  std::vector<int> rank_of_gpu(ix(topology.gpu_count()), -1);
  for (int r = 0; r < p; ++r) {
    const int gpu = placement[ix(r)];
    if (gpu < 0 || gpu >= topology.gpu_count() || rank_of_gpu[ix(gpu)] >= 0) return std::nullopt;
    rank_of_gpu[ix(gpu)] = r;
  }
  if (!peers_fold(search)) return std::nullopt;
  const std::optional<PeerRoutes> routes = route_peers(router, placement, search.peers);
  if (!routes) return std::nullopt;
  // Link orbits: components of the union of the generators' link maps.
  std::vector<int> parent(ix(topology.link_count()));
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<char> used(parent.size(), 0);
  for (const std::vector<int>& pi : search.generators) {
    throw_if_interrupted();
    RankLinkMap map(topology, placement, rank_of_gpu, pi);
    for (int r = 0; r < p; ++r) {
      for (std::size_t i = 0; i < (*routes)[ix(r)].size(); ++i) {
        const Route* from = (*routes)[ix(r)][i];
        const Route* to = (*routes)[ix(pi[ix(r)])][i];
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
      if (a != b) parent[ix(std::max(a, b))] = std::min(a, b);
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
    if (used[l]) ++size[ix(find_root(parent, static_cast<int>(l)))];
  }
  for (std::size_t l = 0; l < parent.size(); ++l) {
    if (!used[l]) continue;
    const int root = find_root(parent, static_cast<int>(l));
    sym.link_canonical[l] = root;
    sym.link_orbit_size[l] = size[ix(root)];
  }
  sym.gpu_canonical.assign(ix(topology.gpu_count()), -1);
  for (int r = 0; r < p; ++r) sym.gpu_canonical[ix(placement[ix(r)])] = placement[ix(r % k)];
  sym.full_peers.assign(ix(k), {});
  for (int s = 0; s < k; ++s) {
    for (int d : search.peers[ix(s)]) {
      if (d != s) sym.full_peers[ix(s)].emplace_back(d % k, d);
    }
  }
  return sym;
}

}  // namespace tilesim
