#include "sim/job/job_simulation.hpp"

#include "sim/job/job_plan.hpp"
#include "sim/model/simulator.hpp"

namespace tilesim {

JobRun simulate_job(const Plan& group_plan, const JobLayout& layout, const Topology& topology,
                    const CalibrationProfile& profile, std::size_t top_links,
                    bool record_link_samples) {
  JobRun run;
  SimulationOptions alone;
  alone.placement = group_placement(group_plan, layout, 0);
  run.group_alone_makespan_ps = simulate(group_plan, topology, profile, alone).makespan_ps;
  run.plan = compose_job_plan(group_plan, layout);
  SimulationOptions together;
  together.record_link_samples = record_link_samples;  // traces
  together.record_ops = record_link_samples;           // only a trace draws every op
  together.record_transfers = true;                    // most_loaded_links sums them per link
  run.job = simulate(run.plan, topology, profile, together);
  run.slowdown = run.group_alone_makespan_ps > 0
                     ? static_cast<double>(run.job.makespan_ps) /
                           static_cast<double>(run.group_alone_makespan_ps)
                     : 1.0;
  if (top_links > 0) {
    run.links =
        most_loaded_links(run.plan, run.job, topology, profile, group_plan.ranks, top_links);
  }
  return run;
}

}  // namespace tilesim
