// Pass-Q's plan generated one ring step at a time for the windowed tracker
// (sim/plan/windowed_tracker.hpp): with K = P classes the whole plan (make_pass_q_plan) for the
// runs no symmetry covers (causal, windowed and documents masks, `symmetry: off`;
// sim/scenario/lazy_plan.hpp), with K < P its offset quotient (make_pass_q_classes_plan: the
// programs of ranks 0..K-1, peers named as full ranks, which the tracker pairs by offset). Each
// step is PassQMember's (the code make_pass_q_plan runs), rewritten by the output correction
// when it is not fused. The chunks and objects of all P ranks are built whole (O(P): the
// partials are per chunk and step parity, pass_q_member.hpp); a program grows by one step when
// the tracker asks, so a run holds O(P + K x window) ops instead of the K (13 P - 12) of the
// whole plan or quotient. The ops, object ids and whole_plan_digest() are the whole plan's
// (tests/test_lazy_plan.cpp).
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
#include "sim/schedules/pass_q_member.hpp"

namespace tilesim {

class PassQSource final : public ProgramSource {
 public:
  // classes: K dividing ranks (K = ranks: the whole plan); std::invalid_argument otherwise.
  PassQSource(const AttentionShape& shape, int ranks, int classes, Correction correction);
  PassQSource(const PassQSource&) = delete;
  PassQSource& operator=(const PassQSource&) = delete;
  ~PassQSource() override = default;

  Plan& plan() override { return plan_; }
  bool extend(int rank) override;  // appends rank's next ring step
  void discard_before(int rank, int index) override;
  std::string whole_plan_digest() const override;

 private:
  Plan plan_;  // programs grow and shrink
  AttentionObjects objs_;
  PassQPartials partials_;
  QRoute route_;
  CommGroups groups_;
  std::optional<StepPrograms> steps_;
  std::vector<PassQMember> members_;
};

}  // namespace tilesim
