// A measured-run JSON (`tilesim run --json`, read by `validate --measured`) against a fixed
// ring plan of 4 ranks: identity check, op times, and the op-by-op comparison.
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_support.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/validation/op_times_json.hpp"
#include "sim/validation/run_identity.hpp"
#include "sim/validation/timeline_comparison.hpp"

namespace {

struct Fixture {
  tilesim::PreparedScenario prepared;
  tilesim::Plan plan;
  tilesim::SimulationResult predicted;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture x;
    x.prepared =
        tilesim::prepare_scenario(std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml",
                                  {"schedule.gpus=4", "attention.seq_len=96"});
    x.plan = tilesim::build_valid_plan(x.prepared.scenario);
    x.predicted = tilesim::simulate(x.plan, x.prepared.topology, x.prepared.profile);
    return x;
  }();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  const Fixture& f = fixture();
  const nlohmann::json run = nlohmann::json::parse(data, data + size, nullptr, false);
  if (run.is_discarded()) return 0;  // the CLI reports a parse error as InputError
  fuzz::expect_typed_errors([&] {
    if (!run.is_object() || !run.contains("makespan_s") || !run["makespan_s"].is_number() ||
        !(run["makespan_s"].get<double>() > 0.0)) {
      return;  // the CLI's own check (cmd_validate.cpp) refuses these
    }
    validation::check_run_matches_plan(run, f.plan, "run.json");
    const auto measured = validation::op_times_from_json(run, f.plan, "run.json");
    validation::compare_timelines(f.plan, measured, run["makespan_s"].get<double>(), f.predicted);
  });
  return 0;
}
