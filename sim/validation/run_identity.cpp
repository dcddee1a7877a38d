#include "sim/validation/run_identity.hpp"

#include <fmt/format.h>

#include "sim/core/input_error.hpp"
#include "sim/model/result_json.hpp"
#include "sim/plan/plan_digest.hpp"

namespace tilesim::validation {

void check_run_matches_plan(const nlohmann::json& run, const Plan& plan, const std::string& file) {
  const auto scenario = [&] {
    return run.contains("scenario") && run["scenario"].is_string()
               ? fmt::format(" (a run of '{}')", run["scenario"].get<std::string>())
               : std::string();
  };
  const nlohmann::ordered_json identity = plan_identity_json(plan);
  for (const auto& [key, value] : identity.items()) {
    // The same value as a plain json: comparing json with ordered_json is ambiguous in C++20
    // (clang rejects it; the rewritten operator== candidates tie).
    if (run.contains(key) && run[key] != nlohmann::json::parse(value.dump())) {
      throw InputError(file, 0, key,
                       fmt::format("expected {}, the scenario's value (with its --set values), "
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
          fmt::format("expected {}, the digest of the plan to validate, but the run has {}{}: "
                      "the run executed another plan (schedule options, placement, or another "
                      "tilesim version's plan); rerun it",
                      digest, run["plan_digest"].dump(), scenario()));
    }
  }
}

}  // namespace tilesim::validation
