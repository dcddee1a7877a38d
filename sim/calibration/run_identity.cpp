#include "sim/calibration/run_identity.hpp"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "sim/core/input_error.hpp"
#include "sim/plan/plan_digest.hpp"

namespace tilesim::calibration {

void check_run_matches_plan(const nlohmann::json& run, const Plan& plan, const std::string& file) {
  const std::vector<std::pair<const char*, nlohmann::json>> expected{
      {"gpus", plan.ranks},
      {"schedule", plan.schedule},
      {"tile", {plan.tile_a, plan.tile_b}},
      {"seq_len", plan.shape.seq_len},
      {"causal", plan.shape.causal},
      {"pass", std::string(to_string(plan.shape.pass))},
      {"batch", plan.shape.batch},
      {"heads", plan.shape.heads},
      {"kv_heads", plan.shape.kv_heads},
      {"head_dim", plan.shape.head_dim},
      {"dtype", std::string(to_string(plan.shape.dtype))},
  };
  const auto scenario = [&] {
    return run.contains("scenario") && run["scenario"].is_string()
               ? fmt::format(" (a run of '{}')", run["scenario"].get<std::string>())
               : std::string();
  };
  for (const auto& [key, value] : expected) {
    if (run.contains(key) && run[key] != value) {
      throw InputError(file, 0, key,
                       fmt::format("{} as in the scenario to validate (with its --set values), "
                                   "but the run has {}{}: validate with the scenario and --set "
                                   "values the run used",
                                   value.dump(), run[key].dump(), scenario()));
    }
  }
  if (run.contains("plan_digest")) {
    const std::string digest = plan_digest(plan);
    if (run["plan_digest"] != digest) {
      throw InputError(
          file, 0, "plan_digest",
          fmt::format("{}, the digest of the plan to validate, but the run has {}{}: the run "
                      "executed another plan (schedule options, placement, or another tilesim "
                      "version's plan); rerun it",
                      digest, run["plan_digest"].dump(), scenario()));
    }
  }
}

}  // namespace tilesim::calibration
