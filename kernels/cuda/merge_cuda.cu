// Merge of fp32 (O, LSE) partials and fp32 <-> 16-bit conversions (see attention_cuda.hpp).
#include <cmath>
#include <stdexcept>

#include "kernels/cuda/attention_cuda.hpp"
#include "kernels/cuda/cta_tile.cuh"

namespace tilesim::kernels {
namespace cuda_detail {
namespace {

constexpr int kMaxParts = 16;  // partials merged per launch; more are folded in over launches

struct MergeParts {
  const float* o[kMaxParts];
  const float* lse[kMaxParts];
  int count;
};

// One warp per row (b, t, h). `o_out` may alias a partial's o and `lse_out` its lse: every
// element is read before the same thread writes it.
__global__ void merge_kernel(MergeParts parts, int batch, int tokens, int heads, int head_dim,
                             float* o_out, float* lse_out) {
  const long long row = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= static_cast<long long>(batch) * tokens * heads) return;
  const long long h = row % heads;
  const long long t = (row / heads) % tokens;
  const long long b = row / (static_cast<long long>(heads) * tokens);
  const long long lse_at = (b * heads + h) * tokens + t;
  const long long o_at = row * head_dim;  // [batch][tokens][heads] rows of O

  float max_lse = -INFINITY;
  for (int i = 0; i < parts.count; ++i) max_lse = fmaxf(max_lse, parts.lse[i][lse_at]);
  float weight[kMaxParts];
  float merged = -INFINITY;
  if (max_lse != -INFINITY) {
    float sum = 0.0F;
    for (int i = 0; i < parts.count; ++i) sum += expf(parts.lse[i][lse_at] - max_lse);
    merged = max_lse + logf(sum);
  }
  for (int i = 0; i < parts.count; ++i) {
    weight[i] = merged == -INFINITY ? 0.0F : expf(parts.lse[i][lse_at] - merged);
  }
  __syncwarp();  // every lane has read the lse values before lane 0 may overwrite one
  for (int d = lane; d < head_dim; d += 32) {
    float value = 0.0F;
    for (int i = 0; i < parts.count; ++i) {
      if (weight[i] != 0.0F) value += weight[i] * parts.o[i][o_at + d];
    }
    o_out[o_at + d] = value;
  }
  if (lane == 0) lse_out[lse_at] = merged;
}

void launch_merge(const RowsShape& rows, const MergeParts& parts, float* o, float* lse,
                  cudaStream_t stream) {
  const long long count = rows.batch * rows.tokens * rows.heads;
  constexpr int kBlock = 256;
  const auto blocks = static_cast<unsigned>((count * 32 + kBlock - 1) / kBlock);
  merge_kernel<<<blocks, kBlock, 0, stream>>>(
      parts, static_cast<int>(rows.batch), static_cast<int>(rows.tokens),
      static_cast<int>(rows.heads), static_cast<int>(rows.head_dim), o, lse);
  check_launch("merge_partials_cuda");
}

template <typename T>
__global__ void from_f32_kernel(const float* __restrict__ src, T* __restrict__ dst,
                                long long count) {
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    dst[i] = Elem<T>::from_float(src[i]);
  }
}

template <typename T>
__global__ void to_f32_kernel(const T* __restrict__ src, float* __restrict__ dst, long long count) {
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    dst[i] = Elem<T>::to_float(src[i]);
  }
}

__global__ void add_f32_kernel(const float* __restrict__ src, float* __restrict__ dst,
                               long long count) {
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    dst[i] += src[i];
  }
}

unsigned conversion_blocks(std::int64_t count) {
  const std::int64_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

}  // namespace
}  // namespace cuda_detail

void merge_partials_cuda(const RowsShape& rows, const float* const* o_parts,
                         const float* const* lse_parts, std::size_t count, float* o, float* lse,
                         void* stream) {
  validate_rows(rows);
  if (count == 0 || o_parts == nullptr || lse_parts == nullptr) {
    throw std::invalid_argument("merge_partials_cuda: need at least one partial");
  }
  using cuda_detail::kMaxParts;
  const auto s = static_cast<cudaStream_t>(stream);
  // First launch merges up to kMaxParts partials into (o, lse); each later launch folds the
  // running result and up to kMaxParts - 1 more partials into (o, lse) in place.
  std::size_t next = 0;
  bool first = true;
  while (next < count) {
    cuda_detail::MergeParts parts{};
    if (!first) {
      parts.o[0] = o;
      parts.lse[0] = lse;
      parts.count = 1;
    }
    while (next < count && parts.count < kMaxParts) {
      parts.o[parts.count] = o_parts[next];
      parts.lse[parts.count] = lse_parts[next];
      ++parts.count;
      ++next;
    }
    cuda_detail::launch_merge(rows, parts, o, lse, s);
    first = false;
  }
}

void accumulate_partial_cuda(const RowsShape& rows, const float* o_block, const float* lse_block,
                             float* o_acc, float* lse_acc, void* stream) {
  validate_rows(rows);
  cuda_detail::MergeParts parts{};
  parts.o[0] = o_acc;
  parts.lse[0] = lse_acc;
  parts.o[1] = o_block;
  parts.lse[1] = lse_block;
  parts.count = 2;
  cuda_detail::launch_merge(rows, parts, o_acc, lse_acc, static_cast<cudaStream_t>(stream));
}

void add_f32_cuda(const float* src, float* dst, std::int64_t count, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  cuda_detail::add_f32_kernel<<<cuda_detail::conversion_blocks(count), 256, 0, s>>>(src, dst,
                                                                                    count);
  cuda_detail::check_launch("add_f32_cuda");
}

void convert_from_f32_cuda(const float* src, void* dst, std::int64_t count, DType dtype,
                           void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const unsigned blocks = cuda_detail::conversion_blocks(count);
  if (dtype == DType::bf16) {
    cuda_detail::from_f32_kernel<<<blocks, 256, 0, s>>>(src, static_cast<__nv_bfloat16*>(dst),
                                                        count);
  } else {
    cuda_detail::from_f32_kernel<<<blocks, 256, 0, s>>>(src, static_cast<__half*>(dst), count);
  }
  cuda_detail::check_launch("convert_from_f32_cuda");
}

void convert_to_f32_cuda(const void* src, float* dst, std::int64_t count, DType dtype,
                         void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const unsigned blocks = cuda_detail::conversion_blocks(count);
  if (dtype == DType::bf16) {
    cuda_detail::to_f32_kernel<<<blocks, 256, 0, s>>>(static_cast<const __nv_bfloat16*>(src), dst,
                                                      count);
  } else {
    cuda_detail::to_f32_kernel<<<blocks, 256, 0, s>>>(static_cast<const __half*>(src), dst, count);
  }
  cuda_detail::check_launch("convert_to_f32_cuda");
}

}  // namespace tilesim::kernels
