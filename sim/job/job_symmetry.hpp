// Whole CP groups as the symmetry classes of a job (issue 13, item 5: "with symmetry, as
// classes").
//
// The job plan runs group g's copy of one group plan on the group's GPUs (job_plan.hpp): job
// rank g x P + r runs group rank r with its peers, chunks and objects moved by g groups. A
// shift of the job's ranks by K = m x P (m whole groups) therefore maps the programs onto each
// other, and find_rank_shift_symmetry (sim/model/rank_shift_symmetry.hpp) decides whether the
// GPU map it induces is a symmetry of the fabric the transfers use (every route onto a route
// with the same links' bandwidth, latency and class, relays onto relays), taking the smallest
// such K. Then groups 0 .. m-1 run alone as the quotient (simulate_classes), each flow carrying
// on each of its links' orbit representatives the number of its N / K copies that cross it:
// by uniqueness of the max-min allocation and induction over events, every copy of a
// representative group sees the same events at the same picosecond, so the quotient's result
// expanded to all ranks is the full job's (tests/test_job_symmetry.cpp checks it byte for
// byte). A rank's peers are the ranks its group plan sends to, all inside its own group, so a
// representative's transfers never leave the quotient: full_destination(s, d) = d.
// classes == N (not exact()) where no shift by whole groups is a symmetry, e.g. a topology
// whose pods differ, or groups whose GPUs no shift maps onto each other.
#pragma once

#include "sim/job/job_layout.hpp"
#include "sim/model/calibration_profile.hpp"
#include "sim/model/rank_shift_symmetry.hpp"
#include "sim/plan/plan.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

// The ranks each rank of the group plan sends to, ascending (the shift search's peer order);
// every other rank of the group for a plan of NCCL ring collectives, whose steps also run
// through the lanes of the sender's and the receiver's nodes.
RankPeers group_send_peers(const Plan& group_plan);

// group_peers: group_send_peers(group_plan).
RankShiftSymmetry find_job_symmetry(const Plan& group_plan, const RankPeers& group_peers,
                                    const JobLayout& layout, const Topology& topology,
                                    const CalibrationProfile& profile);

}  // namespace tilesim
