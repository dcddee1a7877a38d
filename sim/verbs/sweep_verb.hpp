// The `sweep` verb's document: one row per GPU count, each the result JSON of that run
// (result_json.hpp) plus its per-phase figures (phase_stats.hpp): tokens_per_gpu, phases,
// flops_per_gpu_per_phase, bytes_per_gpu_per_phase, bytes_per_phase_total, comm_s_per_phase,
// comm_s_per_phase_mean, compute_s_per_phase. The GPU counts are independent items (item_map.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "sim/verbs/item_map.hpp"
#include "sim/verbs/scenario_source.hpp"

namespace tilesim {

nlohmann::ordered_json sweep_row(const ScenarioSource& source, int gpus, bool include_wall_clock);

// The array of rows in --gpus order; null where `map` returns no results (not the printing
// rank). The first failing GPU count's error is thrown.
nlohmann::ordered_json sweep_document(const ScenarioSource& source, const std::vector<int>& gpus,
                                      bool include_wall_clock, const ItemMap& map = map_serially,
                                      const ProgressFn& progress = {});

}  // namespace tilesim
