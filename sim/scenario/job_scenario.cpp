#include "sim/scenario/job_scenario.hpp"

#include <fmt/format.h>

#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"

namespace tilesim {

JobOptions job_options(const Scenario& scenario) {
  JobOptions options;
  options.use_symmetry = !symmetry_switched_off(scenario);
  options.refusal = [scenario](int groups, double routed_pairs) {
    return job_resources_refusal(scenario, groups, routed_pairs).message;
  };
  return options;
}

int gpus_wanted(const Scenario& scenario) {
  return scenario.job ? scenario.job->gpus : scenario.schedule.gpus;
}

void reject_job(const Scenario& s, const char* verb) {
  if (!s.job) return;
  throw s.error_at("job", fmt::format("no job key for `{}`, which runs one CP group (simulate, "
                                      "compare and tune take a job)",
                                      verb));
}

std::optional<JobLayout> resolve_job(const Scenario& s, const Topology& topology) {
  if (!s.job) return std::nullopt;
  const JobSpec& job = *s.job;
  const int cp = s.schedule.gpus;
  if (job.gpus % (job.tp * cp) != 0) {
    throw s.error_at("job.gpus",
                     fmt::format("a multiple of tp x schedule.gpus = {} x {} = {} (each CP group "
                                 "is schedule.gpus ranks of one TP slot), got {}",
                                 job.tp, cp, job.tp * cp, job.gpus));
  }
  const int dp = job.gpus / (job.tp * cp);
  if (job.dp != 0 && job.dp != dp) {
    throw s.error_at("job.dp", fmt::format("job.gpus / (tp x schedule.gpus) = {} / ({} x {}) = "
                                           "{} (or leave dp out), got {}",
                                           job.gpus, job.tp, cp, dp, job.dp));
  }
  if (topology.gpus_per_node > 0 && topology.gpus_per_node % job.tp != 0) {
    throw s.error_at("job.tp", fmt::format("a TP degree that divides the {} GPUs per node of "
                                           "topology '{}' (TP ranks stay inside a node), got {}",
                                           topology.gpus_per_node, topology.name, job.tp));
  }
  if (job.gpus > topology.gpu_count()) {
    throw s.error_at("job.gpus",
                     fmt::format("at most the {} GPUs of topology '{}' ({}), got {}",
                                 topology.gpu_count(), topology.name, s.topology_path, job.gpus));
  }
  return JobLayout(job.gpus, job.tp, cp, job.order);
}

}  // namespace tilesim
