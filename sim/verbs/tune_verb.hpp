// The `tune` verb's document: every candidate of schedule_tuner.hpp simulated, the fastest
// first.
//   {"scenario", "gpus", "candidates" (how many were searched), "top": [the `top` fastest:
//    schedule, makespan_s, comm_bytes_per_rank_max, peak_memory_bytes_max, exposed_comm_s_max,
//    speedup, bound], "left_out": [schedule, reason], "sim_wall_s" (summed over candidates)}
// The candidates are independent items (item_map.hpp): spread over MPI ranks, the document is
// the same as a serial one.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/verbs/item_map.hpp"
#include "sim/verbs/scenario_source.hpp"

namespace tilesim {

// Null where `map` returns no results (not the printing rank).
nlohmann::ordered_json tune_document(const ScenarioSource& source, int top, bool include_wall_clock,
                                     const ItemMap& map = map_serially,
                                     const ProgressFn& progress = {});

}  // namespace tilesim
