// Kernel calls per rank: one compute op per comm step (docs/schedules.md,
// "Compute ops per rank"), and with the separate output correction one merge
// per step whose accumulator already holds an earlier step's blocks.
#include <catch2/catch.hpp>

#include "sim/schedules/allgather_kv_schedule.hpp"
#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

struct OpCounts {
  int computes = 0;
  int merges = 0;
  int max_pairs = 0;  // block pairs of the largest compute op
};

OpCounts count_ops(const Plan& plan, int rank) {
  OpCounts n;
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank)];
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    const Op& op = program.op(i);
    if (op.kind == OpKind::compute) {
      ++n.computes;
      n.max_pairs = std::max(n.max_pairs, static_cast<int>(op.pair_count));
    }
    if (op.kind == OpKind::merge) ++n.merges;
  }
  return n;
}

void check_counts(const Plan& plan, int computes, int merges, int pairs) {
  const PlanReport report = validate_plan(plan);
  INFO(plan.schedule << " P = " << plan.ranks << "\n" << errors_of(report));
  REQUIRE(report.ok());
  for (int r = 0; r < plan.ranks; ++r) {
    INFO("rank " << r);
    const OpCounts n = count_ops(plan, r);
    CHECK(n.computes == computes);
    CHECK(n.merges == merges);
    CHECK(n.max_pairs == pairs);
  }
}

}  // namespace

TEST_CASE("schedules ops: the ring family runs one call per step and P-1 corrections") {
  for (const char* kind : {"ring", "zigzag", "striped", "double_ring"}) {
    for (int p : {2, 4, 8}) {
      INFO(kind);
      const AttentionShape fwd = shape_with(false, false, PassSelection::forward, 8192);
      // P steps, each one call on the one KV chunk it brought (1 pair).
      check_counts(plan_of(kind, fwd, p), p, p - 1, 1);
      check_counts(plan_of(kind, fwd, p, 0, 0, Correction::fused), p, 0, 1);
    }
  }
  // Backward: one call per step writes dQ and the travelling dKV; from step 1 both hold
  // earlier blocks, so one merge per step folds both.
  for (const char* kind : {"ring", "zigzag", "striped"}) {
    INFO(kind << " backward");
    const AttentionShape bwd = shape_with(false, false, PassSelection::backward, 8192);
    check_counts(plan_of(kind, bwd, 4), 4, 3, 1);
  }
}

TEST_CASE("schedules ops: zigzag causal calls the kernel every step, the plain ring r+1 times") {
  const AttentionShape causal = shape_with(false, true, PassSelection::forward, 8192);
  check_counts(plan_of("zigzag", causal, 4), 4, 3, 1);
  // Plain causal ring: rank r has work in steps 0..r only (KV chunks 0..r).
  const Plan ring = plan_of("ring", causal, 4);
  for (int r = 0; r < 4; ++r) {
    const OpCounts n = count_ops(ring, r);
    CHECK(n.computes == r + 1);
    CHECK(n.merges == r);
  }
}

TEST_CASE("schedules ops: usp runs one call per ring step over u x u head-group chunk pairs") {
  const int p = 8;
  for (int u : {1, 2, 4, 8}) {
    const int r = p / u;
    INFO("u = " << u);
    const AttentionShape fwd = shape_with(false, false, PassSelection::forward, 8192);
    // r ring steps; each call covers the u query and u key chunks of the step (u^2 pairs,
    // the S/r x S/r tokens of one flash-attention call), not u^2 calls.
    check_counts(plan_of(u == p ? "ulysses" : "usp", fwd, p, u), r, r - 1, u * u);
    const AttentionShape bwd = shape_with(false, false, PassSelection::backward, 8192);
    check_counts(plan_of("usp", bwd, p, u), r, r - 1, u * u);
  }
}

TEST_CASE("schedules ops: all-gather KV is one call after the gather, pass-Q one per step") {
  for (int p : {2, 4, 8}) {
    const AttentionShape fwd = shape_with(false, false, PassSelection::forward, 8192);
    check_counts(plan_of("allgather_kv", fwd, p), 1, 0, p);
    // pass-Q merges the P-1 returning partials whatever the correction style.
    check_counts(plan_of("pass_q", fwd, p), p, p - 1, 1);
    check_counts(plan_of("pass_q", fwd, p, 0, 0, Correction::fused), p, p - 1, 1);
  }
}

namespace {

// The comm groups a rank posts: maximal runs of send/recv ops with one comm_group.
int comm_groups_of(const RankProgram& program) {
  int groups = 0, last = -1;
  for (const Op& op : program.ops()) {
    if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
    if (op.comm_group != last) ++groups;
    last = op.comm_group;
  }
  return groups;
}

}  // namespace

TEST_CASE("schedules ops: all-gather KV's one call splits where it would read 65536 objects") {
  // An op counts its references in 16 bits: on 65536 GPUs the call reads Q and 65536 KV
  // chunks, so it is two ops of 65534 and 2 pairs (Q and the KV chunks each reads: 65535 and 3
  // objects), in arrival order. The quotient of 8 classes keeps rank 0's program whole.
  const int p = 65536;
  const Plan plan = make_allgather_kv_classes_plan(
      shape_with(false, false, PassSelection::forward, 1 << 20), p, 8);
  const RankProgram& program = plan.programs[0];
  std::vector<std::size_t> pairs, reads;
  for (int i = program.first_index(); i < static_cast<int>(program.size()); ++i) {
    if (program.op(i).kind != OpKind::compute) continue;
    pairs.push_back(program.pairs(i).size());
    reads.push_back(program.reads(i).size());
  }
  CHECK(pairs == std::vector<std::size_t>{65534, 2});
  CHECK(reads == std::vector<std::size_t>{65535, 3});
}

TEST_CASE("schedules ops: all-to-all is one comm group, all-gather NCCL's ring of P-1 steps") {
  const AttentionShape fwd = shape_with(false, false, PassSelection::forward, 8192);
  for (int p : {2, 4, 8}) {
    const Plan plan = plan_of("allgather_kv", fwd, p);
    CHECK(plan.comm_style == CommStyle::nccl_ring);
    for (int r = 0; r < p; ++r) {
      // Step s: KV[r - s] to r + 1, KV[r - s - 1] from r - 1, one group each.
      int sends = 0, recvs = 0, groups = 0, last = -1;
      for (const Op& op : plan.programs[static_cast<std::size_t>(r)].ops()) {
        if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
        (op.kind == OpKind::send ? sends : recvs) += 1;
        CHECK(op.peer == (op.kind == OpKind::send ? (r + 1) % p : (r + p - 1) % p));
        if (op.comm_group != last) ++groups;
        last = op.comm_group;
      }
      CHECK(sends == p - 1);
      CHECK(recvs == p - 1);
      CHECK(groups == p - 1);
    }
  }
  // Under a window it keeps one grouped send/recv of the chunks each rank reads.
  AttentionShape window = fwd;
  AttentionMask mask;
  mask.kind = AttentionMaskKind::sliding_window;
  mask.window_tokens = 1024;
  window.set_mask(mask);
  const Plan grouped = plan_of("allgather_kv", window, 4);
  CHECK(grouped.comm_style == CommStyle::p2p);
  for (const RankProgram& program : grouped.programs) CHECK(comm_groups_of(program) <= 1);
  // Ulysses forward: the Q+KV all-to-all and the O return, one group each.
  const Plan ulysses = plan_of("ulysses", fwd, 4);
  for (const RankProgram& program : ulysses.programs) CHECK(comm_groups_of(program) == 2);
}

TEST_CASE("schedules ops: the separate correction's partials are kernel-dtype blocks") {
  // Ring step s > 0 writes O~ (bf16, b c H d 2 bytes) and LSE~ (fp32), merged into the fp32 O.
  const AttentionShape fwd = shape_with(false, false, PassSelection::forward, 8192);
  const Plan plan = plan_of("ring", fwd, 4);
  const ChunkBytes b = chunk_bytes(fwd, 4);
  int partial_o = 0;
  for (const DataObject& o : plan.objects) {
    if (o.input || o.output) continue;
    if (o.tensor == Tensor::o) {
      ++partial_o;
      CHECK(o.bytes == b.q);
    }
    if (o.tensor == Tensor::lse) CHECK(o.bytes == b.lse);
  }
  CHECK(partial_o == 4);  // one reused partial per rank
}
