// tilesim compare SCENARIO --schedules ring,mesh:4x4,mesh:auto [--set k=v]... [--json] [--quiet]
// Simulates each schedule on the scenario and prints them side by side
// (sim/verbs/compare_verb.hpp): bytes received per rank (and the reduction against ring's),
// makespan, exposed communication, overlap, peak memory, speedup over one GPU and what
// bounds it. A schedule that cannot run here is listed with the reason.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sim/core/units.hpp"
#include "sim/verbs/compare_verb.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/progress.hpp"
#include "tools/cli/table.hpp"

namespace tilesim::cli {
namespace {

struct CompareArgs {
  ScenarioArgs scenario;
  std::string schedules = "ring,mesh:auto";
};

std::string tile_of(const nlohmann::ordered_json& row) {
  if (row["kind"] != "mesh") return "-";
  return fmt::format("{}x{} {}", row["tile"][0].get<int>(), row["tile"][1].get<int>(),
                     row["placement"].get<std::string>());
}

int run_compare(const CompareArgs& args) {
  TerminalProgress progress("schedules", args.scenario.quiet);
  const nlohmann::ordered_json doc =
      compare_document(source_of(args.scenario), args.schedules, !args.scenario.no_wall_clock,
                       [&](std::size_t done, std::size_t total) { progress.update(done, total); });
  if (args.scenario.json) {
    fmt::print("{}\n", doc.dump(2));
    return kExitOk;
  }
  const bool in_job = doc.contains("job_gpus");
  std::vector<std::string> columns{"schedule", "tile",         "bytes in/rank", "vs ring",
                                   "makespan", "exposed comm", "overlap",       "peak mem",
                                   "balance",  "speedup",      "bound"};
  if (in_job) columns.push_back("job slowdown");
  Table table(columns);
  std::string left_out;
  std::vector<std::string> approximate;
  std::string warnings;
  for (const auto& row : doc["schedules"]) {
    const std::string label = row["schedule"];
    if (row.contains("approximate")) approximate.push_back(label);
    if (row.contains("warning")) {
      warnings += fmt::format("  {}: {}\n", label, row["warning"].get<std::string>());
    }
    if (row.contains("left_out")) {
      left_out += fmt::format("{}  {}: {}", left_out.empty() ? "" : "\n", label,
                              row["left_out"].get<std::string>());
      continue;
    }
    const auto num = [&](const char* key) { return row[key].get<double>(); };
    std::vector<std::string> cells{label,
                                   tile_of(row),
                                   format_bytes(num("comm_bytes_per_rank_max")),
                                   fmt::format("{:+.1f}%", 100.0 * (num("bytes_vs_ring") - 1.0)),
                                   format_time_s(num("makespan_s")),
                                   format_time_s(num("exposed_comm_s_max")),
                                   fmt::format("{:.1f}%", 100 * num("overlap")),
                                   format_bytes(num("peak_memory_bytes_max")),
                                   fmt::format("{:.3f}", num("compute_balance")),
                                   fmt::format("{:.1f}x", num("speedup")),
                                   row["bound"].get<std::string>()};
    if (in_job) cells.push_back(fmt::format("{:.4f}x", num("job_slowdown")));
    table.add(cells);
  }
  fmt::print("compare {} on {} GPUs (ring bytes in/rank {})", doc["scenario"].get<std::string>(),
             doc["gpus"].get<int>(), format_bytes(doc["ring_bytes_per_rank"].get<double>()));
  if (in_job) {
    fmt::print(", each inside a job of {} GPUs: {} CP groups at once", doc["job_gpus"].get<int>(),
               doc["cp_groups"].get<int>());
  }
  fmt::print("\n{}", table.render());
  fmt::print("{}", approximate_rows_note(approximate));
  if (!left_out.empty()) fmt::print("left out:\n{}\n", left_out);
  if (!warnings.empty()) fmt::print("warnings:\n{}", warnings);
  return kExitOk;
}

}  // namespace

void add_compare(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* verb = app.add_subcommand("compare", "Simulate several schedules side by side");
  add_scenario_options(*verb, args->scenario);
  add_no_wall_clock_option(*verb, args->scenario);
  add_quiet_option(*verb, args->scenario.quiet);
  verb->add_option("--schedules", args->schedules,
                   "Comma-separated: all, a kind (ring, zigzag, ...), mesh:AxB, mesh:auto, "
                   "mesh:min-bytes, usp:U");
  verb->callback(
      [args, &exit_code] { exit_code = run_guarded([&] { return run_compare(*args); }); });
}

}  // namespace tilesim::cli
