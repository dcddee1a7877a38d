#include "sim/model/ring_symmetry.hpp"

#include <utility>

namespace tilesim {

RingSymmetry find_ring_symmetry(const Topology& topology, std::vector<int> placement, int ranks,
                                bool node_cores_shared, int max_classes) {
  ShiftSearch search;
  search.placement = std::move(placement);
  search.peers.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) search.peers[static_cast<std::size_t>(r)] = {(r + 1) % ranks};
  search.node_cores_shared = node_cores_shared;
  search.max_classes = max_classes;
  return find_rank_shift_symmetry(topology, std::move(search));
}

}  // namespace tilesim
