// Simulates a scenario through the installed library and checks the bytes the ring moves
// against its closed form: P (P - 1) KV chunks of S/P tokens, each 2 (K and V) x kv_heads x
// head_dim x 2 bytes (bf16) per token, forward. Exit 0 when they agree.
#include <cstdio>

#include "sim/verbs/simulate_verb.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SCENARIO.yaml (a forward ring in bf16)\n");
    return 2;
  }
  const tilesim::SimulationRun run = tilesim::run_simulation({argv[1], std::nullopt, {}});
  const tilesim::AttentionShape& a = run.simulated_group_plan.shape;
  // The scenario's GPU count: where the ring is symmetric, the simulated plan is the quotient
  // plan of one rank per class (sim/scenario/symmetric_plan.hpp), not all P ranks.
  const int gpus = run.prepared.scenario.schedule.gpus;
  const double p = gpus;
  const double chunk_bytes = 2.0 * static_cast<double>(a.seq_len) / p * a.kv_heads * a.head_dim * 2;
  const double expected = p * (p - 1) * chunk_bytes * a.batch;
  const tilesim::Figures f = tilesim::summarize(run.result);
  std::printf("consumer: %s on %d GPUs, makespan %.6f s, bytes %.0f (closed form %.0f)\n",
              run.simulated_group_plan.schedule.c_str(), gpus, f.makespan_s, f.comm_bytes_total,
              expected);
  return f.comm_bytes_total == expected && f.makespan_s > 0 ? 0 : 1;
}
