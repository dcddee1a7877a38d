// CPU fast-path forward attention block throughput (GFLOP/s counter, FLOPs = 4 * b * c * c *
// heads * head_dim for a full c x c block), c = 256, 512, 1024 and head_dim 64, 128.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/attention_cpu.hpp"

namespace tk = tilesim::kernels;

namespace {

std::vector<float> random_floats(std::int64_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
  std::vector<float> out(static_cast<std::size_t>(n));
  for (float& x : out) x = dist(gen);
  return out;
}

void BM_AttentionForwardCpu(benchmark::State& state) {
  const std::int64_t chunk = state.range(0);
  const std::int64_t head_dim = state.range(1);
  const auto threads = static_cast<int>(state.range(2));
  const tk::BlockShape s{1, 8, 8, head_dim, chunk, chunk};
  const tk::PositionMask mask{};
  const auto q = random_floats(s.q_elements(), 1);
  const auto k = random_floats(s.kv_elements(), 2);
  const auto v = random_floats(s.kv_elements(), 3);
  std::vector<float> o(q.size());
  std::vector<float> lse(static_cast<std::size_t>(s.lse_elements()));
  for (auto _ : state) {
    tk::attention_forward_cpu(s, mask, q, k, v, o, lse, threads);
    benchmark::DoNotOptimize(o.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(tk::forward_flops(s, mask) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_AttentionForwardCpu)
    ->ArgNames({"c", "d", "threads"})
    ->ArgsProduct({{256, 512, 1024}, {64, 128}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
