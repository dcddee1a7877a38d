// The `simulate` verb's work: load, plan, simulate (a lone CP group, or every group of a
// `job:` at once on the shared fabric), check the memory budget; and its result JSON document
// (sim/model/result_json.hpp, plus sim/job/job_json.hpp for a job), the same for the CLI and
// the Python package.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "sim/job/job_simulation.hpp"
#include "sim/model/ring_symmetry.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"
#include "sim/verbs/scenario_source.hpp"

namespace tilesim {

// What a caller needs beyond the per-rank totals the simulator streams by default.
struct SimulateRequest {
  bool trace = false;        // link samples plus op and transfer records (traces, HTML report)
  bool records = false;      // op and transfer records (phase statistics)
  bool per_op = false;       // records, and the document adds op_times
  bool full_check = false;   // the full validator beyond 256 ranks too
  bool no_symmetry = false;  // simulate every rank even where one per class is exact
  // A verb that cannot run a `job:` scenario (sweep): it is refused at the key, exit 2.
  const char* job_refused_by = nullptr;
};

struct SimulationRun {
  PreparedScenario prepared;
  Plan plan;                  // one CP group's plan
  SimulationResult result;    // the group alone, or the whole job
  std::optional<JobRun> job;  // set for a `job:` scenario (job->plan holds every group)
  bool per_op = false;
  // The ring's shift symmetry where it applies (symmetric_plan.hpp); `plan` is then the
  // quotient plan of one rank per class when the symmetry is exact.
  std::optional<RingSymmetry> symmetry;
  bool symmetric() const { return symmetry && symmetry->exact(); }
  // The plan `result` ran: the job's composed plan, or `plan`.
  const Plan& simulated_plan() const { return job ? job->plan : plan; }
};

// Throws InputError for bad input, including a peak over schedule.memory_budget.
SimulationRun run_simulation(const ScenarioSource& source, const SimulateRequest& request = {});

// `include_wall_clock` false reports sim_wall_s as 0 (byte-identical output across runs). A
// job's document describes one group's plan (ops, digest, shape) and the whole job's figures.
nlohmann::ordered_json simulation_document(const SimulationRun& run, bool include_wall_clock);

}  // namespace tilesim
