// CUDA attention block kernels behind a plain C++ interface: device pointers in, `stream` is a
// cudaStream_t passed as void* (nullptr = default stream). No CUDA type appears here.
// Layouts and masks: see kernels/block_shape.hpp. Inputs Q, K, V, dO are bf16 or fp16;
// everything else (O, LSE, D, dQ, dK, dV, partials) is fp32. head_dim must be 64 or 128.
//
// Forward (FlashAttention-2 style): a thread block owns 64 query rows of one (batch, head) and
// walks the KV chunk in tiles of 64 keys. S = Q K^T and O += P V run on tensor cores (WMMA
// m16n16k16, fp32 accumulation); an online softmax keeps per row the running max m (log2
// domain) and sum l, rescaling O by exp2(m_old - m_new) before each P V. At the end
// o = O / l and lse = ln 2 * (m + log2 l). Key tiles past the causal frontier are skipped.
// Backward: with the FULL row's LSE and D = rowsum(dO * O) (attention_rowsum_cuda),
//   P = exp(S - lse), dP = dO V^T, dS = P (dP - D) * scale,
//   dV += P^T dO, dK += dS^T Q, dQ += dS K.
// A thread block owns 64 keys of one (batch, kv_head) and loops over the query heads of its
// GQA group and the query tiles, keeping dK/dV in registers; dQ is added with atomics.
// Merge: lse = log sum_i exp(lse_i), o = sum_i exp(lse_i - lse) o_i (all -inf: 0, -inf).
//
// Every function validates its arguments (std::invalid_argument) and throws
// std::runtime_error when a launch fails; kernels run asynchronously on `stream`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/block_shape.hpp"

namespace tilesim::kernels {

enum class DType { bf16, fp16 };

// True for the head dimensions the CUDA kernels are compiled for (64 and 128).
bool attention_cuda_supports_head_dim(std::int64_t head_dim);

// o [batch][q_tokens][heads][head_dim] fp32, lse [batch][heads][q_tokens] fp32 (written).
void attention_forward_cuda(const BlockShape& shape, const PositionMask& mask, DType dtype,
                            const void* q, const void* k, const void* v, float* o, float* lse,
                            void* stream);

// d_rowsum [batch][heads][tokens] = rowsum(dO * O), from the final O (fp32) and dO (dtype).
void attention_rowsum_cuda(const RowsShape& rows, DType dtype, const float* o, const void* d_o,
                           float* d_rowsum, void* stream);

// ADDS this block's contributions into dq [batch][q_tokens][heads][head_dim] and
// dk, dv [batch][kv_tokens][kv_heads][head_dim] (fp32; zero them for a single block).
// lse and d_rowsum are the full row's final values.
void attention_backward_cuda(const BlockShape& shape, const PositionMask& mask, DType dtype,
                             const void* q, const void* k, const void* v, const void* d_o,
                             const float* lse, const float* d_rowsum, float* dq, float* dk,
                             float* dv, void* stream);

// o, lse <- merge of `count` >= 1 partials: o_parts[i], lse_parts[i] are device pointers held
// in host arrays. o/lse may not alias a partial.
void merge_partials_cuda(const RowsShape& rows, const float* const* o_parts,
                         const float* const* lse_parts, std::size_t count, float* o, float* lse,
                         void* stream);

// In place: (o_acc, lse_acc) <- merge((o_acc, lse_acc), (o_block, lse_block)); an empty
// accumulator is o = 0, lse = -inf.
void accumulate_partial_cuda(const RowsShape& rows, const float* o_block, const float* lse_block,
                             float* o_acc, float* lse_acc, void* stream);

// dst[i] += src[i] for i < count (dQ/dKV partial sums); src may not alias dst.
void add_f32_cuda(const float* src, float* dst, std::int64_t count, void* stream);

// Helpers for library kernels (cuDNN) that write 16-bit results and skip leading rows:
// rows t < leading_rows of every (batch, head) get o = 0 and lse = -inf (rows that see no key);
// dst[i] += float(src[i]) for a 16-bit src.
void fill_empty_rows_cuda(const RowsShape& rows, std::int64_t leading_rows, float* o, float* lse,
                          void* stream);
void add_converted_f32_cuda(const void* src, float* dst, std::int64_t count, DType dtype,
                            void* stream);

// Element conversions between fp32 and the 16-bit input types (round to nearest even).
void convert_from_f32_cuda(const float* src, void* dst, std::int64_t count, DType dtype,
                           void* stream);
void convert_to_f32_cuda(const void* src, float* dst, std::int64_t count, DType dtype,
                         void* stream);

}  // namespace tilesim::kernels
