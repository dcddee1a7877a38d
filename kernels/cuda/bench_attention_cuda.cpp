// Throughput of the CUDA attention block kernels, one CSV line per (kernels, chunk length,
// head_dim, causal, pass): TFLOP/s with FLOPs = 4 * batch * visible pairs * heads * head_dim
// forward (causal counts only the unmasked pairs of a diagonal block) and 2.5x that backward,
// and that as a share of the GPU's dense bf16 peak (kernels/gpu_peak.hpp; empty when the
// device name is unknown). Kernels: own (the WMMA kernels), cudnn (BlockKernels on cuDNN, as
// the backend launches a block: fp32 O out, dQ/dK/dV added into fp32), cudnn_fused (the cuDNN
// graph alone, 16-bit in and out: the figure to hold against the targets). Backward
// rows of own and cudnn include the rowsum / conversions each needs. Times come from
// cudaEvents over repeated launches after a warm-up (which also builds the cuDNN graphs).
// Exits 0 with a message on stderr when no GPU is present.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/attention_cuda.hpp"
#include "kernels/cuda/block_kernels.hpp"
#include "kernels/cuda/cudnn_attention.hpp"
#include "kernels/cuda/device_info.hpp"
#include "kernels/gpu_peak.hpp"

namespace tk = tilesim::kernels;

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

// RAII pair of CUDA events timing a section of the default stream.
class EventTimer {
 public:
  EventTimer() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start() { check(cudaEventRecord(start_, nullptr), "cudaEventRecord"); }
  double stop_seconds() {
    check(cudaEventRecord(stop_, nullptr), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0.0F;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

tk::DeviceBuffer random_input(std::int64_t n, std::uint32_t seed, tk::DType dtype) {
  std::vector<float> host(static_cast<std::size_t>(n));
  std::uint32_t x = seed;
  for (float& v : host) {  // xorshift: cheap reproducible values in [-1, 1)
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    v = static_cast<float>(x % 20000U) / 10000.0F - 1.0F;
  }
  tk::DeviceBuffer f32(host.size() * sizeof(float));
  f32.upload(host.data(), f32.bytes());
  tk::DeviceBuffer out(host.size() * 2);
  tk::convert_from_f32_cuda(f32.as<float>(), out.data(), n, dtype, nullptr);
  tk::cuda_synchronize(nullptr);
  return out;
}

template <typename Launch>
double seconds_per_call(const Launch& launch, int iterations) {
  launch();  // warm-up (and first-launch attribute setting)
  tk::cuda_synchronize(nullptr);
  EventTimer timer;
  timer.start();
  for (int i = 0; i < iterations; ++i) launch();
  return timer.stop_seconds() / iterations;
}

// Device buffers of one chunk x chunk block.
struct BlockBuffers {
  tk::DeviceBuffer q, k, v, d_o, o16, dq16, dk16, dv16, o, lse, d_rowsum, dq, dk, dv;

  BlockBuffers(const tk::BlockShape& s, tk::DType dtype)
      : q(random_input(s.q_elements(), 1, dtype)),
        k(random_input(s.kv_elements(), 2, dtype)),
        v(random_input(s.kv_elements(), 3, dtype)),
        d_o(random_input(s.q_elements(), 4, dtype)),
        o16(random_input(s.q_elements(), 5, dtype)),
        dq16(bytes(s.q_elements(), 2)),
        dk16(bytes(s.kv_elements(), 2)),
        dv16(bytes(s.kv_elements(), 2)),
        o(bytes(s.q_elements(), 4)),
        lse(bytes(s.lse_elements(), 4)),
        d_rowsum(bytes(s.lse_elements(), 4)),
        dq(bytes(s.q_elements(), 4)),
        dk(bytes(s.kv_elements(), 4)),
        dv(bytes(s.kv_elements(), 4)) {}

  static tk::DeviceBuffer bytes(std::int64_t elements, std::size_t size) {
    tk::DeviceBuffer b(static_cast<std::size_t>(elements) * size);
    b.fill_zero();
    return b;
  }
};

enum class Kernels { own, cudnn, cudnn_fused };

const char* name_of(Kernels k) {
  return k == Kernels::own ? "own" : k == Kernels::cudnn ? "cudnn" : "cudnn_fused";
}

}  // namespace

int main() {
  std::string why;
  if (!tk::cuda_device_available(&why)) {
    std::fprintf(stderr, "bench_attention_cuda: no CUDA device: %s; nothing measured\n",
                 why.c_str());
    return 0;
  }
  try {
    cudaDeviceProp props{};
    check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
    const double peak = tk::dense_bf16_peak_flops(props.name);
    std::fprintf(stderr, "bench_attention_cuda: %s, dense bf16 peak %.0f TFLOP/s%s\n", props.name,
                 peak * 1e-12, peak > 0 ? "" : " (unknown: no share of peak)");
    std::vector<Kernels> families{Kernels::own};
    std::unique_ptr<tk::BlockKernels> on_cudnn;
    std::unique_ptr<tk::CudnnAttention> fused;
    if (tk::cudnn_attention_built()) {
      on_cudnn = std::make_unique<tk::BlockKernels>(tk::KernelFamily::cudnn);
      fused = std::make_unique<tk::CudnnAttention>();
      families.push_back(Kernels::cudnn);
      families.push_back(Kernels::cudnn_fused);
    } else {
      std::fprintf(stderr, "bench_attention_cuda: %s\n",
                   tk::cudnn_unsupported_reason({}, {}).c_str());
    }
    tk::BlockKernels own(tk::KernelFamily::own);
    constexpr std::int64_t kBatch = 1;
    constexpr std::int64_t kHeads = 16;
    constexpr tk::DType kDtype = tk::DType::bf16;
    std::printf("kernels,chunk,head_dim,causal,pass,batch,heads,dtype,seconds,tflops,peak_share\n");
    for (std::int64_t chunk : {2048, 8192, 16384}) {
      for (std::int64_t head_dim : {64, 128}) {
        const tk::BlockShape s{kBatch, kHeads, kHeads, head_dim, chunk, chunk};
        BlockBuffers b(s, kDtype);
        for (bool causal : {false, true}) {
          const tk::PositionMask m{
              causal ? tk::MaskKind::causal : tk::MaskKind::full, {0, 1}, {0, 1}};
          const double flops = tk::forward_flops(s, m);
          const int iterations = chunk <= 2048 ? 20 : 8;
          for (Kernels family : families) {
            double fwd = 0.0, bwd = 0.0;
            try {
              if (family == Kernels::cudnn_fused) {
                fwd = seconds_per_call(
                    [&] {
                      fused->forward_native(s, m, kDtype, b.q.data(), b.k.data(), b.v.data(),
                                            b.o16.data(), b.lse.as<float>(), nullptr);
                    },
                    iterations);
                bwd = seconds_per_call(
                    [&] {
                      fused->backward_native(s, m, kDtype, b.q.data(), b.k.data(), b.v.data(),
                                             b.o16.data(), b.d_o.data(), b.lse.as<float>(),
                                             b.dq16.data(), b.dk16.data(), b.dv16.data(), nullptr);
                    },
                    iterations);
              } else {
                tk::BlockKernels& kernels = family == Kernels::own ? own : *on_cudnn;
                fwd = seconds_per_call(
                    [&] {
                      kernels.forward(s, m, kDtype, b.q.data(), b.k.data(), b.v.data(),
                                      b.o.as<float>(), b.lse.as<float>(), nullptr);
                    },
                    iterations);
                bwd = seconds_per_call(
                    [&] {
                      if (family == Kernels::own) {
                        tk::attention_rowsum_cuda(tk::output_rows(s), kDtype, b.o.as<float>(),
                                                  b.d_o.data(), b.d_rowsum.as<float>(), nullptr);
                      }
                      kernels.backward(s, m, kDtype, b.q.data(), b.k.data(), b.v.data(),
                                       b.o.as<float>(), b.d_o.data(), b.lse.as<float>(),
                                       b.d_rowsum.as<float>(), b.dq.as<float>(), b.dk.as<float>(),
                                       b.dv.as<float>(), nullptr);
                    },
                    iterations);
              }
            } catch (const tk::CudnnUnsupported& e) {
              std::fprintf(stderr, "bench_attention_cuda: %s %lld d%lld: %s\n", name_of(family),
                           static_cast<long long>(chunk), static_cast<long long>(head_dim),
                           e.what());
              continue;
            }
            for (const auto& [pass, secs, f] :
                 {std::tuple{"fwd", fwd, flops}, std::tuple{"bwd", bwd, 2.5 * flops}}) {
              const double achieved = f / secs;
              std::printf("%s,%lld,%lld,%d,%s,%lld,%lld,bf16,%.6e,%.2f,", name_of(family),
                          static_cast<long long>(chunk), static_cast<long long>(head_dim),
                          causal ? 1 : 0, pass, static_cast<long long>(kBatch),
                          static_cast<long long>(kHeads), secs, achieved * 1e-12);
              if (peak > 0) std::printf("%.4f", achieved / peak);
              std::printf("\n");
            }
            std::fflush(stdout);
          }
        }
      }
    }
    if (on_cudnn) {
      for (const auto& [reason, blocks] : on_cudnn->fallbacks()) {
        std::fprintf(stderr, "bench_attention_cuda: cudnn: %lld block(s) on the own kernels: %s\n",
                     static_cast<long long>(blocks), reason.c_str());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_attention_cuda: %s\n", e.what());
    return 1;
  }
  return 0;
}
