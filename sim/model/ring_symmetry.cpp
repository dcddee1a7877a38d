#include "sim/model/ring_symmetry.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace tilesim {
namespace {

bool same_link(const Link& a, const Link& b) {
  return a.bandwidth_bytes_per_s == b.bandwidth_bytes_per_s && a.latency_ps == b.latency_ps &&
         a.cls == b.cls;
}

int gpu_at(const Topology& topology, VertexId v) {
  const Device& d = topology.device(v);
  return d.kind == DeviceKind::gpu ? d.gpu_index : -1;
}

// The link map of a shift by k, or empty when the shift is not a symmetry (see the header).
std::vector<int> shift_map(const Topology& topology, const std::vector<const Route*>& routes,
                           const std::vector<int>& placement, const std::vector<int>& rank_of_gpu,
                           int k) {
  const int p = static_cast<int>(routes.size());
  std::vector<int> image(static_cast<std::size_t>(topology.link_count()), -1);
  std::vector<int> preimage(image.size(), -1);
  for (int r = 0; r < p; ++r) {
    const Route& from = *routes[static_cast<std::size_t>(r)];
    const Route& to = *routes[static_cast<std::size_t>((r + k) % p)];
    if (from.links.size() != to.links.size() || from.latency_ps != to.latency_ps) return {};
    for (std::size_t i = 0; i < from.links.size(); ++i) {
      const int a = from.links[i];
      const int b = to.links[i];
      auto& fwd = image[static_cast<std::size_t>(a)];
      auto& back = preimage[static_cast<std::size_t>(b)];
      if ((fwd != -1 && fwd != b) || (back != -1 && back != a)) return {};
      if (!same_link(topology.link(a), topology.link(b))) return {};
      // A GPU the route relays through (or ends at) maps to the shifted rank's GPU.
      const int ga = gpu_at(topology, topology.link_target(a));
      const int gb = gpu_at(topology, topology.link_target(b));
      if ((ga < 0) != (gb < 0)) return {};
      if (ga >= 0) {
        const int ra = rank_of_gpu[static_cast<std::size_t>(ga)];
        if (ra < 0 || placement[static_cast<std::size_t>((ra + k) % p)] != gb) return {};
      }
      fwd = b;
      back = a;
    }
  }
  return image;
}

// Every rank that shares a node with one of ranks 0..k-1 is below k.
bool nodes_closed(const Topology& topology, const std::vector<int>& placement, int k) {
  std::map<int, int> max_rank_of_node;
  for (int r = 0; r < static_cast<int>(placement.size()); ++r) {
    const int node = topology.node_of_gpu(placement[static_cast<std::size_t>(r)]);
    if (node < 0) continue;
    max_rank_of_node[node] = std::max(max_rank_of_node[node], r);
  }
  for (int r = 0; r < k; ++r) {
    const int node = topology.node_of_gpu(placement[static_cast<std::size_t>(r)]);
    if (node >= 0 && max_rank_of_node[node] >= k) return false;
  }
  return true;
}

}  // namespace

RingSymmetry find_ring_symmetry(const Topology& topology, std::vector<int> placement, int ranks,
                                bool node_cores_shared) {
  RingSymmetry sym;
  sym.full_ranks = ranks;
  sym.classes = ranks;
  if (placement.empty()) {
    placement.resize(static_cast<std::size_t>(ranks));
    std::iota(placement.begin(), placement.end(), 0);
  }
  sym.full_placement = placement;
  if (ranks < 4 || static_cast<int>(placement.size()) != ranks) return sym;
  std::vector<int> sorted = placement;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return sym;
  std::vector<int> rank_of_gpu(static_cast<std::size_t>(topology.gpu_count()), -1);
  for (int r = 0; r < ranks; ++r)
    rank_of_gpu[static_cast<std::size_t>(placement[static_cast<std::size_t>(r)])] = r;
  Router router(topology);
  std::vector<const Route*> routes;
  for (int r = 0; r < ranks; ++r) {
    const Route& route = router.route(placement[static_cast<std::size_t>(r)],
                                      placement[static_cast<std::size_t>((r + 1) % ranks)]);
    if (route.links.empty()) return sym;
    routes.push_back(&route);
  }
  for (int k = 2; k < ranks; ++k) {
    if (ranks % k != 0) continue;
    if (node_cores_shared && !nodes_closed(topology, placement, k)) continue;
    const std::vector<int> image = shift_map(topology, routes, placement, rank_of_gpu, k);
    if (image.empty()) continue;
    sym.classes = k;
    sym.link_canonical.assign(image.size(), -1);
    sym.link_orbit_size.assign(image.size(), 0);
    for (std::size_t l = 0; l < image.size(); ++l) {
      if (image[l] < 0 || sym.link_canonical[l] >= 0) continue;
      std::vector<int> orbit;
      for (int x = static_cast<int>(l); sym.link_canonical[static_cast<std::size_t>(x)] < 0;
           x = image[static_cast<std::size_t>(x)]) {
        sym.link_canonical[static_cast<std::size_t>(x)] = static_cast<int>(l);
        orbit.push_back(x);
      }
      for (int x : orbit) {
        sym.link_orbit_size[static_cast<std::size_t>(x)] = static_cast<int>(orbit.size());
      }
    }
    sym.gpu_canonical.assign(static_cast<std::size_t>(topology.gpu_count()), -1);
    for (int r = 0; r < ranks; ++r) {
      sym.gpu_canonical[static_cast<std::size_t>(placement[static_cast<std::size_t>(r)])] =
          placement[static_cast<std::size_t>(r % k)];
    }
    return sym;
  }
  return sym;
}

}  // namespace tilesim
