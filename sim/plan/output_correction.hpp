// The output correction as its own op: how FlashAttention-based
// implementations combine the kernel calls of successive comm steps.
//
// A flash-attention call returns the output of the block it was given (in the
// activation dtype) with its LSE (fp32); the ring then folds it into the running
// fp32 accumulator in a separate, memory-bound step,
//   O <- O - sigmoid(lse_b - lse) (O - O_b),   lse <- lse - logsigmoid(lse - lse_b)
// (ring-flash-attention ring_flash_attn/utils.py, _update_out_and_lse), and its
// backward adds each call's block dQ, dK, dV into the running (or travelling)
// fp32 sums the same way. The first call writes the accumulator directly.
//
// Correction::separate rewrites each rank's program in order: a compute op that
// writes an accumulator the rank already holds (written by an earlier compute
// or merge, or received, and not freed since) writes a block partial of it
// instead, and is followed by ONE merge op that reads all of the op's block
// partials and writes those accumulators, then by one free of all of them.
// A block partial is one object per accumulator ("O[3]~"), made for every
// accumulator of the plan before the rewrite, so that its id does not depend on
// the order in which ranks are rewritten (a windowed simulation rewrites them
// interleaved, sim/schedules/ring_classes_source.hpp). Every rank that computes
// into the accumulator holds its own copy of the partial, from the compute to
// the free after the merge, as it holds its own copy of a travelling KV; so a
// backward ring, whose P travelling dKV each get a partial on every rank they
// pass, has P partial objects, not P^2. O, dQ and dKV partials are sized in the
// activation dtype (what the kernel writes), LSE partials in fp32. The simulator costs the merge
// by its bytes (compute_model.hpp): partials read + 2 x accumulators (read and
// written), at the profile's merge_bandwidth, plus one launch. Accumulators the
// schedule already merges (pass-Q, mesh partials) are untouched: their computes
// write fresh partials.
// Correction::eager rewrites the plan as separate does and marks its merges
// MergeForm::eager: the same update costed as PyTorch runs it op by op, several
// elementwise kernels over the fp32 accumulator (sim/model/merge_cost.hpp), as
// ring-flash-attention and yunchang call it. The runtime executes the same merge
// ops as one pass; the form only changes what the simulator charges.
// Correction::fused leaves the plan as generated: a kernel that rescales and
// accumulates into its output in place (a fused CP kernel; tilesim's own CPU
// and CUDA block kernels do this).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim {

enum class Correction { separate, eager, fused };

std::string_view to_string(Correction correction);

void separate_output_corrections(Plan& plan);

// Correction::separate applied to programs as they are generated: rewrite() takes the ops of a
// rank's raw program from `from` on and appends their rewritten form to `out`;
// separate_output_corrections runs it over whole programs, a windowed simulation over each new
// piece (sim/schedules/ring_classes_source.hpp). The constructor adds the block partials to
// `plan` (one per accumulator object, in id order), so any order of rewriting ranks gives the
// same object ids. discard_before()
// forgets the raw ops before `raw_index`, which later ops' `after` may then not name.
class OutputCorrectionRewriter {
 public:
  explicit OutputCorrectionRewriter(Plan& plan);
  void rewrite(int rank, const RankProgram& raw, int from, RankProgram& out);
  void discard_before(int rank, int raw_index);
  void forget(int rank);  // the rank's program is complete

 private:
  struct RankState {
    bool started = false;
    std::unordered_set<int> holds;  // objects the rank holds a copy of with content
    int index_base = 0;             // raw index of new_index[0]
    std::vector<int> new_index;     // raw op -> rewritten op
  };
  RankState& state(int rank);
  int partial(int target) const;

  Plan& plan_;
  std::vector<std::vector<int>> held_inputs_;  // per rank: accumulators it starts with
  std::vector<RankState> ranks_;
  std::vector<int> partial_of_;  // object -> its block partial; -1: not an accumulator
  std::vector<int> after_, writes_, partials_scratch_, targets_;
};

}  // namespace tilesim
