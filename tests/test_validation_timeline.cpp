// validate's building blocks: per-op times survive the JSON round trip, a prediction equal to
// the measurement has zero error, a measurement 25% slower everywhere gives -20% error, and
// regression cases detect a moved figure.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "sim/core/input_error.hpp"
#include "sim/model/simulator.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "sim/validation/op_times_json.hpp"
#include "sim/validation/regress_case.hpp"
#include "sim/validation/timeline_comparison.hpp"
#include "tests/plan_fixtures.hpp"
#include "tests/sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::validation;
using namespace tilesim::testing;

namespace {

SimulationOptions with_records() {
  SimulationOptions options;
  options.record_ops = options.record_transfers = true;
  return options;
}

struct Fixture {
  Plan plan = make_ring_plan(mha_shape(16 * 1024), 4);
  SimulationResult result =
      simulate(plan, star_topology(4, 1e11), ideal_profile(1e12), with_records());
};

}  // namespace

TEST_CASE("calibration: op times round-trip through the result JSON") {
  Fixture f;
  nlohmann::json doc;
  doc["op_times"] = op_times_to_json(f.plan, f.result);
  const auto back = op_times_from_json(nlohmann::json::parse(doc.dump()), f.plan, "run.json");
  for (int r = 0; r < f.plan.ranks; ++r) {
    for (std::size_t i = 0; i < back[r].size(); ++i) {
      const OpTiming& want = f.result.ops[r][i];
      if (want.start_ps < 0) continue;
      CHECK(std::abs(back[r][i].start_ps - want.start_ps) <= 1);
      CHECK(std::abs(back[r][i].end_ps - want.end_ps) <= 1);
    }
  }
  doc["op_times"][0]["index"] = 999;
  try {
    op_times_from_json(doc, f.plan, "run.json");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "run.json");
    CHECK(e.key() == "op_times[0].index");
  }
  CHECK_THROWS_AS(op_times_from_json(nlohmann::json::object(), f.plan, "run.json"), InputError);
}

TEST_CASE("calibration: validation errors of an exact and of a uniformly slower measurement") {
  Fixture f;
  const double makespan_s = ps_to_s(f.result.makespan_ps);
  const TimelineComparison same = compare_timelines(f.plan, f.result.ops, makespan_s, f.result);
  CHECK(same.makespan_rel_error == Approx(0.0).margin(1e-12));
  CHECK(same.all_ops.max_abs == Approx(0.0).margin(1e-9));
  CHECK(same.all_ops.count > 0);
  auto slower = f.result.ops;
  for (auto& rank : slower) {
    for (OpTiming& t : rank) {
      if (t.start_ps < 0) continue;
      t.start_ps = t.start_ps * 5 / 4;
      t.end_ps = t.end_ps * 5 / 4;
    }
  }
  const TimelineComparison r = compare_timelines(f.plan, slower, 1.25 * makespan_s, f.result, 3);
  CHECK(r.makespan_rel_error == Approx(-0.2));
  CHECK(r.ranks.median_abs == Approx(0.2).epsilon(1e-6));
  CHECK(r.compute_ops.median_abs == Approx(0.2).epsilon(1e-6));
  CHECK(r.worst.size() == 3);
  CHECK(std::abs(r.worst[0].predicted_s - r.worst[0].measured_s) >=
        std::abs(r.worst[2].predicted_s - r.worst[2].measured_s));
}

TEST_CASE("calibration: a regression case fails when a figure leaves its tolerance") {
  const auto dir = std::filesystem::temp_directory_path() / "tilesim-regress-test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "ring.yaml").string();
  const std::string scenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";
  std::ofstream(path) << "scenario: " << scenario << "\nset: [schedule.gpus=4]\ntolerance: 1e-6\n"
                      << "expected: {makespan_s: 1.0, comm_bytes_total: 1.0, "
                         "peak_memory_bytes_max: 1.0}\n";
  RegressCase c = load_regress_case(path);
  CHECK_FALSE(run_regress_case(c));
  CHECK(c.figures[0].got > 0.1);
  update_regress_case(c);
  RegressCase again = load_regress_case(path);
  CHECK(run_regress_case(again));
  CHECK(again.figures[1].expected == Approx(c.figures[1].got).epsilon(1e-9));
  std::ofstream(path) << "scenario: x.yaml\ntolerance: 2\nexpected: {}\n";
  try {
    load_regress_case(path);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.key() == "tolerance");
    CHECK(e.line() == 2);
  }
}
