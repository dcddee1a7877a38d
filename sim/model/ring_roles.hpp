// Role quotient of a ring (schedule.symmetry: roles): an approximate symmetry for rings that no
// exact shift folds far enough (on a fat tree with pods, the exact shift is a whole pod: 1024
// classes, each running all P steps).
//
// Roles are the K ranks of one node (the ring's ranks placed node by node, K = ranks per node,
// K | P). Every rank r runs as representative r mod K of ONE block of K ranks, b..b+K-1, chosen
// as the block holding the slowest step transfer of the ring, t(r) = latency(route(r, r+1)) +
// step_bytes / (narrowest link's bandwidth): a ring runs at the pace of its slowest hop, the
// ranks downstream of it are the last to finish, and the role quotient costs every node
// crossing as that one. The quotient is the exact shift quotient's machinery (a
// RankShiftSymmetry) with the placement rotated by b (rank i -> GPU of ring rank b + i; b is a
// multiple of K, so rank labels mod K are unchanged) and every link of a representative's route
// its own orbit of size P / K (multiplicity 1).
// Checked (else nullopt, with the reason): no link carries the transfers of two ranks, so each
// flow meets only its own rank's flows in the full ring and multiplicity 1 is what the full
// max-min solve gives; every block of K consecutive ranks is one node (relays through a node's
// GPUs and shared cores stay inside a block).
// Dropped: the routes of other blocks differ in latency and hops (leaf, spine, pod crossings).
// A rank whose step transfer is faster by d is costed d slower per step, so over n steps its
// times can move by up to n x (slowest - fastest); RoleApproximation keeps both transfer times.
// Measured against the exact run: docs/design-notes.md ("Role quotient").
#pragma once

#include <optional>
#include <string>

#include "sim/model/rank_shift_symmetry.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct RingRoleSearch {
  int ranks = 0;            // P, placed rank r -> GPU r
  double step_bytes = 0.0;  // what one ring step sends (a KV chunk), for t(r)
};

// The role quotient (classes = K, roles set), or nullopt with `why_not` saying which check
// failed.
std::optional<RankShiftSymmetry> find_ring_roles(const Topology& topology,
                                                 const RingRoleSearch& search,
                                                 std::string& why_not);

}  // namespace tilesim
