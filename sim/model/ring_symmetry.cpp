#include "sim/model/ring_symmetry.hpp"

#include <utility>

namespace tilesim {

ShiftSearch ring_shift_search(int ranks) {
  ShiftSearch search;
  search.peers.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) search.peers[static_cast<std::size_t>(r)] = {(r + 1) % ranks};
  return search;
}

RingSymmetry find_ring_symmetry(const Topology& topology, std::vector<int> placement, int ranks,
                                bool node_cores_shared) {
  ShiftSearch search = ring_shift_search(ranks);
  search.placement = std::move(placement);
  search.node_cores_shared = node_cores_shared;
  return find_rank_shift_symmetry(topology, std::move(search));
}

}  // namespace tilesim
