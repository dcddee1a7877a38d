// The `tune` verb's document: the candidates of schedule_tuner.hpp, the fastest first.
//   {"scenario", "gpus", "candidates" (how many were searched), "search" (branch-and-bound |
//    exhaustive), "top": [the `top` fastest: schedule, makespan_s, comm_bytes_per_rank_max,
//    peak_memory_bytes_max, exposed_comm_s_max, speedup, bound, lower_bound_s where computed],
//    "left_out": [schedule, reason], "pruned": [schedule, lower_bound_s], "outside_top":
//    [schedule, makespan_s, or lower_bound_s where the search stopped it once it was slower],
//    "sim_wall_s" (summed over the candidates simulated)}. No candidate that can run at all:
//    InputError at the scenario's schedule key, each left-out candidate's reason in it.
// By default a branch and bound (sim/scenario/tune_search.hpp): the same `top` rows as
// simulating every candidate, the others that provably cannot be among them listed as pruned
// with their bound. `exhaustive` simulates every candidate as independent items (item_map.hpp):
// spread over MPI ranks, the document is the same as a serial one; the search runs here only.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/verbs/item_map.hpp"
#include "sim/verbs/scenario_source.hpp"

namespace tilesim {

// Null where `map` returns no results (not the printing rank).
nlohmann::ordered_json tune_document(const ScenarioSource& source, int top, bool include_wall_clock,
                                     bool exhaustive = false, const ItemMap& map = map_serially,
                                     const ProgressFn& progress = {});

}  // namespace tilesim
