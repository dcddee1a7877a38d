// Forward attention block kernel (see attention_cuda.hpp for the algorithm).
#include <mma.h>

#include <cmath>

#include "kernels/cuda/attention_cuda.hpp"
#include "kernels/cuda/cta_tile.cuh"

namespace tilesim::kernels {
namespace cuda_detail {
namespace {

using namespace nvcuda;

template <int D>
struct ForwardSmem {
  static constexpr int kLdHalf = D + kHalfPad;           // Q, K, V tiles
  static constexpr int kLdP = kCtaCols + kHalfPad;      // P tile (16-bit)
  static constexpr int kLdS = kCtaCols + kFloatPad;     // S tile (fp32)
  static constexpr int kLdO = D + kFloatPad;             // O accumulator (fp32)
  static constexpr int kHalfTile = kCtaRows * kLdHalf;  // elements
  static constexpr size_t kBytes =
      3 * kHalfTile * 2 + kCtaRows * kLdP * 2 + kCtaRows * kLdS * 4 + kCtaRows * kLdO * 4;
};

template <int D, typename T>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(BlockParams p, const T* __restrict__ q, const T* __restrict__ k,
                   const T* __restrict__ v, float* __restrict__ o, float* __restrict__ lse) {
  using Smem = ForwardSmem<D>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* q_s = reinterpret_cast<T*>(smem_raw);
  T* k_s = q_s + Smem::kHalfTile;
  T* v_s = k_s + Smem::kHalfTile;
  T* p_s = v_s + Smem::kHalfTile;
  float* s_s = reinterpret_cast<float*>(p_s + kCtaRows * Smem::kLdP);
  float* o_s = s_s + kCtaRows * Smem::kLdS;

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int b = static_cast<int>(blockIdx.y) / p.heads;
  const int h = static_cast<int>(blockIdx.y) % p.heads;
  const int g = h / (p.heads / p.kv_heads);
  const int m0 = static_cast<int>(blockIdx.x) * kCtaRows;
  const int row0 = warp * 16;  // this warp's rows within the tile
  const float scale_log2 = p.scale * kLog2e;

  load_tile<D>(q_s, q, b, p.q_tokens, p.heads, h, m0);
  for (int e = static_cast<int>(threadIdx.x); e < kCtaRows * Smem::kLdO; e += kThreads) {
    o_s[e] = 0.0F;
  }
  float row_max[16];  // log2 domain; identical in every lane of the warp
  float row_sum[16];
#pragma unroll
  for (int r = 0; r < 16; ++r) {
    row_max[r] = -INFINITY;
    row_sum[r] = 0.0F;
  }

  // Keys past the causal frontier of the tile's last query are never visible.
  int key_end = p.kv_tokens;
  if (p.causal) {
    const int last_q = min(m0 + kCtaRows, p.q_tokens) - 1;
    key_end = visible_prefix(q_position(p, last_q), p.kv_start, p.kv_stride, p.kv_tokens);
  }

  for (int n0 = 0; n0 < key_end; n0 += kCtaCols) {
    __syncthreads();  // every warp is done with the previous K/V tiles (and Q/O are ready)
    load_tile<D>(k_s, k, b, p.kv_tokens, p.kv_heads, g, n0);
    load_tile<D>(v_s, v, b, p.kv_tokens, p.kv_heads, g, n0);
    __syncthreads();

    // S = Q K^T for this warp's 16 rows x 64 keys.
#pragma unroll
    for (int nt = 0; nt < kCtaCols / 16; ++nt) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0F);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> bt;
        wmma::load_matrix_sync(a, q_s + row0 * Smem::kLdHalf + kk * 16, Smem::kLdHalf);
        wmma::load_matrix_sync(bt, k_s + nt * 16 * Smem::kLdHalf + kk * 16, Smem::kLdHalf);
        wmma::mma_sync(acc, a, bt, acc);
      }
      wmma::store_matrix_sync(s_s + row0 * Smem::kLdS + nt * 16, acc, Smem::kLdS,
                              wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax of the warp's rows; each lane owns keys lane and lane + 32.
#pragma unroll
    for (int r = 0; r < 16; ++r) {
      const int row = row0 + r;
      const int qi = m0 + row;
      const float* s_row = s_s + row * Smem::kLdS;
      const float x0 = visible(p, qi, n0 + lane) ? s_row[lane] * scale_log2 : -INFINITY;
      const float x1 = visible(p, qi, n0 + lane + 32) ? s_row[lane + 32] * scale_log2 : -INFINITY;
      const float new_max = fmaxf(row_max[r], warp_max(fmaxf(x0, x1)));
      float p0 = 0.0F;
      float p1 = 0.0F;
      float correction = 1.0F;
      if (new_max != -INFINITY) {
        p0 = exp2f(x0 - new_max);
        p1 = exp2f(x1 - new_max);
        correction = exp2f(row_max[r] - new_max);
      }
      row_sum[r] = row_sum[r] * correction + warp_sum(p0 + p1);
      row_max[r] = new_max;
      T* p_row = p_s + row * Smem::kLdP;
      p_row[lane] = Elem<T>::from_float(p0);
      p_row[lane + 32] = Elem<T>::from_float(p1);
      float* o_row = o_s + row * Smem::kLdO;
      for (int d = lane; d < D; d += 32) o_row[d] *= correction;
    }
    __syncwarp();

    // O += P V for this warp's rows.
#pragma unroll
    for (int dt = 0; dt < D / 16; ++dt) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      float* o_tile = o_s + row0 * Smem::kLdO + dt * 16;
      wmma::load_matrix_sync(acc, o_tile, Smem::kLdO, wmma::mem_row_major);
#pragma unroll
      for (int kk = 0; kk < kCtaCols / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bv;
        wmma::load_matrix_sync(a, p_s + row0 * Smem::kLdP + kk * 16, Smem::kLdP);
        wmma::load_matrix_sync(bv, v_s + kk * 16 * Smem::kLdHalf + dt * 16, Smem::kLdHalf);
        wmma::mma_sync(acc, a, bv, acc);
      }
      wmma::store_matrix_sync(o_tile, acc, Smem::kLdO, wmma::mem_row_major);
    }
    __syncwarp();
  }
  __syncthreads();  // o_s initialised by all threads is complete even when no key tile ran

  // o = O / l, lse = ln 2 * (m + log2 l); rows that saw nothing: 0 and -inf.
#pragma unroll
  for (int r = 0; r < 16; ++r) {
    const int qi = m0 + row0 + r;
    if (qi >= p.q_tokens) continue;
    const bool empty = row_sum[r] == 0.0F;
    const float inv = empty ? 0.0F : 1.0F / row_sum[r];
    const float* o_row = o_s + (row0 + r) * Smem::kLdO;
    float* out = o + ((static_cast<long long>(b) * p.q_tokens + qi) * p.heads + h) * D;
    for (int d = lane; d < D; d += 32) out[d] = o_row[d] * inv;
    if (lane == 0) {
      lse[(static_cast<long long>(b) * p.heads + h) * p.q_tokens + qi] =
          empty ? -INFINITY : (row_max[r] + log2f(row_sum[r])) * kLn2;
    }
  }
}

template <int D, typename T>
void launch_forward(const BlockParams& p, const void* q, const void* k, const void* v, float* o,
                    float* lse, cudaStream_t stream) {
  constexpr size_t kBytes = ForwardSmem<D>::kBytes;
  auto kernel = forward_kernel<D, T>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       static_cast<int>(kBytes));
  const dim3 grid(static_cast<unsigned>((p.q_tokens + kCtaRows - 1) / kCtaRows),
                  static_cast<unsigned>(p.batch * p.heads));
  kernel<<<grid, kThreads, kBytes, stream>>>(p, static_cast<const T*>(q), static_cast<const T*>(k),
                                             static_cast<const T*>(v), o, lse);
  check_launch("attention_forward_cuda");
}

template <typename T>
void dispatch_forward(const BlockParams& p, int head_dim, const void* q, const void* k,
                      const void* v, float* o, float* lse, cudaStream_t stream) {
  if (head_dim == 64) {
    launch_forward<64, T>(p, q, k, v, o, lse, stream);
  } else {
    launch_forward<128, T>(p, q, k, v, o, lse, stream);
  }
}

}  // namespace
}  // namespace cuda_detail

bool attention_cuda_supports_head_dim(std::int64_t head_dim) {
  return head_dim == 64 || head_dim == 128;
}

void attention_forward_cuda(const BlockShape& shape, const PositionMask& mask, DType dtype,
                            const void* q, const void* k, const void* v, float* o, float* lse,
                            void* stream) {
  const cuda_detail::BlockParams p = cuda_detail::make_block_params(shape, mask);
  const auto s = static_cast<cudaStream_t>(stream);
  const int d = static_cast<int>(shape.head_dim);
  if (dtype == DType::bf16) {
    cuda_detail::dispatch_forward<__nv_bfloat16>(p, d, q, k, v, o, lse, s);
  } else {
    cuda_detail::dispatch_forward<__half>(p, d, q, k, v, o, lse, s);
  }
}

}  // namespace tilesim::kernels
