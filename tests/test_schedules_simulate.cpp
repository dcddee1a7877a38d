// Every schedule kind runs through the scenario loader and the simulator.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"

using namespace tilesim;

TEST_CASE("schedules: every kind simulates from the example scenarios") {
  const std::string dir = std::string(TILESIM_SOURCE_DIR) + "/scenarios/";
  struct Run {
    const char* file;
    std::vector<std::string> overrides;
  };
  const std::vector<Run> runs = {
      {"zigzag-causal-h800.yaml", {}},
      {"zigzag-causal-h800.yaml", {"schedule.kind=striped"}},
      {"zigzag-causal-h800.yaml", {"schedule.kind=ring", "attention.pass=both"}},
      {"pass-q-h800.yaml", {}},
      {"allgather-kv-causal-h800.yaml", {}},
      {"ulysses-h800.yaml", {}},
      {"usp-64.yaml", {"schedule.gpus=16", "attention.seq_len=64K"}},
      {"double-ring-32.yaml", {"schedule.gpus=16", "attention.seq_len=64K"}},
  };
  for (const Run& run : runs) {
    INFO(run.file);
    const PreparedScenario p = prepare_scenario(dir + run.file, run.overrides);
    PlanReport report;
    const Plan plan = build_valid_plan(p.scenario, &report);
    const SimulationResult result = simulate(plan, p.topology, p.profile);
    const Figures f = summarize(result);
    CHECK(f.makespan_s > 0.0);
    CHECK(f.makespan_s >= f.compute_s_max);
    // The simulator moves exactly the bytes the validator counts.
    for (std::size_t r = 0; r < report.ranks.size(); ++r) {
      CHECK(result.ranks[r].bytes_received == Approx(report.ranks[r].bytes_received));
    }
  }
}
