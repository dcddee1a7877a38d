// Writes the measured-run fuzzer's seed: a result JSON shaped as `tilesim run --json` writes
// it, for the fuzzer's fixed plan (ring, 4 ranks, 96 tokens), with the simulated op times.
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/validation/op_times_json.hpp"

int main(int argc, char** argv) {
  using namespace tilesim;
  if (argc != 2) return 2;
  const PreparedScenario p =
      prepare_scenario(std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml",
                       {"schedule.gpus=4", "attention.seq_len=96"});
  const Plan plan = build_valid_plan(p.scenario);
  const SimulationResult result = simulate(plan, p.topology, p.profile);
  nlohmann::ordered_json j = result_to_json(
      plan, result,
      ResultContext{p.scenario.name, p.scenario.topology_path, p.scenario.calibration_path, false});
  j["backend"] = "cpu";
  j["seed"] = 1;
  j["op_times"] = validation::op_times_to_json(plan, result);
  std::ofstream(argv[1]) << j.dump(2) << "\n";
  return 0;
}
