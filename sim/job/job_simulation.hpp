// Simulates every CP group of a job at once on the shared fabric, and the same group alone.
//
// The job plan (job_plan.hpp) runs in one simulation: all groups' transfers are flows of the
// one max-min network, so a link crossed by k groups' flows is shared among them. The
// reference is group 0 (dp 0, tp 0) alone on the same topology at the same GPUs:
//   job_slowdown = makespan(job) / makespan(group 0 alone)
// which is exactly 1 when no two groups' transfers share a link (nor a GPU) and grows with
// the share of a congested link each group gets (a link crossed by k equal flows gives each
// 1/k of its capacity, when that link is their bottleneck).
#pragma once

#include <cstddef>
#include <vector>

#include "sim/job/job_layout.hpp"
#include "sim/job/link_loads.hpp"
#include "sim/model/calibration_profile.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct JobRun {
  Plan plan;             // the composed job plan (what `job` ran)
  SimulationResult job;  // every group together
  Picoseconds group_alone_makespan_ps = 0;
  double slowdown = 1.0;  // job.makespan_ps / group_alone_makespan_ps
  LinkLoads links;        // the most loaded (none when top_links = 0)
};

JobRun simulate_job(const Plan& group_plan, const JobLayout& layout, const Topology& topology,
                    const CalibrationProfile& profile, std::size_t top_links = 8,
                    bool record_link_samples = false);

}  // namespace tilesim
