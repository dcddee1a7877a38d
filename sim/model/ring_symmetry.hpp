// Shift symmetry of a ring of P ranks on a topology, for symmetric simulation: the case of
// rank_shift_symmetry.hpp whose only peer of rank r is r + 1 (mod P), every shift allowed
// (the ring's transfers go from r to r+1 over route(g(r), g(r+1)), g = placement; a
// non-causal ring step costs the same on every rank).
#pragma once

#include <vector>

#include "sim/model/rank_shift_symmetry.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

using RingSymmetry = RankShiftSymmetry;

// The ring's peers (r + 1 for each of `ranks` ranks), every shift allowed.
ShiftSearch ring_shift_search(int ranks);

// placement: rank -> GPU for all P ranks (empty = identity).
// node_cores_shared: the profile makes a node's ranks share compute cores (compute_cores > 0).
RingSymmetry find_ring_symmetry(const Topology& topology, std::vector<int> placement, int ranks,
                                bool node_cores_shared);

}  // namespace tilesim
