// Fast fp32 CPU attention block kernels. Layouts and masks: see kernels/attention_shape.hpp;
// the math is the same as kernels/cpu/reference_attention.hpp, computed in float.
//
// Forward uses an online softmax over blocks of keys: for each query row keep a running max m,
// running sum l and unnormalised accumulator a; for a key block with scores s_j
//   m' = max(m, max_j s_j),  c = exp(m - m'),  l = c l + sum_j exp(s_j - m'),
//   a = c a + sum_j exp(s_j - m') v_j;  at the end o = a / l, lse = m + log l.
// Causal masks by positions make the visible keys of a row a prefix of the chunk, so masked
// keys are never touched. Inner loops run over contiguous head_dim / key vectors.
//
// Backward (FlashAttention-2 form) takes the FULL row's final O and LSE:
//   p_j = exp(s_j - lse), D = rowsum(dO * O), ds_j = p_j (dO . v_j - D),
//   dQ += scale sum_j ds_j k_j, dK_j += scale ds_j q, dV_j += p_j dO.
//
// Merge of partials over disjoint key sets: lse = log sum_i exp(lse_i),
// o = sum_i exp(lse_i - lse) o_i; rows with every lse_i = -inf give o = 0, lse = -inf.
//
// `threads` > 1 spreads (batch, head) pairs (forward) or (batch, kv_head) pairs (backward, so
// that GQA groups never write the same dK/dV rows concurrently) over std::threads.
#pragma once

#include <span>

#include "kernels/block_shape.hpp"

namespace tilesim::kernels {

// Writes o [batch][q_tokens][heads][head_dim] and lse [batch][heads][q_tokens].
void attention_forward_cpu(const BlockShape& shape, const PositionMask& mask,
                           std::span<const float> q, std::span<const float> k,
                           std::span<const float> v, std::span<float> o, std::span<float> lse,
                           int threads = 1);

// ADDS this block's contributions into dq, dk, dv (zero them first for a single block).
void attention_backward_cpu(const BlockShape& shape, const PositionMask& mask,
                            std::span<const float> q, std::span<const float> k,
                            std::span<const float> v, std::span<const float> o,
                            std::span<const float> d_o, std::span<const float> lse,
                            std::span<float> dq, std::span<float> dk, std::span<float> dv,
                            int threads = 1);

struct PartialOutput {
  std::span<const float> o;    // [batch][tokens][heads][head_dim]
  std::span<const float> lse;  // [batch][heads][tokens]
};

// Writes the merge of all partials into o and lse (o/lse may not alias a partial).
void merge_partials_cpu(const RowsShape& rows, std::span<const PartialOutput> partials,
                        std::span<float> o, std::span<float> lse);

// In-place running merge: (o_acc, lse_acc) <- merge((o_acc, lse_acc), (o_block, lse_block)).
// Start an accumulator with o = 0 and lse = -inf.
void accumulate_partial_cpu(const RowsShape& rows, std::span<const float> o_block,
                            std::span<const float> lse_block, std::span<float> o_acc,
                            std::span<float> lse_acc);

}  // namespace tilesim::kernels
