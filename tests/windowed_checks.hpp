#pragma once
// Checks shared by the tests of programs generated as they run (windowed_tracker.hpp): a dry
// run, and "the same ops as the whole plan".
#include <catch2/catch.hpp>
#include <vector>

#include "sim/plan/plan.hpp"
#include "sim/plan/plan_digest.hpp"
#include "sim/plan/plan_tracker.hpp"
#include "sim/plan/windowed_tracker.hpp"

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

}  // namespace tilesim::test
