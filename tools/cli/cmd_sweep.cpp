// tilesim sweep SCENARIO --gpus 4,8,16 [--set k=v]... [--csv FILE] [--json]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sim/core/atomic_file.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/job_scenario.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/ring_report.hpp"
#include "tools/cli/table.hpp"

namespace tilesim::cli {
namespace {

struct SweepArgs {
  ScenarioArgs scenario;
  std::vector<int> gpus;
  std::string csv;
};

int run_sweep(const SweepArgs& args) {
  Table table({"gpus", "tokens/GPU", "tokens", "TFLOP/GPU/phase", "phases", "bytes/GPU/phase",
               "bytes/phase", "comm/phase (slowest)", "compute/phase", "overlap", "makespan",
               "speedup", "efficiency"});
  Table csv({"gpus", "tokens_per_gpu", "tokens", "flops_per_gpu_per_phase", "phases",
             "bytes_per_gpu_per_phase", "bytes_per_phase_total", "comm_s_per_phase",
             "compute_s_per_phase", "overlap", "makespan_s", "speedup", "efficiency",
             "exposed_comm_s_max", "peak_memory_bytes_max"});
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::string name;
  const InterruptGuard interrupts;
  for (int gpus : args.gpus) {
    throw_if_interrupted();
    std::vector<std::string> sets = args.scenario.sets;
    sets.push_back(fmt::format("schedule.gpus={}", gpus));
    const PreparedScenario p =
        prepare_scenario(args.scenario.path, sets, resource_limits(args.scenario));
    reject_job(p.scenario, "sweep");
    name = p.scenario.name;
    const Plan plan = build_plan_to_simulate(p.scenario);
    SimulationOptions options;  // the phase statistics read per-op and per-transfer times
    options.record_ops = options.record_transfers = true;
    const SimulationResult result = simulate(plan, p.topology, p.profile, options);
    const Figures f = summarize(result);
    check_memory_budget(p.scenario, f.peak_memory_bytes_max);
    const PhaseStats ph = phase_stats(plan, result);
    table.add({std::to_string(gpus), format_tokens(ph.tokens_per_gpu),
               format_tokens(plan.shape.seq_len),
               fmt::format("{:.3f}", ph.flops_per_gpu_per_phase / 1e12), std::to_string(ph.phases),
               format_bytes(ph.bytes_per_gpu_per_phase), format_bytes(ph.bytes_per_phase_total),
               format_time_s(ph.comm_s_per_phase), format_time_s(ph.compute_s_per_phase),
               fmt::format("{:.1f}%", 100 * f.overlap), format_time_s(f.makespan_s),
               fmt::format("{:.2f}x", f.speedup), fmt::format("{:.1f}%", 100 * f.efficiency)});
    csv.add({std::to_string(gpus), std::to_string(ph.tokens_per_gpu),
             std::to_string(plan.shape.seq_len), fmt::format("{:.6g}", ph.flops_per_gpu_per_phase),
             std::to_string(ph.phases), fmt::format("{:.0f}", ph.bytes_per_gpu_per_phase),
             fmt::format("{:.0f}", ph.bytes_per_phase_total),
             fmt::format("{:.9g}", ph.comm_s_per_phase),
             fmt::format("{:.9g}", ph.compute_s_per_phase), fmt::format("{:.6f}", f.overlap),
             fmt::format("{:.9g}", f.makespan_s), fmt::format("{:.6f}", f.speedup),
             fmt::format("{:.6f}", f.efficiency), fmt::format("{:.9g}", f.exposed_comm_s_max),
             fmt::format("{:.0f}", f.peak_memory_bytes_max)});
    ResultContext context{p.scenario.name, p.scenario.topology_path, p.scenario.calibration_path,
                          !args.scenario.no_wall_clock};
    nlohmann::ordered_json row = result_to_json(plan, result, context);
    row["tokens_per_gpu"] = ph.tokens_per_gpu;
    row["phases"] = ph.phases;
    row["flops_per_gpu_per_phase"] = ph.flops_per_gpu_per_phase;
    row["bytes_per_gpu_per_phase"] = ph.bytes_per_gpu_per_phase;
    row["bytes_per_phase_total"] = ph.bytes_per_phase_total;
    row["comm_s_per_phase"] = ph.comm_s_per_phase;
    row["comm_s_per_phase_mean"] = ph.comm_s_per_phase_mean;
    row["compute_s_per_phase"] = ph.compute_s_per_phase;
    rows.push_back(row);
  }
  if (!args.csv.empty()) {
    AtomicFile out(args.csv, "--csv");
    out.stream() << csv.csv();
    out.commit();
  }
  if (args.scenario.json) {
    fmt::print("{}\n", rows.dump(2));
  } else {
    fmt::print("sweep of {}\n{}", name, table.render());
  }
  return kExitOk;
}

}  // namespace

void add_sweep(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* verb = app.add_subcommand("sweep", "Simulate a scenario over several GPU counts");
  add_scenario_options(*verb, args->scenario);
  verb->add_option("--gpus", args->gpus, "GPU counts, e.g. 4,8,16")
      ->required()
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  verb->add_option("--csv", args->csv, "Also write the rows as CSV to this file")
      ->check(output_file_check());
  add_no_wall_clock_option(*verb, args->scenario);
  verb->callback([args, &exit_code] { exit_code = run_guarded([&] { return run_sweep(*args); }); });
}

}  // namespace tilesim::cli
