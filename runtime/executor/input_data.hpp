// Seeded input data that any rank can regenerate on its own.
//
// Every element of Q, K, V and dO is a pure function of (seed, tensor, batch, absolute token
// position, head, dim): a splitmix64 hash of those, mapped to [-1, 1). So a chunk's data is a
// pure function of (seed, tensor, chunk), a rank never needs another rank's inputs to check
// its outputs, and the reference can rebuild the whole sequence in position order.
// Inputs may be rounded to the precision a backend stores them in (InputPrecision), so that the
// reference sees exactly the values the kernels saw.
// A backward-only plan also takes the forward's saved state as inputs: its O and LSE objects
// are filled with the true forward result over the whole sequence (runtime/reference_outputs,
// double precision, then stored as fp32), as the generators assume.
// Objects of a head group (Plan::head_groups > 1) hold that group's heads only
// (runtime/object_layout.hpp); the values of a head do not depend on the grouping.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

enum class InputPrecision { fp32, bf16 };

// Rounds to the nearest value of the precision (bf16: round to nearest even).
float round_to(InputPrecision precision, float value);

class InputData {
 public:
  InputData(const Plan& plan, std::uint64_t seed, InputPrecision precision);

  // The value of one element; part 0 = K, 1 = V for Tensor::kv (0 otherwise).
  float value(Tensor tensor, int part, std::int64_t batch, std::int64_t position, std::int64_t head,
              std::int64_t dim) const;

  // Fills an input object (Q, KV, dO, or the saved O, LSE of a backward-only plan) in the
  // layout of object_layout.hpp.
  void fill(int object, std::span<float> out) const;

  // One layout block of Q (or dO) over all heads in kernel layout, as doubles.
  std::vector<double> q_block(Tensor tensor, int block) const;
  // The whole sequence of K (part 0) or V (part 1) in position order:
  // [batch][seq_len][kv_heads][head_dim], as doubles.
  std::vector<double> full_kv(int part) const;

  std::uint64_t seed() const { return seed_; }
  // Failure injection (TILESIM_FAIL_MODE=nan): element 0 of `object` becomes a NaN.
  void poison(int object) { poisoned_object_ = object; }
  InputPrecision precision() const { return precision_; }

 private:
  // Tokens start + t * stride, t < tokens, heads [head_begin, head_begin + heads), in the
  // layout [batch][tokens][heads][head_dim].
  // Values per head of a tensor: head_dim for Q, dQ, K (kv part 0); v_head_dim for O, dO, V.
  std::int64_t head_dim_of(Tensor tensor, int part) const;
  void fill_tokens(Tensor tensor, int part, std::int64_t head_begin, std::int64_t heads,
                   std::int64_t start, std::int64_t stride, std::int64_t tokens,
                   std::span<float> out) const;

  const Plan* plan_;
  std::uint64_t seed_;
  InputPrecision precision_;
  int poisoned_object_ = -1;
};

}  // namespace tilesim::runtime
