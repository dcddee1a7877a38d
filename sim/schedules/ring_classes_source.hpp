// The ring family's quotient plan (make_pass_kv_ring_classes_plan, ring_schedule.hpp, with the
// scenario's output correction) generated one ring step at a time for the windowed tracker
// (sim/plan/windowed_tracker.hpp), so that a symmetric simulation holds O(P + K x window) ops
// instead of the K x P ops of the whole quotient (issue 13, item 1).
// With K = P (no symmetry, sim/scenario/lazy_plan.hpp) it also generates the backward, after
// the forward when the pass is both: each rank's forward steps, then its backward steps
// (RingMemberBackward, the code add_ring_backward runs), so the programs are make_plan's. The
// backward is not generated for a quotient (K < P), whose whole plan folds the backward's full
// peers onto the classes (class_plan.hpp).
//
// The chunks and objects of all P ranks are built whole (O(P)); representative k's program
// grows by one step when the tracker asks and drops the ops the tracker has finished. A step is
// the generator's own (RingMemberForward, the code add_ring_forward_classes runs) rewritten by
// OutputCorrectionRewriter (the code separate_output_corrections runs) when the correction is
// not fused, so the ops and object ids are those of the whole quotient; the rewrite needs only
// the current and the previous raw step (a receive waits for the previous step's frees).
// whole_plan_digest() is plan_digest of the whole quotient: each program's ops are digested as
// they are generated (plan_digest.hpp's per-program hashes), no second generation pass.
// tests/test_windowed_tracker.cpp checks it, and the ops, against the whole quotient plan.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/fusing_builder.hpp"
#include "sim/plan/output_correction.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/step_programs.hpp"
#include "sim/plan/windowed_tracker.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/ring_passes.hpp"

namespace tilesim {

struct RingClassesSpec {
  std::string schedule;  // ring, zigzag, striped
  AttentionShape shape;  // K < P (a quotient): forward; K = P: any pass
  int ranks = 0;         // P
  ChunkOwnership ownership = ChunkOwnership::contiguous;
  int classes = 0;  // K
  Correction correction = Correction::separate;
  // w: the representatives run ranks w..w+K-1's programs (make_pass_kv_ring_classes_plan's
  // first_rank; a work-block quotient of a causal mask), 0 otherwise.
  int first_rank = 0;
};

class RingClassesSource final : public ProgramSource {
 public:
  explicit RingClassesSource(RingClassesSpec spec);
  RingClassesSource(const RingClassesSource&) = delete;
  RingClassesSource& operator=(const RingClassesSource&) = delete;
  ~RingClassesSource() override = default;

  Plan& plan() override { return plan_; }
  const Plan& plan() const { return plan_; }
  bool extend(int rank) override;  // appends rank's next ring step
  void discard_before(int rank, int index) override;

  // plan_digest of the whole quotient plan. Call once every program is complete (after a run):
  // it takes the objects from this plan and the ops' hashes taken as they were generated.
  std::string whole_plan_digest() const override;

 private:
  void emit_step(int rank);   // the rank's next raw step (forward, then backward)
  bool done(int rank) const;  // every step of the rank's program is generated

  RingClassesSpec spec_;
  Plan plan_;  // the quotient: programs grow and shrink
  std::optional<StepPrograms> steps_;
  std::vector<RingMember> ring_;
  CommGroups groups_;
  FusingScratch scratch_;
  std::vector<std::unique_ptr<RingMemberForward>> members_;            // empty: backward only
  std::vector<std::unique_ptr<RingMemberBackward>> backward_members_;  // empty: forward only
};

}  // namespace tilesim
