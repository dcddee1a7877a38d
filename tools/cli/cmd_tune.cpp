// tilesim tune SCENARIO [--memory-budget 60GiB] [--top N] [--set k=v]... [--json]
// Searches schedule kind x mesh tile x placement (schedule_tuner.hpp), simulates
// each and prints the fastest N with makespan, bytes, peak memory and what
// bounds them, then the candidates that were left out and why.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sim/core/units.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/table.hpp"

namespace tilesim::cli {
namespace {

struct TuneArgs {
  ScenarioArgs scenario;
  std::string memory_budget;
  int top = 10;
};

int run_tune(const TuneArgs& args) {
  std::vector<std::string> sets = args.scenario.sets;
  if (!args.memory_budget.empty()) {
    sets.push_back("schedule.memory_budget=" + args.memory_budget);
  }
  const PreparedScenario p =
      prepare_scenario(args.scenario.path, sets, resource_limits(args.scenario));
  const std::vector<CandidateResult> ranked = tune_schedules(p);
  const bool in_job = p.job_layout.has_value();
  std::vector<std::string> columns{"#",        "schedule",     "makespan", "bytes in/rank",
                                   "peak mem", "exposed comm", "speedup",  "bound"};
  if (in_job) columns.push_back("job slowdown");
  Table table(columns);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  nlohmann::ordered_json left_out = nlohmann::ordered_json::array();
  std::string skipped;
  int shown = 0;
  double wall_s = 0.0;
  for (const CandidateResult& r : ranked) {
    wall_s += r.sim_wall_s;
    if (!r.ok) {
      skipped += fmt::format("  {}: {}\n", r.candidate.label, r.reason);
      left_out.push_back({{"schedule", r.candidate.label}, {"reason", r.reason}});
      continue;
    }
    if (shown >= args.top) continue;
    ++shown;
    const Figures& f = r.figures;
    std::vector<std::string> cells{std::to_string(shown),
                                   r.candidate.label,
                                   format_time_s(f.makespan_s),
                                   format_bytes(f.comm_bytes_per_rank_max),
                                   format_bytes(f.peak_memory_bytes_max),
                                   format_time_s(f.exposed_comm_s_max),
                                   fmt::format("{:.1f}x", f.speedup),
                                   r.bound};
    if (in_job) cells.push_back(fmt::format("{:.4f}x", r.job_slowdown));
    table.add(cells);
    nlohmann::ordered_json row{{"schedule", r.candidate.label},
                               {"makespan_s", f.makespan_s},
                               {"comm_bytes_per_rank_max", f.comm_bytes_per_rank_max},
                               {"peak_memory_bytes_max", f.peak_memory_bytes_max},
                               {"exposed_comm_s_max", f.exposed_comm_s_max},
                               {"speedup", f.speedup},
                               {"bound", r.bound}};
    if (in_job) row["job_slowdown"] = r.job_slowdown;
    rows.push_back(row);
  }
  if (args.scenario.json) {
    nlohmann::ordered_json doc;
    doc["scenario"] = p.scenario.name;
    doc["gpus"] = p.scenario.schedule.gpus;
    if (in_job) {
      doc["job_gpus"] = p.job_layout->gpus();
      doc["cp_groups"] = p.job_layout->cp_groups();
    }
    doc["top"] = rows;
    doc["left_out"] = left_out;
    doc["sim_wall_s"] = args.scenario.no_wall_clock ? 0.0 : wall_s;
    fmt::print("{}\n", doc.dump(2));
  } else {
    fmt::print("tune {} on {} GPUs: {} candidates, {:.2f} s simulated wall time\n", p.scenario.name,
               p.scenario.schedule.gpus, ranked.size(), args.scenario.no_wall_clock ? 0.0 : wall_s);
    if (in_job) {
      fmt::print("each candidate inside a job of {} GPUs: {} CP groups at once\n",
                 p.job_layout->gpus(), p.job_layout->cp_groups());
    }
    fmt::print("{}", table.render());
    if (!skipped.empty()) fmt::print("left out:\n{}", skipped);
  }
  return kExitOk;
}

}  // namespace

void add_tune(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* verb = app.add_subcommand("tune", "Search schedule kind, mesh tile and placement");
  add_scenario_options(*verb, args->scenario);
  add_no_wall_clock_option(*verb, args->scenario);
  verb->add_option("--memory-budget", args->memory_budget,
                   "Peak bytes per GPU the schedule may use, e.g. 60GiB");
  verb->add_option("--top", args->top, "How many of the fastest candidates to print")
      ->check(CLI::Range(1, 1 << 20));
  verb->callback([args, &exit_code] { exit_code = run_guarded([&] { return run_tune(*args); }); });
}

}  // namespace tilesim::cli
