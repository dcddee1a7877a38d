// Builds without the cuDNN frontend headers: the cuDNN kernels report why they are absent.
#include "kernels/cuda/cudnn_attention.hpp"

namespace tilesim::kernels {
namespace {

constexpr const char* kNotBuilt =
    "this build has no cuDNN kernels (the cuDNN frontend headers were not found at configure: "
    "run tools/install-deps.sh, or set TILESIM_CUDNN_FRONTEND_DIR)";

}  // namespace

bool cudnn_attention_built() { return false; }

std::string cudnn_unsupported_reason(const BlockShape&, const PositionMask&) { return kNotBuilt; }

struct CudnnAttention::Impl {};

CudnnAttention::CudnnAttention() { throw CudnnUnsupported(kNotBuilt); }
CudnnAttention::~CudnnAttention() = default;

std::size_t CudnnAttention::cached_graphs() const { return 0; }

void CudnnAttention::forward(const BlockShape&, const PositionMask&, DType, const void*,
                             const void*, const void*, float*, float*, void*) {
  throw CudnnUnsupported(kNotBuilt);
}
void CudnnAttention::backward(const BlockShape&, const PositionMask&, DType, const void*,
                              const void*, const void*, const float*, const void*, const float*,
                              float*, float*, float*, void*) {
  throw CudnnUnsupported(kNotBuilt);
}
void CudnnAttention::forward_native(const BlockShape&, const PositionMask&, DType, const void*,
                                    const void*, const void*, void*, float*, void*) {
  throw CudnnUnsupported(kNotBuilt);
}
void CudnnAttention::backward_native(const BlockShape&, const PositionMask&, DType, const void*,
                                     const void*, const void*, const void*, const void*,
                                     const float*, void*, void*, void*, void*) {
  throw CudnnUnsupported(kNotBuilt);
}

}  // namespace tilesim::kernels
