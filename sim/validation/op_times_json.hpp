// Per-op times in a result JSON, so that a measured run and a simulation can be compared op by
// op. `op_times` is an array of {"rank", "index", "kind", "start_s", "end_s"}, one per op but
// the frees (instantaneous), times in seconds from the run's start; the op id (rank, index) is
// the plan's, shared by simulator and runtime. The reader refuses a document that misses an
// op: a finished run times them all.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::validation {

nlohmann::ordered_json op_times_to_json(const Plan& plan, const SimulationResult& result);

// Reads `op_times` of a result JSON back into [rank][op index] timings sized by the plan.
// Throws InputError(file, 0, key) for a missing array, a bad record or an id the plan lacks.
std::vector<std::vector<OpTiming>> op_times_from_json(const nlohmann::json& document,
                                                      const Plan& plan, const std::string& file);

}  // namespace tilesim::validation
