// tilesim plan SCENARIO [--set k=v]... [--json] [--dump]
// The JSON is sim/verbs/plan_verb.hpp's document (the Python package's tilesim.plan).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "sim/scenario/prepared_scenario.hpp"
#include "sim/verbs/plan_verb.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/table.hpp"

namespace tilesim::cli {
namespace {

std::string mask_text(const AttentionMask& mask) {
  switch (mask.kind) {
    case AttentionMaskKind::full:
      return "non-causal";
    case AttentionMaskKind::causal:
      return "causal";
    case AttentionMaskKind::sliding_window:
      return fmt::format("sliding window {}", format_tokens(mask.window_tokens));
    case AttentionMaskKind::documents:
      return fmt::format("{} packed documents", mask.document_starts.size());
  }
  return "?";
}

std::string breakdown_text(const TensorBytes& bytes) {
  std::string out;
  for (int t = 0; t < kTensorKinds; ++t) {
    if (bytes[static_cast<std::size_t>(t)] <= 0) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", to_string(static_cast<Tensor>(t)),
                       format_bytes(bytes[static_cast<std::size_t>(t)]));
  }
  return out;
}

int run_plan(const ScenarioArgs& args, bool dump) {
  const ScenarioSource source = source_of(args);
  if (args.json) {
    fmt::print("{}\n", plan_document(source, dump).dump(2));
    return kExitOk;
  }
  const Scenario scenario = planned_scenario(source);
  PlanReport report;
  const Plan plan = build_valid_plan(scenario, &report);
  std::array<std::size_t, 5> kinds{};
  for (const auto& program : plan.programs) {
    for (const Op& op : program.ops()) ++kinds[static_cast<std::size_t>(op.kind)];
  }
  const AttentionShape& a = plan.shape;
  fmt::print("plan {} on {} GPUs: {} tokens ({} per GPU), {}, {}, heads {} / kv_heads {}\n",
             plan.schedule, plan.ranks, format_tokens(a.seq_len),
             format_tokens(a.seq_len / plan.ranks), to_string(a.pass), mask_text(a.mask), a.heads,
             a.kv_heads);
  fmt::print(
      "valid: every unmasked block computed once, inputs present, sends and receives matched,\n"
      "       deadlock-free in grouped point-to-point order, outputs complete at their owners\n");
  fmt::print("ops: {} (compute {}, send {}, recv {}, merge {}, free {})\n", plan.op_count(),
             kinds[0], kinds[1], kinds[2], kinds[3], kinds[4]);
  fmt::print("bytes: total {}, received per rank max {}\n", format_bytes(report.total_bytes_sent()),
             format_bytes(report.max_bytes_received()));
  fmt::print("compute_balance (max / mean FLOPs per rank): {:.4f}\n", work_balance(report));
  Table table(
      {"rank", "computes", "TFLOP", "work/mean", "sent", "received", "peak memory", "at peak"});
  for (int r = 0; r < plan.ranks; ++r) {
    const RankStats& s = report.ranks[static_cast<std::size_t>(r)];
    table.add({std::to_string(r), std::to_string(s.computes),
               fmt::format("{:.3f}", s.compute_flops / 1e12),
               fmt::format("{:.4f}", work_over_mean(report, s)), format_bytes(s.bytes_sent),
               format_bytes(s.bytes_received), format_bytes(s.peak_bytes),
               breakdown_text(s.peak_breakdown)});
  }
  fmt::print("{}", table.render());
  if (dump) {
    for (int r = 0; r < plan.ranks; ++r) {
      const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        const Op& op = program.op(i);
        std::string extra;
        if (op.kind == OpKind::send || op.kind == OpKind::recv) {
          extra = fmt::format(" [group {}]", op.comm_group);
        }
        for (int after : program.after(i)) extra += fmt::format(" [after op {}]", after);
        fmt::print("{}{}\n", plan.describe({r, i}), extra);
      }
    }
  }
  return kExitOk;
}

}  // namespace

void add_plan(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ScenarioArgs>();
  auto dump = std::make_shared<bool>(false);
  CLI::App* verb = app.add_subcommand("plan", "Generate, validate and summarise a scenario's plan");
  add_scenario_options(*verb, *args);
  verb->add_flag("--dump", *dump, "Print every op of every rank (with --json: ops per rank)");
  verb->callback([args, dump, &exit_code] {
    exit_code = run_guarded([&] { return run_plan(*args, *dump); });
  });
}

}  // namespace tilesim::cli
