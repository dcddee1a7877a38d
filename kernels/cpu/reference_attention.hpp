// Reference attention block kernels: plain loops in double precision, written to be obviously
// correct rather than fast. Layouts and masks: see kernels/attention_shape.hpp.
//
// Forward, for one query row q (scale = 1/sqrt(head_dim), V = visible keys):
//   s_j = scale * q . k_j,  lse = log sum_{j in V} exp(s_j),  o = sum_{j in V} exp(s_j - lse) v_j
//   (no visible key: o = 0, lse = -inf).
// Backward (FlashAttention-2 form) with the FULL row's final O and LSE (after merging all
// blocks of the row), for the keys of this block:
//   p_j = exp(s_j - lse), D = rowsum(dO * O), dp_j = dO . v_j, ds_j = p_j (dp_j - D)
//   dQ += scale * sum_j ds_j k_j,  dK_j += scale * ds_j q,  dV_j += p_j dO.
// Summing these contributions over all blocks of a row gives the exact gradient.
// Merge of partials (o_i, lse_i) of the same rows over disjoint key sets:
//   lse = log sum_i exp(lse_i),  o = sum_i exp(lse_i - lse) o_i  (all -inf: o = 0, lse = -inf).
#pragma once

#include <span>
#include <vector>

#include "kernels/block_shape.hpp"

namespace tilesim::kernels {

// Writes o [batch][q_tokens][heads][head_dim] and lse [batch][heads][q_tokens].
void reference_forward(const BlockShape& shape, const PositionMask& mask, std::span<const double> q,
                       std::span<const double> k, std::span<const double> v, std::span<double> o,
                       std::span<double> lse);

// ADDS this block's contributions into dq, dk, dv (zero them for a single block).
// o and lse are the final merged values of the full rows; d_o is the gradient of O.
void reference_backward(const BlockShape& shape, const PositionMask& mask,
                        std::span<const double> q, std::span<const double> k,
                        std::span<const double> v, std::span<const double> o,
                        std::span<const double> d_o, std::span<const double> lse,
                        std::span<double> dq, std::span<double> dk, std::span<double> dv);

struct ReferencePartial {
  std::span<const double> o;    // [batch][tokens][heads][head_dim]
  std::span<const double> lse;  // [batch][heads][tokens]
};

// Writes the merge of all partials into o and lse.
void reference_merge(const RowsShape& rows, std::span<const ReferencePartial> partials,
                     std::span<double> o, std::span<double> lse);

}  // namespace tilesim::kernels
