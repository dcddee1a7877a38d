#include "sim/validation/published_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "sim/core/yaml_reader.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/validation/error_stats.hpp"
#include "sim/validation/regress_case.hpp"

namespace tilesim::validation {
namespace {

double predict(const std::string& metric, const std::string& scenario,
               const std::vector<std::string>& sets) {
  const PreparedScenario p = prepare_scenario(scenario, sets);
  const Plan plan = build_valid_plan(p.scenario);
  const SimulationResult result = simulate(plan, p.topology, p.profile);
  if (metric == "makespan_s") return ps_to_s(result.makespan_ps);
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

}  // namespace

PublishedCase load_published_case(const std::string& file) {
  const YamlMap root(load_yaml_file(file), file, "");
  root.allow_only({"source", "scenario", "set", "metric", "reported"});
  PublishedCase c;
  c.file = file;
  c.source = root.string("source");
  c.metric = root.choice("metric", {"single_gpu_tflops", "p2p_bandwidth_gb_s", "makespan_s"});
  c.reported = root.number("reported");
  if (!(c.reported > 0.0)) root.fail("reported", "expected a positive figure");
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

std::vector<PublishedCase> run_published_cases(const std::string& directory) {
  std::vector<PublishedCase> cases;
  for (const std::string& file : regress_case_files(directory)) {
    PublishedCase c = load_published_case(file);
    c.predicted = predict(c.metric, c.scenario, c.sets);
    cases.push_back(c);
  }
  return cases;
}

void print_published(std::ostream& out, const std::vector<PublishedCase>& cases) {
  std::vector<double> errors;
  for (const PublishedCase& c : cases) {
    out << fmt::format("{}\n  {}: reported {:.4g}, predicted {:.4g}, error {:+.1f}%\n",
                       std::filesystem::path(c.file).filename().string(), c.metric, c.reported,
                       c.predicted, 100.0 * c.rel_error());
    out << fmt::format("  source: {}\n", c.source);
    errors.push_back(c.rel_error());
  }
  const ErrorSummary s = summarize_errors(errors);
  out << fmt::format("{} published figures: |error| median {:.1f}%, max {:.1f}%\n", s.count,
                     100.0 * s.median_abs, 100.0 * s.max_abs);
}

nlohmann::ordered_json published_to_json(const std::vector<PublishedCase>& cases) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const PublishedCase& c : cases) {
    list.push_back({{"file", c.file},
                    {"source", c.source},
                    {"metric", c.metric},
                    {"reported", c.reported},
                    {"predicted", c.predicted},
                    {"rel_error", c.rel_error()}});
  }
  return list;
}

}  // namespace tilesim::validation
