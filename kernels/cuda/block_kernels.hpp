// The block kernels a CUDA user (backend, calibration, benchmark) launches: cuDNN fused
// attention (kernels/cuda/cudnn_attention.hpp) or the project's own WMMA kernels
// (attention_cuda.hpp), one choice per object.
//
// With cudnn, a block cuDNN cannot take (a mask that is no diagonal band, e.g. striped chunks
// of different strides; a head_dim or configuration cuDNN rejects on this GPU) runs on the own
// kernels instead, and the reason is counted in fallbacks(), so a run can say how many blocks
// did not run on cuDNN and why. With own, cuDNN is never touched. Same contracts as the own
// kernels: fp32 O/LSE written, fp32 dQ/dK/dV added to; backward takes both the final O (cuDNN
// forms D itself) and D = rowsum(dO * O) (the own kernels read it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kernels/block_shape.hpp"
#include "kernels/cuda/attention_cuda.hpp"

namespace tilesim::kernels {

class CudnnAttention;

enum class KernelFamily { cudnn, own };

const char* to_string(KernelFamily family);

class BlockKernels {
 public:
  // cudnn in a build without the cuDNN kernels throws CudnnUnsupported (cudnn_attention.hpp).
  explicit BlockKernels(KernelFamily family);
  ~BlockKernels();
  BlockKernels(const BlockKernels&) = delete;
  BlockKernels& operator=(const BlockKernels&) = delete;

  KernelFamily family() const { return family_; }

  void forward(const BlockShape& shape, const PositionMask& mask, DType dtype, const void* q,
               const void* k, const void* v, float* o, float* lse, void* stream);
  void backward(const BlockShape& shape, const PositionMask& mask, DType dtype, const void* q,
                const void* k, const void* v, const float* o_final, const void* d_o,
                const float* lse, const float* d_rowsum, float* dq, float* dk, float* dv,
                void* stream);

  // Reason -> number of blocks that ran on the own kernels for it (empty with own).
  const std::map<std::string, std::int64_t>& fallbacks() const { return fallbacks_; }

 private:
  // Whether cuDNN runs this block; records the reason when it does not.
  bool on_cudnn(const BlockShape& shape, const PositionMask& mask);

  KernelFamily family_;
  std::unique_ptr<CudnnAttention> cudnn_;
  std::map<std::string, std::int64_t> fallbacks_;
};

}  // namespace tilesim::kernels
