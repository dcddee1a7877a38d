#include "sim/validation/published_case.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>

#include "sim/core/yaml_reader.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/schedules/allgather_kv_schedule.hpp"
#include "sim/validation/regress_case.hpp"

namespace tilesim::validation {
namespace {

double predict(const std::string& metric, const Plan& plan, const SimulationResult& result) {
  if (metric == "makespan_s") return ps_to_s(result.makespan_ps);
  if (metric == "iterations_per_s") return 1.0 / ps_to_s(result.makespan_ps);
  if (metric == "p2p_bandwidth_gb_s") {
    double best = 0.0;
    for (const TransferRecord& t : result.transfers) {
      if (t.end_ps > t.posted_ps) best = std::max(best, t.bytes / ps_to_s(t.end_ps - t.posted_ps));
    }
    return best / 1e9;
  }
  const AttentionShape& a = plan.shape;
  const auto s = static_cast<double>(a.seq_len);
  double flops = 0.0;
  if (a.has_forward()) flops += a.flops_per_pair_forward() * s * s;
  if (a.has_backward()) flops += a.flops_per_pair_backward() * s * s;
  if (a.causal) flops /= 2.0;
  return flops / result.single_gpu_s / 1e12;
}

PublishedCase read_case(const std::string& file) {
  PublishedCase c = load_published_case(file);
  const PreparedScenario p = prepare_scenario(c.scenario, c.sets);
  const Plan plan = build_valid_plan(p.scenario);
  SimulationOptions options;
  options.record_transfers = true;  // p2p bandwidth is read from the transfers
  const SimulationResult result = simulate(plan, p.topology, p.profile, options);
  c.gpus = plan.ranks;
  c.schedule = plan.schedule;
  c.predicted = predict(c.metric, plan, result);
  c.warnings = result.warnings;
  if (std::string collectives =
          allgather_kv_cost_warning(p.scenario.schedule, p.scenario.attention);
      !collectives.empty()) {
    c.warnings.push_back(std::move(collectives));
  }
  return c;
}

}  // namespace

PublishedCase load_published_case(const std::string& file) {
  const YamlMap root(load_yaml_file(file), file, "");
  root.allow_only({"source", "role", "scenario", "set", "metric", "reported", "tolerance",
                   "order_group", "excluded"});
  PublishedCase c;
  c.file = file;
  c.name = std::filesystem::path(file).stem().string();
  if (!root.node("source").IsMap()) {
    root.fail("source", "expected {id: SOURCE-ID, cite: \"where the figure is printed\"}");
  }
  const YamlMap source = root.map("source");
  source.allow_only({"id", "cite"});
  c.source_id = source.string("id");
  c.cite = source.string("cite");
  c.role = root.choice("role", {"fit", "held-out"}) == "fit" ? CaseRole::fit : CaseRole::held_out;
  c.metric = root.choice(
      "metric", {"single_gpu_tflops", "p2p_bandwidth_gb_s", "makespan_s", "iterations_per_s"});
  c.reported = root.number("reported");
  if (!(c.reported > 0.0)) root.fail("reported", "expected a positive figure");
  c.tolerance = root.number("tolerance");
  if (!(c.tolerance > 0.0 && c.tolerance < 10.0)) {
    root.fail("tolerance", "expected a relative tolerance in (0, 10), e.g. 0.25");
  }
  if (root.has("order_group")) c.order_group = root.string("order_group");
  if (root.has("excluded")) {
    c.excluded = root.string("excluded");
    if (c.excluded.empty()) root.fail("excluded", "expected the reason the case is left out");
    if (c.role == CaseRole::fit) root.fail("excluded", "expected no exclusion on a fit case");
  }
  if (root.has("set")) {
    if (!root.node("set").IsSequence()) root.fail("set", "expected a list of key.path=value");
    for (const YAML::Node& n : root.node("set")) {
      if (!n.IsScalar()) root.fail("set", "expected a list of key.path=value strings");
      c.sets.push_back(n.as<std::string>());
    }
  }
  c.scenario = (std::filesystem::path(file).parent_path() / root.string("scenario"))
                   .lexically_normal()
                   .string();
  return c;
}

bool PublishedCase::within_tolerance() const { return std::abs(rel_error()) <= tolerance; }

std::string_view to_string(CaseRole role) { return role == CaseRole::fit ? "fit" : "held-out"; }

std::vector<PublishedCase> run_published_cases(const std::string& cases_directory) {
  std::vector<PublishedCase> cases;
  for (const std::string& file : regress_case_files(cases_directory)) {
    cases.push_back(read_case(file));
  }
  return cases;
}

}  // namespace tilesim::validation
