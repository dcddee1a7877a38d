// Benchmarks of the topology module (sim/topology) on the 4096-GPU cluster
// (topologies/h100-cluster.yaml: 512 DGX-H100 nodes, 128 leaves, 4 pods of 32 spines, 1024
// cores):
// loading the YAML file, routing every ring neighbour pair with a fresh Router,
// and the summary including the max-flow bisection. Targets: load < 2 s, ring
// routes < 0.5 s, summary < 5 s.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/topology/topology_loader.hpp"
#include "sim/topology/topology_summary.hpp"

namespace tilesim {
namespace {

constexpr int kGpus = 4096;

std::string cluster_file() {
  return std::string(TILESIM_SOURCE_DIR) + "/topologies/h100-cluster.yaml";
}

void BM_Load4096(benchmark::State& state) {
  const std::string path = cluster_file();
  for (auto _ : state) {
    const Topology topology = load_topology(path, kGpus);
    benchmark::DoNotOptimize(topology.link_count());
  }
}
BENCHMARK(BM_Load4096)->Unit(benchmark::kMillisecond);

// Routes g -> (g + 1) mod 4096 for every GPU g with a Router built inside the
// timed loop (construction included, nothing cached between iterations).
void BM_RingRoutes4096(benchmark::State& state) {
  const Topology topology = load_topology(cluster_file(), kGpus);
  for (auto _ : state) {
    Router router(topology);
    std::size_t hops = 0;
    for (int g = 0; g < kGpus; ++g) hops += router.route(g, (g + 1) % kGpus).links.size();
    benchmark::DoNotOptimize(hops);
  }
  state.counters["s_per_route"] = benchmark::Counter(
      kGpus, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RingRoutes4096)->Unit(benchmark::kMillisecond);

// Routes between GPUs a pod apart on the 65536-GPU cluster (64 pods): the peers of a CP group
// placed across data-parallel replicas (job.order: tp-dp-cp), each route through a spine and a
// core on both sides, 1024 tied cores. 4096 pairs g -> g + 1024 with a fresh Router per iteration.
void BM_CrossPodRoutes65536(benchmark::State& state) {
  constexpr int kClusterGpus = 65536;
  constexpr int kPairs = 4096;
  const Topology topology = load_topology(cluster_file(), kClusterGpus);
  for (auto _ : state) {
    Router router(topology);
    std::size_t hops = 0;
    for (int i = 0; i < kPairs; ++i) {
      const int g = i * 16;
      hops += router.route(g, (g + 1024) % kClusterGpus).links.size();
    }
    benchmark::DoNotOptimize(hops);
  }
  state.counters["s_per_route"] = benchmark::Counter(
      kPairs, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CrossPodRoutes65536)->Unit(benchmark::kMillisecond);

// summarize(): counts, injection bandwidths and the push-relabel bisection.
void BM_Summarize4096(benchmark::State& state) {
  const Topology topology = load_topology(cluster_file(), kGpus);
  for (auto _ : state) {
    const TopologySummary summary = summarize(topology);
    benchmark::DoNotOptimize(summary.bisection_bytes_per_s);
  }
}
BENCHMARK(BM_Summarize4096)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tilesim
