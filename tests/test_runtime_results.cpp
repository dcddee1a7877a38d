// Measured timings become the simulator's result structure.
#include <catch2/catch.hpp>

#include "runtime/executor/measured_result.hpp"
#include "runtime/executor/output_digest.hpp"
#include "sim/schedules/schedule.hpp"

using namespace tilesim;
using namespace tilesim::runtime;

TEST_CASE("runtime: measured timings fill the result like a simulation", "[runtime]") {
  AttentionShape shape;
  shape.seq_len = 64;
  shape.heads = 2;
  shape.kv_heads = 2;
  shape.head_dim = 16;
  ScheduleSpec spec;
  spec.gpus = 2;
  const Plan plan = make_plan(shape, spec);
  std::vector<RankRun> runs(2);
  // Give op i of rank r the interval [10(i+1) + r, 10(i+1) + r + 5] us; frees never run.
  for (int r = 0; r < 2; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Picoseconds start = (10 * (i + 1) + r) * 1'000'000LL;
      runs[static_cast<std::size_t>(r)].timings.push_back(
          program.op(i).kind == OpKind::free ? OpTiming{} : OpTiming{start, start + 5'000'000});
    }
    runs[static_cast<std::size_t>(r)].compute_flops = 100.0;
    runs[static_cast<std::size_t>(r)].bytes_received = 1000.0 * (r + 1);
  }
  const SimulationResult result = measured_result(plan, runs, 0.5);
  REQUIRE(result.ranks.size() == 2);
  REQUIRE(result.transfers.size() == 2);  // one KV each way
  for (const TransferRecord& t : result.transfers) {
    CHECK(t.send.rank != t.recv.rank);
    CHECK(plan.programs[static_cast<std::size_t>(t.send.rank)].op(t.send.index).kind ==
          OpKind::send);
    CHECK(t.end_ps > t.posted_ps);
  }
  int computes = 0;
  Picoseconds last_end = 0;
  for (int i = 0; i < static_cast<int>(plan.programs[1].size()); ++i) {
    // compute_busy counts the compute stream: the calls and the separate corrections.
    const OpKind kind = plan.programs[1].op(i).kind;
    if (kind == OpKind::compute || kind == OpKind::merge) ++computes;
    if (plan.programs[1].op(i).kind != OpKind::free)
      last_end = (10 * (i + 1) + 1 + 5) * 1'000'000LL;
  }
  CHECK(result.ranks[1].compute_busy_ps == computes * 5'000'000LL);
  CHECK(result.ranks[1].end_ps == last_end);
  CHECK(result.makespan_ps == std::max(result.ranks[0].end_ps, result.ranks[1].end_ps));
  CHECK(result.single_gpu_s ==
        Approx(ps_to_s(result.ranks[0].compute_busy_ps + result.ranks[1].compute_busy_ps)));
  const Figures f = summarize(result);
  CHECK(f.comm_bytes_per_rank_max == 2000.0);
  CHECK(f.compute_balance == Approx(1.0));
}

TEST_CASE("runtime: the output digest depends on every value and not on the owner", "[runtime]") {
  AttentionShape shape;
  shape.seq_len = 8;
  shape.heads = 1;
  shape.kv_heads = 1;
  shape.head_dim = 4;
  ScheduleSpec spec;
  spec.gpus = 2;
  const Plan plan = make_plan(shape, spec);
  const std::vector<float> a{1.0F, 2.0F}, b{1.0F, 2.5F};
  OutputDigest r0(plan), r1(plan), s0(plan), s1(plan);
  r0.add(0, a);
  r1.add(1, b);
  s0.add(1, b);  // the same objects, added by the other rank
  s1.add(0, a);
  const std::string x = OutputDigest::combine({r0.values(), r1.values()});
  CHECK(x == OutputDigest::combine({s0.values(), s1.values()}));
  OutputDigest t0(plan);
  t0.add(0, b);
  CHECK(x != OutputDigest::combine({t0.values(), r1.values()}));
  CHECK(x.size() == 16);
}
