// The derivation of plan semantics (sim/plan/plan_semantics.hpp): on a hand-built program whose
// prerequisites, groups and allocations are worked out below, and on a generated ring.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "sim/plan/plan_semantics.hpp"
#include "sim/schedules/schedule.hpp"

using namespace tilesim;

namespace {

using Ops = std::vector<std::int32_t>;

Ops as_vector(std::span<const std::int32_t> s) { return Ops(s.begin(), s.end()); }

bool waits_for(const RankSemantics& sem, int op, int pre) {
  const auto p = sem.prerequisites(op);
  return std::find(p.begin(), p.end(), pre) != p.end();
}

Op comm(OpKind kind, int peer, int group) {
  Op op;
  op.kind = kind;
  op.peer = peer;
  op.comm_group = group;
  return op;
}

Op of_kind(OpKind kind) {
  Op op;
  op.kind = kind;
  return op;
}

// Rank 0 of a two-rank plan; X is an input of rank 0, Y and Z are not.
struct HandPlan {
  Plan plan;
  int x = 0, y = 0, z = 0;
  HandPlan() {
    plan.ranks = 2;
    plan.programs.resize(2);
    plan.chunks.push_back(Chunk{{0}, 0, 16, 0});
    x = plan.add_object(DataObject{Tensor::kv, 0, 0, 64.0, true, false, "X"});
    y = plan.add_object(DataObject{Tensor::kv, 0, 1, 64.0, false, false, "Y"});
    z = plan.add_object(DataObject{Tensor::o, 0, 0, 32.0, false, false, "Z"});
  }
  RankProgram& rank0() { return plan.programs[0]; }
};

}  // namespace

TEST_CASE("plan semantics: hazards, after, groups and allocations of a hand-built program",
          "[plan]") {
  HandPlan h;
  RankProgram& p = h.rank0();
  const ChunkPair pair{0, 0};
  const int x = h.x, y = h.y, z = h.z;
  p.add_compute(of_kind(OpKind::compute), {&pair, 1}, {{x}}, {{z}}, {});  // 0
  p.add(comm(OpKind::send, 1, 5), {{x}}, {}, {});                         // 1: group 5
  p.add(of_kind(OpKind::free), {}, {{x}}, {});                            // 2
  p.add(comm(OpKind::recv, 1, 7), {}, {{y}}, {});                         // 3: group 7
  p.add_compute(of_kind(OpKind::compute), {&pair, 1}, {{y}}, {{z}}, {});  // 4
  p.add(of_kind(OpKind::free), {}, {{y}}, {{0, 4}});                      // 5
  p.add(of_kind(OpKind::free), {}, {{y}}, {});                            // 6: y not live

  SECTION("full form") {
    const RankSemantics sem = SemanticsDeriver(h.plan).derive(0);
    REQUIRE(sem.size() == 7);
    CHECK(as_vector(sem.prerequisites(0)).empty());
    CHECK(as_vector(sem.prerequisites(1)).empty());          // reads X, never written before
    CHECK(as_vector(sem.prerequisites(2)) == Ops{0, 1});     // free X after its readers (WAR)
    CHECK(as_vector(sem.prerequisites(3)).empty());          // first write of Y
    CHECK(as_vector(sem.prerequisites(4)) == Ops{0, 3});     // Z after 0 (WAW), Y after 3 (RAW)
    CHECK(as_vector(sem.prerequisites(5)) == Ops{0, 3, 4});  // after {0, 4}; Y: WAW 3, WAR 4
    CHECK(as_vector(sem.prerequisites(6)) == Ops{5});        // WAW on the freed Y
    CHECK(sem.stream(0) == Stream::compute);
    CHECK(sem.stream(1) == Stream::comm);
    CHECK(sem.stream(2) == Stream::host);
    CHECK(sem.compute_ops() == Ops{0, 4});
    CHECK(sem.free_ops() == Ops{2, 5, 6});
    REQUIRE(sem.group_count() == 2);
    CHECK(sem.group_id(0) == 5);
    CHECK(sem.group_id(1) == 7);
    CHECK(as_vector(sem.group_ops(0)) == Ops{1});
    CHECK(as_vector(sem.group_ops(1)) == Ops{3});
    CHECK(sem.group_of(0) == -1);
    CHECK(sem.group_of(3) == 1);
    // Z is allocated by its first writer; X is live (an input) until op 2 frees it; Y is
    // allocated by the recv, freed by op 5, so op 6 releases nothing.
    CHECK(as_vector(sem.allocations(0)) == Ops{z});
    CHECK(as_vector(sem.allocations(1)).empty());
    CHECK(as_vector(sem.allocations(2)) == Ops{x});
    CHECK(as_vector(sem.allocations(3)) == Ops{y});
    CHECK(as_vector(sem.allocations(4)).empty());
    CHECK(as_vector(sem.allocations(5)) == Ops{y});
    CHECK(as_vector(sem.allocations(6)).empty());
  }
  SECTION("folded compute stream: the previous compute op, and only the latest of the stream") {
    const RankSemantics sem =
        SemanticsDeriver(h.plan, SemanticsOptions{.fold_compute_stream = true}).derive(0);
    CHECK(as_vector(sem.prerequisites(4)) == Ops{0, 3});
    CHECK(as_vector(sem.prerequisites(5)) == Ops{3, 4});  // 0 is implied by 4
    CHECK(as_vector(sem.prerequisites(2)) == Ops{0, 1});
  }
  SECTION("a comm group id that forms two runs is an error naming the second run") {
    p.add(comm(OpKind::send, 1, 5), {{z}}, {}, {});  // 7: group 5 again
    SemanticsDeriver deriver(h.plan);
    CHECK_THROWS_WITH(deriver.derive(0),
                      "rank 0 op 7: send Z to rank 1: comm group 5 is not consecutive in the "
                      "program");
    // The deriver stays usable after a throw: rank 1 (empty) derives cleanly.
    CHECK(deriver.derive(1).size() == 0);
  }
  SECTION("'after' must name an earlier op") {
    p.add(of_kind(OpKind::free), {}, {{z}}, {{7}});  // 7 names itself
    CHECK_THROWS_WITH(SemanticsDeriver(h.plan).derive(0),
                      Catch::Contains("rank 0 op 7") &&
                          Catch::Contains("'after' names op 7, which is not earlier"));
  }
}

TEST_CASE("plan semantics: ring dependencies", "[plan]") {
  AttentionShape shape;
  shape.seq_len = 64;
  shape.heads = 2;
  shape.kv_heads = 2;
  shape.head_dim = 16;
  ScheduleSpec spec;
  spec.gpus = 4;
  spec.correction = Correction::fused;  // the generated ring alone, no correction ops
  const Plan plan = make_plan(shape, spec);
  const int rank = 1;
  const RankProgram& program = plan.programs[rank];
  const RankSemantics sem = SemanticsDeriver(plan).derive(rank);
  REQUIRE(sem.size() == program.size());
  // Three ring steps with a send and a receive each; four computes; three frees.
  REQUIRE(sem.group_count() == 3);
  CHECK(sem.compute_ops().size() == 4);
  CHECK(sem.free_ops().size() == 3);
  for (int g = 0; g < sem.group_count(); ++g) {
    const auto ops = sem.group_ops(g);
    REQUIRE(ops.size() == 2);
    CHECK(program.op(ops[0]).kind == OpKind::send);
    CHECK(program.op(ops[1]).kind == OpKind::recv);
    for (int op : ops) CHECK(sem.group_of(op) == g);
  }
  // The compute on a received KV waits for its receive.
  const int recv0 = sem.group_ops(0)[1];
  const int object = program.writes(recv0)[0];
  for (int op : sem.compute_ops()) {
    const auto reads = program.reads(op);
    if (std::find(reads.begin(), reads.end(), object) != reads.end()) {
      CHECK(waits_for(sem, op, recv0));
    }
  }
  // A free waits for every earlier reader of its object (write-after-read).
  for (int f : sem.free_ops()) {
    const int freed = program.writes(f)[0];
    for (int i = 0; i < f; ++i) {
      const auto reads = program.reads(i);
      if (std::find(reads.begin(), reads.end(), freed) != reads.end()) {
        CHECK(waits_for(sem, f, i));
      }
    }
  }
  for (std::size_t i = 0; i < sem.size(); ++i) {
    for (int p : sem.prerequisites(static_cast<int>(i))) CHECK(p < static_cast<int>(i));
  }
}

// The shared one-op step (sim/plan/op_derivation.hpp) on its own, figures worked out by hand.
TEST_CASE("hazard_step: RAW, WAW and WAR prerequisites and the records it leaves") {
  ObjectHazard a, b;
  std::vector<std::int32_t> pre;
  std::vector<ObjectHazard*> none, only_a{&a}, only_b{&b}, both{&a, &b};
  hazard_step(none, only_a, 0, pre);  // op 0 writes A: nothing before it
  CHECK(pre.empty());
  CHECK(a.last_writer == 0);
  hazard_step(only_a, only_b, 1, pre);  // op 1 reads A (RAW on 0), writes B
  CHECK(pre == Ops{0});
  pre.clear();
  hazard_step(only_a, none, 2, pre);  // op 2 reads A: RAW on 0
  CHECK(pre == Ops{0});
  CHECK(a.readers_since_write == Ops{1, 2});
  pre.clear();
  hazard_step(only_b, both, 3, pre);  // op 3 reads B (RAW 1), writes A (WAW 0, WAR 1 2), B
  CHECK(pre == Ops{1, 0, 1, 2, 1});   // reads first, then per written object, unsorted
  CHECK(a.last_writer == 3);
  CHECK(a.readers_since_write.empty());
  CHECK(b.readers_since_write.empty());  // its own read of B is superseded by its write
  finish_prerequisites(
      pre, 3, true, [](std::int32_t p) { return p == 2; }, [](std::int32_t p) { return p <= 1; });
  CHECK(pre == Ops{1});  // 0 1 unique, 2 dropped, of the stream ops 0 and 1 only 1 kept
}

TEST_CASE("allocation_step: writes allocate what is not live, free releases what is") {
  bool live = false;
  CHECK_FALSE(allocation_step(OpKind::send, live));  // a send never allocates
  CHECK(allocation_step(OpKind::recv, live));
  CHECK(live);
  CHECK_FALSE(allocation_step(OpKind::compute, live));  // already live
  CHECK(allocation_step(OpKind::free, live));
  CHECK_FALSE(live);
  CHECK_FALSE(allocation_step(OpKind::free, live));  // nothing left to release
}
