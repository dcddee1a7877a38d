// tilesim sweep SCENARIO --gpus 4,8,16 [--set k=v]... [--csv FILE] [--json] [--quiet]
// The GPU counts are independent runs: under `mpirun -np N` they are spread over the ranks
// (runtime/mpi/job_item_map.hpp) and rank 0 prints what a serial run prints.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/mpi/job_item_map.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/core/units.hpp"
#include "sim/verbs/sweep_verb.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/progress.hpp"
#include "tools/cli/table.hpp"

namespace tilesim::cli {
namespace {

struct SweepArgs {
  ScenarioArgs scenario;
  std::vector<int> gpus;
  std::string csv;
};

int run_sweep(const SweepArgs& args) {
  // Under mpirun the default handlers stay: mpirun forwards a signal to kill every rank.
  std::optional<InterruptGuard> interrupts;
  if (!runtime::launched_by_mpirun()) interrupts.emplace();
  const runtime::JobItemMap job;
  TerminalProgress progress("GPU counts", args.scenario.quiet || !job.prints());
  const nlohmann::ordered_json rows =
      sweep_document(source_of(args.scenario), args.gpus, !args.scenario.no_wall_clock, job.map(),
                     [&](std::size_t done, std::size_t total) { progress.update(done, total); });
  if (!job.prints()) return kExitOk;
  Table table({"gpus", "tokens/GPU", "tokens", "TFLOP/GPU/phase", "phases", "bytes/GPU/phase",
               "bytes/phase", "comm/phase (slowest)", "compute/phase", "overlap", "makespan",
               "speedup", "efficiency"});
  Table csv({"gpus", "tokens_per_gpu", "tokens", "flops_per_gpu_per_phase", "phases",
             "bytes_per_gpu_per_phase", "bytes_per_phase_total", "comm_s_per_phase",
             "compute_s_per_phase", "overlap", "makespan_s", "speedup", "efficiency",
             "exposed_comm_s_max", "peak_memory_bytes_max", "approximate"});
  std::vector<std::string> approximate;  // GPU counts simulated on an approximate quotient
  for (const auto& row : rows) {
    const bool approximated = row.contains("symmetry") && (row["symmetry"].contains("roles") ||
                                                           row["symmetry"].contains("work_block"));
    if (approximated) approximate.push_back(std::to_string(row["gpus"].get<int>()));
    const auto num = [&](const char* key) { return row[key].get<double>(); };
    const auto integer = [&](const char* key) { return row[key].get<std::int64_t>(); };
    table.add({std::to_string(integer("gpus")), format_tokens(integer("tokens_per_gpu")),
               format_tokens(integer("seq_len")),
               fmt::format("{:.3f}", num("flops_per_gpu_per_phase") / 1e12),
               std::to_string(integer("phases")), format_bytes(num("bytes_per_gpu_per_phase")),
               format_bytes(num("bytes_per_phase_total")), format_time_s(num("comm_s_per_phase")),
               format_time_s(num("compute_s_per_phase")),
               fmt::format("{:.1f}%", 100 * num("overlap")), format_time_s(num("makespan_s")),
               fmt::format("{:.2f}x", num("speedup")),
               fmt::format("{:.1f}%", 100 * num("efficiency"))});
    csv.add(
        {std::to_string(integer("gpus")), std::to_string(integer("tokens_per_gpu")),
         std::to_string(integer("seq_len")), fmt::format("{:.6g}", num("flops_per_gpu_per_phase")),
         std::to_string(integer("phases")), fmt::format("{:.0f}", num("bytes_per_gpu_per_phase")),
         fmt::format("{:.0f}", num("bytes_per_phase_total")),
         fmt::format("{:.9g}", num("comm_s_per_phase")),
         fmt::format("{:.9g}", num("compute_s_per_phase")), fmt::format("{:.6f}", num("overlap")),
         fmt::format("{:.9g}", num("makespan_s")), fmt::format("{:.6f}", num("speedup")),
         fmt::format("{:.6f}", num("efficiency")), fmt::format("{:.9g}", num("exposed_comm_s_max")),
         fmt::format("{:.0f}", num("peak_memory_bytes_max")), approximated ? "1" : "0"});
  }
  if (!args.csv.empty()) {
    AtomicFile out(args.csv, "--csv");
    out.stream() << csv.csv();
    out.commit();
  }
  if (args.scenario.json) {
    fmt::print("{}\n", rows.dump(2));
  } else {
    const std::string name = rows.empty() ? "" : rows.back()["scenario"].get<std::string>();
    fmt::print("sweep of {}\n{}{}", name, table.render(), approximate_rows_note(approximate));
  }
  return kExitOk;
}

}  // namespace

void add_sweep(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* verb = app.add_subcommand(
      "sweep", "Simulate a scenario over several GPU counts (spread over ranks under mpirun)");
  add_scenario_options(*verb, args->scenario);
  add_gpu_counts_option(*verb, args->gpus, "GPU counts, e.g. 4,8,16")->required();
  verb->add_option("--csv", args->csv, "Also write the rows as CSV to this file")
      ->check(output_file_check());
  add_no_wall_clock_option(*verb, args->scenario);
  add_quiet_option(*verb, args->scenario.quiet);
  verb->callback([args, &exit_code] { exit_code = run_guarded([&] { return run_sweep(*args); }); });
}

}  // namespace tilesim::cli
