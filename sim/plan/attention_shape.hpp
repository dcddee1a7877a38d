// The attention problem being distributed and the byte sizes of its pieces.
//
// Notation (docs/schedules.md): S tokens, b batch, H heads, Hkv kv heads, d
// the q/k head dim (attention.head_dim), dv the v head dim
// (attention.v_head_dim, default d; MLA: d = 192, dv = 128), e bytes per
// element of the activation dtype, ep of the partial dtype
// (attention.partial_dtype, default fp32), ef of the output dtype
// (attention.output_dtype, default the activation dtype). For c tokens:
//   q   = b*c*H*d*e          (one Q chunk)
//   do  = b*c*H*dv*e         (one dO chunk; = q when dv = d)
//   kv  = b*c*Hkv*(d+dv)*e   (one K+V chunk: K has d, V has dv per head)
//   o   = b*c*H*dv*ep        (an O accumulator still being summed)
//   of  = b*c*H*dv*ef        (a finished O)
//   dq  = b*c*H*d*ep         (a dQ accumulator; dqf = b*c*H*d*ef finished)
//   lse = b*c*H*4            (log-sum-exp or D = rowsum(dO*O), always fp32)
//   dkv = b*c*Hkv*(d+dv)*ep  (a dK+dV accumulator still being summed)
//   dkvf = b*c*Hkv*(d+dv)*ef (a finished dK+dV)
// FlashAttention-based implementations keep running accumulators and the
// partials they send in fp32 and cast the finished output once (ring-flash-
// attention utils.py keeps `out` fp32 and returns out.to(q.dtype)).
// FLOPs per (query, key) pair that see each other, counting 2 per
// multiply-add of each matmul:
//   forward  2*b*H*(d + dv)      (S = QK^T over d, O = PV over dv)
//   backward 2*b*H*(3d + 2dv)    (S again, dQ = dS K, dK = dS^T Q over d;
//                                 dP = dO V^T, dV = P^T dO over dv)
// With dv = d: 4*b*H*d forward and 2.5x that backward (FlashAttention-2's count).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/plan/attention_mask.hpp"

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
  int head_dim = 0;    // q/k head dim d
  int v_head_dim = 0;  // v (and O, dO) head dim dv; 0 means dv = d
  DType dtype = DType::bf16;
  DType partial_dtype = DType::fp32;  // accumulators while they are summed
  std::optional<DType> output_dtype;  // finished O, dQ, dKV; unset = dtype
  // causal is true for every mask that hides future keys (causal, sliding_window, documents):
  // schedules balance those the same way; `mask` says which pairs attend (attention_mask.hpp).
  bool causal = false;
  AttentionMask mask;
  // Sets mask and causal together (the validator rejects a shape where they disagree).
  void set_mask(AttentionMask m);
  void set_causal(bool on);  // the plain causal or full mask
  PassSelection pass = PassSelection::forward;

  bool has_forward() const { return pass != PassSelection::backward; }
  bool has_backward() const { return pass != PassSelection::forward; }

  int value_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }

  double q_bytes(std::int64_t tokens) const;
  double d_o_bytes(std::int64_t tokens) const;
  double kv_bytes(std::int64_t tokens) const;
  DType finished_dtype() const { return output_dtype.value_or(dtype); }
  double o_accumulator_bytes(std::int64_t tokens) const;   // partial dtype
  double o_output_bytes(std::int64_t tokens) const;        // output dtype
  double dq_accumulator_bytes(std::int64_t tokens) const;  // partial dtype
  double dq_output_bytes(std::int64_t tokens) const;       // output dtype
  double lse_bytes(std::int64_t tokens) const;
  double dkv_accumulator_bytes(std::int64_t tokens) const;  // partial dtype
  double dkv_output_bytes(std::int64_t tokens) const;       // output dtype
  double flops_per_pair_forward() const {
    return 2.0 * batch * heads * (head_dim + value_dim());
  }
  double flops_per_pair_backward() const {
    return 2.0 * batch * heads * (3.0 * head_dim + 2.0 * value_dim());
  }
};

}  // namespace tilesim
