// tilesim simulate SCENARIO [--set k=v]... [--json] [--out result.json] [--trace trace.json]
//                  [--per-op] [--full-check] [--no-symmetry]
// Files are written whole or not at all (sim/core/atomic_file.hpp); SIGINT/SIGTERM stops the
// simulation and leaves every previous file as it was.
#include <fmt/format.h>

#include <optional>

#include "sim/core/atomic_file.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/job/job_json.hpp"
#include "sim/job/job_simulation.hpp"
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
  bool full_check = false;
  bool per_op = false;  // add op_times to the result JSON
  bool no_symmetry = false;
};

void print_summary(const SimulationRun& run) {
  const PreparedScenario& p = run.prepared;
  const Plan& plan = run.simulated_group_plan;
  const SimulationResult& result = run.result;
  const Figures f = summarize(result);
  const AttentionShape& a = plan.shape;
  fmt::print("{}: {} on {} GPUs of {} ({}), {} tokens, {}, {}\n", p.scenario.name, plan.schedule,
             p.scenario.schedule.gpus, p.topology.name, p.topology.gpu_model,
             format_tokens(a.seq_len), to_string(a.pass),
             a.mask.kind == AttentionMaskKind::full ? "non-causal" : to_string(a.mask.kind));
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
  // On the symmetric path the simulator ran the quotient's ops; the plan has P / K times more.
  fmt::print("  simulation        {} ops, {} events, {} wall", run.full_plan_ops(), result.events,
             format_time_s(result.sim_wall_s));
  if (run.symmetric() && run.symmetry->roles) {
    const RoleApproximation& roles = *run.symmetry->roles;
    fmt::print(
        " (APPROXIMATE, role quotient: {} ops simulated, ranks {}..{} stand for every "
        "block of whole nodes; their slowest transfer {} stands for every block's, which differ "
        "by up to {} within a role)",
        plan.op_count(), roles.first_rank, roles.first_rank + plan.ranks - 1,
        format_time_s(ps_to_s(roles.slowest_step_ps)),
        format_time_s(ps_to_s(roles.role_spread_ps)));
  } else if (run.symmetric()) {
    fmt::print(" ({}: {} ops simulated, one rank of each of {} classes of {} ranks)",
               run.symmetry->work ? "APPROXIMATE, work-block quotient" : "symmetric",
               plan.op_count(), plan.ranks, p.scenario.schedule.gpus / plan.ranks);
  } else if (run.lazy) {
    fmt::print(" (every rank's program generated as it ran, a window of ops held)");
  }
  if (run.symmetric() && run.symmetry->work) {
    const int first = run.symmetry->work->first_rank;
    fmt::print(
        " (causal work: ranks {}..{}'s programs stand for every block's; the end ranks' compute "
        "spans {})",
        first, first + plan.ranks - 1, format_time_s(ps_to_s(run.symmetry->work->work_spread_ps)));
  }
  fmt::print("\n");
}

// The job lines: how many groups, the slowdown against one group alone and the links that
// explain it.
void print_job_summary(const JobLayout& layout, const JobRun& run) {
  fmt::print(
      "  job               {} GPUs = TP {} x CP {} x DP {} ({}), {} CP groups at once, {} ops\n",
      layout.gpus(), layout.tp(), layout.cp(), layout.dp(), to_string(layout.order()),
      layout.cp_groups(), run.job_ops);
  if (run.symmetry) {
    fmt::print(
        "  job symmetry      {} of the {} groups simulated, each flow with its {} copies "
        "(exact)\n",
        run.symmetry->classes / layout.cp(), layout.cp_groups(), run.symmetry->copies());
  }
  fmt::print("  job slowdown      {:.4f}x against one group alone ({})\n", run.slowdown,
             format_time_s(static_cast<double>(run.group_alone_makespan_ps) * 1e-12));
  fmt::print("  links             {} used, {} crossed by 2+ groups, at most {} groups on one\n",
             run.links.links_used, run.links.links_shared, run.links.max_groups);
  fmt::print(
      "  most loaded links (bytes, groups crossing, busy share of the makespan, mean "
      "rate while busy / capacity)\n");
  for (const LinkLoad& l : run.links.top) {
    fmt::print("    {:<34} {:>10}  {:>4} groups  busy {:5.1f}%  {:5.1f}% of {}/s\n", l.name,
               format_bytes(l.bytes), l.groups, 100.0 * l.busy_fraction,
               100.0 * l.rate_while_busy_bytes_per_s / l.capacity_bytes_per_s,
               format_bytes(l.capacity_bytes_per_s));
  }
}

int run_simulate(const SimulateArgs& args) {
  const InterruptGuard interrupts;
  SimulateRequest request;
  request.trace = !args.trace.empty();
  request.per_op = args.per_op;
  request.full_check = args.full_check;
  request.no_symmetry = args.no_symmetry;
  const SimulationRun run =
      run_simulation(source_of(args.scenario), request,
                     [](const std::string& text) { fmt::print(stderr, "note: {}\n", text); });
  const PreparedScenario& p = run.prepared;
  const SimulationResult& shown = run.result;
  const Plan& traced = run.simulated_plan();
  for (const std::string& w : shown.warnings) fmt::print(stderr, "warning: {}\n", w);
  // Both files or neither: an interrupt or a full disk leaves the previous ones.
  AtomicFileSet files;
  if (!args.trace.empty()) {
    write_chrome_trace(files.add(args.trace, "--trace").stream(), traced, shown, traced.placement,
                       &p.topology);
  }
  nlohmann::ordered_json json;
  const bool wall_clock = !args.scenario.no_wall_clock;
  if (!args.out.empty() || args.scenario.json) json = simulation_document(run, wall_clock);
  if (!args.out.empty()) files.add(args.out, "--out").stream() << json.dump(2) << "\n";
  files.commit_all();
  if (!args.out.empty()) {
    fmt::print("wrote {}\n", args.out);
  } else if (args.scenario.json) {
    fmt::print("{}\n", json.dump(2));
  } else {
    print_summary(run);
    if (run.job) print_job_summary(*p.job_layout, *run.job);
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
  verb->add_flag("--per-op", args->per_op,
                 "Keep every op's times and add them to the result JSON as op_times (the array "
                 "`run --json` writes, for `validate --measured`); by default only per-rank "
                 "totals are kept");
  verb->add_flag("--no-symmetry", args->no_symmetry,
                 "Simulate every rank even where one rank per class would be exact "
                 "(schedule.symmetry: off)");
  verb->add_flag("--full-check", args->full_check,
                 "Prove the plan with the full validator (a dry run) at any GPU count; by default "
                 "only plans of up to 256 GPUs are (docs/design-notes.md, One pass)");
  verb->callback(
      [args, &exit_code] { exit_code = run_guarded([&] { return run_simulate(*args); }); });
}

}  // namespace tilesim::cli
