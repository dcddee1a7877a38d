// The `plan` verb's document: the plan of a scenario, generated and validated.
//   {"scenario", "schedule", "gpus", "tile", "valid", "ops", "ops_by_kind",
//    "comm_bytes_total", "comm_bytes_per_rank_max", "peak_memory_bytes_max", "mask",
//    "compute_balance" (max / mean FLOPs per rank),
//    "ranks": [{bytes_sent, bytes_received, compute_flops, work_over_mean, computes,
//               peak_bytes}]}
// With `include_ops`, each rank also lists its ops in program order: {kind, pass, text (the
// plan's description), and where they apply: peer, comm_group, flops, reads, writes (object
// names), after (op indices)}.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/plan/validator.hpp"
#include "sim/verbs/scenario_source.hpp"

namespace tilesim {

// The scenario to plan: a mesh tile left to tilesim (auto, min-bytes) is resolved by preparing
// the scenario (auto simulates the candidates on the topology); other scenarios need no
// topology to be planned.
Scenario planned_scenario(const ScenarioSource& source);

// A rank's FLOPs over the mean of all ranks' (1 = balanced).
double work_over_mean(const PlanReport& report, const RankStats& rank);
// max / mean FLOPs per rank: the result's compute_balance.
double work_balance(const PlanReport& report);

nlohmann::ordered_json plan_document(const ScenarioSource& source, bool include_ops);

}  // namespace tilesim
