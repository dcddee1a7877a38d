#pragma once
// Checks shared by the tests of programs generated as they run (windowed_tracker.hpp): a dry
// run, "the same ops as the whole plan", and "the same result JSON as the whole quotient".
#include <catch2/catch.hpp>
#include <vector>

#include "sim/model/result_json.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/plan_digest.hpp"
#include "sim/plan/plan_tracker.hpp"
#include "sim/plan/windowed_tracker.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"

namespace tilesim::test {

// Finishes every op as soon as it is handed out (as the validator's dry run); returns the
// number of polls.
template <class Tracker>
int dry_run(Tracker& tracker) {
  std::vector<OpId> computes;
  std::vector<Transfer> transfers;
  int polls = 0;
  for (;; ++polls) {
    computes.clear();
    transfers.clear();
    tracker.poll(computes, transfers);
    if (computes.empty() && transfers.empty()) break;
    for (const Transfer& t : transfers) tracker.finish_transfer(t);
    for (OpId id : computes) tracker.finish(id);
  }
  return polls;
}

// Dry-runs `source` through the windowed tracker and requires the ops of `whole`: the op and
// object counts (done and generated), the merge form and plan_digest (the source's
// whole_plan_digest()). peer_ranks: P of an offset quotient (WindowedTracker).
template <class Source>
void require_same_ops_as_whole(Source& source, const Plan& whole, int peer_ranks = 0) {
  WindowedTracker tracker(source, kWindowLookaheadOps, peer_ranks);
  dry_run(tracker);
  REQUIRE(tracker.all_done());
  CHECK(tracker.done_ops() == whole.op_count());
  CHECK(source.plan().op_count() == whole.op_count());
  CHECK(source.plan().objects.size() == whole.objects.size());
  CHECK(source.plan().merge_form == whole.merge_form);
  CHECK(source.whole_plan_digest() == plan_digest(whole));
}

// `source` generates p's exact quotient: it has the ops of the quotient built whole
// (build_symmetric_plan), by require_same_ops_as_whole.
template <class Source>
void require_quotient_ops(Source& source, const PreparedScenario& p) {
  REQUIRE(p.symmetry.has_value());
  REQUIRE(p.symmetry->exact());
  require_same_ops_as_whole(source, build_symmetric_plan(p.scenario, *p.symmetry));
}

// Simulates p's exact quotient both ways, the whole quotient plan (build_symmetric_plan) through
// PlanTracker and `source` (the same quotient generated as it runs) through the windowed
// tracker, and requires the same result JSON byte for byte, plan_digest included.
inline void require_windowed_quotient_equals_whole(ProgramSource& source,
                                                   const PreparedScenario& p) {
  REQUIRE(p.symmetry.has_value());
  REQUIRE(p.symmetry->exact());
  const Plan whole = build_symmetric_plan(p.scenario, *p.symmetry);
  const SimulationResult expected = simulate_classes(whole, *p.symmetry, p.topology, p.profile);
  const SimulationResult got =
      simulate_classes_windowed(source, *p.symmetry, p.topology, p.profile);
  CHECK(got.makespan_ps == expected.makespan_ps);
  CHECK(got.events == expected.events);
  ResultContext context{p.scenario.name, p.scenario.topology_path, p.scenario.calibration_path,
                        false};
  nlohmann::ordered_json want = result_to_json(whole, expected, context);
  describe_full_ring(want, whole, *p.symmetry);
  context.plan_digest = source.whole_plan_digest();
  nlohmann::ordered_json have = result_to_json(source.plan(), got, context);
  describe_full_ring(have, source.plan(), *p.symmetry);
  CHECK(have.dump(2) == want.dump(2));
}

}  // namespace tilesim::test
