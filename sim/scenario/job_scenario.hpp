// The scenario's `job` key against the sized topology (sim/job/job_layout.hpp for the rule).
#pragma once

#include <optional>

#include "sim/job/job_layout.hpp"
#include "sim/job/job_simulation.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

// The layout of scenario.job on `topology` (sized to job.gpus), or none without a job.
// InputError at job.gpus (not a multiple of tp x schedule.gpus, more than the topology has),
// job.dp (not job.gpus / (tp x schedule.gpus)) or job.tp (does not divide the GPUs per node).
std::optional<JobLayout> resolve_job(const Scenario& scenario, const Topology& topology);

// InputError at `job` for a verb that runs one CP group only (sweep, run, validate): a job
// there would be silently ignored.
void reject_job(const Scenario& scenario, const char* verb);

// simulate_job's options as simulate, tune and compare run `scenario`'s job: whole groups as
// classes unless schedule.symmetry is off, and the resource guard's refusal for the groups and
// routed pairs it simulates (job_resources_refusal). The rest is the caller's.
JobOptions job_options(const Scenario& scenario);

// GPUs the topology must hold: job.gpus with a job, else schedule.gpus.
int gpus_wanted(const Scenario& scenario);

}  // namespace tilesim
