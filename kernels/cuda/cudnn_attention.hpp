// One attention block on cuDNN's fused flash attention (SDPA), through the cuDNN frontend's C++
// graph API. Plain C++ header: no cuDNN or CUDA type appears; `stream` is a cudaStream_t as
// void*.
//
// Model: the block's mask becomes a diagonal band (kernels/diagonal_band.hpp); cuDNN runs the
// rows the band keeps, leading rows that see no key get O = 0, LSE = -inf. Tensors are passed
// in place with strides: Q, O, dO, dQ as [batch][heads][rows][head_dim] over the project's
// [batch][tokens][heads][head_dim] memory, K, V, dK, dV likewise with kv_heads (GQA: query
// head h reads kv head h / (heads / kv_heads), cuDNN's grouping too), Stats as
// [batch][heads][rows][1] over the fp32 LSE [batch][heads][tokens] (through a packed scratch
// and a 2D copy when the kept rows start off cuDNN's 16-byte operand alignment). cuDNN's Stats is
// the natural-log sum-exp of the scaled scores (scale = 1 / sqrt(head_dim)), the LSE convention of
// kernels/cpu, so partials merge as they are. cuDNN's O, dQ, dK, dV are 16-bit (its support
// surface has no fp32 outputs): forward converts O into the fp32 output, backward adds the
// 16-bit dQ, dK, dV into the fp32 accumulators. Backward takes the FULL row's final O and LSE
// (cuDNN forms D = rowsum(dO * O) itself), as TransformerEngine's context parallelism does.
//
// Graphs: one per (pass, shape, band, dtype), built on first use (validate, heuristics mode A,
// check_support, build_plans) and kept for the object's life; a configuration cuDNN rejects
// is remembered with cuDNN's message, so it is not rebuilt, and throws CudnnUnsupported. The
// object owns the cuDNN handle (created on first use, on the current device), the workspace
// and the 16-bit scratch; it grows them (after synchronizing the stream) when a larger block
// comes. Not thread safe; one object per device and stream user.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/block_shape.hpp"
#include "kernels/cuda/attention_cuda.hpp"

namespace tilesim::kernels {

// cuDNN cannot run this block (mask, head_dim, or cuDNN's own check on this GPU); what() says
// why. The caller may run its own kernels instead.
class CudnnUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether this build has the cuDNN kernels (the frontend headers were found at configure).
bool cudnn_attention_built();

// "" when cuDNN can take the block as far as the host can tell (the mask is a band, head_dim a
// multiple of 8 up to 256); else the reason. cuDNN's own check happens at graph build.
std::string cudnn_unsupported_reason(const BlockShape& shape, const PositionMask& mask);

class CudnnAttention {
 public:
  CudnnAttention();
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  // As attention_forward_cuda: o [batch][q_tokens][heads][head_dim] fp32 and lse fp32 written.
  void forward(const BlockShape& shape, const PositionMask& mask, DType dtype, const void* q,
               const void* k, const void* v, float* o, float* lse, void* stream);

  // As attention_backward_cuda (ADDS into fp32 dq, dk, dv), but from the full row's final
  // o_final (fp32) and lse instead of D.
  void backward(const BlockShape& shape, const PositionMask& mask, DType dtype, const void* q,
                const void* k, const void* v, const float* o_final, const void* d_o,
                const float* lse, float* dq, float* dk, float* dv, void* stream);

  // The fused kernels alone, 16-bit in and out (benchmarks: no conversion, no accumulation).
  // o16, dq16, dk16, dv16 are dtype tensors in the layouts above.
  void forward_native(const BlockShape& shape, const PositionMask& mask, DType dtype, const void* q,
                      const void* k, const void* v, void* o16, float* lse, void* stream);
  void backward_native(const BlockShape& shape, const PositionMask& mask, DType dtype,
                       const void* q, const void* k, const void* v, const void* o16,
                       const void* d_o, const float* lse, void* dq16, void* dk16, void* dv16,
                       void* stream);

  std::size_t cached_graphs() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilesim::kernels
