// A quotient by a group H of rank permutations, for programs that map onto each other under
// more than one shift (a mesh's row and column rotations, sim/schedules/mesh_fold.hpp), where
// rank_shift_symmetry.hpp's quotient takes one shift of the rank index.
//
// The caller numbers the P ranks so that H's orbits are the residues mod K (rank r is in class
// r mod K, representatives 0..K-1) and H acts freely (|H| = P / K), and gives H by generators
// pi_1, pi_2, ... in that numbering. The quotient is exact when every generator pi
//   - keeps classes and peers: pi(r) = r (mod K), peers[pi(r)][i] = pi(peers[r][i]);
//   - maps routes onto routes: sigma_pi, link R(r, i)[j] -> link R(pi(r), i)[j], is a bijection
//     of the used links that keeps every link's bandwidth, latency and class, and a GPU a route
//     relays through (or ends at) maps to the GPU of its rank's image (rank_link_map.hpp);
// and no peer of a representative folds onto itself or onto another of its peers' classes.
// Then the simulation is invariant under every sigma_pi, so under the group they generate,
// whose orbits on links are the connected components of the union of the sigma_pi. A flow F of
// a representative stands for its n = P / K images, which cross orbit O in
// n |R_F intersect O| places spread evenly over O's |O| links (|O| divides n): the multiplicity
// m(c, F) = (n / |O|) |R_F intersect O| of rank_shift_symmetry.hpp, on O's smallest link c.
#pragma once

#include <optional>
#include <vector>

#include "sim/model/rank_shift_symmetry.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct RankGroupSearch {
  std::vector<int> placement;                // rank -> GPU, P entries, distinct
  RankPeers peers;                           // P entries, in the same numbering
  std::vector<std::vector<int>> generators;  // permutations of the P ranks
  int classes = 0;                           // K, dividing P, below it
};

// The quotient of K classes where every condition above holds, else nullopt (the search's
// answer: another K or numbering may hold). std::invalid_argument for a search that breaks the
// numbering contract (a generator that is no permutation or moves a rank to another class, a
// peer outside the ranks, K not dividing P).
std::optional<RankShiftSymmetry> find_rank_group_symmetry(const Topology& topology, Router& router,
                                                          const RankGroupSearch& search);

}  // namespace tilesim
