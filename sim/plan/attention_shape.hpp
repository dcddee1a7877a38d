// The attention problem being distributed and the byte sizes of its pieces.
//
// Notation (docs/schedules.md): S tokens, b batch, H heads,
// Hkv kv heads, d head dim, e bytes per element. For a chunk of c tokens:
//   q   = b*c*H*d*e          (one Q chunk, also one dO chunk)
//   kv  = 2*b*c*Hkv*d*e      (one K+V chunk, also one dK+dV chunk in the input dtype)
//   o   = b*c*H*d*4          (an O or dQ accumulator, fp32)
//   lse = b*c*H*4            (log-sum-exp or D = rowsum(dO*O), fp32)
//   dkv = 2*b*c*Hkv*d*4      (a dK+dV accumulator, fp32)
// FLOPs of attention between nq query and nk key tokens that see each other:
//   forward 4*b*H*d per (query, key) pair; backward 2.5x forward.
#pragma once

#include <cstdint>
#include <string_view>

namespace tilesim {

enum class DType { bf16, fp16, fp32 };
enum class PassSelection { forward, backward, both };

std::string_view to_string(DType dtype);
std::string_view to_string(PassSelection pass);
int element_bytes(DType dtype);

struct AttentionShape {
  std::int64_t seq_len = 0;
  int batch = 1;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  DType dtype = DType::bf16;
  bool causal = false;
  PassSelection pass = PassSelection::forward;

  bool has_forward() const { return pass != PassSelection::backward; }
  bool has_backward() const { return pass != PassSelection::forward; }

  double q_bytes(std::int64_t tokens) const;
  double kv_bytes(std::int64_t tokens) const;
  double o_accumulator_bytes(std::int64_t tokens) const;
  double lse_bytes(std::int64_t tokens) const;
  double dkv_accumulator_bytes(std::int64_t tokens) const;
  double flops_per_pair_forward() const { return 4.0 * batch * heads * head_dim; }
  double flops_per_pair_backward() const { return 2.5 * flops_per_pair_forward(); }
};

}  // namespace tilesim
