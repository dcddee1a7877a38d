#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/model/chrome_trace.hpp"
#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"

using namespace tilesim;

namespace {
std::pair<std::string, std::string> run_once(const std::vector<std::string>& sets) {
  const std::string scenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";
  const PreparedScenario p = prepare_scenario(scenario, sets);
  const Plan plan = build_valid_plan(p.scenario);
  SimulationOptions options;
  options.record_link_samples = options.record_ops = options.record_transfers = true;
  const SimulationResult result = simulate(plan, p.topology, p.profile, options);
  std::ostringstream trace;
  write_chrome_trace(trace, plan, result, {}, &p.topology);
  ResultContext context{p.scenario.name, p.scenario.topology_path, p.scenario.calibration_path,
                        false};
  return {result_to_json(plan, result, context).dump(2), trace.str()};
}
}  // namespace

TEST_CASE("two simulations of the same input give byte-identical JSON and trace") {
  const std::vector<std::string> sets = {"schedule.gpus=16", "attention.seq_len=64K"};
  const auto first = run_once(sets);
  const auto second = run_once(sets);
  CHECK(first.first == second.first);
  CHECK(first.second == second.second);
  CHECK(first.second.find("\"ph\":\"C\"") != std::string::npos);  // link counters present
  CHECK(first.first.find("\"makespan_s\"") != std::string::npos);
}

TEST_CASE("the trace is Chrome trace JSON with a compute and a comm track per rank") {
  const auto out = run_once({"schedule.gpus=4", "attention.seq_len=16K"});
  const auto trace = nlohmann::json::parse(out.second);
  int computes = 0, sends = 0, counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["tid"] == 0) ++computes;
    if (e["ph"] == "X" && e["cat"] == "send") ++sends;
    if (e["ph"] == "C") {
      ++counters;
      CHECK(e["name"].get<std::string>().find("->") != std::string::npos);
    }
  }
  // P calls and, with the default separate correction, P-1 merges on each of P ranks.
  CHECK(computes == 4 * (4 + 3));
  CHECK(sends == 4 * 3);  // P-1 sends per rank
  CHECK(counters > 0);
}
