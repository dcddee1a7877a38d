#include "kernels/cuda/block_kernels.hpp"

#include "kernels/cuda/cudnn_attention.hpp"

namespace tilesim::kernels {

const char* to_string(KernelFamily family) {
  return family == KernelFamily::cudnn ? "cudnn" : "own";
}

BlockKernels::BlockKernels(KernelFamily family) : family_(family) {
  if (family == KernelFamily::cudnn) cudnn_ = std::make_unique<CudnnAttention>();
}

BlockKernels::~BlockKernels() = default;

bool BlockKernels::on_cudnn(const BlockShape& shape, const PositionMask& mask) {
  if (!cudnn_) return false;
  const std::string why = cudnn_unsupported_reason(shape, mask);
  if (why.empty()) return true;
  ++fallbacks_[why];
  return false;
}

void BlockKernels::forward(const BlockShape& shape, const PositionMask& mask, DType dtype,
                           const void* q, const void* k, const void* v, float* o, float* lse,
                           void* stream) {
  if (on_cudnn(shape, mask)) {
    try {
      cudnn_->forward(shape, mask, dtype, q, k, v, o, lse, stream);
      return;
    } catch (const CudnnUnsupported& e) {  // cuDNN's check on this GPU refused the graph
      ++fallbacks_[e.what()];
    }
  }
  attention_forward_cuda(shape, mask, dtype, q, k, v, o, lse, stream);
}

void BlockKernels::backward(const BlockShape& shape, const PositionMask& mask, DType dtype,
                            const void* q, const void* k, const void* v, const float* o_final,
                            const void* d_o, const float* lse, const float* d_rowsum, float* dq,
                            float* dk, float* dv, void* stream) {
  if (on_cudnn(shape, mask)) {
    try {
      cudnn_->backward(shape, mask, dtype, q, k, v, o_final, d_o, lse, dq, dk, dv, stream);
      return;
    } catch (const CudnnUnsupported& e) {
      ++fallbacks_[e.what()];
    }
  }
  attention_backward_cuda(shape, mask, dtype, q, k, v, d_o, lse, d_rowsum, dq, dk, dv, stream);
}

}  // namespace tilesim::kernels
