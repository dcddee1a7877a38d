#include "sim/verbs/simulate_verb.hpp"

#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"

namespace tilesim {

SimulationRun run_simulation(const ScenarioSource& source, bool record_link_samples) {
  SimulationRun run{prepare_scenario(source), {}, {}};
  const PreparedScenario& p = run.prepared;
  run.plan = build_valid_plan(p.scenario);
  SimulationOptions options;
  options.record_link_samples = record_link_samples;
  run.result = simulate(run.plan, p.topology, p.profile, options);
  check_memory_budget(p.scenario, summarize(run.result).peak_memory_bytes_max);
  return run;
}

nlohmann::ordered_json simulation_document(const SimulationRun& run, bool include_wall_clock) {
  const Scenario& s = run.prepared.scenario;
  const ResultContext context{s.name, s.topology_path, s.calibration_path, include_wall_clock};
  return result_to_json(run.plan, run.result, context);
}

}  // namespace tilesim
