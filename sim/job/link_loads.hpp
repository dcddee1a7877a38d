// The most loaded links of a simulated job, from its transfer records.
//
// Every transfer (posted at t0, last byte at t1, B bytes, between the GPUs of its two ranks)
// loads each link of its route (the simulator's Router, so the same route the flow model
// used) with B bytes and keeps it busy over [t0, t1] (software latency and the last hop's
// propagation included: the link is "in use" by that transfer's ranks). Per link:
//   bytes          sum of B
//   busy_s         length of the union of the busy intervals
//   busy_fraction  busy_s / makespan
//   utilisation    bytes / (C_l x makespan), C_l = spec bandwidth x the class's efficiency
//                  (the capacity the max-min model shares)
//   rate_while_busy_bytes_per_s  bytes / busy_s
//   groups         distinct CP groups (rank / ranks_per_group) with a transfer on it
// Ranked by bytes, then groups, then link id (deterministic). Over all links used: how many
// there are, how many more than one group crosses, and the most groups on one link.
// With `symmetry` (a quotient of whole groups, job_symmetry.hpp) the records are the
// representatives' and stand for their copies: a hop over link l adds to its orbit
// representative c = link_canonical[l] the N / K / |orbit(l)| copies of the transfer that cross
// c (bytes x that, the same busy span, that many distinct groups per distinct (group, l)), and
// every link of the orbit gets c's figures: the full run's, by the symmetry.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/model/calibration_profile.hpp"
#include "sim/model/rank_shift_symmetry.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct LinkLoad {
  int link = -1;
  std::string name;  // "source device -> target device"
  double bytes = 0.0;
  double capacity_bytes_per_s = 0.0;
  double busy_s = 0.0;
  double busy_fraction = 0.0;
  double utilisation = 0.0;
  double rate_while_busy_bytes_per_s = 0.0;
  int groups = 0;
};

struct LinkLoads {
  std::vector<LinkLoad> top;  // the `top` most loaded
  int links_used = 0;
  int links_shared = 0;  // crossed by 2 or more groups
  int max_groups = 0;    // on one link
};

LinkLoads most_loaded_links(const Plan& plan, const SimulationResult& result,
                            const Topology& topology, const CalibrationProfile& profile,
                            int ranks_per_group, std::size_t top,
                            const RankShiftSymmetry* symmetry = nullptr);

}  // namespace tilesim
