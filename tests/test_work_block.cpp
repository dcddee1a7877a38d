// The work-block quotient (rank_shift_symmetry.hpp WorkApproximation; symmetric_plan.hpp): under
// a causal mask zigzag, striped, double-ring and USP ranks move the same bytes but run calls of
// two shapes in different orders (all-gather KV's one call per rank covers different chunk
// positions), so no shift is exact; one block's programs stand for every block's.
//   - The quotient's programs are those of ranks w..w+K-1 of the full plan, relabelled: the
//     same ops over the same chunk pairs and objects, peers moved by -w (and folded mod K but
//     in all-gather KV's offset quotient; the ring family moves the chunks' owners, the double
//     ring, all-gather KV and USP the chunks' tokens).
//   - Against the full simulation at 64 GPUs (forward and both): the makespan lies within the
//     work spread the result reports (the end ranks' compute, most less least, each alone),
//     the scale of what the quotient drops. Set after seeing the runs: the spread was printed
//     beside the errors before this test was written (zigzag 4M tokens at 64 GPUs: error
//     9.3 ms against a spread of 86 ms; every case 4-10x inside it; the mesh, USP and
//     all-gather KV cases added later were printed the same way first: mesh 8 x 8 both 6.7 ms
//     against 14.8 ms, the others equal). Why it and not a fixed percentage: a heuristic
//     bound, not a proof (mesh 16 x 16, 4M tokens, both, at 256 GPUs passes it by 2%), but one
//     that scales with the work the quotient drops and that every result reports
//     (docs/design-notes.md, "Work-block quotient", has the errors).
//   - Where it applies: roles at any size; auto beyond kAutoExactWorkRanks GPUs only (up to it
//     the full simulation runs, so the equality tests' exact runs are unchanged); never pass-Q,
//     whose ranks fall out of phase (symmetric_plan.cpp work_block_applies).
//   - The contiguous ring's causal work grows with the rank; its quotient runs the heaviest
//     block and counts every rank's FLOPs, affine in the rank, for the compute balance.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "sim/model/compute_model.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/allgather_kv_schedule.hpp"
#include "sim/schedules/double_ring_schedule.hpp"
#include "sim/schedules/mesh_schedule.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "sim/schedules/usp_schedule.hpp"
#include "sim/verbs/scenario_source.hpp"
#include "sim/verbs/simulate_verb.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

const std::string kScenario = shipped_scenario("ring-256k.yaml");

std::vector<std::string> causal_overrides(const std::string& kind, int gpus,
                                          const std::string& pass, const std::string& symmetry) {
  std::vector<std::string> overrides = {
      "attention.seq_len=1M",   "attention.causal=true",
      "schedule.kind=" + kind,  "schedule.gpus=" + std::to_string(gpus),
      "attention.pass=" + pass, "schedule.symmetry=" + symmetry};
  // A square mesh tile (no tile is a search over every tile).
  if (kind == "mesh") {
    const int a = gpus == 512 ? 16 : 8;
    overrides.push_back(fmt::format("schedule.tile=[{}, {}]", a, gpus / a));
  }
  return overrides;
}

SimulationRun causal_run(const std::string& kind, int gpus, const std::string& pass,
                         const std::string& symmetry) {
  ScenarioSource source;
  source.path = kScenario;
  source.overrides = causal_overrides(kind, gpus, pass, symmetry);
  return run_simulation(source);
}

AttentionShape causal_shape(const std::string& pass) {
  AttentionShape shape;
  shape.seq_len = 16 * 1024;
  shape.heads = 8;
  shape.kv_heads = 8;
  shape.head_dim = 128;
  shape.set_causal(true);
  shape.pass = pass == "both" ? PassSelection::both : PassSelection::forward;
  return shape;
}

}  // namespace

namespace {

// Quotient rank r's program is the full plan's rank w + r's: op by op the same kind and pass,
// peers moved by -w and folded mod K, and pairs, reads and writes naming the same chunks'
// tensors, where the quotient's chunk c is the full plan's chunk source(c) (c + a shift: the ring
// family keeps chunk ids and moves owners: 0; the double ring and all-gather KV move the
// chunks' tokens: w). Peers fold mod K, but in an offset quotient (all-gather KV:
// class_plan.hpp keep_class_programs), which names full ranks.
void check_block_programs(const Plan& quotient, const Plan& full, int w,
                          const std::function<int(int)>& moved, bool folded = true) {
  const int p = full.ranks, k = quotient.ranks;
  const auto same_objects = [&](std::span<const int> mine, std::span<const int> theirs) {
    if (mine.size() != theirs.size()) return false;
    for (std::size_t j = 0; j < mine.size(); ++j) {
      const DataObject& a = quotient.objects[static_cast<std::size_t>(mine[j])];
      const DataObject& b = full.objects[static_cast<std::size_t>(theirs[j])];
      if (a.tensor != b.tensor || moved(a.chunk) != b.chunk || a.bytes != b.bytes) return false;
    }
    return true;
  };
  for (int r = 0; r < k; ++r) {
    const RankProgram& mine = quotient.programs[static_cast<std::size_t>(r)];
    const RankProgram& theirs = full.programs[static_cast<std::size_t>(w + r)];
    REQUIRE(mine.size() == theirs.size());
    for (int i = 0; i < static_cast<int>(mine.size()); ++i) {
      const Op& a = mine.op(i);
      const Op& b = theirs.op(i);
      if (a.kind == OpKind::free && b.kind == OpKind::free) {
        // A run of frees completes at once, in any order (plan.hpp): the mesh numbered by
        // column frees a rank's chunks by position, which the block's relabel reorders.
        int end = i;
        std::vector<std::tuple<Tensor, int, double>> freed_mine, freed_theirs;
        for (; end < static_cast<int>(mine.size()) && mine.op(end).kind == OpKind::free &&
               theirs.op(end).kind == OpKind::free;
             ++end) {
          for (int x : mine.writes(end)) {
            const DataObject& o = quotient.objects[static_cast<std::size_t>(x)];
            freed_mine.emplace_back(o.tensor, moved(o.chunk), o.bytes);
          }
          for (int x : theirs.writes(end)) {
            const DataObject& o = full.objects[static_cast<std::size_t>(x)];
            freed_theirs.emplace_back(o.tensor, o.chunk, o.bytes);
          }
        }
        std::sort(freed_mine.begin(), freed_mine.end());
        std::sort(freed_theirs.begin(), freed_theirs.end());
        CHECK(freed_mine == freed_theirs);
        i = end - 1;
        continue;
      }
      CHECK(a.kind == b.kind);
      CHECK(a.pass == b.pass);
      if (a.kind == OpKind::send || a.kind == OpKind::recv) {
        CHECK(a.peer == (folded ? (b.peer - w + p) % p % k : (b.peer - w + p) % p));
      }
      const auto pa = mine.pairs(i), pb = theirs.pairs(i);
      REQUIRE(pa.size() == pb.size());
      for (std::size_t j = 0; j < pa.size(); ++j) {
        CHECK(moved(pa[j].q_chunk) == pb[j].q_chunk);
        CHECK(moved(pa[j].kv_chunk) == pb[j].kv_chunk);
      }
      CHECK(same_objects(mine.reads(i), theirs.reads(i)));
      CHECK(same_objects(mine.writes(i), theirs.writes(i)));
    }
  }
}

}  // namespace

TEST_CASE("a work-block quotient runs the programs of its block, relabelled") {
  const int p = 16, k = 8, w = 8;
  for (const auto& [kind, ownership] :
       {std::pair{std::string("zigzag"), ChunkOwnership::zigzag},
        std::pair{std::string("striped"), ChunkOwnership::striped}}) {
    for (const std::string pass : {"forward", "both"}) {
      INFO(kind << ", pass " << pass);
      const AttentionShape shape = causal_shape(pass);
      const Plan full = make_pass_kv_ring_plan(kind, shape, p, ownership);
      const Plan quotient = make_pass_kv_ring_classes_plan(kind, shape, p, ownership, k, w);
      REQUIRE(quotient.ranks == k);
      // Chunk c is owned by rank c in the full plan; in the quotient by (c - w) mod P.
      for (std::size_t c = 0; c < full.chunks.size(); ++c) {
        CHECK(quotient.chunks[c].owner == (full.chunks[c].owner - w + p) % p);
      }
      check_block_programs(quotient, full, w, [](int chunk) { return chunk; });
    }
  }
}

namespace {

// A quotient whose chunks' tokens move (the double ring, all-gather KV, USP, mesh): chunk c
// holds the tokens (and head group) of the full plan's chunk source(c) and keeps its owner;
// its programs are the full plan's ranks w..w+K-1.
void check_moved_block(const Plan& quotient, const Plan& full, int w,
                       const std::function<int(int)>& source, bool folded = true) {
  REQUIRE(quotient.chunks.size() == full.chunks.size());
  for (std::size_t c = 0; c < full.chunks.size(); ++c) {
    const Chunk& theirs = full.chunks[static_cast<std::size_t>(source(static_cast<int>(c)))];
    CHECK(quotient.chunks[c].blocks == theirs.blocks);
    CHECK(quotient.chunks[c].head_group == theirs.head_group);
    CHECK(quotient.chunks[c].owner == full.chunks[c].owner);
  }
  check_block_programs(quotient, full, w, source, folded);
}

// The same, chunk c holding chunk c + chunk_shift's tokens.
void check_rotated_block(const Plan& quotient, const Plan& full, int w, int chunk_shift,
                         bool folded = true) {
  const auto count = static_cast<int>(full.chunks.size());
  check_moved_block(
      quotient, full, w, [&](int chunk) { return (chunk + chunk_shift) % count; }, folded);
}

}  // namespace

TEST_CASE("a work-block quotient whose chunks' tokens move runs its block's programs") {
  // P = 16, K = 8, block w = 8. Double ring: inner rings of 4. All-gather KV: an offset
  // quotient (full peers). USP: 8 Ulysses groups of u = 2, chunk (p, h) with id p u + h, so
  // the chunk ids move by w u. Mesh 4 x 4: Q-groups of 4 consecutive ranks (a shift by whole
  // Q-groups maps each rank's Q and KV chunk sets onto the shifted rank's).
  const int p = 16, k = 8, w = 8, u = 2;
  MeshOptions mesh;
  mesh.tile = MeshTile{4, 4};
  MeshOptions by_column = mesh;
  by_column.ranks_by_column = true;
  for (const std::string pass : {"forward", "both"}) {
    INFO("pass " << pass);
    const AttentionShape shape = causal_shape(pass);
    check_rotated_block(make_double_ring_classes_plan(shape, p, 4, k, w),
                        make_double_ring_plan(shape, p, 4), w, w);
    check_rotated_block(make_allgather_kv_classes_plan(shape, p, k, w),
                        make_allgather_kv_plan(shape, p), w, w, false);
    check_rotated_block(make_usp_classes_plan(shape, p, u, k, w), make_usp_plan(shape, p, u), w,
                        w * u);
    check_rotated_block(make_mesh_classes_plan(shape, mesh, k, w), make_mesh_plan(shape, mesh), w,
                        w);
    // Mesh 4 x 4 numbered by column (kv-group-major): rank tc*4 + tr, blocks of whole KV-groups
    // (columns), so K = 8 is columns 0 and 1 and w = 8 columns 2 and 3: representative (tr, tc)
    // runs rank (tr, tc + 2)'s program, chunk (tr, tc) holding the tokens of chunk
    // (tr, tc + 2 mod 4).
    check_moved_block(make_mesh_classes_plan(shape, by_column, k, w),
                      make_mesh_plan(shape, by_column), w,
                      [](int chunk) { return chunk / 4 * 4 + (chunk % 4 + 2) % 4; });
  }
  // A block that is not a whole class block (all-gather KV), Ulysses group (USP) or Q-group
  // (mesh) is refused.
  const AttentionShape shape = causal_shape("forward");
  CHECK_THROWS_AS(make_allgather_kv_classes_plan(shape, p, k, 4), std::invalid_argument);
  CHECK_THROWS_AS(make_usp_classes_plan(shape, p, u, k, 3), std::invalid_argument);
  CHECK_THROWS_AS(make_mesh_classes_plan(shape, mesh, k, 2), std::invalid_argument);
  MeshOptions tall = by_column;
  tall.tile = MeshTile{2, 8};  // KV-groups of 8: K = 8 and a first rank of 4 are no columns
  CHECK_THROWS_AS(make_mesh_classes_plan(shape, tall, k, 4), std::invalid_argument);
  CHECK_THROWS_AS(make_mesh_classes_plan(shape, tall, 4, 0), std::invalid_argument);
  CHECK_NOTHROW(make_mesh_classes_plan(shape, tall, k, 8));
}

TEST_CASE("a block whose chunks' tokens moved costs what the full plan's ranks cost") {
  // The compute model lays a call's CTA tiles out in sequence order (each chunk's first
  // block), not chunk id order, which the rotation changes: the shipped profile's occupancy
  // model prices the tiles' order (tile_work), so with id order ranks 56..63 of a 64-GPU
  // mesh 8 x 8 cost up to 0.6% off the full plan's.
  const PreparedScenario prepared = prepare_scenario(kScenario, {});
  const CalibrationProfile& profile = prepared.profile;
  REQUIRE(profile.occupancy.enabled());
  AttentionShape shape = causal_shape("both");
  shape.seq_len = 256 * 1024;
  const int p = 64, k = 16, w = 48;
  MeshOptions mesh;
  mesh.tile = MeshTile{8, 8};
  MeshOptions by_column = mesh;
  by_column.ranks_by_column = true;
  const std::vector<std::pair<Plan, Plan>> cases = {
      {make_mesh_plan(shape, mesh), make_mesh_classes_plan(shape, mesh, k, w)},
      {make_mesh_plan(shape, by_column), make_mesh_classes_plan(shape, by_column, k, w)},
      {make_usp_plan(shape, p, 8), make_usp_classes_plan(shape, p, 8, k, w)},
      {make_double_ring_plan(shape, p, 8), make_double_ring_classes_plan(shape, p, 8, k, w)},
      {make_allgather_kv_plan(shape, p), make_allgather_kv_classes_plan(shape, p, k, w)}};
  for (const auto& [full, quotient] : cases) {
    INFO(full.schedule);
    REQUIRE(quotient.ranks == k);
    const ComputeModel full_model(full, profile), block_model(quotient, profile);
    for (int r = 0; r < k; ++r) {
      CHECK(block_model.compute_stream_ps(quotient.programs[static_cast<std::size_t>(r)]) ==
            full_model.compute_stream_ps(full.programs[static_cast<std::size_t>(w + r)]));
    }
  }
}

TEST_CASE("the work-block quotient lies within its work spread of the full simulation") {
  for (const std::string kind :
       {"ring", "zigzag", "striped", "double_ring", "allgather_kv", "usp", "mesh"}) {
    for (const std::string pass : {"forward", "both"}) {
      INFO(kind << " on 64 GPUs, 1M tokens, causal, pass " << pass);
      const SimulationRun full = causal_run(kind, 64, pass, "off");
      const SimulationRun block = causal_run(kind, 64, pass, "roles");
      REQUIRE_FALSE(full.symmetric());
      REQUIRE(block.symmetric());
      REQUIRE(block.symmetry->work.has_value());
      CHECK(block.symmetry->approximate());
      // The exact shift of the topology: one node, two for the double ring (whose shifts are
      // whole inner rings of 8 and whose outer peer r + 8 must not fold onto r).
      // USP: two Ulysses groups of 8 (a representative's ring peer must not be its own image);
      // mesh 8 x 8: two Q-groups (its KV-ring peer r + 8 must not fold onto r).
      const int classes = kind == "double_ring" || kind == "usp" || kind == "mesh" ? 16 : 8;
      CHECK(block.symmetry->classes == classes);
      const WorkApproximation& work = *block.symmetry->work;
      CHECK((work.first_rank == 0 || work.first_rank == 64 - classes));
      // All-gather KV gives every rank the same work (one call of (2P-1) full and 2 diagonal
      // blocks); the others' end ranks differ.
      if (kind != "allgather_kv") CHECK(work.work_spread_ps > 0);
      const double full_s = ps_to_s(full.result.makespan_ps);
      const double block_s = ps_to_s(block.result.makespan_ps);
      INFO("full " << full_s << " s, work block " << block_s << " s, spread "
                   << ps_to_s(work.work_spread_ps) << " s");
      CHECK(std::abs(block_s - full_s) <= ps_to_s(work.work_spread_ps));
      // The bytes do not depend on the mask: every rank moves the same, exactly.
      CHECK(summarize(block.result).comm_bytes_total == summarize(full.result).comm_bytes_total);
      const nlohmann::ordered_json doc = simulation_document(block, false);
      CHECK(doc["symmetry"]["exact"] == false);
      CHECK(doc["symmetry"]["work_block"]["first_rank"] == work.first_rank);
    }
  }
}

TEST_CASE("a mesh placed kv-group-major takes whole KV-groups as its work block") {
  // Numbered by column (mesh_placement.hpp), 8 x 8 on 64 GPUs: the shift is b = 8 (tc + 1), the
  // Q peer r + 8 must not fold onto r, so K = 16, two columns, and the block is columns 0-1 or
  // 6-7; its makespan lies within the work spread of every rank's.
  for (const std::string pass : {"forward", "both"}) {
    INFO("pass " << pass);
    const auto run = [&](const std::string& symmetry) {
      ScenarioSource source;
      source.path = kScenario;
      source.overrides = causal_overrides("mesh", 64, pass, symmetry);
      source.overrides.push_back("schedule.placement=kv-group-major");
      return run_simulation(source);
    };
    const SimulationRun full = run("off");
    const SimulationRun block = run("roles");
    REQUIRE_FALSE(full.symmetric());
    REQUIRE(block.symmetric());
    REQUIRE(block.symmetry->work.has_value());
    CHECK(block.symmetry->classes == 16);
    const WorkApproximation& work = *block.symmetry->work;
    CHECK((work.first_rank == 0 || work.first_rank == 48));
    CHECK(work.work_spread_ps > 0);
    CHECK(std::abs(ps_to_s(block.result.makespan_ps) - ps_to_s(full.result.makespan_ps)) <=
          ps_to_s(work.work_spread_ps));
    CHECK(summarize(block.result).comm_bytes_total == summarize(full.result).comm_bytes_total);
  }
}

// The ring family's FLOPs per rank are affine in the rank over equal chunks (a causal query at
// position i meets i + 1 keys; rank_shift_symmetry.hpp WorkApproximation::end_rank_flops), so
// the quotient's compute balance, counted from the end ranks' FLOPs, is the full run's: for the
// contiguous ring, whose rank r's queries meet n^2 r + n (n + 1) / 2 pairs over chunks of n
// tokens, and for striped's one diagonal of difference. The per-rank totals stay the block's.
TEST_CASE("a ring family's work-block quotient counts every rank's FLOPs for its balance") {
  for (const std::string kind : {"ring", "zigzag", "striped"}) {
    for (const std::string pass : {"forward", "both"}) {
      INFO(kind << " on 64 GPUs, 1M tokens, causal, pass " << pass);
      const SimulationRun full = causal_run(kind, 64, pass, "off");
      const SimulationRun block = causal_run(kind, 64, pass, "roles");
      REQUIRE(block.symmetry->work.has_value());
      REQUIRE(block.symmetry->work->end_rank_flops.has_value());
      // The end ranks' FLOPs are the full run's ranks 0 and P - 1. Tolerance 1e-12, chosen
      // before any run: each op's FLOPs are per-pair FLOPs x whole pair counts, rounded once,
      // and the two sides sum the same ops in different places (and the balance's mean is a
      // midpoint against a sum of 64), so only last-bit roundings may differ (~1e-14); another
      // rank's FLOPs differ by about 2e-6 (striped's one diagonal of 16K pairs) or 1e-2 and
      // more (the contiguous ring).
      const auto [first_flops, last_flops] = *block.symmetry->work->end_rank_flops;
      CHECK(first_flops == Approx(full.result.ranks.front().compute_flops).epsilon(1e-12));
      CHECK(last_flops == Approx(full.result.ranks.back().compute_flops).epsilon(1e-12));
      const double balance = summarize(block.result).compute_balance;
      CHECK(balance == Approx(summarize(full.result).compute_balance).epsilon(1e-12));
      if (kind == "ring") {
        // n = 16384 tokens per chunk: the last rank's pairs over the mean rank's,
        // (63 n^2 + n (n + 1) / 2) / (31.5 n^2 + n (n + 1) / 2).
        const double n = 16384.0;
        const double own = n * (n + 1.0) / 2.0;
        CHECK(balance == Approx((63.0 * n * n + own) / (31.5 * n * n + own)).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("auto takes the work-block quotient only beyond kAutoExactWorkRanks GPUs") {
  const auto prepared = [](const std::string& kind, int gpus, const std::string& symmetry) {
    return prepare_scenario(kScenario, causal_overrides(kind, gpus, "forward", symmetry));
  };
  const PreparedScenario small = prepared("zigzag", kAutoExactWorkRanks, "auto");
  CHECK_FALSE((small.symmetry && small.symmetry->exact()));
  const PreparedScenario large = prepared("zigzag", 2 * kAutoExactWorkRanks, "auto");
  REQUIRE(large.symmetry.has_value());
  REQUIRE(large.symmetry->work.has_value());
  CHECK(large.symmetry_warning.find("work-block quotient") != std::string::npos);
  for (const std::string kind : {"usp", "allgather_kv", "double_ring", "mesh"}) {
    INFO(kind);
    const PreparedScenario other = prepared(kind, 2 * kAutoExactWorkRanks, "auto");
    REQUIRE(other.symmetry.has_value());
    CHECK(other.symmetry->work.has_value());
  }
  // exact: the full simulation, however large.
  const PreparedScenario exact = prepared("striped", 2 * kAutoExactWorkRanks, "exact");
  CHECK_FALSE((exact.symmetry && exact.symmetry->exact()));
  // The contiguous ring too, its heaviest block the last (rank r runs r + 1 calls).
  const PreparedScenario ring = prepared("ring", 2 * kAutoExactWorkRanks, "auto");
  REQUIRE(ring.symmetry.has_value());
  REQUIRE(ring.symmetry->work.has_value());
  CHECK(ring.symmetry->work->first_rank == 2 * kAutoExactWorkRanks - ring.symmetry->classes);
  // Not under balance: work, whose chunks differ in size (no shift quotient at all).
  const PreparedScenario by_work = prepare_scenario(
      kScenario, {"attention.seq_len=1M", "attention.causal=true", "schedule.kind=ring",
                  "schedule.gpus=64", "schedule.balance=work", "schedule.symmetry=roles"});
  CHECK_FALSE((by_work.symmetry && by_work.symmetry->exact()));
  CHECK(by_work.symmetry_warning.find("roles not applied") != std::string::npos);
  // Pass-Q: never (its ranks fall out of phase; symmetric_plan.cpp work_block_applies).
  const PreparedScenario pass_q = prepared("pass_q", 2 * kAutoExactWorkRanks, "auto");
  CHECK_FALSE((pass_q.symmetry && pass_q.symmetry->exact()));
}
