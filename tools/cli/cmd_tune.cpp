// tilesim tune SCENARIO [--memory-budget 60GiB] [--top N] [--exhaustive] [--set k=v]... [--json]
//                      [--quiet]
// Searches schedule kind x mesh tile x placement x USP degree x double-ring inner size
// (schedule_tuner.hpp) by branch and bound
// (sim/scenario/tune_search.hpp) and prints the fastest N with makespan, bytes, peak memory and
// what bounds them, then the candidates that were left out and why, and those pruned by their
// lower bound. --exhaustive simulates every candidate; under `mpirun -np N` those are spread
// over the ranks (runtime/mpi/job_item_map.hpp). The search itself runs whole on every rank
// (it is sequential: each decision needs the results before it). Rank 0 prints.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "runtime/mpi/job_item_map.hpp"
#include "sim/core/units.hpp"
#include "sim/verbs/tune_verb.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/progress.hpp"
#include "tools/cli/table.hpp"

namespace tilesim::cli {
namespace {

struct TuneArgs {
  ScenarioArgs scenario;
  std::string memory_budget;
  int top = 10;
  bool exhaustive = false;
};

int run_tune(const TuneArgs& args) {
  ScenarioSource source = source_of(args.scenario);
  if (!args.memory_budget.empty()) {
    source.overrides.push_back("schedule.memory_budget=" + args.memory_budget);
  }
  const runtime::JobItemMap job;
  TerminalProgress progress("candidates", args.scenario.quiet || !job.prints());
  const nlohmann::ordered_json doc =
      tune_document(source, args.top, !args.scenario.no_wall_clock, args.exhaustive, job.map(),
                    [&](std::size_t done, std::size_t total) { progress.update(done, total); });
  if (!job.prints()) return kExitOk;
  if (args.scenario.json) {
    fmt::print("{}\n", doc.dump(2));
    return kExitOk;
  }
  const bool in_job = doc.contains("job_gpus");
  std::vector<std::string> columns{"#",        "schedule",     "makespan", "bytes in/rank",
                                   "peak mem", "exposed comm", "speedup",  "bound"};
  if (in_job) columns.push_back("job slowdown");
  Table table(columns);
  int shown = 0;
  std::vector<std::string> approximate;
  for (const auto& row : doc["top"]) {
    if (row.contains("approximate")) approximate.push_back(row["schedule"].get<std::string>());
    std::vector<std::string> cells{std::to_string(++shown),
                                   row["schedule"].get<std::string>(),
                                   format_time_s(row["makespan_s"].get<double>()),
                                   format_bytes(row["comm_bytes_per_rank_max"].get<double>()),
                                   format_bytes(row["peak_memory_bytes_max"].get<double>()),
                                   format_time_s(row["exposed_comm_s_max"].get<double>()),
                                   fmt::format("{:.1f}x", row["speedup"].get<double>()),
                                   row["bound"].get<std::string>()};
    if (in_job) cells.push_back(fmt::format("{:.4f}x", row["job_slowdown"].get<double>()));
    table.add(cells);
  }
  fmt::print("tune {} on {} GPUs: {} candidates ({}, {} pruned), {:.2f} s simulated wall time\n",
             doc["scenario"].get<std::string>(), doc["gpus"].get<int>(),
             doc["candidates"].get<std::size_t>(), doc["search"].get<std::string>(),
             doc["pruned"].size(), doc["sim_wall_s"].get<double>());
  if (in_job) {
    fmt::print("each candidate inside a job of {} GPUs: {} CP groups at once\n",
               doc["job_gpus"].get<int>(), doc["cp_groups"].get<int>());
  }
  fmt::print("{}", table.render());
  fmt::print("{}", approximate_rows_note(approximate));
  std::string warnings;
  for (const auto& row : doc["top"]) {
    if (row.contains("warning")) {
      warnings += fmt::format("  {}: {}\n", row["schedule"].get<std::string>(),
                              row["warning"].get<std::string>());
    }
  }
  if (!warnings.empty()) fmt::print("warnings:\n{}", warnings);
  if (!doc["left_out"].empty()) {
    fmt::print("left out:\n");
    for (const auto& row : doc["left_out"]) {
      fmt::print("  {}: {}\n", row["schedule"].get<std::string>(),
                 row["reason"].get<std::string>());
    }
  }
  if (!doc["outside_top"].empty()) {
    fmt::print("simulated, not among the {} fastest:\n", args.top);
    for (const auto& row : doc["outside_top"]) {
      fmt::print("  {}: {}\n", row["schedule"].get<std::string>(),
                 row.contains("makespan_s")
                     ? format_time_s(row["makespan_s"].get<double>())
                     : ">= " + format_time_s(row["lower_bound_s"].get<double>()) +
                           " (stopped once slower)");
    }
  }
  if (!doc["pruned"].empty()) {
    fmt::print(
        "pruned (not simulated: the lower bound on the makespan, sim/scenario/shape_bound.hpp, "
        "is above the {} fastest):\n",
        args.top);
    for (const auto& row : doc["pruned"]) {
      fmt::print("  {}: >= {}\n", row["schedule"].get<std::string>(),
                 format_time_s(row["lower_bound_s"].get<double>()));
    }
  }
  return kExitOk;
}

}  // namespace

void add_tune(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* verb = app.add_subcommand(
      "tune", "Search schedule kind, mesh tile and placement (spread over ranks under mpirun)");
  add_scenario_options(*verb, args->scenario);
  add_no_wall_clock_option(*verb, args->scenario);
  add_quiet_option(*verb, args->scenario.quiet);
  verb->add_option("--memory-budget", args->memory_budget,
                   "Peak bytes per GPU the schedule may use, e.g. 60GiB");
  verb->add_option("--top", args->top, "How many of the fastest candidates to print")
      ->check(CLI::Range(1, 1 << 20));
  verb->add_flag("--exhaustive", args->exhaustive,
                 "Simulate every candidate (no pruning by lower bounds)");
  verb->callback([args, &exit_code] { exit_code = run_guarded([&] { return run_tune(*args); }); });
}

}  // namespace tilesim::cli
