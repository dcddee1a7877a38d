// Benchmarks of the flow-level network (sim/network): cost of starting flows
// and settling until they drain, on the shapes a ring-attention simulation
// produces. The "s_per_flow" counter is wall time per flow start, including
// every settle and take_finished that flow causes.
#include <benchmark/benchmark.h>

#include <vector>

#include "sim/network/flow_network.hpp"

namespace tilesim {
namespace {

// Starts nothing; drains every active flow: take_finished + settle per finish time.
Picoseconds drain(FlowNetwork& net) {
  Picoseconds now = 0;
  while (const auto next = net.next_finish_ps()) {
    now = *next;
    benchmark::DoNotOptimize(net.take_finished(now));
    net.settle(now);
  }
  return now;
}

void set_flow_counters(benchmark::State& state, double flows_per_iteration,
                       const FlowNetwork& net) {
  state.counters["s_per_flow"] =
      benchmark::Counter(flows_per_iteration, benchmark::Counter::kIsIterationInvariantRate |
                                                  benchmark::Counter::kInvert);
  state.counters["recomputed_per_flow"] =
      static_cast<double>(net.recomputed_flows()) / flows_per_iteration;
}

// 4096 flows on disjoint 3-link routes, started at one time, settled, drained.
void BM_Disjoint4096(benchmark::State& state) {
  constexpr int kFlows = 4096;
  const FlowNetwork empty(std::vector<double>(3 * kFlows, 50e9));
  const bool with_drain = state.range(0) != 0;
  FlowNetwork last = empty;
  for (auto _ : state) {
    FlowNetwork net = empty;
    for (int f = 0; f < kFlows; ++f) {
      net.start(FlowSpec{{3 * f, 3 * f + 1, 3 * f + 2}, 1e6 + f, 0.0}, 0);
    }
    net.settle(0);
    if (with_drain) drain(net);
    benchmark::DoNotOptimize(net.active_flows());
    last = std::move(net);
  }
  set_flow_counters(state, kFlows, last);
}
BENCHMARK(BM_Disjoint4096)->ArgName("drain")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// 512 flows sharing one link (each also on its own private link), started at
// one time and settled. With drain, sizes differ so they finish one by one and
// every finish changes the rate of all the others (512 settles of up to 511).
void BM_Shared512(benchmark::State& state) {
  constexpr int kFlows = 512;
  std::vector<double> capacity(1 + kFlows, 100e9);
  capacity[0] = 50e9;
  const FlowNetwork empty(capacity);
  const bool with_drain = state.range(0) != 0;
  FlowNetwork last = empty;
  for (auto _ : state) {
    FlowNetwork net = empty;
    for (int f = 0; f < kFlows; ++f) net.start(FlowSpec{{0, 1 + f}, 1e6 * (1 + f), 0.0}, 0);
    net.settle(0);
    if (with_drain) drain(net);
    benchmark::DoNotOptimize(net.active_flows());
    last = std::move(net);
  }
  set_flow_counters(state, kFlows, last);
}
BENCHMARK(BM_Shared512)->ArgName("drain")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// A rail-optimised two-level fat tree: nodes of 8 GPUs on an NVSwitch; GPU k
// of every node has a NIC on rail k; a leaf per (rail, group of 16 nodes);
// `spines` spines, every leaf linked to every spine. Link ids are dense.
class FatTree {
 public:
  FatTree(int nodes, int spines) : nodes_(nodes), spines_(spines) {
    const int gpus = nodes * kGpusPerNode;
    groups_ = (nodes + kNodesPerLeaf - 1) / kNodesPerLeaf;
    const int leaves = kGpusPerNode * groups_;
    capacity_.assign(4 * static_cast<std::size_t>(gpus), 0.0);
    for (int g = 0; g < gpus; ++g) {
      capacity_[nvlink_up(g)] = capacity_[nvlink_down(g)] = 360e9;
      capacity_[nic_up(g)] = capacity_[nic_down(g)] = 48e9;
    }
    capacity_.resize(capacity_.size() + 2 * static_cast<std::size_t>(leaves * spines), 400e9);
  }
  const std::vector<double>& capacity() const { return capacity_; }
  int gpus() const { return nodes_ * kGpusPerNode; }

  // Same node: over NVLink (capped like one NCCL pair). Otherwise over the
  // source's rail: NIC, leaf, and when the groups differ a spine picked by the
  // source node, then the destination's leaf and NIC.
  FlowSpec route(int src, int dst, double bytes) const {
    const int src_node = src / kGpusPerNode;
    const int dst_node = dst / kGpusPerNode;
    if (src_node == dst_node) return FlowSpec{{nvlink_up(src), nvlink_down(dst)}, bytes, 150e9};
    const int rail = src % kGpusPerNode;
    const int src_leaf = rail * groups_ + src_node / kNodesPerLeaf;
    const int dst_leaf = rail * groups_ + dst_node / kNodesPerLeaf;
    if (src_leaf == dst_leaf) return FlowSpec{{nic_up(src), nic_down(dst)}, bytes, 0.0};
    const int spine = src_node % spines_;
    return FlowSpec{
        {nic_up(src), leaf_up(src_leaf, spine), leaf_down(dst_leaf, spine), nic_down(dst)},
        bytes,
        0.0};
  }

 private:
  static constexpr int kGpusPerNode = 8;
  static constexpr int kNodesPerLeaf = 16;
  int nvlink_up(int g) const { return 4 * g; }
  int nvlink_down(int g) const { return 4 * g + 1; }
  int nic_up(int g) const { return 4 * g + 2; }
  int nic_down(int g) const { return 4 * g + 3; }
  int leaf_up(int leaf, int spine) const { return 4 * gpus() + 2 * (leaf * spines_ + spine); }
  int leaf_down(int leaf, int spine) const { return leaf_up(leaf, spine) + 1; }

  int nodes_;
  int spines_;
  int groups_ = 0;
  std::vector<double> capacity_;
};

// Ring steps on 1024 GPUs: every GPU sends a 16 MiB KV chunk (sizes vary by
// up to 6% so finishes spread out) to its ring peer, all started when the
// previous step has drained. Peer for step s: GPU + 8 * (s + 1), so every flow
// crosses the fabric on its rail and up to 16 flows share a leaf-spine link
// (4 spines). Each step: 1024 starts, one settle, then a settle per finish time.
void BM_RingSteps1024(benchmark::State& state) {
  const int steps = static_cast<int>(state.range(0));
  const FatTree tree(128, 4);
  const FlowNetwork empty(tree.capacity());
  FlowNetwork last = empty;
  for (auto _ : state) {
    FlowNetwork net = empty;
    Picoseconds now = 0;
    for (int s = 0; s < steps; ++s) {
      for (int g = 0; g < tree.gpus(); ++g) {
        const double bytes = 16.0 * 1024 * 1024 * (1.0 + 0.01 * (g % 7));
        net.start(tree.route(g, (g + 8 * (s + 1)) % tree.gpus(), bytes), now);
      }
      net.settle(now);
      now = drain(net);
    }
    last = std::move(net);
  }
  set_flow_counters(state, 1024.0 * steps, last);
}
BENCHMARK(BM_RingSteps1024)->ArgName("steps")->Arg(10)->Unit(benchmark::kMillisecond);

// A whole pass-KV ring on 1024 GPUs in node-major order: 1023 steps of 1024
// flows (7 of 8 over NVLink, 1 per node across the fabric), about one million
// flow starts: the network's share of a full ring simulation.
void BM_RingFull1024(benchmark::State& state) {
  const FatTree tree(128, 4);
  const FlowNetwork empty(tree.capacity());
  FlowNetwork last = empty;
  for (auto _ : state) {
    FlowNetwork net = empty;
    Picoseconds now = 0;
    for (int s = 0; s < tree.gpus() - 1; ++s) {
      for (int g = 0; g < tree.gpus(); ++g) {
        const double bytes = 16.0 * 1024 * 1024 * (1.0 + 0.01 * (g % 7));
        net.start(tree.route(g, (g + 1) % tree.gpus(), bytes), now);
      }
      net.settle(now);
      now = drain(net);
    }
    last = std::move(net);
  }
  set_flow_counters(state, 1024.0 * 1023, last);
}
BENCHMARK(BM_RingFull1024)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tilesim
