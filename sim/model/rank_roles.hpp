// Role quotient (schedule.symmetry: roles): an approximate symmetry for plans that no exact
// shift folds far enough (on a fat tree with pods the exact shift of a ring is a whole pod:
// 1024 classes, each running all P steps).
//
// Roles are the K ranks of a block of consecutive ranks that is whole nodes: K | P is the
// smallest shift the schedule's programs are equivariant under (ShiftSearch::shift_allowed),
// whose peers are equivariant and do not fold (peers_equivariant: USP's ring peer r + u would
// fold onto r with one group per block, so its blocks hold two), and whose blocks are whole
// nodes that the shift maps onto each other at the same GPU places (node-major: a multiple of
// a node's GPUs; a mesh numbered across its groups, rank t a + u on GPU u b + t: 8a, a node
// holding ranks r, r + a, ...). Every rank
// r runs as representative r mod K of ONE block, ranks b..b+K-1, the block holding the slowest
// transfer route to a peer, t = latency + step_bytes / (narrowest link's bandwidth): a ring runs at
// the pace of its slowest hop and the ranks downstream of it finish last, so the quotient costs
// every block's transfers as that block's. It is the exact shift quotient's machinery (a
// RankShiftSymmetry) with the placement rotated by b (a multiple of K, so rank labels mod K do
// not change and the peers of the rotated ranks are the original ones) and every link of a
// representative's route between nodes its own orbit of size P / K (multiplicity 1). A link
// inside a node stands for the links at its place (same ends by their place in the node, same
// figures) in the nodes at its node's place of every block, represented by the simulated
// block's: those carry the same traffic of other blocks in the full run (a ring's last hop into
// the next block; the lanes of NCCL's ring collectives, search.collective_lanes_by_gpu, which
// relay through the next node's GPUs while that node's own steps load the same links).
// Checked (else nullopt, with the reason): no link between nodes or switches carries transfers
// of two blocks, so each such flow meets only flows of its own block in the full run, all of
// which the quotient simulates, and multiplicity 1 is what the full max-min solve gives; every
// block is whole nodes, and the nodes are copies of one node.
// Dropped: the routes of other blocks differ in latency and hops (leaf, spine, pod crossings),
// and may use other places of their nodes (a block whose step crosses the spine can leave by
// another rail than one that stays in its leaf): the simulated block's routes, node links
// included, stand for every block's, as if each block routed as it does.
// A rank whose transfer is faster by d is costed d slower each time it waits for it, so, by
// latency alone, a rank's times move by up to (transfers waited for) x (the spread of one role's
// routes, RoleApproximation::role_spread_ps). That is a heuristic, not a proof: a compute's
// interference (comm_slowdown) depends on how its rank's transfers fall against it, which the
// latency shifts too (compute_s_max differs by up to 0.7% where the makespans are equal). The
// routes are ranked by the topology's link figures (latency, spec bandwidth), not the profile's
// alpha and efficiency, which scale every link of a class alike. Measured against the exact
// run: docs/design-notes.md ("Role quotient").
#pragma once

#include <optional>
#include <string>

#include "sim/model/rank_shift_symmetry.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

// The role quotient of `search` (its placement, peers, allowed shifts, lanes; an offset
// quotient keeps its full peers), transfers of `step_bytes` ranking the routes; nullopt with
// `why_not` saying which check failed.
std::optional<RankShiftSymmetry> find_rank_roles(const Topology& topology, ShiftSearch search,
                                                 double step_bytes, std::string& why_not);

}  // namespace tilesim
