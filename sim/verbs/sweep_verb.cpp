#include "sim/verbs/sweep_verb.hpp"

#include <fmt/format.h>

#include "sim/verbs/phase_stats.hpp"
#include "sim/verbs/simulate_verb.hpp"

namespace tilesim {

nlohmann::ordered_json sweep_row(const ScenarioSource& source, int gpus, bool include_wall_clock) {
  // As `simulate` runs it (symmetric, role quotient or lazy where those apply): the phase
  // statistics come from the per-rank totals, not from op records.
  const SimulationRun run = run_simulation(source.with(fmt::format("schedule.gpus={}", gpus)),
                                           SimulateRequest{.job_refused_by = "sweep"});
  const PhaseStats ph = phase_stats(run.result, run.prepared.scenario.attention.seq_len);
  nlohmann::ordered_json row = simulation_document(run, include_wall_clock);
  row["tokens_per_gpu"] = ph.tokens_per_gpu;
  row["phases"] = ph.phases;
  row["flops_per_gpu_per_phase"] = ph.flops_per_gpu_per_phase;
  row["bytes_per_gpu_per_phase"] = ph.bytes_per_gpu_per_phase;
  row["bytes_per_phase_total"] = ph.bytes_per_phase_total;
  row["comm_s_per_phase"] = ph.comm_s_per_phase;
  row["comm_s_per_phase_mean"] = ph.comm_s_per_phase_mean;
  row["compute_s_per_phase"] = ph.compute_s_per_phase;
  return row;
}

nlohmann::ordered_json sweep_document(const ScenarioSource& source, const std::vector<int>& gpus,
                                      bool include_wall_clock, const ItemMap& map,
                                      const ProgressFn& progress) {
  const std::vector<std::string> results = map(
      gpus.size(),
      [&](std::size_t i) {
        return guarded_item([&] { return sweep_row(source, gpus[i], include_wall_clock); });
      },
      progress);
  if (results.size() != gpus.size()) return nullptr;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const std::string& r : results) rows.push_back(unwrap_item(r));
  return rows;
}

}  // namespace tilesim
