#include "sim/model/rank_link_map.hpp"

#include <utility>

#include "sim/core/interrupt.hpp"

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

}  // namespace

RankLinkMap::RankLinkMap(const Topology& topology, const std::vector<int>& placement,
                         const std::vector<int>& rank_of_gpu, std::vector<int> rank_image)
    : topology_(topology),
      placement_(placement),
      rank_of_gpu_(rank_of_gpu),
      rank_image_(std::move(rank_image)),
      image_(static_cast<std::size_t>(topology.link_count()), -1),
      preimage_(image_.size(), -1) {}

bool RankLinkMap::add(const Route& from, const Route& to) {
  if (from.links.empty() || from.links.size() != to.links.size() ||
      from.latency_ps != to.latency_ps) {
    return false;
  }
  for (std::size_t i = 0; i < from.links.size(); ++i) {
    const int a = from.links[i];
    const int b = to.links[i];
    auto& fwd = image_[static_cast<std::size_t>(a)];
    auto& back = preimage_[static_cast<std::size_t>(b)];
    if ((fwd != -1 && fwd != b) || (back != -1 && back != a)) return false;
    if (!same_link(topology_.link(a), topology_.link(b))) return false;
    // A GPU the route relays through (or ends at) maps to the image rank's GPU.
    const int ga = gpu_at(topology_, topology_.link_target(a));
    const int gb = gpu_at(topology_, topology_.link_target(b));
    if ((ga < 0) != (gb < 0)) return false;
    if (ga >= 0) {
      const int ra = rank_of_gpu_[static_cast<std::size_t>(ga)];
      if (ra < 0 ||
          placement_[static_cast<std::size_t>(rank_image_[static_cast<std::size_t>(ra)])] != gb)
        return false;
    }
    fwd = b;
    back = a;
  }
  return true;
}

std::optional<PeerRoutes> route_peers(Router& router, const std::vector<int>& placement,
                                      const std::vector<std::vector<int>>& peers) {
  PeerRoutes routes(peers.size());
  for (std::size_t r = 0; r < peers.size(); ++r) {
    throw_if_interrupted();
    for (int d : peers[r]) {
      if (d == static_cast<int>(r)) {
        routes[r].push_back(nullptr);
        continue;
      }
      const Route& route = router.route(placement[r], placement[static_cast<std::size_t>(d)]);
      if (route.links.empty()) return std::nullopt;
      routes[r].push_back(&route);
    }
  }
  return routes;
}

}  // namespace tilesim
