// Checks a rank's final outputs against the reference attention over the whole sequence.
//
// For each layout block of an output chunk, the reference (kernels/cpu/reference_attention,
// double precision) runs the block's queries against every key of the sequence, with the
// causal mask by absolute positions, on the same (possibly rounded) inputs as the backend.
// Errors: max_abs_error = max |x - ref| over O and LSE (both -inf counts as equal);
// max_rel_error = max_abs_error / max |ref| (a norm-wise relative error, robust to values
// near zero).
#pragma once

#include <span>

#include "runtime/input_data.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

struct CheckResult {
  double max_abs_error = 0.0;
  double max_abs_reference = 0.0;
  std::int64_t values = 0;
  double max_rel_error() const {
    return max_abs_reference > 0 ? max_abs_error / max_abs_reference : max_abs_error;
  }
  void combine(const CheckResult& other);
};

// Compares the final O and LSE of chunk `chunk` (layout of object_layout.hpp).
CheckResult check_forward_chunk(const Plan& plan, const InputData& inputs, int chunk,
                                std::span<const float> o, std::span<const float> lse);

}  // namespace tilesim::runtime
