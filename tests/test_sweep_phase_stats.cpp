// sweep's per-phase figures (sim/verbs/phase_stats.hpp) come from the per-rank totals the
// simulator streams, so that a symmetric, role-quotient or lazy run has them without op
// records. Checked against their definition over the op and transfer records of the whole
// plan simulated rank by rank (every attention call's FLOPs and time, every transfer's bytes
// and posted-to-arrived time, each rank's distinct comm groups):
//   - the same run's totals, for ring, zigzag, striped, mesh 4x4, USP and double ring on 16
//     GPUs, forward and both (equal to the last bit where the sums are integers);
//   - a symmetric run (ring on 64 GPUs, 8 classes, forward and both) against the full run;
//   - a lazy run (ring forward, causal, 512 GPUs: no symmetry, generated as it runs).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/verbs/phase_stats.hpp"
#include "sim/verbs/scenario_source.hpp"
#include "sim/verbs/simulate_verb.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

// The figures by their definition, from a whole plan's records.
PhaseStats phase_stats_from_records(const Plan& plan, const SimulationResult& result) {
  PhaseStats s;
  s.tokens_per_gpu = plan.shape.seq_len / plan.ranks;
  int max_groups = 0;
  double flops = 0.0;
  Picoseconds compute_ps = 0;
  std::int64_t calls = 0;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    std::set<int> groups;
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind == OpKind::send || op.kind == OpKind::recv) groups.insert(op.comm_group);
      if (op.kind != OpKind::compute) continue;
      const OpTiming& t = result.ops[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
      flops += plan.compute_flops({r, i});
      compute_ps += t.end_ps - t.start_ps;
      ++calls;
    }
    max_groups = std::max(max_groups, static_cast<int>(groups.size()));
  }
  s.phases = max_groups + 1;
  s.flops_per_gpu_per_phase = flops / static_cast<double>(calls);
  s.compute_s_per_phase = ps_to_s(compute_ps) / static_cast<double>(calls);
  double bytes = 0.0;
  Picoseconds transfer_ps = 0, slowest_ps = 0;
  for (const TransferRecord& t : result.transfers) {
    bytes += t.bytes;
    transfer_ps += t.end_ps - t.posted_ps;
    slowest_ps = std::max(slowest_ps, t.end_ps - t.posted_ps);
  }
  const auto n = static_cast<double>(result.transfers.size());
  s.bytes_per_gpu_per_phase = bytes / n;
  s.bytes_per_phase_total = bytes / std::max(1, s.phases - 1);
  s.comm_s_per_phase = ps_to_s(slowest_ps);
  s.comm_s_per_phase_mean = ps_to_s(transfer_ps) / n;
  return s;
}

void check_equal(const PhaseStats& got, const PhaseStats& want) {
  CHECK(got.phases == want.phases);
  CHECK(got.tokens_per_gpu == want.tokens_per_gpu);
  // Sums of whole picoseconds and of whole bytes are exact in any order; FLOPs are summed in
  // another order (rank by rank as they run, not op by op), so they match to rounding. The
  // bound was set before any run, from the rounding of a sum of n doubles (<= n x 2^-53
  // relative; n <= 1e4 ops here gives ~1e-12), not from an observed difference.
  CHECK(got.flops_per_gpu_per_phase == Approx(want.flops_per_gpu_per_phase).epsilon(1e-12));
  CHECK(got.compute_s_per_phase == want.compute_s_per_phase);
  CHECK(got.bytes_per_gpu_per_phase == want.bytes_per_gpu_per_phase);
  CHECK(got.bytes_per_phase_total == want.bytes_per_phase_total);
  CHECK(got.comm_s_per_phase == want.comm_s_per_phase);
  CHECK(got.comm_s_per_phase_mean == want.comm_s_per_phase_mean);
}

ScenarioSource source_of(const std::string& scenario, std::vector<std::string> overrides) {
  ScenarioSource source;
  source.path = shipped_scenario(scenario);
  source.overrides = std::move(overrides);
  return source;
}

// The whole plan simulated rank by rank with records, and its figures by definition.
PhaseStats reference(const ScenarioSource& source) {
  const SimulationRun full = run_simulation(source, SimulateRequest{.records = true});
  REQUIRE_FALSE(full.symmetric());
  return phase_stats_from_records(full.full_plan(), full.result);
}

}  // namespace

TEST_CASE("phase statistics from the streamed totals equal their definition over records") {
  struct Case {
    std::string scenario;
    std::vector<std::string> overrides;
  };
  const std::vector<Case> cases = {
      {"ring-256k.yaml", {}},
      {"ring-256k.yaml", {"schedule.kind=zigzag", "attention.causal=true"}},
      {"ring-256k.yaml", {"schedule.kind=striped", "attention.causal=true"}},
      {"ring-256k.yaml", {"schedule.kind=usp", "schedule.ulysses=2"}},
      {"ring-256k.yaml", {"schedule.kind=double_ring", "schedule.inner=4"}},
      {"mesh-1m-256.yaml", {"schedule.tile=[4,4]", "attention.seq_len=64K"}},
  };
  for (const Case& c : cases) {
    for (const std::string pass : {"forward", "both"}) {
      std::vector<std::string> overrides = c.overrides;
      overrides.push_back("schedule.gpus=16");
      overrides.push_back("attention.pass=" + pass);
      INFO(c.scenario << " " << fmt::format("{}", fmt::join(overrides, " ")));
      const SimulationRun run =
          run_simulation(source_of(c.scenario, overrides), SimulateRequest{.records = true});
      check_equal(phase_stats(run.result, run.prepared.scenario.attention.seq_len),
                  phase_stats_from_records(run.full_plan(), run.result));
    }
  }
}

TEST_CASE("phase statistics of a symmetric run are the full run's") {
  for (const std::string pass : {"forward", "both"}) {
    INFO("ring on 64 GPUs, " << pass);
    const ScenarioSource source =
        source_of("ring-256k.yaml", {"schedule.gpus=64", "attention.pass=" + pass});
    const SimulationRun symmetric = run_simulation(source);
    REQUIRE(symmetric.symmetric());
    CHECK(symmetric.symmetry->classes == 8);
    check_equal(phase_stats(symmetric.result, symmetric.prepared.scenario.attention.seq_len),
                reference(source));
  }
}

TEST_CASE("phase statistics of a lazy run are the whole plan's") {
  const ScenarioSource source =
      source_of("ring-256k.yaml", {"schedule.gpus=512", "attention.causal=true",
                                   // every rank: not auto's work-block quotient
                                   "schedule.symmetry=exact"});
  const SimulationRun lazy = run_simulation(source);
  REQUIRE(lazy.lazy);
  check_equal(phase_stats(lazy.result, lazy.prepared.scenario.attention.seq_len),
              reference(source));
}
