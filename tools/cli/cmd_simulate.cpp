// tilesim simulate SCENARIO [--set k=v]... [--json] [--out result.json] [--trace trace.json]
// Files are written whole or not at all (sim/core/atomic_file.hpp); SIGINT/SIGTERM stops the
// simulation and leaves every previous file as it was.
#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/model/chrome_trace.hpp"
#include "sim/verbs/simulate_verb.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"

namespace tilesim::cli {
namespace {

struct SimulateArgs {
  ScenarioArgs scenario;
  std::string trace;
  std::string out;  // the result JSON, instead of stdout
};

void print_summary(const PreparedScenario& p, const Plan& plan, const SimulationResult& result) {
  const Figures f = summarize(result);
  const AttentionShape& a = plan.shape;
  fmt::print("{}: {} on {} GPUs of {} ({}), {} tokens, {}, {}\n", p.scenario.name, plan.schedule,
             plan.ranks, p.topology.name, p.topology.gpu_model, format_tokens(a.seq_len),
             to_string(a.pass), a.causal ? "causal" : "non-causal");
  fmt::print("  makespan          {}\n", format_time_s(f.makespan_s));
  fmt::print("  one GPU           {}   speedup {:.2f}x, parallel efficiency {:.1f}%\n",
             format_time_s(f.single_gpu_s), f.speedup, 100.0 * f.efficiency);
  fmt::print("  compute per rank  {} (max)   balance max/mean {:.3f}\n",
             format_time_s(f.compute_s_max), f.compute_balance);
  fmt::print("  exposed comm      {} (max)   overlap {:.1f}% of communication hidden\n",
             format_time_s(f.exposed_comm_s_max), 100.0 * f.overlap);
  fmt::print("  bytes             {} in total, {} received per rank (max)\n",
             format_bytes(f.comm_bytes_total), format_bytes(f.comm_bytes_per_rank_max));
  fmt::print("  peak memory       {} per rank (max)\n", format_bytes(f.peak_memory_bytes_max));
  fmt::print("  simulation        {} ops, {} events, {} wall\n", plan.op_count(), result.events,
             format_time_s(result.sim_wall_s));
}

int run_simulate(const SimulateArgs& args) {
  const InterruptGuard interrupts;
  const SimulationRun run =
      run_simulation(source_of(args.scenario), /*record_link_samples=*/!args.trace.empty());
  const PreparedScenario& p = run.prepared;
  const Plan& plan = run.plan;
  const SimulationResult& result = run.result;
  for (const std::string& w : result.warnings) fmt::print(stderr, "warning: {}\n", w);
  // Both files or neither: an interrupt or a full disk leaves the previous ones.
  AtomicFileSet files;
  if (!args.trace.empty()) {
    write_chrome_trace(files.add(args.trace, "--trace").stream(), plan, result, plan.placement,
                       &p.topology);
  }
  const bool wall_clock = !args.scenario.no_wall_clock;
  if (!args.out.empty()) {
    files.add(args.out, "--out").stream() << simulation_document(run, wall_clock).dump(2) << "\n";
  }
  files.commit_all();
  if (!args.out.empty()) {
    fmt::print("wrote {}\n", args.out);
  } else if (args.scenario.json) {
    fmt::print("{}\n", simulation_document(run, wall_clock).dump(2));
  } else {
    print_summary(p, plan, result);
  }
  return kExitOk;
}

}  // namespace

void add_simulate(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* verb = app.add_subcommand("simulate", "Predict the timeline of a scenario's plan");
  add_scenario_options(*verb, args->scenario);
  verb->add_option("--trace", args->trace, "Write a Chrome trace (opens in Perfetto)")
      ->check(output_file_check());
  verb->add_option("--out", args->out, "Write the result JSON (as --json prints it) to this file")
      ->check(output_file_check());
  add_no_wall_clock_option(*verb, args->scenario);
  verb->callback(
      [args, &exit_code] { exit_code = run_guarded([&] { return run_simulate(*args); }); });
}

}  // namespace tilesim::cli
