#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "sim/plan/validator.hpp"
#include "sim/schedules/mesh_memory.hpp"
#include "sim/schedules/mesh_schedule.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "tests/plan_fixtures.hpp"

using namespace tilesim;
using tilesim::testing::gqa_shape;
using tilesim::testing::mha_shape;

namespace {

Plan mesh(const AttentionShape& shape, int a, int b, MeshWindows w = {}) {
  MeshOptions opt;
  opt.tile = MeshTile{a, b};
  opt.windows = w.q == 0 && w.kv == 0 ? default_mesh_windows(opt.tile) : w;
  return make_mesh_plan(shape, opt);
}

// Closed form of docs/schedules.md with c = S/P: q = c*H*d*2, kv = 2*c*Hkv*d*2,
// o = c*H*d*4, lse = c*H*4 (batch 1, bf16).
double closed_form_bytes(std::int64_t seq, int heads, int kv_heads, int a, int b) {
  const double c = static_cast<double>(seq) / (a * b);
  const double q = c * heads * 128 * 2, kv = 2 * c * kv_heads * 128 * 2;
  const double o = c * heads * 128 * 4, lse = c * heads * 4;
  return (a - 1) * q + (b - 1) * kv + (a - 1) * (o + lse);
}

}  // namespace

TEST_CASE("mesh: bytes per rank follow (a-1)q + (b-1)kv + (a-1)(o+lse)") {
  const std::vector<std::pair<int, int>> tiles = {{3, 4}, {4, 3}, {2, 6}, {12, 1}, {1, 12},
                                                  {6, 2}, {4, 4}, {2, 8}, {5, 3}};
  for (auto [a, b] : tiles) {
    for (bool gqa : {false, true}) {
      for (bool causal : {false, true}) {
        const std::int64_t seq = 2L * 3 * 5 * 16 * 64;
        const AttentionShape shape = gqa ? gqa_shape(seq, causal) : mha_shape(seq, causal);
        const Plan plan = mesh(shape, a, b);
        const PlanReport report = validate_plan(plan);
        INFO(a << "x" << b << (gqa ? " GQA" : " MHA") << (causal ? " causal" : ""));
        REQUIRE(report.ok());
        const double want = closed_form_bytes(seq, 32, gqa ? 8 : 32, a, b);
        CHECK(mesh_bytes_in_per_rank(shape, MeshTile{a, b}) == Approx(want).epsilon(1e-12));
        for (const RankStats& r : report.ranks) {
          CHECK(r.bytes_received == Approx(want).epsilon(1e-12));
          CHECK(r.bytes_sent == Approx(want).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("mesh: validator accepts every factorisation of 12, 16 and 36") {
  for (int p : {12, 16, 36}) {
    for (const MeshTile& t : mesh_tiles(p)) {
      for (bool causal : {false, true}) {
        for (bool gqa : {false, true}) {
          const std::int64_t seq = 2L * 36 * 16 * 8;
          const Plan plan = mesh(gqa ? gqa_shape(seq, causal) : mha_shape(seq, causal), t.a, t.b);
          const PlanReport report = validate_plan(plan);
          INFO(t.a << "x" << t.b << (causal ? " causal" : "") << (gqa ? " GQA" : "")
                   << (report.ok() ? "" : report.errors.front()));
          CHECK(report.ok());
          // Every rank computes exactly its a x b tile (zigzag leaves no pair empty).
          for (const RankStats& r : report.ranks) CHECK(r.computes == t.a * t.b);
        }
      }
    }
  }
}

TEST_CASE("mesh: a = 1 emits the ring program op for op") {
  for (int p : {2, 4, 7, 16}) {
    const AttentionShape shape = mha_shape(16L * 1024 * 7);
    const Plan ring = make_ring_plan(shape, p);
    const Plan m = mesh(shape, 1, p);
    REQUIRE(m.ranks == ring.ranks);
    REQUIRE(m.objects.size() == ring.objects.size());
    for (int r = 0; r < p; ++r) {
      const RankProgram& x = ring.programs[static_cast<std::size_t>(r)];
      const RankProgram& y = m.programs[static_cast<std::size_t>(r)];
      REQUIRE(x.size() == y.size());
      for (int i = 0; i < static_cast<int>(x.size()); ++i) {
        INFO("P " << p << " " << ring.describe({r, i}) << " vs " << m.describe({r, i}));
        CHECK(x.op(i).kind == y.op(i).kind);
        CHECK(x.op(i).peer == y.op(i).peer);
        CHECK(x.op(i).comm_group == y.op(i).comm_group);
        CHECK(std::ranges::equal(x.pairs(i), y.pairs(i)));
        CHECK(std::ranges::equal(x.reads(i), y.reads(i)));
        CHECK(std::ranges::equal(x.writes(i), y.writes(i)));
        CHECK(std::ranges::equal(x.after(i), y.after(i)));
      }
    }
    const PlanReport a = validate_plan(ring), b = validate_plan(m);
    REQUIRE(b.ok());
    for (int r = 0; r < p; ++r) {
      CHECK(a.ranks[static_cast<std::size_t>(r)].bytes_received ==
            b.ranks[static_cast<std::size_t>(r)].bytes_received);
      CHECK(a.ranks[static_cast<std::size_t>(r)].computes ==
            b.ranks[static_cast<std::size_t>(r)].computes);
    }
  }
}

TEST_CASE("mesh: causal zigzag tiles are balanced at 64 GPUs") {
  const AttentionShape shape = mha_shape(64L * 2 * 256, true);
  for (const MeshTile& t : mesh_tiles(64)) {
    const PlanReport report = validate_plan(mesh(shape, t.a, t.b));
    REQUIRE(report.ok());
    double sum = 0.0, max = 0.0;
    for (const RankStats& r : report.ranks) {
      sum += r.compute_flops;
      max = std::max(max, r.compute_flops);
    }
    INFO(t.a << "x" << t.b);
    CHECK(max / (sum / 64) <= 1.05);
    // Total = causal attention: 4*H*d * S(S+1)/2 pairs.
    const double s = static_cast<double>(shape.seq_len);
    CHECK(sum == Approx(4.0 * 32 * 128 * s * (s + 1) / 2).epsilon(1e-12));
  }
}

TEST_CASE("mesh: 16x16 on 256 GPUs at 1M tokens receives >= 85% fewer bytes than ring") {
  const AttentionShape shape = mha_shape(1L << 20);
  const PlanReport m = validate_plan(mesh(shape, 16, 16));
  const PlanReport r = validate_plan(make_ring_plan(shape, 256));
  REQUIRE(m.ok());
  REQUIRE(r.ok());
  const double reduction = 1.0 - m.max_bytes_received() / r.max_bytes_received();
  // (15q + 15kv + 15(o+lse)) / (255 kv) with kv = 2q, o = 2q, lse = q/64.
  CHECK(reduction == Approx(1.0 - 15.0 * (5.0 + 1.0 / 64) / (255.0 * 2)).epsilon(1e-12));
  CHECK(reduction >= 0.85);
}

TEST_CASE("mesh: peak memory stays within the bound and the budget") {
  const AttentionShape shape = gqa_shape(1L << 16);
  for (const MeshTile& t : mesh_tiles(16)) {
    const MeshWindows full = default_mesh_windows(t);
    const PlanReport report = validate_plan(mesh(shape, t.a, t.b, full));
    REQUIRE(report.ok());
    INFO(t.a << "x" << t.b);
    CHECK(report.max_peak_bytes() <= mesh_peak_bound_bytes(shape, t, full));
  }
  // 4x4 caching everything needs more than streaming; a budget in between
  // must stream one ring and the measured peak must respect it.
  const MeshTile t{4, 4};
  const double all = mesh_peak_bound_bytes(shape, t, default_mesh_windows(t));
  const double budget = all - 1.0;
  const MeshWindows w = mesh_windows_for_budget(shape, t, budget);
  CHECK((w.q == 2 || w.kv == 2));
  const PlanReport streamed = validate_plan(mesh(shape, 4, 4, w));
  REQUIRE(streamed.ok());
  CHECK(streamed.max_peak_bytes() <= budget);
  CHECK(streamed.max_peak_bytes() <= mesh_peak_bound_bytes(shape, t, w));
  CHECK(mesh_peak_bound_bytes(shape, t, w) < all);
  // Below every choice: an error that says by how much.
  try {
    mesh_windows_for_budget(shape, t, 1024.0);
    FAIL("expected a ScheduleError");
  } catch (const ScheduleError& e) {
    CHECK(e.key() == "schedule.memory_budget");
    CHECK_THAT(e.what(), Catch::Contains("exceeds the memory budget"));
  }
}

namespace {

// Backward closed form with the sizes of closed_form_bytes plus dkv = 2*c*Hkv*d*4:
// (a-1)(2q + 2o + lse) + (b-1)(kv + dkv).
double closed_form_backward_bytes(std::int64_t seq, int heads, int kv_heads, int a, int b) {
  const double c = static_cast<double>(seq) / (a * b);
  const double q = c * heads * 128 * 2, kv = 2 * c * kv_heads * 128 * 2;
  const double o = c * heads * 128 * 4, lse = c * heads * 4, dkv = 2 * c * kv_heads * 128 * 4;
  return (a - 1) * (2 * q + 2 * o + lse) + (b - 1) * (kv + dkv);
}

AttentionShape with_pass(AttentionShape shape, PassSelection pass) {
  shape.pass = pass;
  return shape;
}

}  // namespace

TEST_CASE("mesh: backward bytes per rank follow (a-1)(2q+2o+lse) + (b-1)(kv+dkv)") {
  const std::vector<std::pair<int, int>> tiles = {{2, 2},  {3, 4}, {4, 3}, {2, 6}, {12, 1},
                                                  {1, 12}, {6, 2}, {4, 4}, {5, 3}};
  for (auto [a, b] : tiles) {
    for (bool gqa : {false, true}) {
      for (bool causal : {false, true}) {
        for (PassSelection pass : {PassSelection::backward, PassSelection::both}) {
          const std::int64_t seq = 2L * 3 * 5 * 16 * 64;
          const AttentionShape shape =
              with_pass(gqa ? gqa_shape(seq, causal) : mha_shape(seq, causal), pass);
          const Plan plan = mesh(shape, a, b);
          const PlanReport report = validate_plan(plan);
          INFO(a << "x" << b << (gqa ? " GQA" : " MHA") << (causal ? " causal " : " ")
                 << to_string(pass) << (report.ok() ? "" : " " + report.errors.front()));
          REQUIRE(report.ok());
          const int kv_heads = gqa ? 8 : 32;
          double want = closed_form_backward_bytes(seq, 32, kv_heads, a, b);
          if (pass == PassSelection::both) want += closed_form_bytes(seq, 32, kv_heads, a, b);
          CHECK(mesh_bytes_in_per_rank(shape, MeshTile{a, b}) == Approx(want).epsilon(1e-12));
          CHECK(mesh_backward_bytes_in_per_rank(shape, MeshTile{a, b}) ==
                Approx(closed_form_backward_bytes(seq, 32, kv_heads, a, b)).epsilon(1e-12));
          for (const RankStats& r : report.ranks) {
            CHECK(r.bytes_received == Approx(want).epsilon(1e-12));
            CHECK(r.bytes_sent == Approx(want).epsilon(1e-12));
          }
        }
      }
    }
  }
}

TEST_CASE("mesh: validator accepts backward and both for every factorisation of 4, 6 and 12") {
  for (int p : {4, 6, 12}) {
    for (const MeshTile& t : mesh_tiles(p)) {
      for (bool causal : {false, true}) {
        for (bool gqa : {false, true}) {
          for (PassSelection pass : {PassSelection::backward, PassSelection::both}) {
            const std::int64_t seq = 2L * 12 * 16 * 8;
            const AttentionShape shape =
                with_pass(gqa ? gqa_shape(seq, causal) : mha_shape(seq, causal), pass);
            const Plan plan = mesh(shape, t.a, t.b);
            const PlanReport report = validate_plan(plan);
            INFO(t.a << "x" << t.b << (causal ? " causal" : "") << (gqa ? " GQA " : " ")
                     << to_string(pass) << (report.ok() ? "" : " " + report.errors.front()));
            CHECK(report.ok());
            // Every rank computes its a x b tile once per pass.
            const int passes = pass == PassSelection::both ? 2 : 1;
            for (const RankStats& r : report.ranks) CHECK(r.computes == passes * t.a * t.b);
          }
        }
      }
    }
  }
}

TEST_CASE("mesh: both starts with the forward-only program") {
  const AttentionShape fwd = mha_shape(2L * 12 * 64, true);
  for (const MeshTile& t : mesh_tiles(12)) {
    const Plan f = mesh(fwd, t.a, t.b);
    const Plan both = mesh(with_pass(fwd, PassSelection::both), t.a, t.b);
    for (int r = 0; r < 12; ++r) {
      const RankProgram& x = f.programs[static_cast<std::size_t>(r)];
      const RankProgram& y = both.programs[static_cast<std::size_t>(r)];
      REQUIRE(y.size() > x.size());
      for (int i = 0; i < static_cast<int>(x.size()); ++i) {
        INFO(t.a << "x" << t.b << " " << f.describe({r, i}) << " vs " << both.describe({r, i}));
        CHECK(x.op(i).kind == y.op(i).kind);
        CHECK(x.op(i).peer == y.op(i).peer);
        CHECK(x.op(i).comm_group == y.op(i).comm_group);
        CHECK(f.describe({r, i}) == both.describe({r, i}));
      }
      for (int i = static_cast<int>(x.size()); i < static_cast<int>(y.size()); ++i) {
        if (y.op(i).kind == OpKind::compute) CHECK(y.op(i).pass == Pass::bwd);
      }
    }
  }
}

TEST_CASE("mesh: backward reduces partial dQ and dKV with sum merges at the owners") {
  const Plan plan = mesh(with_pass(gqa_shape(2L * 6 * 64), PassSelection::backward), 2, 3);
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    int dq_merges = 0, dkv_merges = 0;
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      if (program.op(i).kind != OpKind::merge) continue;
      REQUIRE(program.writes(i).size() == 1);
      const DataObject& target = plan.object(program.writes(i)[0]);
      for (int part : program.reads(i)) {
        CHECK(plan.object(part).tensor == target.tensor);
        CHECK(plan.object(part).chunk == target.chunk);
      }
      if (target.tensor == Tensor::dq) ++dq_merges;
      if (target.tensor == Tensor::dkv) ++dkv_merges;
    }
    // a-1 = 1 dQ merge (the final one), b-1 = 2 dKV merges (one forward, one final).
    CHECK(dq_merges == 1);
    CHECK(dkv_merges == 2);
  }
}

TEST_CASE("mesh: backward streams the longer ring once the shorter one is gathered") {
  // 1 x 12 and 12 x 1: a received chunk is freed right after it is forwarded, so at most
  // three gathered chunks (arriving, used, being forwarded) are live, not all eleven.
  const std::int64_t seq = 2L * 12 * 64;
  const AttentionShape shape = with_pass(gqa_shape(seq, true), PassSelection::backward);
  const std::int64_t c = seq / 12;
  const double q_side = 2 * shape.q_bytes(c) + shape.o_accumulator_bytes(c) + shape.lse_bytes(c);
  const double own =
      q_side + shape.kv_bytes(c) + shape.o_accumulator_bytes(c) + shape.dkv_accumulator_bytes(c);
  for (auto [a, b] : std::vector<std::pair<int, int>>{{1, 12}, {12, 1}}) {
    const PlanReport report = validate_plan(mesh(shape, a, b));
    REQUIRE(report.ok());
    const double gathered = a > 1 ? q_side : shape.kv_bytes(c);
    const double partial = a > 1 ? shape.o_accumulator_bytes(c) : shape.dkv_accumulator_bytes(c);
    // own chunk + 11 local partials + 2 received partials + 3 gathered chunks
    const double bound = own + 13 * partial + 3 * gathered;
    INFO(a << "x" << b << " peak " << report.max_peak_bytes() << " bound " << bound);
    CHECK(report.max_peak_bytes() <= bound);
    CHECK(report.max_peak_bytes() < own + 13 * partial + 11 * gathered);
  }
}

TEST_CASE("mesh: numbered by column (kv-group-major), the plan is the position plan relabelled") {
  // 3 x 4: Q-groups of 3, KV-groups of 4; position (tr, tc) = tr*3 + tc is rank tc*4 + tr.
  const MeshTile tile{3, 4};
  for (bool causal : {false, true}) {
    for (const PassSelection pass : {PassSelection::forward, PassSelection::both}) {
      INFO("causal " << causal << ", both " << (pass == PassSelection::both));
      AttentionShape shape = mha_shape(24 * 1024, causal);
      shape.pass = pass;
      MeshOptions by_position;
      by_position.tile = tile;
      MeshOptions by_column = by_position;
      by_column.ranks_by_column = true;
      const Plan rows = make_mesh_plan(shape, by_position);
      const Plan columns = make_mesh_plan(shape, by_column);
      REQUIRE(validate_plan(columns).ok());
      CHECK(columns.placement.empty());
      const auto rank = [](int position) { return position % 3 * 4 + position / 3; };
      CHECK(tile.column_rank(5) == 9);  // position (1, 2): 2 * 4 + 1
      CHECK(tile.column_position(9) == 5);
      for (std::size_t c = 0; c < rows.chunks.size(); ++c) {
        CHECK(columns.chunks[c].owner == rank(rows.chunks[c].owner));
        CHECK(columns.chunks[c].blocks == rows.chunks[c].blocks);  // chunks keep their tokens
      }
      REQUIRE(columns.objects.size() == rows.objects.size());
      for (std::size_t x = 0; x < rows.objects.size(); ++x) {
        CHECK(columns.objects[x].home_rank == rank(rows.objects[x].home_rank));
        CHECK(columns.objects[x].chunk == rows.objects[x].chunk);
      }
      for (int g = 0; g < tile.ranks(); ++g) {
        const RankProgram& mine = columns.programs[static_cast<std::size_t>(rank(g))];
        const RankProgram& theirs = rows.programs[static_cast<std::size_t>(g)];
        REQUIRE(mine.size() == theirs.size());
        for (int i = 0; i < static_cast<int>(mine.size()); ++i) {
          CHECK(mine.op(i).kind == theirs.op(i).kind);
          if (mine.op(i).kind == OpKind::send || mine.op(i).kind == OpKind::recv) {
            CHECK(mine.op(i).peer == rank(theirs.op(i).peer));
          }
          CHECK(std::ranges::equal(mine.writes(i), theirs.writes(i)));
          CHECK(std::ranges::equal(mine.reads(i), theirs.reads(i)));
        }
      }
    }
  }
  // A partial copy is named by the rank that holds it: O of chunk 1 (position (0, 1)) held at
  // position 0 is held by rank 0; that of chunk 0 at position 1 (rank 4) is "O[0]@4".
  const AttentionShape shape = mha_shape(24 * 1024);
  MeshOptions by_column;
  by_column.tile = tile;
  by_column.ranks_by_column = true;
  const Plan columns = make_mesh_plan(shape, by_column);
  const auto named = [&](const std::string& name) {
    return std::count_if(columns.objects.begin(), columns.objects.end(),
                         [&](const DataObject& o) { return o.name == name; });
  };
  CHECK(named("O[0]@4") == 1);
  CHECK(named("O[0]@1") == 0);  // position 1's rank is 4, not 1
  // The scenario's placement numbers the ranks, and no placement is left on the plan.
  ScheduleSpec spec;
  spec.kind = "mesh";
  spec.gpus = 12;
  spec.tile_a = 3;
  spec.tile_b = 4;
  spec.tile_choice = MeshTileChoice::given;
  spec.placement = "kv-group-major";
  const Plan from_spec = make_mesh_plan(shape, spec);
  CHECK(from_spec.placement.empty());
  CHECK(from_spec.chunks[1].owner == 4);
  spec.placement = "node-major";
  CHECK(make_mesh_plan(shape, spec).chunks[1].owner == 1);
}
