// Simulates every CP group of a job at once on the shared fabric, and the same group alone.
//
// The job plan (job_plan.hpp) runs in one simulation: all groups' transfers are flows of the
// one max-min network, so a link crossed by k groups' flows is shared among them. The
// reference is group 0 (dp 0, tp 0) alone on the same topology at the same GPUs:
//   job_slowdown = makespan(job) / makespan(group 0 alone)
// which is exactly 1 when no two groups' transfers share a link (nor a GPU) and grows with
// the share of a congested link each group gets (a link crossed by k equal flows gives each
// 1/k of its capacity, when that link is their bottleneck).
// Where a shift by whole groups is a symmetry of the fabric (job_symmetry.hpp), only the
// representative groups run, their flows with their copies' multiplicities: the cost of a job
// is then that of K / P groups, not of all N / P (65536 GPUs of ring groups of 16 on the H100
// cluster: 64 groups simulated for 4096).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/job/job_layout.hpp"
#include "sim/job/link_loads.hpp"
#include "sim/model/calibration_profile.hpp"
#include "sim/model/rank_shift_symmetry.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct JobOptions {
  std::size_t top_links = 8;         // most loaded links listed (0: none computed)
  bool record_link_samples = false;  // a trace: every rank's ops and link samples, no quotient
  bool record_ops = false;           // every rank's op times (--per-op), no quotient
  // Whole groups as classes where a shift by whole groups is a symmetry (job_symmetry.hpp;
  // schedule.symmetry: off or --no-symmetry turn it off): the same result, to the picosecond.
  bool use_symmetry = true;
  bool record_route_busy = false;  // job.route_busy_ps (the tuner's busiest route)
  // Asked whether the run fits the caller's limits, with the groups it simulates and the GPU
  // pairs the symmetry search routes (every rank to each of its send peers): first before the
  // search, with the fewest groups it may find (one; all without symmetry), then with the
  // groups it found. A non-empty answer is the refusal, and nothing more is done.
  std::function<std::string(int groups_simulated, double routed_pairs)> refusal;
};

struct JobRun {
  Plan plan;                // what ran: the whole job plan, or the quotient's groups (symmetry)
  SimulationResult job;     // every group together (expanded from the quotient's classes)
  std::size_t job_ops = 0;  // ops of the whole job plan: one group's x the groups
  std::optional<RankShiftSymmetry> symmetry;  // set when a quotient of whole groups ran
  Picoseconds group_alone_makespan_ps = 0;
  double slowdown = 1.0;  // job.makespan_ps / group_alone_makespan_ps
  LinkLoads links;        // the most loaded (none when top_links = 0)
  std::string refusal;    // JobOptions::refusal's answer; then nothing else is set
};

// With record_route_busy, job.route_busy_ps per GPU pair (under a symmetry the
// representatives' routes, each the image of every other's: the tuner's busiest-route analysis
// needs no more).
JobRun simulate_job(const Plan& group_plan, const JobLayout& layout, const Topology& topology,
                    const CalibrationProfile& profile, const JobOptions& options = {});

}  // namespace tilesim
