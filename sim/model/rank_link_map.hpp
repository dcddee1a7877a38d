// The link map sigma of a rank permutation pi on a topology (rank_shift_symmetry.hpp), built
// route pair by route pair: the i-th link of route(g(r), g(d)) maps to the i-th link of
// route(g(pi r), g(pi d)), g = placement. It is consistent when sigma stays a bijection of the
// links it has seen, keeps each link's bandwidth, latency and class, keeps a route's length
// and latency, and maps a GPU a route relays through (or ends at) to the GPU of the image of
// that GPU's rank. A shift by k is pi(r) = r + k mod P.
#pragma once

#include <optional>
#include <vector>

#include "sim/topology/topology.hpp"

namespace tilesim {

class RankLinkMap {
 public:
  // placement: rank -> GPU; rank_of_gpu its inverse (-1 for a GPU with no rank);
  // rank_image: pi, a permutation of the ranks. The two vectors must outlive the map.
  RankLinkMap(const Topology& topology, const std::vector<int>& placement,
              const std::vector<int>& rank_of_gpu, std::vector<int> rank_image);

  // Adds the pair (a rank's route and its image's); false when it contradicts the map or the
  // conditions above.
  bool add(const Route& from, const Route& to);
  // sigma: per topology link, its image, -1 for a link no route added crosses.
  std::vector<int> take() { return std::move(image_); }

 private:
  const Topology& topology_;
  const std::vector<int>& placement_;
  const std::vector<int>& rank_of_gpu_;
  std::vector<int> rank_image_;
  std::vector<int> image_, preimage_;
};

// The routes of every rank's peers, routes[r][i] for peers[r][i] (null for a peer that is r
// itself), held by the router; nullopt where a pair has no route.
using PeerRoutes = std::vector<std::vector<const Route*>>;
std::optional<PeerRoutes> route_peers(Router& router, const std::vector<int>& placement,
                                      const std::vector<std::vector<int>>& peers);

}  // namespace tilesim
