// The double ring's plan (make_double_ring_plan) generated one inner step at a time for the
// windowed tracker (sim/plan/windowed_tracker.hpp), for the runs no shift symmetry covers
// (causal masks, `symmetry: off`, placements without one; sim/scenario/lazy_plan.hpp): every
// rank's program, forward then backward, each step DoubleRingMember's (the code
// make_double_ring_plan runs) rewritten by OutputCorrectionRewriter when the correction is not
// fused. The chunks and objects of all P ranks are built whole (O(P)); a rank's program grows
// by one step when the tracker asks and drops the ops it has finished, so a run holds
// O(P x window) ops instead of the ~6 P^2 of the whole plan. The ops, object ids and
// whole_plan_digest() are the whole plan's (tests/test_lazy_plan.cpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/output_correction.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/step_programs.hpp"
#include "sim/plan/windowed_tracker.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/double_ring_member.hpp"

namespace tilesim {

class DoubleRingSource final : public ProgramSource {
 public:
  // ScheduleError at schedule.inner unless inner divides ranks.
  DoubleRingSource(const AttentionShape& shape, int ranks, int inner, Correction correction);
  DoubleRingSource(const DoubleRingSource&) = delete;
  DoubleRingSource& operator=(const DoubleRingSource&) = delete;
  ~DoubleRingSource() override = default;

  Plan& plan() override { return plan_; }
  bool extend(int rank) override;  // appends rank's next inner step
  void discard_before(int rank, int index) override;
  std::string whole_plan_digest() const override;

 private:
  Plan plan_;  // programs grow and shrink
  AttentionObjects objs_;
  KvReach reach_;
  CommGroups groups_;
  std::optional<StepPrograms> steps_;
  std::vector<DoubleRingMember> members_;
};

}  // namespace tilesim
