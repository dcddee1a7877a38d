#include "tests/symmetry_fixture.hpp"

#include <catch2/catch.hpp>
#include <utility>

#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/scenario/symmetric_plan.hpp"

namespace tilesim::test {
namespace {

std::string without_plan_identity(nlohmann::ordered_json j) {
  j.erase("plan_digest");
  j.erase("symmetry");
  return j.dump(2);
}

}  // namespace

std::string shipped_scenario(const std::string& name) {
  return std::string(TILESIM_SOURCE_DIR) + "/scenarios/" + name;
}

std::vector<std::string> scale_overrides(int gpus, const std::string& pass,
                                         std::vector<std::string> extra) {
  std::vector<std::string> sets = {"schedule.gpus=" + std::to_string(gpus),
                                   "attention.seq_len=" + std::to_string(1024 * gpus),
                                   "attention.pass=" + pass};
  for (std::string& s : extra) sets.push_back(std::move(s));
  return sets;
}

SymmetryCase symmetry_case(const std::string& scenario, const std::vector<std::string>& overrides) {
  SymmetryCase c{prepare_scenario(scenario, overrides), std::nullopt};
  c.symmetry = scenario_symmetry(c.prepared.scenario, c.prepared.topology, c.prepared.profile);
  return c;
}

void check_symmetric_equals_full(const SymmetryCase& c) {
  const PreparedScenario& p = c.prepared;
  REQUIRE(c.symmetry.has_value());
  REQUIRE(c.symmetry->exact());
  const RingSymmetry& symmetry = *c.symmetry;
  const Plan quotient = build_symmetric_plan(p.scenario, symmetry);
  CHECK(quotient.ranks == symmetry.classes);
  const SimulationResult sym = simulate_classes(quotient, symmetry, p.topology, p.profile);

  const Plan full_plan = build_valid_plan(p.scenario);
  const SimulationResult full = simulate(full_plan, p.topology, p.profile);
  REQUIRE(sym.ranks.size() == full.ranks.size());
  CHECK(sym.makespan_ps == full.makespan_ps);
  CHECK(sym.events == full.events);
  CHECK(quotient.op_count() * static_cast<std::size_t>(full_plan.ranks / quotient.ranks) ==
        full_plan.op_count());
  const ResultContext context{p.scenario.name, p.scenario.topology_path,
                              p.scenario.calibration_path, false};
  nlohmann::ordered_json sym_json = result_to_json(quotient, sym, context);
  describe_full_ring(sym_json, quotient, symmetry);
  CHECK(sym_json["symmetry"]["classes"] == symmetry.classes);
  CHECK(without_plan_identity(sym_json) ==
        without_plan_identity(result_to_json(full_plan, full, context)));
}

}  // namespace tilesim::test
