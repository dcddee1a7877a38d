#include "sim/verbs/plan_verb.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "sim/plan/validator.hpp"

namespace tilesim {
namespace {

nlohmann::ordered_json op_json(const Plan& plan, int rank, int index) {
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank)];
  const Op& op = program.op(index);
  nlohmann::ordered_json j;
  j["kind"] = std::string(to_string(op.kind));
  j["pass"] = std::string(to_string(op.pass));
  j["text"] = plan.describe({rank, index});
  if (op.kind == OpKind::send || op.kind == OpKind::recv) {
    j["peer"] = op.peer;
    j["comm_group"] = op.comm_group;
  }
  if (op.kind == OpKind::compute) j["flops"] = plan.compute_flops({rank, index});
  auto names = [&](std::span<const int> ids) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (int id : ids) list.push_back(plan.object(id).name);
    return list;
  };
  j["reads"] = names(program.reads(index));
  j["writes"] = names(program.writes(index));
  j["after"] = std::vector<int>(program.after(index).begin(), program.after(index).end());
  return j;
}

double mean_flops_per_rank(const PlanReport& report) {
  double sum = 0.0;
  for (const RankStats& r : report.ranks) sum += r.compute_flops;
  return report.ranks.empty() ? 0.0 : sum / static_cast<double>(report.ranks.size());
}

}  // namespace

double work_over_mean(const PlanReport& report, const RankStats& rank) {
  const double mean = mean_flops_per_rank(report);
  return mean > 0 ? rank.compute_flops / mean : 1.0;
}

double work_balance(const PlanReport& report) {
  // One mean for all ranks (work_over_mean recomputes it per call); x / m is monotone in x,
  // so max(x_i) / m equals max(x_i / m) bit for bit.
  const double mean = mean_flops_per_rank(report);
  if (mean <= 0) return 1.0;
  double max_flops = 0.0;
  for (const RankStats& r : report.ranks) max_flops = std::max(max_flops, r.compute_flops);
  return std::max(1.0, max_flops / mean);
}

Scenario planned_scenario(const ScenarioSource& source) {
  Scenario scenario = load_scenario(source);
  if (scenario.schedule.kind == "mesh" && scenario.schedule.tile_choice != MeshTileChoice::given) {
    check_whole_plan_first(scenario);  // before the tile search
    scenario = prepare_scenario(std::move(scenario), source.limits).scenario;
  }
  return scenario;
}

nlohmann::ordered_json plan_document(const ScenarioSource& source, bool include_ops) {
  const Scenario scenario = planned_scenario(source);
  PlanReport report;
  const Plan plan = build_valid_plan(scenario, &report);
  std::array<std::size_t, 5> kinds{};
  for (const auto& program : plan.programs) {
    for (const Op& op : program.ops()) ++kinds[static_cast<std::size_t>(op.kind)];
  }
  nlohmann::ordered_json j;
  j["scenario"] = scenario.name;
  j["schedule"] = plan.schedule;
  j["gpus"] = plan.ranks;
  j["tile"] = {plan.tile_a, plan.tile_b};
  j["valid"] = report.ok();
  j["ops"] = plan.op_count();
  for (int k = 0; k < 5; ++k) {
    j["ops_by_kind"][std::string(to_string(static_cast<OpKind>(k)))] =
        kinds[static_cast<std::size_t>(k)];
  }
  j["comm_bytes_total"] = report.total_bytes_sent();
  j["comm_bytes_per_rank_max"] = report.max_bytes_received();
  j["peak_memory_bytes_max"] = report.max_peak_bytes();
  j["mask"] = std::string(to_string(plan.shape.mask.kind));
  j["compute_balance"] = work_balance(report);
  for (int r = 0; r < plan.ranks; ++r) {
    const RankStats& s = report.ranks[static_cast<std::size_t>(r)];
    nlohmann::ordered_json rank = {
        {"bytes_sent", s.bytes_sent},       {"bytes_received", s.bytes_received},
        {"compute_flops", s.compute_flops}, {"work_over_mean", work_over_mean(report, s)},
        {"computes", s.computes},           {"peak_bytes", s.peak_bytes}};
    if (include_ops) {
      nlohmann::ordered_json ops = nlohmann::ordered_json::array();
      const int n = static_cast<int>(plan.programs[static_cast<std::size_t>(r)].size());
      for (int i = 0; i < n; ++i) ops.push_back(op_json(plan, r, i));
      rank["ops"] = std::move(ops);
    }
    j["ranks"].push_back(std::move(rank));
  }
  return j;
}

}  // namespace tilesim
