// The work of one compute op on the CPU: a loop over the (q block, kv block) pairs of the op's
// two chunks that the plan's mask does not skip, each pair one call of the fast fp32 kernels
// of kernels/cpu/attention_cpu.hpp on the block spans of runtime/object_layout.hpp.
//   forward:  attention_forward_cpu into a scratch, then accumulate_partial_cpu into the
//             O/LSE accumulators (online merge);
//   backward: attention_backward_cpu with the q block's final O and LSE, adding into the dQ
//             block and the dK/dV halves of the dKV block.
// Spans are whole objects (every block of the chunk, the head group's heads).
#pragma once

#include <span>
#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

struct ForwardSpans {
  std::span<const float> q, kv;
  std::span<float> o, lse;
};

struct BackwardSpans {
  std::span<const float> q, kv, o, lse, d_o;
  std::span<float> dq, dkv;
};

// Scratch for one forward block pair; sized once per plan, reused by every op.
struct ForwardScratch {
  explicit ForwardScratch(const Plan& plan);
  std::vector<float> o;
  std::vector<float> lse;
};

// Throw std::invalid_argument when a span does not match its chunk.
void run_forward_blocks(const Plan& plan, int q_chunk, int kv_chunk, const ForwardSpans& spans,
                        ForwardScratch& scratch, int threads);
void run_backward_blocks(const Plan& plan, int q_chunk, int kv_chunk, const BackwardSpans& spans,
                         int threads);

}  // namespace tilesim::runtime
