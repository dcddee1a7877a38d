// Attention shapes shared by the plan and simulator tests.
#pragma once

#include "sim/plan/attention_shape.hpp"

namespace tilesim::testing {

inline AttentionShape mha_shape(std::int64_t seq_len, bool causal = false) {
  AttentionShape s;
  s.seq_len = seq_len;
  s.batch = 1;
  s.heads = 32;
  s.kv_heads = 32;
  s.head_dim = 128;
  s.dtype = DType::bf16;
  s.set_causal(causal);
  return s;
}

inline AttentionShape gqa_shape(std::int64_t seq_len, bool causal = false) {
  AttentionShape s = mha_shape(seq_len, causal);
  s.kv_heads = 8;
  return s;
}

}  // namespace tilesim::testing
