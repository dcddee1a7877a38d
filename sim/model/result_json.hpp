// The result JSON (SI units; docs/architecture.md "Contracts"), shared by simulate, sweep and run.
// Beyond the contract's figures it names the plan it describes (attention shape fields and
// `plan_digest`, sim/plan/plan_digest.hpp), so that a measured run can be matched to a plan.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

struct ResultContext {
  std::string scenario;
  std::string topology;
  std::string calibration;
  bool include_wall_clock = true;  // sim_wall_s is the only non-deterministic field
  // plan_digest when the plan's programs are not held whole (a windowed run's quotient).
  std::optional<std::string> plan_digest = std::nullopt;
};

// The fields that say which plan a result is of: gpus, schedule, tile, seq_len, causal, pass,
// batch, heads, kv_heads, head_dim, dtype (result_to_json writes them; tilesim validate
// checks a measured run's against its plan's, sim/calibration/run_identity.hpp).
nlohmann::ordered_json plan_identity_json(const Plan& plan);

nlohmann::ordered_json result_to_json(const Plan& plan, const SimulationResult& result,
                                      const ResultContext& context);

}  // namespace tilesim
