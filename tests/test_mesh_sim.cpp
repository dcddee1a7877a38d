#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "sim/model/simulator.hpp"
#include "sim/plan/validator.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/schedules/mesh_memory.hpp"
#include "sim/schedules/mesh_placement.hpp"
#include "sim/schedules/mesh_schedule.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "sim/topology/topology.hpp"

using namespace tilesim;

namespace {

const std::string kScenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/mesh-1m-256.yaml";

PreparedScenario prepared(int gpus, const std::string& seq_len) {
  // min-bytes resolves without simulating; the tests set the tiles they need.
  return prepare_scenario(kScenario, {fmt::format("schedule.gpus={}", gpus),
                                      "schedule.tile=min-bytes", "attention.seq_len=" + seq_len});
}

double makespan_s(const Plan& plan, const PreparedScenario& p) {
  return ps_to_s(simulate(plan, p.topology, p.profile).makespan_ps);
}

}  // namespace

TEST_CASE("mesh: greedy order is within 5% of the best order the rings allow") {
  const std::vector<MeshTile> tiles = {{2, 2}, {2, 3}, {3, 2}, {3, 3}, {2, 4}, {4, 2}};
  for (const char* seq : {"9216", "73728", "294912"}) {
    for (const MeshTile& t : tiles) {
      const PreparedScenario p = prepared(t.ranks(), seq);
      const AttentionShape& shape = p.scenario.attention;
      double best = std::numeric_limits<double>::infinity();
      std::string best_order;
      for (const MeshOrder& order : all_mesh_orders(t.a, t.b, {})) {
        for (bool hold_back : {true, false}) {
          MeshOptions opt;
          opt.tile = t;
          opt.order = order;
          opt.hold_back = hold_back;
          const double m = makespan_s(make_mesh_plan(shape, opt), p);
          if (m < best) best_order = to_string(order) + (hold_back ? " hold-back" : "");
          best = std::min(best, m);
        }
      }
      MeshOptions greedy;
      greedy.tile = t;
      const double g = makespan_s(make_mesh_plan(shape, greedy), p);
      INFO(t.a << "x" << t.b << " at " << seq << ": greedy " << g << " s, best " << best << " s ("
               << best_order << ")");
      // At 9216 tokens (1K-token chunks, communication-bound) the greedy is up
      // to 6.5% off on 4x2: the best order there runs a KV step before the
      // second Q step (QKQRQRR), which the bytes-per-block rule does not pick
      // (a tie the rule breaks towards the smaller transfer). Breaking the tie
      // towards more unlocked blocks instead fixes 4x2 there but costs 16-36%
      // on 3x2 and 4x2 elsewhere, so the rule stays. The bound was 1.065 (6.2%
      // off) while interference was a flat comm_slowdown; scaled by the traffic
      // through each GPU, the best order gains 0.3 points more: 1.07.
      CHECK(g <= (std::string(seq) == "9216" ? 1.07 : 1.05) * best);
    }
  }
}

TEST_CASE("mesh: a = 1 predicts the same makespan as ring") {
  const PreparedScenario p = prepared(16, "256K");
  MeshOptions opt;
  opt.tile = MeshTile{1, 16};
  opt.windows = default_mesh_windows(opt.tile);
  const SimulationResult m =
      simulate(make_mesh_plan(p.scenario.attention, opt), p.topology, p.profile);
  const SimulationResult r =
      simulate(make_ring_plan(p.scenario.attention, 16), p.topology, p.profile);
  CHECK(m.makespan_ps == r.makespan_ps);
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    CHECK(m.ranks[i].bytes_received == r.ranks[i].bytes_received);
    CHECK(m.ranks[i].compute_flops == r.ranks[i].compute_flops);
  }
}

TEST_CASE("mesh: q-group-major keeps an 8-wide Q-group on NVLink") {
  const PreparedScenario p = prepared(32, "256K");
  const MeshTile t{8, 4};
  MeshOptions opt;
  opt.tile = t;
  Plan plan = make_mesh_plan(p.scenario.attention, opt);
  auto ib_bytes = [&](const std::vector<int>& placement) {
    plan.placement = placement;
    SimulationOptions keep_transfers;
    keep_transfers.record_transfers = true;
    const SimulationResult result = simulate(plan, p.topology, p.profile, keep_transfers);
    Router router(p.topology);
    double q_group_ib = 0.0, total_ib = 0.0;
    for (const TransferRecord& tr : result.transfers) {
      auto gpu = [&](int rank) {
        return placement.empty() ? rank : placement[static_cast<std::size_t>(rank)];
      };
      bool ib = false;
      for (LinkId l : router.route(gpu(tr.send.rank), gpu(tr.recv.rank)).links) {
        ib = ib || p.topology.link(l).cls == LinkClass::ib;
      }
      if (!ib) continue;
      total_ib += tr.bytes;
      if (t.kv_pos(tr.send.rank) == t.kv_pos(tr.recv.rank)) q_group_ib += tr.bytes;
    }
    return std::pair{q_group_ib, total_ib};
  };
  const auto [q_ib, all_ib] = ib_bytes(mesh_placement(t, "q-group-major"));
  CHECK(q_ib == 0.0);
  // Only the KV ring crosses nodes: 32 ranks x 3 KV chunks.
  const std::int64_t c = p.scenario.attention.seq_len / 32;
  CHECK(all_ib == Approx(32 * 3 * p.scenario.attention.kv_bytes(c)));
  // kv-group-major puts each 4-rank KV ring inside a node (GPU = tc*4 + tr) and
  // two KV-groups per node: the Q/R ring hop tc -> tc+1 stays inside the node for
  // even tc and crosses IB for odd tc, so half of the 7 Q and R steps go over IB.
  const auto [q_ib2, all_ib2] = ib_bytes(mesh_placement(t, "kv-group-major"));
  const double qr = p.scenario.attention.q_bytes(c) + p.scenario.attention.o_accumulator_bytes(c) +
                    p.scenario.attention.lse_bytes(c);
  CHECK(q_ib2 == Approx(32 * 7 * qr / 2));
  CHECK(all_ib2 == Approx(q_ib2));
}

TEST_CASE("mesh: a memory budget is honoured in the simulation") {
  PreparedScenario p = prepared(16, "256K");
  const MeshTile t{4, 4};
  const double full = mesh_peak_bound_bytes(p.scenario.attention, t, {});
  p.scenario.schedule.tile_a = 4;
  p.scenario.schedule.tile_b = 4;
  p.scenario.schedule.memory_budget_bytes = full - 1.0;
  const Plan plan = build_valid_plan(p.scenario);
  const SimulationResult r = simulate(plan, p.topology, p.profile);
  for (const RankTotals& rank : r.ranks) CHECK(rank.peak_bytes <= full - 1.0);
  p.scenario.schedule.memory_budget_bytes = 1024.0 * 1024;
  CHECK_THROWS_WITH(build_plan(p.scenario), Catch::Contains("exceeds the memory budget"));
}

TEST_CASE("mesh: tile auto is the tuner's fastest tile, resolved when the scenario is prepared") {
  const PreparedScenario p = prepare_scenario(
      kScenario, {"schedule.gpus=16", "schedule.tile=auto", "attention.seq_len=256K"});
  CHECK(p.scenario.schedule.tile_choice == MeshTileChoice::given);
  // An independent ranking of every tile and placement, from a scenario with a given tile.
  const std::vector<CandidateResult> ranked = tune_schedules(prepared(16, "256K"), true);
  REQUIRE(ranked.size() == 2 * mesh_tiles(16).size());
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    CHECK(ranked[i - 1].figures.makespan_s <= ranked[i].figures.makespan_s);
  }
  CHECK(p.scenario.schedule.tile_a == ranked.front().candidate.spec.tile_a);
  CHECK(p.scenario.schedule.tile_b == ranked.front().candidate.spec.tile_b);
  CHECK(p.scenario.schedule.placement == ranked.front().candidate.spec.placement);
  const SimulationResult r = simulate(build_valid_plan(p.scenario), p.topology, p.profile);
  CHECK(ps_to_s(r.makespan_ps) == Approx(ranked.front().figures.makespan_s));
  // A mesh with no tile at all means auto (ring-256k names no tile).
  const Scenario untiled = load_scenario(
      std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml", {"schedule.kind=mesh"});
  CHECK(untiled.schedule.tile_choice == MeshTileChoice::fastest);
}

TEST_CASE("mesh: tile auto with a memory budget is the fastest tile that fits") {
  PreparedScenario unbounded = prepared(16, "256K");
  const std::vector<CandidateResult> ranked = tune_schedules(unbounded, true);
  // A budget just under the fastest candidate's peak leaves that candidate out.
  const double budget = ranked.front().figures.peak_memory_bytes_max - 1.0;
  const PreparedScenario p = prepare_scenario(
      kScenario, {"schedule.gpus=16", "schedule.tile=auto", "attention.seq_len=256K",
                  fmt::format("schedule.memory_budget={:.0f}", budget)});
  const SimulationResult r = simulate(build_valid_plan(p.scenario), p.topology, p.profile);
  CHECK(summarize(r).peak_memory_bytes_max <= budget);
  CHECK(ps_to_s(r.makespan_ps) >= ranked.front().figures.makespan_s);
}

TEST_CASE("mesh: tile min-bytes is the tile receiving the fewest bytes, placement kept") {
  // Forward bytes in per rank over c = 16K tokens (bf16 Q, KV; fp32 O; 32 heads of 128):
  //   (a-1)(q + o + lse) + (b-1) kv = c [(a-1)(8192 + 16384 + 128) + (b-1) 16384]
  //   1x16: 245760 c, 2x8: 139392 c, 4x4: 123264 c, 8x2: 189312 c, 16x1: 370560 c -> 4x4.
  // With kv_heads = 8, kv = 4096 c: 1x16: 61440 c, 2x8: 53376 c, 4x4: 86400 c -> 2x8.
  for (auto [kv_heads, a, b] : {std::tuple{32, 4, 4}, {8, 2, 8}}) {
    const PreparedScenario p =
        prepare_scenario(kScenario, {"schedule.gpus=16", "schedule.tile=min-bytes",
                                     "attention.seq_len=256K", "schedule.placement=kv-group-major",
                                     fmt::format("attention.kv_heads={}", kv_heads)});
    INFO("kv_heads " << kv_heads);
    CHECK(p.scenario.schedule.tile_choice == MeshTileChoice::given);
    CHECK(p.scenario.schedule.tile_a == a);
    CHECK(p.scenario.schedule.tile_b == b);
    CHECK(p.scenario.schedule.placement == "kv-group-major");
  }
}

TEST_CASE("mesh: fused computes cover the same blocks in O(a + b) ops and lose no time") {
  struct Case {
    MeshTile tile;
    const char* seq;
  };
  for (const Case& c : {Case{{2, 2}, "9216"}, Case{{3, 2}, "9216"}, Case{{4, 2}, "73728"},
                        Case{{3, 3}, "73728"}, Case{{8, 8}, "73728"}, Case{{4, 16}, "294912"}}) {
    const PreparedScenario p = prepared(c.tile.ranks(), c.seq);
    MeshOptions fused, per_block;
    fused.tile = per_block.tile = c.tile;
    per_block.fuse_blocks = false;
    const Plan f = make_mesh_plan(p.scenario.attention, fused);
    const Plan u = make_mesh_plan(p.scenario.attention, per_block);
    const PlanReport fr = validate_plan(f), ur = validate_plan(u);
    INFO(c.tile.a << "x" << c.tile.b << " at " << c.seq << ": "
                  << (fr.errors.empty() ? "" : fr.errors.front()));
    REQUIRE(fr.ok());
    for (int r = 0; r < f.ranks; ++r) {
      const RankStats& fs = fr.ranks[static_cast<std::size_t>(r)];
      const RankStats& us = ur.ranks[static_cast<std::size_t>(r)];
      CHECK(fs.computes == c.tile.a * c.tile.b);
      CHECK(fs.computes == us.computes);
      CHECK(fs.compute_flops == us.compute_flops);
      CHECK(fs.bytes_received == us.bytes_received);
      int ops = 0;
      for (const Op& op : f.programs[static_cast<std::size_t>(r)].ops()) {
        ops += op.kind == OpKind::compute ? 1 : 0;
      }
      // At most one op per phase (2(a-1) + (b-1) comm groups, plus the start),
      // and once every KV chunk is in, one per Q position: <= 3a + b - 2.
      CHECK(ops <= 3 * c.tile.a + c.tile.b - 2);
    }
    // A fused op is one call over all its chunks, so with the shipped profile it also runs
    // a larger call at a higher table efficiency and occupancy: never slower.
    CHECK(makespan_s(f, p) <= makespan_s(u, p));
    // With one efficiency for every call (a one-point table, no occupancy model) each fused op
    // starts when its first block would have and saves only launches.
    PreparedScenario flat = p;
    flat.profile.occupancy = OccupancyModel{};
    for (auto* table : {&flat.profile.forward, &flat.profile.backward}) {
      for (auto& [d, curve] : *table) curve.points = {{1.0, curve.points.back().second}};
    }
    const double fm = makespan_s(f, flat), um = makespan_s(u, flat);
    CHECK(fm <= um);
    CHECK(fm >= um - c.tile.a * c.tile.b * flat.profile.launch_overhead_s);
  }
}

TEST_CASE("mesh: numbering the ranks by column changes no figure of the simulation") {
  // The same programs on the same GPUs, named by position (rank tr*a + tc) or by column (rank
  // tc*b + tr, placement back to the position's GPU): every rank simulated, the two runs agree
  // to the picosecond (makespan, every rank's totals in the rank's own name). 64 GPUs, 32 x 2
  // node-major (which the plan numbers by column: mesh_placement.hpp) and 2 x 32 kv-group-major
  // (numbered by position), full mask and causal, both passes.
  for (const bool kv : {false, true}) {
    for (const bool causal : {false, true}) {
      INFO((kv ? "2x32 kv-group-major" : "32x2 node-major") << (causal ? ", causal" : ""));
      const MeshTile tile = kv ? MeshTile{2, 32} : MeshTile{32, 2};
      PreparedScenario p = prepared(64, "256K");
      AttentionShape shape = p.scenario.attention;
      shape.set_causal(causal);
      shape.pass = PassSelection::both;
      const std::vector<int> gpu_of_position =
          mesh_placement(tile, kv ? "kv-group-major" : "node-major");
      const auto gpu = [&](int g) {
        return gpu_of_position.empty() ? g : gpu_of_position[static_cast<std::size_t>(g)];
      };
      MeshOptions by_position;
      by_position.tile = tile;
      MeshOptions by_column = by_position;
      by_column.ranks_by_column = true;
      Plan rows = make_mesh_plan(shape, by_position);
      Plan columns = make_mesh_plan(shape, by_column);
      rows.placement.resize(64);
      columns.placement.resize(64);
      for (int g = 0; g < 64; ++g) {
        rows.placement[static_cast<std::size_t>(g)] = gpu(g);
        columns.placement[static_cast<std::size_t>(tile.column_rank(g))] = gpu(g);
      }
      const SimulationResult a = simulate(rows, p.topology, p.profile);
      const SimulationResult b = simulate(columns, p.topology, p.profile);
      CHECK(a.makespan_ps == b.makespan_ps);
      for (int g = 0; g < 64; ++g) {
        const RankTotals& x = a.ranks[static_cast<std::size_t>(g)];
        const RankTotals& y = b.ranks[static_cast<std::size_t>(tile.column_rank(g))];
        CHECK(x.compute_flops == y.compute_flops);
        CHECK(x.bytes_received == y.bytes_received);
        CHECK(x.peak_bytes == y.peak_bytes);
        CHECK(x.end_ps == y.end_ps);
        CHECK(x.compute_busy_ps == y.compute_busy_ps);
        CHECK(x.exposed_comm_ps == y.exposed_comm_ps);
      }
      CHECK(summarize(a).exposed_comm_s_max == summarize(b).exposed_comm_s_max);
    }
  }
  // The plan takes these numberings by the rule: 32 x 2 node-major by column (8 x 2 = 16 ranks
  // a class against max(64, 32) = 64), 2 x 32 kv-group-major by position likewise.
  CHECK(mesh_numbering({32, 2}, "node-major", 8).by_column);
  CHECK_FALSE(mesh_numbering({2, 32}, "kv-group-major", 8).by_column);
}
