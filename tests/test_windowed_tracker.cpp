// The ring family's quotient generated a step at a time (sim/schedules/ring_classes_source.hpp),
// and pass-Q's offset quotient (pass_q_source.hpp, its sends and recvs paired by offset), and run
// through the windowed tracker (sim/plan/windowed_tracker.hpp) against the whole
// quotient plan run through PlanTracker (the path it replaces in `simulate`, itself checked
// against the full simulation of every rank in test_symmetric_simulation.cpp):
//   - the same ops: whole_plan_digest() equals plan_digest of the whole quotient, and so do
//     the op counts, for every correction form;
//   - the same simulation: byte-identical result JSON (every key, plan_digest included), on
//     the H100 cluster at 8 to 256 GPUs, ring, zigzag, striped and pass-Q;
//   - a window that does not grow with P: a dry run (every op finished as soon as it is
//     handed out, as the validator's) holds the same most ops per rank at 64 and 256 GPUs,
//     and gives PlanTracker's peak memory per rank;
//   - a lookahead too short for the order to be kept is refused, not run differently.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/model/result_json.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/plan/plan_digest.hpp"
#include "sim/plan/plan_tracker.hpp"
#include "sim/plan/windowed_tracker.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "tests/gpu_counts.hpp"
#include "tests/windowed_checks.hpp"

using namespace tilesim;
using tilesim::test::dry_run;

namespace {

const std::string kScenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";

PreparedScenario prepared(const std::string& kind, int gpus, const std::string& correction) {
  return prepare_scenario(
      kScenario,
      {"schedule.gpus=" + std::to_string(gpus), "attention.seq_len=" + std::to_string(1024 * gpus),
       "schedule.kind=" + kind, "schedule.correction=" + correction});
}

}  // namespace

TEST_CASE("the windowed quotient has the whole quotient's ops") {
  for (const std::string correction : {"separate", "fused", "eager"}) {
    for (const std::string kind : {"ring", "zigzag", "striped", "pass_q"}) {
      INFO(kind << ", correction " << correction);
      const PreparedScenario p = prepared(kind, 64, correction);
      REQUIRE(p.symmetry.has_value());
      REQUIRE(p.symmetry->exact());
      const Plan whole = build_symmetric_plan(p.scenario, *p.symmetry);
      const auto source = symmetric_source(p.scenario, *p.symmetry);
      REQUIRE(source != nullptr);
      tilesim::test::require_same_ops_as_whole(
          *source, whole, p.symmetry->peers_by_offset ? p.symmetry->full_ranks : 0);
    }
  }
}

TEST_CASE("windowed symmetric simulation equals the whole quotient's byte for byte") {
  for (int gpus : tilesim::test::gpu_counts({8, 16, 64, 256})) {
    for (const std::string kind : {"ring", "zigzag", "striped", "pass_q"}) {
      // The other correction forms change the programs; each is run once.
      const std::string correction =
          gpus == 16 ? (kind == "ring" ? "fused" : "eager") : std::string("separate");
      INFO(kind << " on " << gpus << " GPUs, correction " << correction);
      const PreparedScenario p = prepared(kind, gpus, correction);
      REQUIRE(p.symmetry.has_value());
      const auto source = symmetric_source(p.scenario, *p.symmetry);
      REQUIRE(source != nullptr);
      tilesim::test::require_windowed_quotient_equals_whole(*source, p);
    }
  }
}

TEST_CASE("the window does not grow with the ring and keeps PlanTracker's memory figures") {
  std::vector<std::size_t> windows;
  for (int gpus : {64, 256}) {
    INFO(gpus << " GPUs");
    const PreparedScenario p = prepared("ring", gpus, "separate");
    REQUIRE(p.symmetry.has_value());
    const Plan whole = build_symmetric_plan(p.scenario, *p.symmetry);
    PlanTracker reference(whole);
    dry_run(reference);
    REQUIRE(reference.all_done());
    const auto source = symmetric_ring_source(p.scenario, *p.symmetry);
    WindowedTracker tracker(*source, kWindowLookaheadOps);
    dry_run(tracker);
    REQUIRE(tracker.all_done());
    CHECK(tracker.done_ops() == whole.op_count());
    for (int r = 0; r < whole.ranks; ++r) {
      CHECK(tracker.peak_bytes(r) == reference.peak_bytes(r));
      CHECK(tracker.peak_breakdown(r) == reference.peak_breakdown(r));
    }
    // A rank's program: step 0 send, recv, compute; steps 1..P-2 also merge and two frees; the
    // last no send or recv: 6P - 5 ops. The window is a few steps of it.
    const std::size_t per_rank = whole.programs[0].size();
    CHECK(per_rank == static_cast<std::size_t>(6 * gpus - 5));
    CHECK(tracker.max_window_ops() < 2 * kWindowLookaheadOps + 64);
    windows.push_back(tracker.max_window_ops());
  }
  CHECK(windows[0] == windows[1]);
}

TEST_CASE("a lookahead too short to keep the whole plan's order is refused") {
  const PreparedScenario p = prepared("ring", 16, "separate");
  REQUIRE(p.symmetry.has_value());
  const auto source = symmetric_ring_source(p.scenario, *p.symmetry);
  // One op ahead: a step's ops are asked for after the previous step's have finished.
  CHECK_THROWS_AS(
      [&] {
        WindowedTracker tracker(*source, 1);
        dry_run(tracker);
      }(),
      std::logic_error);
}
