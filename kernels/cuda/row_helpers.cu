// Row helpers around library attention kernels (see attention_cuda.hpp): empty leading rows
// and 16-bit results added into fp32 accumulators.
#include <cmath>

#include "kernels/cuda/attention_cuda.hpp"
#include "kernels/cuda/cta_tile.cuh"

namespace tilesim::kernels {
namespace cuda_detail {
namespace {

// One thread per (b, t, h) row with t < rows_count: o[b][t][h][:] = 0, lse[b][h][t] = -inf.
__global__ void empty_rows_kernel(int batch, int tokens, int heads, int head_dim,
                                  long long rows_count, float* o, float* lse) {
  const long long row = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= static_cast<long long>(batch) * rows_count * heads) return;
  const long long h = row % heads;
  const long long t = (row / heads) % rows_count;
  const long long b = row / (static_cast<long long>(heads) * rows_count);
  float* o_row = o + ((b * tokens + t) * heads + h) * head_dim;
  for (int d = 0; d < head_dim; ++d) o_row[d] = 0.0F;
  lse[(b * heads + h) * tokens + t] = -INFINITY;
}

template <typename T>
__global__ void add_converted_kernel(const T* __restrict__ src, float* __restrict__ dst,
                                     long long count) {
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    dst[i] += Elem<T>::to_float(src[i]);
  }
}

unsigned grid_for(long long count, long long cap) {
  const long long blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

}  // namespace
}  // namespace cuda_detail

void fill_empty_rows_cuda(const RowsShape& rows, std::int64_t leading_rows, float* o, float* lse,
                          void* stream) {
  validate_rows(rows);
  if (leading_rows <= 0) return;
  if (leading_rows > rows.tokens)
    throw std::invalid_argument("fill_empty_rows_cuda: too many rows");
  const long long count = rows.batch * leading_rows * rows.heads;
  cuda_detail::empty_rows_kernel<<<cuda_detail::grid_for(count, 1LL << 30), 256, 0,
                                   static_cast<cudaStream_t>(stream)>>>(
      static_cast<int>(rows.batch), static_cast<int>(rows.tokens), static_cast<int>(rows.heads),
      static_cast<int>(rows.head_dim), leading_rows, o, lse);
  cuda_detail::check_launch("fill_empty_rows_cuda");
}

void add_converted_f32_cuda(const void* src, float* dst, std::int64_t count, DType dtype,
                            void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const unsigned blocks = cuda_detail::grid_for(count, 4096);
  if (dtype == DType::bf16) {
    cuda_detail::add_converted_kernel<<<blocks, 256, 0, s>>>(static_cast<const __nv_bfloat16*>(src),
                                                             dst, count);
  } else {
    cuda_detail::add_converted_kernel<<<blocks, 256, 0, s>>>(static_cast<const __half*>(src), dst,
                                                             count);
  }
  cuda_detail::check_launch("add_converted_f32_cuda");
}

}  // namespace tilesim::kernels
