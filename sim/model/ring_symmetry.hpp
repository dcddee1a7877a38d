// Shift symmetry of a ring of P ranks on a topology, for symmetric simulation.
//
// The ring's transfers go from rank r to r+1 (mod P) over route R_r = route(g(r), g(r+1)),
// g = placement. A shift by K ranks (K | P, 2 <= K < P) is a symmetry when the map
// sigma: link R_r[i] -> link R_{r+K}[i] (every r, every position i) is a well-defined
// bijection of the links the ring uses that keeps each link's bandwidth, latency and class,
// the GPUs of different ranks are different, a GPU a route relays through (NVLink to a GPU
// whose NIC is on the destination's rail) maps to the shifted rank's GPU, and, where a
// node's ranks share compute cores, the ranks of every node of ranks 0..K-1 are all below K
// (so they see the same computes). Then rank r and r + K run the same program shape (non-causal
// ring: every step's block costs the same) over isomorphic flows, and the whole simulation is
// invariant under sigma: by uniqueness of the max-min allocation and induction over the event
// sequence, the n = P / K copies sigma^i(F) of a flow F have equal rates and equal completion
// times. So ranks 0..K-1 (one per class) are simulated alone, each flow F carrying, on the orbit
// representative c of each link class (orbit of sigma), the multiplicity
//   m(c, F) = (n / |orbit(c)|) x |R_F intersect orbit(c)|,
// the number of copies of F's class crossing c in the full problem; GPU traffic is counted on
// the representative GPU g(r mod K), once per GPU of its route (the sender, relays, the
// receiver) that lies in that GPU's orbit. The smallest such K is taken; none gives classes = P.
#pragma once

#include <vector>

#include "sim/topology/topology.hpp"

namespace tilesim {

struct RingSymmetry {
  int full_ranks = 0;               // P
  int classes = 0;                  // K; == P when no shift is a symmetry
  std::vector<int> full_placement;  // rank -> GPU, P entries
  std::vector<int> link_canonical;  // per topology link: its orbit's representative, -1 unused
  std::vector<int> link_orbit_size;
  std::vector<int> gpu_canonical;  // per GPU: the representative rank's GPU, -1 unused
  bool exact() const { return classes < full_ranks; }
  int copies() const { return full_ranks / classes; }
};

// placement: rank -> GPU for all P ranks (empty = identity).
// node_cores_shared: the profile makes a node's ranks share compute cores (compute_cores > 0).
RingSymmetry find_ring_symmetry(const Topology& topology, std::vector<int> placement, int ranks,
                                bool node_cores_shared);

}  // namespace tilesim
