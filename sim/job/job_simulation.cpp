#include "sim/job/job_simulation.hpp"

#include <vector>

#include "sim/job/job_plan.hpp"
#include "sim/job/job_symmetry.hpp"
#include "sim/model/simulator.hpp"
#include "sim/model/symmetric_simulation.hpp"

namespace tilesim {

JobRun simulate_job(const Plan& group_plan, const JobLayout& layout, const Topology& topology,
                    const CalibrationProfile& profile, const JobOptions& options) {
  JobRun run;
  run.job_ops = group_plan.op_count() * static_cast<std::size_t>(layout.cp_groups());
  const bool search = options.use_symmetry && !options.record_link_samples && !options.record_ops;
  const RankPeers group_peers = search ? group_send_peers(group_plan) : RankPeers{};
  double routed_pairs = 0.0;
  for (const std::vector<int>& peers : group_peers) {
    routed_pairs += static_cast<double>(peers.size());
  }
  routed_pairs *= static_cast<double>(layout.cp_groups());
  // The search itself routes every rank's peers: asked before it runs (a pass-Q job routes
  // N (P - 1) pairs), with the one group any quotient simulates.
  if (options.refusal) {
    run.refusal = options.refusal(search ? 1 : layout.cp_groups(), routed_pairs);
    if (!run.refusal.empty()) return run;
  }
  if (search) {
    RankShiftSymmetry symmetry =
        find_job_symmetry(group_plan, group_peers, layout, topology, profile);
    if (symmetry.exact()) run.symmetry = std::move(symmetry);
  }
  if (options.refusal && search) {
    run.refusal = options.refusal(
        run.symmetry ? run.symmetry->classes / group_plan.ranks : layout.cp_groups(), routed_pairs);
    if (!run.refusal.empty()) return run;
  }
  SimulationOptions alone;
  alone.placement = group_placement(group_plan, layout, 0);
  run.group_alone_makespan_ps = simulate(group_plan, topology, profile, alone).makespan_ps;
  SimulationOptions together;
  together.record_transfers = options.top_links > 0;  // most_loaded_links sums them per link
  together.record_route_busy = options.record_route_busy;
  if (run.symmetry) {
    run.plan = compose_job_plan(group_plan, layout, run.symmetry->classes / group_plan.ranks);
    run.job = simulate_classes(run.plan, *run.symmetry, topology, profile, together);
  } else {
    run.plan = compose_job_plan(group_plan, layout);
    together.record_link_samples = options.record_link_samples;  // traces
    together.record_ops = options.record_ops || options.record_link_samples;
    run.job = simulate(run.plan, topology, profile, together);
  }
  run.job.speedup_ranks = group_plan.ranks;  // each group's speedup, over its own GPUs
  run.slowdown = run.group_alone_makespan_ps > 0
                     ? static_cast<double>(run.job.makespan_ps) /
                           static_cast<double>(run.group_alone_makespan_ps)
                     : 1.0;
  if (options.top_links > 0) {
    run.links = most_loaded_links(run.plan, run.job, topology, profile, group_plan.ranks,
                                  options.top_links, run.symmetry ? &*run.symmetry : nullptr);
  }
  return run;
}

}  // namespace tilesim
