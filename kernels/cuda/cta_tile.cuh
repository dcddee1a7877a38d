// Device helpers shared by the attention kernels (a CTA tile is one thread block's slice of a
// kernel call, unrelated to a mesh tile, sim/schedules/mesh_tile.hpp): 16-bit element traits,
// shared-memory tile loads, warp reductions and the kernel parameter block. Tiles are 64 rows; a
// row of a 16-bit tile in shared memory is padded by 8 elements (16 bytes) and a float row by 4,
// which keeps every WMMA fragment pointer 32-byte aligned and spreads rows over the banks.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/block_shape.hpp"

namespace tilesim::kernels::cuda_detail {

constexpr int kCtaRows = 64;  // query rows (forward) or keys (backward) per thread block
constexpr int kCtaCols = 64;  // keys (forward) or query rows (backward) per inner step
constexpr int kWarps = 4;     // warp w owns rows [16 w, 16 w + 16) of the block's tile
constexpr int kThreads = kWarps * 32;
constexpr int kHalfPad = 8;
constexpr int kFloatPad = 4;
constexpr float kLog2e = 1.4426950408889634F;
constexpr float kLn2 = 0.6931471805599453F;

template <typename T>
struct Elem;

template <>
struct Elem<__half> {
  static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
  static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
};

template <>
struct Elem<__nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 from_float(float x) {
    return __float2bfloat16_rn(x);
  }
  static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
};

// Shape and positions of one block, as the kernels see them.
struct BlockParams {
  int batch;
  int heads;
  int kv_heads;
  int q_tokens;
  int kv_tokens;
  long long q_start;
  long long q_stride;
  long long kv_start;
  long long kv_stride;
  bool causal;
  float scale;  // 1 / sqrt(head_dim)
};

__device__ __forceinline__ long long q_position(const BlockParams& p, int i) {
  return p.q_start + static_cast<long long>(i) * p.q_stride;
}
__device__ __forceinline__ long long kv_position(const BlockParams& p, int j) {
  return p.kv_start + static_cast<long long>(j) * p.kv_stride;
}
// Key j is a real token of the chunk visible to the (real) query i.
__device__ __forceinline__ bool visible(const BlockParams& p, int i, int j) {
  return i < p.q_tokens && j < p.kv_tokens && (!p.causal || kv_position(p, j) <= q_position(p, i));
}

// Loads rows [row0, row0 + 64) of head `head` of a [batch][tokens][heads_count][D] tensor into
// a [64][D + kHalfPad] shared tile; rows past `tokens` are zero.
template <int D, typename T>
__device__ __forceinline__ void load_tile(T* tile, const T* tensor, int batch_index, int tokens,
                                          int heads_count, int head, int row0) {
  constexpr int kChunksPerRow = D / 8;  // 8 elements = 16 bytes
  for (int c = static_cast<int>(threadIdx.x); c < kCtaRows * kChunksPerRow; c += kThreads) {
    const int r = c / kChunksPerRow;
    const int col = (c % kChunksPerRow) * 8;
    const int row = row0 + r;
    uint4 value = make_uint4(0U, 0U, 0U, 0U);
    if (row < tokens) {
      const long long offset =
          ((static_cast<long long>(batch_index) * tokens + row) * heads_count + head) * D + col;
      value = *reinterpret_cast<const uint4*>(tensor + offset);
    }
    *reinterpret_cast<uint4*>(tile + r * (D + kHalfPad) + col) = value;
  }
}

__device__ __forceinline__ float warp_max(float x) {
  for (int offset = 16; offset > 0; offset /= 2)
    x = fmaxf(x, __shfl_xor_sync(0xffffffffU, x, offset));
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffU, x, offset);
  return x;
}

// Number of keys (a prefix of the chunk) that a query at position pq may see.
__host__ __device__ __forceinline__ int visible_prefix(long long pq, long long kv_start,
                                                       long long kv_stride, int kv_tokens) {
  if (pq < kv_start) return 0;
  const long long n = (pq - kv_start) / kv_stride + 1;
  return n < kv_tokens ? static_cast<int>(n) : kv_tokens;
}

// Host side: checks the block against what the kernels support and packs it for them.
inline BlockParams make_block_params(const BlockShape& s, const PositionMask& m) {
  validate_block(s, m);
  if (!m.plain()) {
    throw std::invalid_argument(
        "attention CUDA kernels: only the full and causal masks are supported; sliding_window "
        "and documents masks run on the CPU backend (--backend cpu)");
  }
  if (s.head_dim != 64 && s.head_dim != 128) {
    throw std::invalid_argument("attention CUDA kernels: head_dim " + std::to_string(s.head_dim) +
                                " is not supported (64 or 128)");
  }
  constexpr std::int64_t kMax = std::numeric_limits<int>::max() / 2;
  if (s.batch > kMax || s.heads > kMax || s.q_tokens > kMax || s.kv_tokens > kMax ||
      s.batch * s.heads > 65535LL * 65535LL) {
    throw std::invalid_argument("attention CUDA kernels: block too large");
  }
  BlockParams p{};
  p.batch = static_cast<int>(s.batch);
  p.heads = static_cast<int>(s.heads);
  p.kv_heads = static_cast<int>(s.kv_heads);
  p.q_tokens = static_cast<int>(s.q_tokens);
  p.kv_tokens = static_cast<int>(s.kv_tokens);
  p.q_start = m.q.start;
  p.q_stride = m.q.stride;
  p.kv_start = m.kv.start;
  p.kv_stride = m.kv.stride;
  p.causal = m.kind == MaskKind::causal;
  p.scale = 1.0F / sqrtf(static_cast<float>(s.head_dim));
  return p;
}

inline void check_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

}  // namespace tilesim::kernels::cuda_detail
