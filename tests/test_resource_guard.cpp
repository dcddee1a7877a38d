// The plan-size estimates against the plans the generators build, and the guard's refusal
// figures against hand-computed ones.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "sim/core/input_error.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/output_correction.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/schedules/allgather_kv_schedule.hpp"
#include "sim/schedules/double_ring_schedule.hpp"
#include "sim/schedules/mesh_schedule.hpp"
#include "sim/schedules/pass_q_schedule.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "sim/schedules/schedule.hpp"
#include "sim/schedules/usp_schedule.hpp"

using namespace tilesim;

namespace {

AttentionShape shape(PassSelection pass) {
  AttentionShape a;
  a.seq_len = 64 * 1024;
  a.heads = 64;
  a.kv_heads = 64;
  a.head_dim = 64;
  a.pass = pass;
  return a;
}

ScheduleSpec spec(const char* kind, int gpus) {
  ScheduleSpec s;
  s.kind = kind;
  s.gpus = gpus;
  s.gpus_per_node = 8;
  return s;
}

// The estimate is an upper bound within `slack` of the plan's real op count.
void check_estimate(const AttentionShape& a, const ScheduleSpec& s, double slack) {
  const double real = static_cast<double>(make_plan(a, s).op_count());
  const double estimate = estimate_plan(a, s).ops;
  INFO(s.kind << " on " << s.gpus << " GPUs: real " << real << ", estimate " << estimate);
  CHECK(estimate >= real);
  CHECK(estimate <= slack * real);
}

// The mesh's reference bound holds for the whole plan (make_plan: the default separate
// correction), within `slack` of it.
void check_refs_estimate(const AttentionShape& a, const ScheduleSpec& s, double slack);

// What a generated plan holds, counted from its programs: ops, objects, the sends of each
// rank's largest comm group (summed), each rank's distinct send peers (summed) and every op's
// references (as mesh_refs, which only the mesh's form counts).
PlanSize counted(const Plan& plan) {
  PlanSize s;
  s.ops = static_cast<double>(plan.op_count());
  s.objects = static_cast<double>(plan.objects.size());
  for (const RankProgram& program : plan.programs) {
    std::map<int, int> sends_in_group;
    std::set<int> peers;
    for (int i = program.first_index(); i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      s.mesh_refs += op.read_count + op.write_count + op.after_count;
      if (op.kind == OpKind::compute) s.pairs += op.pair_count;
      if (op.kind != OpKind::send) continue;
      ++sends_in_group[op.comm_group];
      peers.insert(op.peer);
    }
    int largest = 0;
    for (const auto& [group, sends] : sends_in_group) largest = std::max(largest, sends);
    s.flows += largest;
    s.routes += static_cast<double>(peers.size());
  }
  return s;
}

// The quotient as build_symmetric_plan makes it (the default separate correction).
Plan corrected(Plan plan) {
  separate_output_corrections(plan);
  return plan;
}

void check_refs_estimate(const AttentionShape& a, const ScheduleSpec& s, double slack) {
  const double real = counted(make_plan(a, s)).mesh_refs;
  const double estimate = plan_size(a, s).mesh_refs;
  INFO("mesh " << s.tile_a << "x" << s.tile_b << ": real references " << real << ", estimate "
               << estimate);
  CHECK(estimate >= real);
  CHECK(estimate <= slack * real);
}

void check_equal(const PlanSize& form, const PlanSize& plan) {
  CHECK(form.ops == plan.ops);
  CHECK(form.objects == plan.objects);
  CHECK(form.flows == plan.flows);
  CHECK(form.routes == plan.routes);
  CHECK(form.pairs == plan.pairs);
}

// The closed form bounds the plan: at least every count, ops within `slack`.
void check_bound(const PlanSize& form, const PlanSize& plan, double slack) {
  CHECK(form.ops >= plan.ops);
  CHECK(form.ops <= slack * plan.ops);
  CHECK(form.objects >= plan.objects);
  CHECK(form.flows >= plan.flows);
  CHECK(form.routes >= plan.routes);
  CHECK(form.pairs >= plan.pairs);
  CHECK(form.mesh_refs >= plan.mesh_refs);
}

}  // namespace

TEST_CASE("ring-like estimates equal the generated op counts (6 P^2 - 5 P forward)") {
  for (const char* kind : {"ring", "zigzag", "striped", "double_ring"}) {
    for (int p : {8, 16, 32}) check_estimate(shape(PassSelection::forward), spec(kind, p), 1.0);
  }
  for (PassSelection pass :
       {PassSelection::forward, PassSelection::backward, PassSelection::both}) {
    // 3 P^2 - 2 P, 8 P^2 - 7 P, 11 P^2 - 9 P (NCCL's rings)
    for (int p : {8, 16, 32}) check_estimate(shape(pass), spec("allgather_kv", p), 1.0);
  }
  for (PassSelection pass : {PassSelection::backward, PassSelection::both}) {
    check_estimate(shape(pass), spec("ring", 16), 1.0);  // 9 P^2 - 5 P, 15 P^2 - 10 P
  }
}

TEST_CASE("pass_q, ulysses and usp estimates equal the generated op counts") {
  check_estimate(shape(PassSelection::forward), spec("pass_q", 16), 1.0);   // 13 P^2 - 12 P
  check_estimate(shape(PassSelection::forward), spec("ulysses", 16), 1.0);  // 9 P^2 - 8 P
  for (int u : {2, 4, 8}) {
    ScheduleSpec usp = spec("usp", 16);
    usp.ulysses_degree = u;
    check_estimate(shape(PassSelection::forward), usp, 1.0);  // P ((3u + 3) P/u + 6u - 11)
  }
}

TEST_CASE("backward and both estimates of double_ring, ulysses and usp equal the op counts") {
  for (PassSelection pass : {PassSelection::backward, PassSelection::both}) {
    for (int p : {8, 16, 32}) check_estimate(shape(pass), spec("double_ring", p), 1.0);
    ScheduleSpec four = spec("double_ring", 32);
    four.inner_ring = 4;
    check_estimate(shape(pass), four, 1.0);                 // 8 inner rings of 4
    check_estimate(shape(pass), spec("ulysses", 16), 1.0);  // 12 P^2 - 11 P, 18 P^2 - 16 P
    for (int u : {2, 4, 8}) {
      ScheduleSpec usp = spec("usp", 32);
      usp.ulysses_degree = u;
      check_estimate(shape(pass), usp, 1.0);
    }
  }
}

TEST_CASE("objects, flows and routes of full plans equal their closed forms") {
  for (PassSelection pass :
       {PassSelection::forward, PassSelection::backward, PassSelection::both}) {
    for (const char* kind :
         {"ring", "zigzag", "striped", "double_ring", "allgather_kv", "pass_q", "ulysses", "usp"}) {
      if (pass != PassSelection::forward && std::string(kind) == "pass_q") continue;
      for (int p : {8, 16, 32}) {
        ScheduleSpec s = spec(kind, p);
        if (std::string(kind) == "usp") s.ulysses_degree = p == 8 ? 2 : 4;
        INFO(kind << " on " << p << " GPUs, pass " << static_cast<int>(pass));
        check_equal(plan_size(shape(pass), s), counted(make_plan(shape(pass), s)));
      }
    }
  }
}

TEST_CASE("the pass-Q and all-gather KV quotients hold what the closed forms say") {
  // The offset quotient keeps K programs with their full peers and the objects of all P
  // ranks: pass-Q K (13 P - 12) ops, 8 P objects (Q, KV, O, LSE and the two parities of
  // O[i]@peer, LSE[i]@peer per chunk) and K (P - 1) routes; all-gather KV K (3P - 2),
  // K (8P - 7), K (11P - 9) ops (NCCL's rings), 4 P or 8 P + K P - 2 K objects (the dKV
  // partials of the K programs and the running sums' starts, K P + P - 2K) and K routes (r + 1);
  // the correction adds a block partial per accumulator: pass-Q's 6 P, all-gather KV's 2 P or
  // 5 P + K P - 2 K.
  for (auto [p, k] : {std::pair{16, 4}, std::pair{32, 8}, std::pair{32, 16}, std::pair{64, 16},
                      std::pair{128, 32}}) {
    INFO(p << " GPUs, " << k << " classes");
    const AttentionShape fwd = shape(PassSelection::forward);
    check_equal(plan_size(fwd, spec("pass_q", p), k),
                counted(corrected(make_pass_q_classes_plan(fwd, p, k))));
    for (PassSelection pass :
         {PassSelection::forward, PassSelection::backward, PassSelection::both}) {
      INFO("all-gather KV, pass " << static_cast<int>(pass));
      check_equal(plan_size(shape(pass), spec("allgather_kv", p), k),
                  counted(corrected(make_allgather_kv_classes_plan(shape(pass), p, k))));
    }
  }
  // Whatever K: pass-Q's objects are linear in P, 14 * 64 at 64 GPUs (8 P and 6 P block
  // partials); all-gather KV's backward, with its block partials, 2 (K P + P - 2K) + 11 P: at
  // 64 GPUs and K = 2, 2 * 188 + 704; the whole plan's P (P - 1) twice, 2 * 4032 + 704.
  CHECK(plan_size(shape(PassSelection::forward), spec("pass_q", 64), 2).objects == 896);
  CHECK(plan_size(shape(PassSelection::both), spec("allgather_kv", 64), 2).objects == 1080);
  CHECK(plan_size(shape(PassSelection::both), spec("allgather_kv", 64)).objects == 8768);
}

TEST_CASE("all-gather KV's closed form counts the calls split at 65535 references") {
  // 65536 GPUs, 1M tokens: each pass's one call reads more than 65535 objects (P + 1 forward,
  // P + 4 backward) and splits in two, each second part a call, a merge and a free; every op
  // stays within the 16-bit counts.
  AttentionShape a = shape(PassSelection::both);
  a.seq_len = 1 << 20;
  const int p = 65536, k = 8;
  const Plan quotient = corrected(make_allgather_kv_classes_plan(a, p, k));
  CHECK(plan_size(a, spec("allgather_kv", p), k).ops == counted(quotient).ops);
  CHECK(counted(quotient).ops == k * (11.0 * p - 9 + 2 * 3));
  const RankProgram& program = quotient.programs[0];
  int calls = 0;
  std::size_t pairs = 0;
  for (int i = program.first_index(); i < static_cast<int>(program.size()); ++i) {
    if (program.op(i).kind != OpKind::compute) continue;
    ++calls;
    pairs += program.pairs(i).size();
    CHECK(program.reads(i).size() <= 0xffff);
    CHECK(program.writes(i).size() <= 0xffff);
  }
  CHECK(calls == 4);
  CHECK(pairs == 2u * p);
}

TEST_CASE("the other quotients hold what the closed forms say (the mesh: at most)") {
  for (PassSelection pass :
       {PassSelection::forward, PassSelection::backward, PassSelection::both}) {
    const AttentionShape a = shape(pass);
    for (auto [p, k] : {std::pair{64, 8}, std::pair{128, 16}}) {
      INFO(p << " GPUs, " << k << " classes, pass " << static_cast<int>(pass));
      check_equal(plan_size(a, spec("ring", p), k),
                  counted(corrected(make_pass_kv_ring_classes_plan(
                      "ring", a, p, ChunkOwnership::contiguous, k))));
      check_equal(plan_size(a, spec("double_ring", p), k),
                  counted(corrected(make_double_ring_classes_plan(a, p, 8, k))));
      ScheduleSpec usp = spec("usp", p);
      usp.ulysses_degree = 4;
      check_equal(plan_size(a, usp, k), counted(corrected(make_usp_classes_plan(a, p, 4, k))));
    }
    // Mesh backward partials exist for the K ranks built and the KV ring's predecessors of the
    // first row (ranks (b - 1) a .. P - 1), a - 1 dQ and b - 1 dKV partials each: counted below.
    for (auto [ta, tb, k] : {std::tuple{8, 8, 8}, std::tuple{8, 32, 8}, std::tuple{32, 8, 32},
                             std::tuple{16, 16, 16}, std::tuple{4, 8, 8}}) {
      ScheduleSpec s = spec("mesh", ta * tb);
      s.tile_a = ta;
      s.tile_b = tb;
      INFO("mesh " << ta << "x" << tb << ", " << k << " classes, pass " << static_cast<int>(pass));
      const Plan quotient = make_mesh_classes_plan(a, s, k);
      check_bound(plan_size(a, s, k), counted(corrected(quotient)), 1.33);
      check_bound(plan_size(a, s), counted(make_plan(a, s)), 1.33);
      if (pass != PassSelection::forward) {
        int dq = 0, dkv = 0;
        for (const DataObject& o : quotient.objects) {
          if (o.name.find('@') == std::string::npos) continue;
          dq += o.name.rfind("dQ[", 0) == 0 ? 1 : 0;
          dkv += o.name.rfind("dKV[", 0) == 0 ? 1 : 0;
        }
        const int named = std::min(ta * tb, k + ta);
        CHECK(dq == named * (ta - 1));
        CHECK(dkv == named * (tb - 1));
      }
    }
  }
}

TEST_CASE("mesh estimates bound the generated op counts of every tile within 33%") {
  // Elongated tiles (32 x 8, 64 x 1, 1 x 64) are where the forms fitted on square-ish tiles fell
  // short; 1 x 2 is the one tile below 8 GPUs the forward form only bounds loosely.
  for (int a : {1, 2, 4, 8, 16, 32, 64}) {
    for (int b : {1, 2, 4, 8, 16, 32, 64}) {
      if (a * b < 2 || a * b > 512) continue;
      ScheduleSpec s = spec("mesh", a * b);
      s.tile_a = a;
      s.tile_b = b;
      for (PassSelection pass :
           {PassSelection::forward, PassSelection::backward, PassSelection::both}) {
        check_estimate(shape(pass), s,
                       a * b < 8                        ? 2.0
                       : pass == PassSelection::forward ? 1.33
                                                        : 1.11);
        check_refs_estimate(shape(pass), s,
                            a * b < 8                        ? 1.8
                            : pass == PassSelection::forward ? 1.44
                                                             : 1.28);
      }
    }
  }
}

TEST_CASE("mesh reference bounds hold for large elongated tiles") {
  // Beyond the grid above: tall and wide tiles of 2048 GPUs (the references a rank
  // holds depend on the tile only), as a quotient of one class a row.
  for (auto [a, b] :
       {std::pair{8, 256}, std::pair{256, 8}, std::pair{16, 128}, std::pair{128, 16}}) {
    for (PassSelection pass :
         {PassSelection::forward, PassSelection::backward, PassSelection::both}) {
      ScheduleSpec s = spec("mesh", a * b);
      s.tile_a = a;
      s.tile_b = b;
      INFO("mesh " << a << "x" << b << ", pass " << static_cast<int>(pass));
      const PlanSize plan = counted(corrected(make_mesh_classes_plan(shape(pass), s, a)));
      const PlanSize form = plan_size(shape(pass), s, a);
      CHECK(form.mesh_refs >= plan.mesh_refs);
      CHECK(form.mesh_refs <= 1.44 * plan.mesh_refs);
    }
  }
}

TEST_CASE("memory and time follow the per-op, object, flow and route constants") {
  const PlanEstimate e = estimate_plan(shape(PassSelection::forward), spec("ring", 1000));
  CHECK(e.ops == 6e6 - 5e3);  // 6 P^2 - 5 P
  // 4P + 2P objects, P flows, P routes, P^2 chunk pairs.
  CHECK(e.memory_bytes ==
        50e6 + 113.0 * 5.995e6 + 128.0 * 6000 + 800.0 * 1000 + 300.0 * 1000 + 12.0 * 1e6);
  CHECK(std::abs(e.sim_s - 33.572) < 1e-9);
  // All-gather KV without symmetry, as NCCL's ring: P flows and routes at 1,100 bytes each.
  const PlanEstimate g = estimate_plan(shape(PassSelection::forward), spec("allgather_kv", 512));
  CHECK(g.memory_bytes == 50e6 + 113.0 * 785408 + 128.0 * 3072 + 1100.0 * 512 + 12.0 * 512 * 512);
  // Ulysses: every rank computes its head group's P x P chunk pairs, P^3 in all.
  const PlanSize u = plan_size(shape(PassSelection::forward), spec("ulysses", 256));
  CHECK(u.pairs == 256.0 * 256 * 256);
  CHECK(u.objects == 6.0 * 256 * 256);  // Q, KV, O, LSE and the O and LSE partials
  CHECK(u.flows == 2.0 * 256 * 255);
  // A mesh 8 x 32 on 256 GPUs: 366 ops a rank (17a + 8b - 26), 2 x (4P + 2P (2a - 1)) objects
  // (the accumulators bounded by every object), 2 flows and 2 routes a rank, P^2 pairs, and
  // 366 + 1.2 x 256 + 7.6 x 8 x 32 + 2 x 40 = 2698.8 references a rank at 6 bytes each.
  ScheduleSpec m = spec("mesh", 256);
  m.tile_a = 8;
  m.tile_b = 32;
  const PlanEstimate mesh = estimate_plan(shape(PassSelection::forward), m);
  CHECK(mesh.ops == 256.0 * 366);
  // 1e-12, chosen before running: the same terms summed in another order than memory_of, and
  // 2698.8 has no exact binary form, so only rounding may differ.
  CHECK(mesh.memory_bytes == Approx(50e6 + 113.0 * 256 * 366 + 128.0 * 2 * (1024 + 512 * 15) +
                                    (800.0 + 300.0) * 512 + 12.0 * 256 * 256 + 6.0 * 256 * 2698.8)
                                 .epsilon(1e-12));
}

TEST_CASE("a symmetric pass-Q run is sized by its objects and routed pairs, not only ops") {
  // 1024 GPUs, 256 classes, held whole: 256 (13 * 1024 - 12) ops, 14 * 1024 objects (Q, KV, O,
  // LSE, the partials' two parities of O and LSE per chunk, the correction's block partials of
  // O, LSE and the four partials), 2 flows and 1023 routes per class, and the search's
  // 1024 * 1023 pairs, and 3 kB per GPU of the search's state (kQuotientBytesPerGpu).
  const PlanEstimate e =
      estimate_symmetric_plan(shape(PassSelection::forward), spec("pass_q", 1024), 256, 0.0);
  CHECK(e.ops == 256.0 * 13300);
  const double objects = 14.0 * 1024;
  CHECK(e.memory_bytes == 50e6 + 113.0 * 256 * 13300 + 128.0 * objects + 800.0 * 512 +
                              300.0 * 256 * 1023 + 12.0 * 256 * 1024 + 8.0 * 1024 * 1023 +
                              3e3 * 1024);
  // The form before (classes / GPUs of the full plan's ops at 113 bytes each) gave 0.40 GB
  // against the 0.60 GB measured at d51a7c0 (docs/reliability.md), of which the search's cached
  // routes (128 bytes a pair) were 0.13 GB; the search keeps none now, so the estimate must
  // cover the rest, 0.46 GB.
  CHECK(e.memory_bytes > 0.60e9 - 128.0 * 1024 * 1023);
  // One class bounds every K from below; the windowed forms add the per-GPU state.
  CHECK(estimate_symmetric_plan(shape(PassSelection::forward), spec("pass_q", 1024), 1, 0.0)
            .memory_bytes < e.memory_bytes);
  const PlanEstimate windowed =
      estimate_symmetric_plan(shape(PassSelection::forward), spec("ring", 4096), 512, 256.0);
  // The window's share of the quotient's 4096 x 512 chunk pairs.
  const double pairs = 4096.0 * 512 * (256.0 * 512) / (512.0 * (6 * 4096 - 5));
  CHECK(windowed.memory_bytes ==
        Approx(50e6 + 40e3 * 4096 + 113.0 * 256 * 512 + 128.0 * (6 * 4096) + 1100.0 * 512 +
               12.0 * pairs + 128.0 * 4096));
}

TEST_CASE("a windowed pass-Q quotient is sized by its window, routes and searched pairs") {
  // 4096 GPUs, 1024 classes (what the ring successors' bound gives on the H100 cluster),
  // generated as it runs (pass_q_source.hpp): 1024 windows of 256 ops, 14 * 4096 objects, 2
  // flows and 4095 routes per class, the per-GPU state of a windowed run, the window's share of
  // the quotient's 1024 x 4096 chunk pairs and the search's 4096 * 4095 pairs; 1024 (13 * 4096
  // - 12) ops simulated.
  const PlanEstimate e =
      estimate_symmetric_plan(shape(PassSelection::forward), spec("pass_q", 4096), 1024, 256.0);
  CHECK(e.ops == 1024.0 * (13 * 4096 - 12));
  const double pairs = 1024.0 * 4096 * (256.0 * 1024) / (1024.0 * (13 * 4096 - 12));
  // Approx only for the order of the sum (the guard adds the terms in another order, and the
  // window's pair share is a quotient): 1e-12 was chosen before the run, as the mesh's above.
  CHECK(e.memory_bytes ==
        Approx(50e6 + 40e3 * 4096 + 113.0 * 256 * 1024 + 128.0 * 14 * 4096 + 800.0 * 2 * 1024 +
               300.0 * 1024 * 4095 + 12.0 * pairs + 8.0 * 4096 * 4095)
            .epsilon(1e-12));
  // With room for it a 256-GPU request is prepared as 8 classes (test_all_peers_symmetry.cpp).
  const std::vector<std::string> overrides = {"attention.seq_len=1M", "schedule.kind=pass_q",
                                              "schedule.gpus=256"};
  const std::string path = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";
  ResourceLimits limits;
  limits.max_memory_bytes =
      estimate_symmetric_plan(shape(PassSelection::forward), spec("pass_q", 256), 8, 256.0)
          .memory_bytes +
      1e6;
  const PreparedScenario p = prepare_scenario(path, overrides, limits);
  REQUIRE(p.symmetry.has_value());
  CHECK(p.symmetry->classes == 8);
}

TEST_CASE(
    "a request whose symmetry search passes --max-memory with any classes is refused before it") {
  // 4096 GPUs of pass-Q: the search would walk 4096 * 4095 pairs (134 MB at 8 bytes) beside a
  // windowed run's 164 MB of per-GPU state and the 50 MB process, whatever the classes.
  const std::vector<std::string> overrides = {"attention.seq_len=1M", "schedule.kind=pass_q",
                                              "schedule.gpus=4096"};
  const std::string path = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";
  ResourceLimits limits;
  limits.max_memory_bytes = 3e8;
  try {
    (void)prepare_scenario(path, overrides, limits);
    FAIL("not refused");
  } catch (const InputError& error) {
    CHECK(error.key() == "schedule.gpus");
    CHECK_THAT(error.what(), Catch::Matchers::Contains("with any number of rank classes"));
  }
}

TEST_CASE("ring on 65536 GPUs is refused with its estimate and the largest count that fits") {
  ResourceLimits limits;
  limits.max_memory_bytes = 12e9;
  // 6 * 65536^2 - 5 * 65536 = 2.577e10 ops; 50 MB + 113 B each (+ 6P objects at 128 B, P
  // flows and P routes at 1,100 B, P^2 chunk pairs at 12 B) = 2.964e12 bytes (2.70 TiB).
  // Fits: 50e6 + 113 (6 P^2 - 5 P) + 768 P + 1100 P + 12 P^2 <= 12e9
  // ->  690 P^2 + 1303 P <= 1.195e10  ->  P <= 4160.6.
  const std::string why =
      resource_violation(shape(PassSelection::forward), spec("ring", 65536), limits);
  CHECK_THAT(why, Catch::Matchers::Contains("ring on 65536 GPUs is about 2.58e+10 ops"));
  CHECK_THAT(why, Catch::Matchers::Contains("2.70 TiB"));
  CHECK_THAT(why, Catch::Matchers::Contains("--max-memory 11.18 GiB"));
  CHECK_THAT(why, Catch::Matchers::Contains("at most 4160 GPUs would fit"));
  CHECK(resource_violation(shape(PassSelection::forward), spec("ring", 4160), limits).empty());
  CHECK_FALSE(
      resource_violation(shape(PassSelection::forward), spec("ring", 4161), limits).empty());
}

TEST_CASE("an op limit (--max-ops) refuses on the op count alone") {
  ResourceLimits limits;
  limits.max_memory_bytes = 1e15;
  limits.max_ops = 1e6;  // 6 P^2 - 5 P <= 1e6 -> P <= 408.7
  const std::string why =
      resource_violation(shape(PassSelection::forward), spec("ring", 1024), limits);
  CHECK_THAT(why, Catch::Matchers::Contains("--max-ops 1e+06"));
  CHECK_THAT(why, Catch::Matchers::Contains("at most 408 GPUs would fit"));
}

TEST_CASE("the default memory limit is half of MemTotal") {
  const double limit = default_max_memory_bytes();
  CHECK(limit > 100e6);  // any machine that runs the suite
  CHECK(limit < 1e15);
}
