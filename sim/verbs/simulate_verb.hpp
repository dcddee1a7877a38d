// The `simulate` verb's work: load, plan, simulate, check the memory budget; and its result
// JSON document (sim/model/result_json.hpp), the same for the CLI and the Python package.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"
#include "sim/verbs/scenario_source.hpp"

namespace tilesim {

struct SimulationRun {
  PreparedScenario prepared;
  Plan plan;
  SimulationResult result;
};

// Throws InputError for bad input, including a peak over schedule.memory_budget.
SimulationRun run_simulation(const ScenarioSource& source, bool record_link_samples = false);

// `include_wall_clock` false reports sim_wall_s as 0 (byte-identical output across runs).
nlohmann::ordered_json simulation_document(const SimulationRun& run, bool include_wall_clock);

}  // namespace tilesim
