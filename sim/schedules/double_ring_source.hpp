// The double ring's plan (make_double_ring_plan) generated one inner step at a time for the
// windowed tracker (sim/plan/windowed_tracker.hpp), for the runs no shift symmetry covers
// (causal masks, `symmetry: off`, placements without one; sim/scenario/lazy_plan.hpp): every
// rank's program, forward then backward, each step DoubleRingMember's (the code
// make_double_ring_plan runs) rewritten by OutputCorrectionRewriter when the correction is not
// fused. The chunks and objects of all P ranks are built whole (O(P)); a rank's program grows
// by one step when the tracker asks and drops the ops it has finished, so a run holds
// O(P x window) ops instead of the ~6 P^2 of the whole plan. The ops, object ids and
// whole_plan_digest() are the whole plan's (tests/test_lazy_plan.cpp).
// With classes K < P it generates the quotient plan instead (make_double_ring_classes_plan,
// double_ring_schedule.hpp, with the scenario's correction): the programs of ranks 0..K-1, each
// peer folded mod K as fold_onto_classes does, the chunks' contents rotated by first_rank (a
// work block's, symmetric_plan.hpp), so that a symmetric run holds O(P + K x window) ops
// where the whole quotient held K programs of (P / inner) x inner steps each, forward and
// backward (tests/test_double_ring_windowed.cpp: the same ops, digest and result JSON).
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
  // ScheduleError at schedule.inner unless inner divides ranks; std::invalid_argument for
  // classes that are not a multiple of inner dividing ranks, or a first rank that is not a
  // multiple of classes (as make_double_ring_classes_plan).
  DoubleRingSource(const AttentionShape& shape, int ranks, int inner, Correction correction,
                   int classes = 0, int first_rank = 0);
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
  int classes_ = 0;          // K; P when every rank's program is generated
  bool fold_peers_ = false;  // K < P: peers name their representatives (fold_onto_classes)
};

}  // namespace tilesim
