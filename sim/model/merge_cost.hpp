// The cost of one merge op: the bytes it moves through HBM and the kernels it launches.
//
// A merge reads the block partials a call wrote (O~, dQ~, dKV~ in the activation dtype, LSE~
// in fp32; output_correction.hpp) and updates the accumulators they fold into.
//   MergeForm::one_pass: one fused kernel reads each partial and reads and writes each
//     accumulator once: bytes = sum partials + 2 sum accumulators, 1 launch.
//   MergeForm::eager: the update as PyTorch runs it op by op, every elementwise op reading its
//     inputs from and writing its output to HBM (ring-flash-attention ring_flash_attn/utils.py
//     _update_out_and_lse, forward; its backward folds with in-place adds). For an fp32
//     accumulator of A bytes and its partial of P bytes:
//       O:   block_out.to(fp32) P + A, out - block_out 3A, sigmoid(..) * diff 2A,
//            out - prod 3A                                      -> P + 9A, 4 kernels
//       LSE: block_lse - lse, sigmoid, lse - block_lse, logsigmoid, lse - (..),
//            3 + 2 + 3 + 2 + 3 L (the partial's read included) -> 13 L, 5 kernels
//       dQ:  dq += block_dq (P + 2A, 1 kernel); dKV: dk, dv each (P + 2A over 2 kernels)
//     (the 2024-02 form, exp/log in place of sigmoid, moves P + 8A for O).
// The simulator charges bytes / compute.merge_bandwidth + launches x compute.launch_overhead.
#pragma once

#include <span>

#include "sim/plan/plan.hpp"

namespace tilesim {

struct MergeCost {
  double bytes = 0.0;
  int launches = 0;
};

// `partials` are the merge's reads, `accumulators` its writes.
MergeCost merge_cost(const Plan& plan, std::span<const int> partials,
                     std::span<const int> accumulators);

}  // namespace tilesim
