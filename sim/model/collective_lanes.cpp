#include "sim/model/collective_lanes.hpp"

#include <map>
#include <utility>

namespace tilesim {

std::vector<std::vector<int>> collective_lanes(const std::vector<int>& placement,
                                               int communicator_ranks, const Topology& topology) {
  const int ranks = static_cast<int>(placement.size());
  const int per_communicator = communicator_ranks > 0 ? communicator_ranks : ranks;
  std::map<std::pair<int, int>, std::vector<int>> lanes_of;  // (communicator, node) -> GPUs
  for (int r = 0; r < ranks; ++r) {
    const int gpu = placement[static_cast<std::size_t>(r)];
    lanes_of[{r / per_communicator, topology.node_of_gpu(gpu)}].push_back(gpu);
  }
  std::vector<std::vector<int>> lanes(static_cast<std::size_t>(topology.gpu_count()));
  for (const auto& [where, gpus] : lanes_of) {
    for (int gpu : gpus) lanes[static_cast<std::size_t>(gpu)] = gpus;
  }
  return lanes;
}

Route collective_lane_route(Router& router, int src_gpu, int src_lane_gpu, int dst_lane_gpu,
                            int dst_gpu) {
  Route route;
  for (const auto& [from, to] :
       {std::pair{src_gpu, src_lane_gpu}, std::pair{src_lane_gpu, dst_lane_gpu},
        std::pair{dst_lane_gpu, dst_gpu}}) {
    if (from == to) continue;
    const Route leg = router.find_route(from, to);
    route.links.insert(route.links.end(), leg.links.begin(), leg.links.end());
    route.latency_ps += leg.latency_ps;
  }
  return route;
}

}  // namespace tilesim
