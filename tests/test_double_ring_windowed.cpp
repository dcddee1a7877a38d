// The double ring's quotient generated an inner step at a time (DoubleRingSource with classes
// K < P, sim/schedules/double_ring_source.hpp) and run through the windowed tracker, against
// the whole quotient plan (make_double_ring_classes_plan, then the correction's rewrite) run
// through PlanTracker, the path it replaces in `simulate` beyond kWholeDoubleRingMaxClasses
// classes (the whole quotient itself checked against every rank simulated in
// test_double_ring_symmetry.cpp; the quotients here have 8 and 16 classes, which `simulate`
// keeps whole, so the source is asked for directly):
//   - the same ops: whole_plan_digest() equals plan_digest of the whole quotient, and so do the
//     op and object counts, for inner rings of 4 and 8, every pass and correction form;
//   - the same simulation: byte-identical result JSON on the H100 cluster at 8 to 256 GPUs,
//     every pass, and for the causal mask's work block (its chunks rotated to the block's);
//   - a window that does not grow with the outer ring: a dry run holds the same most ops per
//     rank at 64 and 256 GPUs (16 classes both) while each program grows 4x, with PlanTracker's
//     peak memory per rank;
//   - tune's bound of such a candidate, its quotient's compute term summed as the source
//     generates it, is the whole quotient's to the bit.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/model/makespan_bound.hpp"
#include "sim/plan/plan_tracker.hpp"
#include "sim/plan/windowed_tracker.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/double_ring_source.hpp"
#include "tests/gpu_counts.hpp"
#include "tests/windowed_checks.hpp"

using namespace tilesim;
using tilesim::test::dry_run;

namespace {

const std::string kScenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";

PreparedScenario prepared(int gpus, int inner, const std::string& pass,
                          const std::string& correction, std::vector<std::string> extra = {}) {
  std::vector<std::string> overrides = {"schedule.gpus=" + std::to_string(gpus),
                                        "attention.seq_len=" + std::to_string(1024 * gpus),
                                        "schedule.kind=double_ring",
                                        "schedule.inner=" + std::to_string(inner),
                                        "attention.pass=" + pass,
                                        "schedule.correction=" + correction};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return prepare_scenario(kScenario, overrides);
}

}  // namespace

TEST_CASE("the windowed double-ring quotient has the whole quotient's ops") {
  for (const std::string correction : {"separate", "fused", "eager"}) {
    for (int inner : {4, 8}) {
      for (const std::string pass : {"forward", "backward", "both"}) {
        INFO("double ring inner " << inner << ", pass " << pass << ", correction " << correction);
        const PreparedScenario p = prepared(64, inner, pass, correction);
        REQUIRE(p.symmetry.has_value());
        REQUIRE(p.symmetry->classes < 64);
        const auto source = symmetric_double_ring_source(p.scenario, *p.symmetry);
        REQUIRE(source != nullptr);
        tilesim::test::require_quotient_ops(*source, p);
      }
    }
  }
}

TEST_CASE("windowed symmetric double-ring simulation equals the whole quotient's byte for byte") {
  int runs = 0;
  for (int gpus : tilesim::test::gpu_counts({8, 16, 32, 64, 128, 256})) {
    for (int inner : {8, 4}) {
      for (const std::string pass : {"forward", "backward", "both"}) {
        INFO("double ring inner " << inner << " on " << gpus << " GPUs, pass " << pass);
        const PreparedScenario p = prepared(gpus, inner, pass, "separate");
        // One class per rank where no shift folds (8 GPUs; 16 with inner 8: the outer peer
        // r + 8 would fold onto r): that is the lazy run's, not a quotient.
        REQUIRE(p.symmetry.has_value());
        if (!p.symmetry->exact()) continue;
        ++runs;
        const auto source = symmetric_double_ring_source(p.scenario, *p.symmetry);
        REQUIRE(source != nullptr);
        tilesim::test::require_windowed_quotient_equals_whole(*source, p);
      }
    }
  }
  if (tilesim::test::gpu_counts_capped()) {
    CHECK(runs > 0);  // the sanitizer stage: the larger counts left out
  } else {
    // Quotients (test_double_ring_symmetry.cpp's rule): inner 8 from 32 GPUs (16 classes),
    // inner 4 from 16 (8 classes): 4 + 5 sizes, three passes each.
    CHECK(runs == 3 * (4 + 5));
  }
}

TEST_CASE("the windowed double-ring work block equals the whole quotient's") {
  // Causal, under roles: the heaviest end block's programs, their chunks rotated to it.
  for (const std::string pass : {"forward", "both"}) {
    INFO("pass " << pass);
    const PreparedScenario p =
        prepared(64, 8, pass, "separate", {"attention.causal=true", "schedule.symmetry=roles"});
    REQUIRE(p.symmetry.has_value());
    REQUIRE(p.symmetry->work.has_value());
    const auto source = symmetric_double_ring_source(p.scenario, *p.symmetry);
    REQUIRE(source != nullptr);
    tilesim::test::require_windowed_quotient_equals_whole(*source, p);
    const auto again = symmetric_double_ring_source(p.scenario, *p.symmetry);
    tilesim::test::require_quotient_ops(*again, p);
  }
}

TEST_CASE("the double-ring window does not grow with the outer ring") {
  std::vector<std::size_t> windows, programs;
  for (int gpus : {64, 256}) {
    INFO(gpus << " GPUs");
    const PreparedScenario p = prepared(gpus, 8, "both", "separate");
    REQUIRE(p.symmetry.has_value());
    REQUIRE(p.symmetry->classes == 16);
    const Plan whole = build_symmetric_plan(p.scenario, *p.symmetry);
    PlanTracker reference(whole);
    dry_run(reference);
    REQUIRE(reference.all_done());
    const auto source = symmetric_double_ring_source(p.scenario, *p.symmetry);
    REQUIRE(source != nullptr);
    WindowedTracker tracker(*source, kWindowLookaheadOps);
    dry_run(tracker);
    REQUIRE(tracker.all_done());
    for (int r = 0; r < whole.ranks; ++r) {
      CHECK(tracker.peak_bytes(r) == reference.peak_bytes(r));
      CHECK(tracker.peak_breakdown(r) == reference.peak_breakdown(r));
    }
    programs.push_back(whole.programs[0].size());
    windows.push_back(tracker.max_window_ops());
  }
  CHECK(programs[1] > 3 * programs[0]);
  CHECK(windows[0] == windows[1]);
}

TEST_CASE("the compute term summed from the double-ring source is the whole quotient's") {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{},
        std::vector<std::string>{"attention.causal=true", "schedule.symmetry=roles"}}) {
    for (const std::string pass : {"forward", "both"}) {
      for (int inner : {4, 8}) {
        INFO("inner " << inner << ", pass " << pass << (extra.empty() ? "" : ", causal"));
        const PreparedScenario p = prepared(128, inner, pass, "separate", extra);
        REQUIRE(p.symmetry.has_value());
        const Plan whole = build_symmetric_plan(p.scenario, *p.symmetry);
        const auto source = symmetric_double_ring_source(p.scenario, *p.symmetry);
        REQUIRE(source != nullptr);
        const MakespanBound bound(p.topology, p.profile);
        const double want = bound.compute_lower_bound_s(whole);
        CHECK(want > 0.0);
        CHECK(bound.compute_lower_bound_s(*source) == want);
      }
    }
  }
}

TEST_CASE("a double-ring quotient source refuses classes the quotient plan refuses") {
  const AttentionShape shape = prepared(64, 8, "forward", "separate").scenario.attention;
  CHECK_THROWS_AS(DoubleRingSource(shape, 64, 8, Correction::separate, 12), std::invalid_argument);
  CHECK_THROWS_AS(DoubleRingSource(shape, 64, 8, Correction::separate, 4), std::invalid_argument);
  CHECK_THROWS_AS(DoubleRingSource(shape, 64, 8, Correction::separate, 16, 8),
                  std::invalid_argument);
  CHECK_NOTHROW(DoubleRingSource(shape, 64, 8, Correction::separate, 16, 48));
}
