// Simulator throughput: forward ring attention at 1M tokens on the H100
// cluster, 8 to 4096 GPUs. Reports events/s and simulated ops/s; the wall time
// per iteration is the simulation alone (plan generation excluded, as in the
// CLI's sim_wall_s).
#include <benchmark/benchmark.h>

#include <string>

#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"

namespace {

void BM_RingForward1M(benchmark::State& state) {
  using namespace tilesim;
  const int gpus = static_cast<int>(state.range(0));
  const std::string scenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";
  const PreparedScenario p =
      prepare_scenario(scenario, {"attention.seq_len=1M", "schedule.gpus=" + std::to_string(gpus)});
  const Plan plan = build_plan(p.scenario);
  std::uint64_t events = 0;
  for (auto _ : state) {
    const SimulationResult r = simulate(plan, p.topology, p.profile);
    events = r.events;
    benchmark::DoNotOptimize(r.makespan_ps);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["ops"] = static_cast<double>(plan.op_count());
}

}  // namespace

BENCHMARK(BM_RingForward1M)
    ->Arg(8)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
