// The programs a step generator writes for a windowed source (windowed_tracker.hpp): each rank's
// raw steps, rewritten by the output correction (output_correction.hpp) into the plan the tracker
// reads when the correction is not fused, the raw ops no later step names dropped, and every
// program digested as it grows (plan_digest.hpp), so that digest() is the whole plan's
// plan_digest without a second generation pass. The ring family's, USP's, the double ring's and
// pass-Q's sources share it.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sim/plan/output_correction.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/plan_digest.hpp"

namespace tilesim {

class StepPrograms {
 public:
  // `plan`: the chunks and objects whole, an empty program per generated rank. Sets its merge
  // form and, unless the correction is fused, adds the block partials to it. A step's ops may
  // name (as `after`) raw ops of the `steps_named` steps before it (1 or 2), and of older ones
  // only as the generator's oldest_awaited says.
  StepPrograms(Plan& plan, Correction correction, int steps_named);
  StepPrograms(const StepPrograms&) = delete;
  StepPrograms& operator=(const StepPrograms&) = delete;

  // Where the generators write: the raw plan, or the plan itself when the correction is fused.
  Plan& generated() { return raw_ ? *raw_ : *plan_; }
  RankProgram& raw_program(int rank) {
    return generated().programs[static_cast<std::size_t>(rank)];
  }
  // Where rank's next raw step begins.
  int step_begin(int rank) { return static_cast<int>(raw_program(rank).size()); }
  // The generator appended rank's step from raw op `begin` on: rewrite it into the plan, forget
  // the raw ops no later step names (before the steps_named steps before it and before
  // `oldest_awaited`), digest the plan's new ops.
  void step_done(int rank, int begin, int oldest_awaited, bool program_complete);
  // plan_digest of the whole plan; call once every program is complete.
  std::string digest() const;

 private:
  Plan* plan_;
  std::optional<Plan> raw_;  // the generators' programs before the correction's rewrite
  std::optional<OutputCorrectionRewriter> rewriter_;
  std::vector<ProgramDigest> digests_;  // per rank: the ops generated so far
  int steps_named_;
  // Per rank: where its last two raw steps began (older first).
  std::vector<std::array<int, 2>> recent_begins_;
};

}  // namespace tilesim
