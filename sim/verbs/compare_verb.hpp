// The `compare` verb's document: each schedule of a --schedules list (schedule_list.hpp)
// simulated on the scenario, side by side.
//   {"scenario", "gpus", "ring_bytes_per_rank", "schedules": [row...]}
// A row: schedule, kind (tile and placement for mesh), then either left_out (the reason) or
// comm_bytes_per_rank_max, bytes_vs_ring (its ratio to ring_bytes_per_rank, the bytes the ring
// receives per rank: (P-1) KV chunks forward), makespan_s, exposed_comm_s_max, overlap,
// peak_memory_bytes_max, compute_balance, speedup, bound and sim_wall_s.
// Throws InputError at --schedules when no schedule of the list can run here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/verbs/item_map.hpp"
#include "sim/verbs/scenario_source.hpp"

namespace tilesim {

nlohmann::ordered_json compare_document(const ScenarioSource& source, const std::string& schedules,
                                        bool include_wall_clock, const ProgressFn& progress = {});

}  // namespace tilesim
