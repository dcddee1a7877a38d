// Checks that a measured run (`tilesim run --json`) is a run of the plan `tilesim validate`
// is about to predict, so that a run of another size, shape or schedule is reported as bad
// input rather than compared op by op into a meaningless error table. It checks the plan, not
// the machine: a run of the same plan under another topology or calibration passes (that is
// what validate --calibration is for).
//
// Every identity field the run records (plan_identity_json: gpus, schedule, tile, seq_len,
// causal, pass, batch, heads, kv_heads, head_dim, dtype) must equal the plan's; the first that
// differs is named with both values. When they all agree, the run's `plan_digest` (if it has one:
// older files do not) must equal the plan's, which catches what the fields do not name (placement,
// a schedule's options, another tilesim version's plan).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/plan/plan.hpp"

namespace tilesim::validation {

// Throws InputError(file, 0, key, what was expected) on the first mismatch.
void check_run_matches_plan(const nlohmann::json& run, const Plan& plan, const std::string& file);

}  // namespace tilesim::validation
