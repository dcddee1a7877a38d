// Throughput of the CUDA attention block kernels, one CSV line per (chunk length, head_dim,
// causal, pass): TFLOP/s with FLOPs = 4 * batch * visible pairs * heads * head_dim forward
// (causal counts only the unmasked pairs of a diagonal block) and 2.5x that backward. Times
// come from cudaEvents over repeated launches after a warm-up. Exits 0 with a message on
// stderr when no GPU is present.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/attention_cuda.hpp"
#include "kernels/cuda/device_info.hpp"

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

}  // namespace

int main() {
  std::string why;
  if (!tk::cuda_device_available(&why)) {
    std::fprintf(stderr, "bench_attention_cuda: no CUDA device: %s; nothing measured\n",
                 why.c_str());
    return 0;
  }
  try {
    constexpr std::int64_t kBatch = 1;
    constexpr std::int64_t kHeads = 16;
    constexpr tk::DType kDtype = tk::DType::bf16;
    std::printf("chunk,head_dim,causal,pass,batch,heads,dtype,seconds,tflops\n");
    for (std::int64_t chunk : {1024, 2048, 4096, 8192, 16384}) {
      for (std::int64_t head_dim : {64, 128}) {
        const tk::BlockShape s{kBatch, kHeads, kHeads, head_dim, chunk, chunk};
        tk::DeviceBuffer q = random_input(s.q_elements(), 1, kDtype);
        tk::DeviceBuffer k = random_input(s.kv_elements(), 2, kDtype);
        tk::DeviceBuffer v = random_input(s.kv_elements(), 3, kDtype);
        tk::DeviceBuffer d_o = random_input(s.q_elements(), 4, kDtype);
        const auto f32 = [](std::int64_t n) {
          tk::DeviceBuffer b(static_cast<std::size_t>(n) * sizeof(float));
          b.fill_zero();
          return b;
        };
        tk::DeviceBuffer o = f32(s.q_elements());
        tk::DeviceBuffer lse = f32(s.lse_elements());
        tk::DeviceBuffer d_rowsum = f32(s.lse_elements());
        tk::DeviceBuffer dq = f32(s.q_elements());
        tk::DeviceBuffer dk = f32(s.kv_elements());
        tk::DeviceBuffer dv = f32(s.kv_elements());
        for (bool causal : {false, true}) {
          const tk::PositionMask m{
              causal ? tk::MaskKind::causal : tk::MaskKind::full, {0, 1}, {0, 1}};
          const double flops = tk::forward_flops(s, m);
          const int iterations = chunk <= 2048 ? 20 : 5;
          const double fwd = seconds_per_call(
              [&] {
                tk::attention_forward_cuda(s, m, kDtype, q.data(), k.data(), v.data(),
                                           o.as<float>(), lse.as<float>(), nullptr);
              },
              iterations);
          const double bwd = seconds_per_call(
              [&] {
                tk::attention_rowsum_cuda(tk::output_rows(s), kDtype, o.as<float>(), d_o.data(),
                                          d_rowsum.as<float>(), nullptr);
                tk::attention_backward_cuda(s, m, kDtype, q.data(), k.data(), v.data(), d_o.data(),
                                            lse.as<float>(), d_rowsum.as<float>(), dq.as<float>(),
                                            dk.as<float>(), dv.as<float>(), nullptr);
              },
              iterations);
          for (const auto& [pass, secs, f] :
               {std::tuple{"fwd", fwd, flops}, std::tuple{"bwd", bwd, 2.5 * flops}}) {
            std::printf("%lld,%lld,%d,%s,%lld,%lld,bf16,%.6e,%.2f\n", static_cast<long long>(chunk),
                        static_cast<long long>(head_dim), causal ? 1 : 0, pass,
                        static_cast<long long>(kBatch), static_cast<long long>(kHeads), secs,
                        f / secs * 1e-12);
          }
          std::fflush(stdout);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_attention_cuda: %s\n", e.what());
    return 1;
  }
  return 0;
}
