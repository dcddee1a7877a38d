// Backward attention block kernel and the D = rowsum(dO * O) pre-pass (see attention_cuda.hpp).
#include <mma.h>

#include <cmath>

#include "kernels/cuda/attention_cuda.hpp"
#include "kernels/cuda/cta_tile.cuh"

namespace tilesim::kernels {
namespace cuda_detail {
namespace {

using namespace nvcuda;

template <int D>
struct BackwardSmem {
  static constexpr int kLdHalf = D + kHalfPad;        // K, V, Q, dO tiles
  static constexpr int kLdP = kCtaCols + kHalfPad;   // P, dS (16-bit) [query][key]
  static constexpr int kLdS = kCtaCols + kFloatPad;  // S, dP (fp32) [query][key]
  static constexpr int kHalfTile = kCtaRows * kLdHalf;
  static constexpr int kStage = 16 * 16;  // per-warp fp32 staging tile
  static constexpr size_t kBytes = 4 * kHalfTile * 2 + 2 * kCtaCols * kLdP * 2 +
                                   2 * kCtaCols * kLdS * 4 + kWarps * kStage * 4 +
                                   2 * kCtaCols * 4;
};

// Grid: x = key tile of 64 keys, y = (batch, kv_head). Tiles: K/V rows are keys; the query
// tile (64 rows) is the inner loop over every head of the GQA group.
template <int D, typename T>
__global__ void __launch_bounds__(kThreads)
    backward_kernel(BlockParams p, const T* __restrict__ q, const T* __restrict__ k,
                    const T* __restrict__ v, const T* __restrict__ d_o,
                    const float* __restrict__ lse, const float* __restrict__ d_rowsum,
                    float* __restrict__ dq, float* __restrict__ dk, float* __restrict__ dv) {
  using Smem = BackwardSmem<D>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* k_s = reinterpret_cast<T*>(smem_raw);
  T* v_s = k_s + Smem::kHalfTile;
  T* q_s = v_s + Smem::kHalfTile;
  T* do_s = q_s + Smem::kHalfTile;
  T* p_t = do_s + Smem::kHalfTile;
  T* ds_t = p_t + kCtaCols * Smem::kLdP;
  float* s_s = reinterpret_cast<float*>(ds_t + kCtaCols * Smem::kLdP);
  float* dp_s = s_s + kCtaCols * Smem::kLdS;
  float* stage_all = dp_s + kCtaCols * Smem::kLdS;
  float* lse_s = stage_all + kWarps * Smem::kStage;
  float* drow_s = lse_s + kCtaCols;

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  float* stage = stage_all + warp * Smem::kStage;
  const int b = static_cast<int>(blockIdx.y) / p.kv_heads;
  const int g = static_cast<int>(blockIdx.y) % p.kv_heads;
  const int group = p.heads / p.kv_heads;
  const int n0 = static_cast<int>(blockIdx.x) * kCtaRows;
  const int row0 = warp * 16;  // this warp's keys (dK, dV) and query rows (S, dP, dQ)
  const float scale_log2 = p.scale * kLog2e;
  const long long first_key_position = kv_position(p, n0);

  load_tile<D>(k_s, k, b, p.kv_tokens, p.kv_heads, g, n0);
  load_tile<D>(v_s, v, b, p.kv_tokens, p.kv_heads, g, n0);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> dk_acc[D / 16];
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> dv_acc[D / 16];
#pragma unroll
  for (int dt = 0; dt < D / 16; ++dt) {
    wmma::fill_fragment(dk_acc[dt], 0.0F);
    wmma::fill_fragment(dv_acc[dt], 0.0F);
  }

  for (int h = g * group; h < (g + 1) * group; ++h) {
    const long long row_base = (static_cast<long long>(b) * p.heads + h) * p.q_tokens;
    for (int m0 = 0; m0 < p.q_tokens; m0 += kCtaCols) {
      if (p.causal) {  // the whole query tile precedes this key tile: nothing visible
        const int last_q = min(m0 + kCtaCols, p.q_tokens) - 1;
        if (q_position(p, last_q) < first_key_position) continue;
      }
      __syncthreads();  // previous tile's Q, dO, P, dS are no longer read
      load_tile<D>(q_s, q, b, p.q_tokens, p.heads, h, m0);
      load_tile<D>(do_s, d_o, b, p.q_tokens, p.heads, h, m0);
      for (int r = static_cast<int>(threadIdx.x); r < kCtaCols; r += kThreads) {
        const bool real = m0 + r < p.q_tokens;
        lse_s[r] = real ? lse[row_base + m0 + r] : -INFINITY;
        drow_s[r] = real ? d_rowsum[row_base + m0 + r] : 0.0F;
      }
      __syncthreads();

      // S = Q K^T and dP = dO V^T for this warp's 16 query rows x 64 keys.
#pragma unroll
      for (int nt = 0; nt < kCtaRows / 16; ++nt) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> s_acc;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> dp_acc;
        wmma::fill_fragment(s_acc, 0.0F);
        wmma::fill_fragment(dp_acc, 0.0F);
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> bt;
          wmma::load_matrix_sync(a, q_s + row0 * Smem::kLdHalf + kk * 16, Smem::kLdHalf);
          wmma::load_matrix_sync(bt, k_s + nt * 16 * Smem::kLdHalf + kk * 16, Smem::kLdHalf);
          wmma::mma_sync(s_acc, a, bt, s_acc);
          wmma::load_matrix_sync(a, do_s + row0 * Smem::kLdHalf + kk * 16, Smem::kLdHalf);
          wmma::load_matrix_sync(bt, v_s + nt * 16 * Smem::kLdHalf + kk * 16, Smem::kLdHalf);
          wmma::mma_sync(dp_acc, a, bt, dp_acc);
        }
        wmma::store_matrix_sync(s_s + row0 * Smem::kLdS + nt * 16, s_acc, Smem::kLdS,
                                wmma::mem_row_major);
        wmma::store_matrix_sync(dp_s + row0 * Smem::kLdS + nt * 16, dp_acc, Smem::kLdS,
                                wmma::mem_row_major);
      }
      __syncwarp();

      // P = exp(S - lse) on visible pairs, dS = scale * P (dP - D).
      for (int r = 0; r < 16; ++r) {
        const int row = row0 + r;
        const int qi = m0 + row;
        const float row_lse2 = lse_s[row] * kLog2e;
        for (int c = lane; c < kCtaRows; c += 32) {
          float prob = 0.0F;
          if (row_lse2 != -INFINITY && visible(p, qi, n0 + c)) {
            prob = exp2f(s_s[row * Smem::kLdS + c] * scale_log2 - row_lse2);
          }
          const float ds = prob * (dp_s[row * Smem::kLdS + c] - drow_s[row]) * p.scale;
          p_t[row * Smem::kLdP + c] = Elem<T>::from_float(prob);
          ds_t[row * Smem::kLdP + c] = Elem<T>::from_float(ds);
        }
      }
      __syncthreads();  // dV and dK read every query row of P and dS

      // dV += P^T dO and dK += dS^T Q for this warp's 16 keys.
#pragma unroll
      for (int dt = 0; dt < D / 16; ++dt) {
#pragma unroll
        for (int kk = 0; kk < kCtaCols / 16; ++kk) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major> at;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bm;
          wmma::load_matrix_sync(at, p_t + kk * 16 * Smem::kLdP + row0, Smem::kLdP);
          wmma::load_matrix_sync(bm, do_s + kk * 16 * Smem::kLdHalf + dt * 16, Smem::kLdHalf);
          wmma::mma_sync(dv_acc[dt], at, bm, dv_acc[dt]);
          wmma::load_matrix_sync(at, ds_t + kk * 16 * Smem::kLdP + row0, Smem::kLdP);
          wmma::load_matrix_sync(bm, q_s + kk * 16 * Smem::kLdHalf + dt * 16, Smem::kLdHalf);
          wmma::mma_sync(dk_acc[dt], at, bm, dk_acc[dt]);
        }
      }

      // dQ += dS K for this warp's 16 query rows, added to global memory with atomics.
#pragma unroll
      for (int dt = 0; dt < D / 16; ++dt) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> dq_acc;
        wmma::fill_fragment(dq_acc, 0.0F);
#pragma unroll
        for (int kk = 0; kk < kCtaRows / 16; ++kk) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bm;
          wmma::load_matrix_sync(a, ds_t + row0 * Smem::kLdP + kk * 16, Smem::kLdP);
          wmma::load_matrix_sync(bm, k_s + kk * 16 * Smem::kLdHalf + dt * 16, Smem::kLdHalf);
          wmma::mma_sync(dq_acc, a, bm, dq_acc);
        }
        wmma::store_matrix_sync(stage, dq_acc, 16, wmma::mem_row_major);
        __syncwarp();
        for (int e = lane; e < 16 * 16; e += 32) {
          const int qi = m0 + row0 + e / 16;
          if (qi < p.q_tokens) {
            const long long at_q =
                ((static_cast<long long>(b) * p.q_tokens + qi) * p.heads + h) * D + dt * 16 +
                e % 16;
            atomicAdd(dq + at_q, stage[e]);
          }
        }
        __syncwarp();
      }
    }
  }

  // dK, dV of this warp's keys: this block is their only writer in the launch.
#pragma unroll
  for (int dt = 0; dt < D / 16; ++dt) {
#pragma unroll
    for (int which = 0; which < 2; ++which) {
      wmma::store_matrix_sync(stage, which == 0 ? dk_acc[dt] : dv_acc[dt], 16, wmma::mem_row_major);
      __syncwarp();
      float* out = which == 0 ? dk : dv;
      for (int e = lane; e < 16 * 16; e += 32) {
        const int j = n0 + row0 + e / 16;
        if (j < p.kv_tokens) {
          out[((static_cast<long long>(b) * p.kv_tokens + j) * p.kv_heads + g) * D + dt * 16 +
              e % 16] += stage[e];
        }
      }
      __syncwarp();
    }
  }
}

// D[b][h][t] = sum_d dO[b,t,h,d] * O[b,t,h,d]; one warp per row.
template <typename T>
__global__ void rowsum_kernel(int batch, int tokens, int heads, int head_dim,
                              const float* __restrict__ o, const T* __restrict__ d_o,
                              float* __restrict__ d_rowsum) {
  const long long warp_id = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const long long rows = static_cast<long long>(batch) * tokens * heads;
  if (warp_id >= rows) return;
  // warp_id enumerates [batch][tokens][heads] rows, the layout of O.
  const long long base = warp_id * head_dim;
  float sum = 0.0F;
  for (int d = lane; d < head_dim; d += 32) sum += o[base + d] * Elem<T>::to_float(d_o[base + d]);
  sum = warp_sum(sum);
  if (lane == 0) {
    const long long h = warp_id % heads;
    const long long t = (warp_id / heads) % tokens;
    const long long bi = warp_id / (static_cast<long long>(heads) * tokens);
    d_rowsum[(bi * heads + h) * tokens + t] = sum;
  }
}

template <int D, typename T>
void launch_backward(const BlockParams& p, const void* q, const void* k, const void* v,
                     const void* d_o, const float* lse, const float* d_rowsum, float* dq, float* dk,
                     float* dv, cudaStream_t stream) {
  constexpr size_t kBytes = BackwardSmem<D>::kBytes;
  auto kernel = backward_kernel<D, T>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       static_cast<int>(kBytes));
  const dim3 grid(static_cast<unsigned>((p.kv_tokens + kCtaRows - 1) / kCtaRows),
                  static_cast<unsigned>(p.batch * p.kv_heads));
  kernel<<<grid, kThreads, kBytes, stream>>>(p, static_cast<const T*>(q), static_cast<const T*>(k),
                                             static_cast<const T*>(v), static_cast<const T*>(d_o),
                                             lse, d_rowsum, dq, dk, dv);
  check_launch("attention_backward_cuda");
}

template <typename T>
void dispatch_backward(const BlockParams& p, int head_dim, const void* q, const void* k,
                       const void* v, const void* d_o, const float* lse, const float* d_rowsum,
                       float* dq, float* dk, float* dv, cudaStream_t stream) {
  if (head_dim == 64) {
    launch_backward<64, T>(p, q, k, v, d_o, lse, d_rowsum, dq, dk, dv, stream);
  } else {
    launch_backward<128, T>(p, q, k, v, d_o, lse, d_rowsum, dq, dk, dv, stream);
  }
}

}  // namespace
}  // namespace cuda_detail

void attention_rowsum_cuda(const RowsShape& rows, DType dtype, const float* o, const void* d_o,
                           float* d_rowsum, void* stream) {
  validate_rows(rows);
  const long long count = rows.batch * rows.tokens * rows.heads;
  constexpr int kBlock = 256;
  const auto blocks = static_cast<unsigned>((count * 32 + kBlock - 1) / kBlock);
  const auto s = static_cast<cudaStream_t>(stream);
  const int b = static_cast<int>(rows.batch);
  const int t = static_cast<int>(rows.tokens);
  const int h = static_cast<int>(rows.heads);
  const int d = static_cast<int>(rows.head_dim);
  if (dtype == DType::bf16) {
    cuda_detail::rowsum_kernel<<<blocks, kBlock, 0, s>>>(
        b, t, h, d, o, static_cast<const __nv_bfloat16*>(d_o), d_rowsum);
  } else {
    cuda_detail::rowsum_kernel<<<blocks, kBlock, 0, s>>>(b, t, h, d, o,
                                                         static_cast<const __half*>(d_o), d_rowsum);
  }
  cuda_detail::check_launch("attention_rowsum_cuda");
}

void attention_backward_cuda(const BlockShape& shape, const PositionMask& mask, DType dtype,
                             const void* q, const void* k, const void* v, const void* d_o,
                             const float* lse, const float* d_rowsum, float* dq, float* dk,
                             float* dv, void* stream) {
  const cuda_detail::BlockParams p = cuda_detail::make_block_params(shape, mask);
  const auto s = static_cast<cudaStream_t>(stream);
  const int d = static_cast<int>(shape.head_dim);
  if (dtype == DType::bf16) {
    cuda_detail::dispatch_backward<__nv_bfloat16>(p, d, q, k, v, d_o, lse, d_rowsum, dq, dk, dv, s);
  } else {
    cuda_detail::dispatch_backward<__half>(p, d, q, k, v, d_o, lse, d_rowsum, dq, dk, dv, s);
  }
}

}  // namespace tilesim::kernels
