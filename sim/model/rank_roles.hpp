// Role quotient (schedule.symmetry: roles): an approximate symmetry for plans that no exact
// shift folds far enough (on a fat tree with pods the exact shift of a ring is a whole pod:
// 1024 classes, each running all P steps).
//
// Roles are the K ranks of a block of whole nodes: K is the smallest multiple of the ranks per
// node that the schedule's programs are equivariant under (ShiftSearch::shift_allowed), whose
// peers are equivariant and do not fold (peers_equivariant: USP's ring peer r + u would fold
// onto r with one group per block, so its blocks hold two), K | P. Every rank r runs as
// representative r mod K of ONE block, ranks b..b+K-1, the block holding the slowest transfer
// route to a peer, t = latency + step_bytes / (narrowest link's bandwidth): a ring runs at the
// pace of its slowest hop and the ranks downstream of it finish last, so the quotient costs
// every block's transfers as that block's. It is the exact shift quotient's machinery (a
// RankShiftSymmetry) with the placement rotated by b (a multiple of K, so rank labels mod K do
// not change and the peers of the rotated ranks are the original ones) and every link of a
// representative's route its own orbit of size P / K (multiplicity 1).
// Checked (else nullopt, with the reason): no link carries transfers of two blocks, so each
// flow meets only flows of its own block in the full run, all of which the quotient simulates,
// and multiplicity 1 is what the full max-min solve gives; every block is whole nodes (relays
// through a node's GPUs and shared cores stay inside a block).
// Dropped: the routes of other blocks differ in latency and hops (leaf, spine, pod crossings).
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

// The role quotient of `search` (its placement, peers and allowed shifts; peers_by_offset is
// not supported), transfers of `step_bytes` ranking the routes; nullopt with `why_not` saying
// which check failed.
std::optional<RankShiftSymmetry> find_rank_roles(const Topology& topology, ShiftSearch search,
                                                 double step_bytes, std::string& why_not);

}  // namespace tilesim
