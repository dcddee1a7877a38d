#include "sim/verbs/simulate_verb.hpp"

#include "sim/job/job_json.hpp"
#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/job_scenario.hpp"
#include "sim/validation/op_times_json.hpp"

namespace tilesim {
namespace {

constexpr std::size_t kMostLoadedLinks = 8;

}  // namespace

SimulationRun run_simulation(const ScenarioSource& source, const SimulateRequest& request) {
  SimulationRun run{prepare_scenario(source), {}, {}, std::nullopt, request.per_op};
  const PreparedScenario& p = run.prepared;
  if (request.job_refused_by != nullptr) reject_job(p.scenario, request.job_refused_by);
  // With a job: one CP group, validated once (beyond 256 ranks: the structural check).
  run.plan = build_plan_to_simulate(p.scenario, request.full_check);
  if (p.job_layout) {
    run.job = simulate_job(run.plan, *p.job_layout, p.topology, p.profile, kMostLoadedLinks,
                           request.trace);
    run.result = run.job->job;
  } else {
    SimulationOptions options;
    options.record_link_samples = request.trace;
    options.record_ops = options.record_transfers =
        request.trace || request.records || request.per_op;
    run.result = simulate(run.plan, p.topology, p.profile, options);
  }
  check_memory_budget(p.scenario, summarize(run.result).peak_memory_bytes_max);
  return run;
}

nlohmann::ordered_json simulation_document(const SimulationRun& run, bool include_wall_clock) {
  const Scenario& s = run.prepared.scenario;
  const ResultContext context{s.name, s.topology_path, s.calibration_path, include_wall_clock};
  nlohmann::ordered_json doc = result_to_json(run.plan, run.result, context);
  if (run.per_op) doc["op_times"] = validation::op_times_to_json(run.simulated_plan(), run.result);
  if (run.job) add_job_json(doc, *run.prepared.job_layout, *run.job);
  return doc;
}

}  // namespace tilesim
