// USP's forward quotient plan (make_usp_classes_plan, usp_schedule.hpp, with the scenario's
// output correction) generated a piece at a time for the windowed tracker
// (sim/plan/windowed_tracker.hpp), so that a symmetric simulation holds O(P + K x window) ops
// instead of the whole quotient's K x (ring steps x u + all-to-alls) (issue 13, item 1).
//
// The chunks and objects of all P ranks are built whole (O(P u)); representative x = G u + h
// (member h of Ulysses group G, member G of head ring h) gets its program in pieces, each the
// generator's own code (usp_forward_rank's parts, usp_grid.hpp): first the all-to-all of Q and
// KV with ring steps 0 and 1 (and the frees of the own bundle's KV between them), then one ring
// step (RingMemberForward) per piece, then the all-to-all back of O and the frees.
// Peers are folded mod K as fold_onto_classes does; the correction's rewrite
// (OutputCorrectionRewriter) runs on each piece when it is not fused; its block partials are
// made before any rewrite (output_correction.hpp), so they have the whole quotient's object
// ids whatever order the ranks' pieces come in. (The first piece holds ring step 1 from when
// the partials were made by the first accumulating call.) whole_plan_digest() is plan_digest of
// the whole quotient: each program's ops are digested as they are generated, as
// RingClassesSource does; tests/test_windowed_tracker.cpp checks it.
// With K = P (no symmetry, sim/scenario/lazy_plan.hpp) it also generates the backward, after
// the forward when the pass is both: the all-to-all of dO, one backward ring step
// (usp_backward_step: RingMemberBackward's step with the frees whose last reader it is) per
// piece, then the all-to-all back of dQ and dKV with the frees and the replicas' dKV sum
// (usp_backward_rank's parts, usp_grid.hpp). A quotient's backward (K < P) is built whole
// (make_usp_classes_plan).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/fusing_builder.hpp"
#include "sim/plan/output_correction.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/step_programs.hpp"
#include "sim/plan/windowed_tracker.hpp"
#include "sim/schedules/ring_passes.hpp"
#include "sim/schedules/usp_grid.hpp"

namespace tilesim {

struct UspClassesSpec {
  AttentionShape shape;  // forward where K < P (full mask); any pass, full or causal with K = P
  int ranks = 0;         // P
  int ulysses = 0;       // u
  int classes = 0;       // K: a multiple of u, at least 2u, dividing P
  Correction correction = Correction::separate;
  int first_rank = 0;  // a work-block quotient's block (make_usp_classes_plan), a multiple of u
};

class UspClassesSource final : public ProgramSource {
 public:
  // std::invalid_argument for classes the quotient does not take, or a backward with K < P.
  explicit UspClassesSource(UspClassesSpec spec);
  UspClassesSource(const UspClassesSource&) = delete;
  UspClassesSource& operator=(const UspClassesSource&) = delete;
  ~UspClassesSource() override = default;

  Plan& plan() override { return plan_; }
  const Plan& plan() const { return plan_; }
  bool extend(int rank) override;  // appends rank's next piece
  void discard_before(int rank, int index) override;

  // plan_digest of the whole quotient plan. Call once every program is complete (after a run):
  // it takes the objects from this plan and the ops' hashes taken as they were generated.
  std::string whole_plan_digest() const override;
  // A ring step's piece moves u head-split bundles (about 3u ops: u sends, receives and
  // calls), and the all-to-alls 2 (u - 1) transfers per tensor: the ring's lookahead per
  // bundle, as the guard sizes the window (resource_guard.hpp, u x kWindowedOpsPerClass).
  int lookahead_ops() const override { return kWindowLookaheadOps * spec_.ulysses; }

 private:
  enum class Phase { prologue, ring, epilogue, bwd_prologue, bwd_ring, bwd_epilogue, done };
  void emit_piece(int rank, Phase& phase);

  UspClassesSpec spec_;
  UspGrid grid_;
  UspHeadObjects objs_;
  Plan plan_;  // the quotient: programs grow and shrink
  std::optional<StepPrograms> steps_;
  std::vector<std::vector<RingMember>> rings_;  // head ring h
  CommGroups groups_;
  FusingScratch scratch_;
  std::vector<std::unique_ptr<RingMemberForward>> members_;  // representative x's ring member
  std::vector<std::unique_ptr<RingMemberBackward>> backward_members_;  // empty: forward only
  std::vector<Phase> phase_;
};

}  // namespace tilesim
