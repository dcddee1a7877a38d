// The `simulate` verb's work: load, plan, simulate (a lone CP group, or every group of a
// `job:` at once on the shared fabric), check the memory budget; and its result JSON document
// (sim/model/result_json.hpp, plus sim/job/job_json.hpp for a job), the same for the CLI and
// the Python package.
#pragma once

#include <functional>
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
  bool records = false;      // op and transfer records (every rank's whole plan)
  bool per_op = false;       // records, and the document adds op_times
  bool full_check = false;   // the full validator beyond 256 ranks too
  bool no_symmetry = false;  // simulate every rank even where one per class is exact
  // A verb that cannot run a `job:` scenario (sweep): it is refused at the key, exit 2.
  const char* job_refused_by = nullptr;
};

struct SimulationRun {
  PreparedScenario prepared;
  // The plan the simulator ran for one CP group. On the symmetric path it is the quotient
  // plan of one rank per class (ranks = classes < schedule.gpus; the full plan is never
  // built); elsewhere the full plan of every rank, whose programs a lazy run
  // (sim/scenario/lazy_plan.hpp) generated as it ran and dropped as they finished. Read it
  // through the accessors below, which say which one they mean.
  Plan simulated_group_plan;
  SimulationResult result;  // the group alone, or the whole job
  // Set for a `job:` scenario: job->plan holds every group, or the representative groups
  // where whole groups ran as classes (job->symmetry, job_symmetry.hpp).
  std::optional<JobRun> job;
  bool per_op = false;
  // The plan_digest of a plan that ran windowed, symmetric or lazy (its programs are no
  // longer whole).
  std::optional<std::string> windowed_digest;
  // The shift symmetry (prepared.symmetry) where the run used it: unset when the
  // request needs every rank's ops (a trace, op records, the validator's dry run).
  std::optional<RingSymmetry> symmetry;
  // The programs of every rank were generated as they ran (lazy_plan.hpp).
  bool lazy = false;

  bool symmetric() const { return symmetry && symmetry->exact(); }
  // One CP group's plan of all P ranks, whole; std::logic_error on the symmetric path and
  // after a lazy run.
  const Plan& full_plan() const;
  // The quotient plan; std::logic_error unless symmetric().
  const Plan& quotient_plan() const;
  // Ops of one CP group's full plan: on the symmetric path the quotient's times P / K (every
  // rank's program has the same ops), without building it.
  std::size_t full_plan_ops() const;
  // The plan `result` ran: the job's composed plan, or simulated_group_plan.
  const Plan& simulated_plan() const { return job ? job->plan : simulated_group_plan; }
};

// Throws InputError for bad input, including a peak over schedule.memory_budget. `notice`, where
// given, is called with long_simulation_notice's text before a run estimated to be long starts
// (prepare_scenario).
SimulationRun run_simulation(const ScenarioSource& source, const SimulateRequest& request = {},
                             const std::function<void(const std::string&)>& notice = {});

// `include_wall_clock` false reports sim_wall_s as 0 (byte-identical output across runs). A
// job's document describes one group's plan (ops, digest, shape) and the whole job's figures.
nlohmann::ordered_json simulation_document(const SimulationRun& run, bool include_wall_clock);

}  // namespace tilesim
