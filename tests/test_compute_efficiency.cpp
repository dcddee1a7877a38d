// Efficiency by the work a call has: table extrapolation past its ends (and the warnings it
// raises), wave quantisation by CTAs, and the two combined per call. Expected values are
// hand-computed from the formulas in efficiency_curve.hpp and occupancy.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <vector>

#include "sim/core/input_error.hpp"
#include "sim/model/calibration_profile.hpp"
#include "sim/model/compute_model.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"

using namespace tilesim;

namespace {

std::string temp_profile(const std::string& name, const std::string& compute_extra) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << "gpu: test\n"
                         "compute:\n"
                         "  peak: 100TFLOP/s\n"
                         "  launch_overhead: 0us\n"
                         "  merge_bandwidth: 1TB/s\n"
                         "  comm_slowdown: 0\n"
                         "  causal_efficiency: 1.0\n"
                         "  forward: {d128: {1K: 0.5, 4K: 0.6, 16K: 0.7}}\n"
                         "  backward: {d128: {1K: 0.5, 4K: 0.6, 16K: 0.7}}\n"
                      << compute_extra
                      << "links:\n"
                         "  nvlink: {efficiency: 1, alpha: 0us}\n"
                         "  pcie: {efficiency: 1, alpha: 0us}\n"
                         "  upi: {efficiency: 1, alpha: 0us}\n"
                         "  ib: {efficiency: 1, alpha: 0us}\n";
  return path.string();
}

std::string source_path(const std::string& relative) {
  return std::string(TILESIM_SOURCE_DIR) + "/" + relative;
}

}  // namespace

TEST_CASE("efficiency curve: log2 interpolation inside, stated rules outside") {
  EfficiencyCurve curve;
  curve.points = {{1024, 0.4}, {4096, 0.6}};
  CHECK(curve.at(2048) == Approx(0.5));  // halfway in log2
  CHECK(curve.lookup(2048).side == TableSide::inside);
  // Below: the first segment's slope, 0.1 per halving: 512 -> 0.3, 256 -> 0.2.
  const CurveLookup below = curve.lookup(512);
  CHECK(below.value == Approx(0.3));
  CHECK(below.side == TableSide::below);
  CHECK(below.edge_tokens == 1024);
  CHECK(curve.at(256) == Approx(0.2));
  // 64 tokens would be 0.4 - 4 * 0.1 = 0: floored at 1%.
  CHECK(curve.at(64) == Approx(EfficiencyCurve::kMinEfficiency));
  // Above: the last value held, reported as above the 4096-token end.
  const CurveLookup above = curve.lookup(65536);
  CHECK(above.value == 0.6);
  CHECK(above.side == TableSide::above);
  CHECK(above.edge_tokens == 4096);
  EfficiencyCurve single;
  single.points = {{1.0, 0.9}};
  CHECK(single.at(1e6) == 0.9);
  CHECK(single.lookup(1e6).side == TableSide::above);
}

TEST_CASE("occupancy: CTAs in waves over the SM slots, relative to the reference launch") {
  OccupancyModel o;
  CHECK(o.factor(1) == 1.0);  // disabled without SMs
  o.sms = 132;
  o.ctas_per_sm = 1;
  o.cta_tokens = 128;
  o.reference_ctas = 2048;
  CHECK(o.ctas(1, 32, 8192) == 2048);                       // 32 heads x 64 tiles
  CHECK(o.ctas(2, 3, 300) == 18);                           // 300 tokens round up to 3 tiles
  CHECK(o.occupancy(2048) == Approx(2048.0 / (132 * 16)));  // 16 waves, the last 68/132 full
  CHECK(o.occupancy(40) == Approx(40.0 / 132));
  CHECK(o.occupancy(133) == Approx(133.0 / 264));
  // 40 CTAs against the reference's 2048 in 16 waves: 40 * 16 / 2048.
  CHECK(o.factor(40) == Approx(0.3125));
  CHECK(o.factor(2048) == Approx(1.0));
}

TEST_CASE("occupancy: CTAs list-scheduled in grid order, a causal tail costed by its work") {
  // One SM holding two CTAs: two slots. Each freed slot takes the next CTA in grid order.
  const OccupancyModel o{1, 2, 128, 4};
  // Equal CTAs reduce to the closed form: 3 CTAs in 2 waves of 2 slots.
  const std::vector<double> one{1.0};
  CHECK(o.scheduled_occupancy(one, 3) == Approx(o.occupancy(3)));
  CHECK(o.occupancy(3) == Approx(0.75));
  // Forward causal tiles (small first) 1,2,3,4: slot A runs 1 then 3 (ends 4), slot B 2 then
  // 4 (ends 6): 10 units of work in 2 x 6.
  const std::vector<double> forward{1, 2, 3, 4};
  CHECK(o.scheduled_occupancy(forward, 1) == Approx(10.0 / 12.0));
  // Backward (large first) 4,3,2,1: A 4 then 1, B 3 then 2, both end at 5: no idle slot.
  const std::vector<double> backward{4, 3, 2, 1};
  CHECK(o.scheduled_occupancy(backward, 1) == Approx(1.0));
  // Two (batch, head) groups of tiles 1,2: A 1 then 1 (ends 2), then the last 2 (ends 4); B 2.
  const std::vector<double> pair{1, 2};
  CHECK(o.scheduled_occupancy(pair, 2) == Approx(6.0 / 8.0));
  // Against the benchmark's causal launch of the same size (512 tokens: 4 tiles, 4 / 4 = one
  // group; tile i has i + h, h = 129/256 of a tile, small first: A h then 2+h (ends 2+2h), B
  // 1+h then 3+h (ends 4+2h): 6+4h in 2 x (4+2h)).
  const double h = 129.0 / 256.0;
  const double reference = (6 + 4 * h) / (2 * (4 + 2 * h));
  CHECK(o.causal_factor(forward, 1, true, 512) == Approx((10.0 / 12.0) / reference));
  const std::vector<double> uneven{1, 3};  // A 1, B 3: 4 in 2 x 3
  CHECK(o.causal_factor(uneven, 1, true, 512) == Approx((4.0 / 6.0) / reference));
  // 320 equal CTAs on 132 SMs x 2 (a 5-head 8K call on an H800 with FA2): 2 waves of 264.
  const OccupancyModel h800{132, 2, 128, 2048};
  const std::vector<double> tiles(64, 1.0);
  CHECK(h800.scheduled_occupancy(tiles, 5) == Approx(320.0 / 528.0));
}

TEST_CASE("occupancy: a lone CTA runs at lone_cta_throughput of its SM") {
  // 320 equal CTAs (5 heads x 64 tiles) on 132 SMs x 2, a lone CTA at 2/3 of the SM: one full
  // wave of 264 (2 units), then 56 CTAs one per SM, each 1 unit at throughput 2/3 (1.5 units).
  OccupancyModel h800{132, 2, 128, 2048, 2.0 / 3.0};
  CHECK(h800.sm_throughput(1) == Approx(2.0 / 3.0));
  CHECK(h800.sm_throughput(2) == 1.0);
  CHECK(h800.occupancy(320) == Approx(320.0 / (132 * 3.5)));
  const std::vector<double> tiles(64, 1.0);
  CHECK(h800.scheduled_occupancy(tiles, 5) == Approx(320.0 / (132 * 3.5)));
  // 2048 CTAs: 7 full waves (14 units), then 200 on 132 SMs: 68 SMs hold two (2 units).
  CHECK(h800.occupancy(2048) == Approx(2048.0 / (132 * 16)));
  CHECK(h800.scheduled_occupancy(std::vector<double>(64, 1.0), 32) == Approx(2048.0 / (132 * 16)));
  // 100 CTAs on 132 SMs: one each, all lone: 1.5 units.
  CHECK(h800.occupancy(100) == Approx(100.0 / (132 * 1.5)));
  // Without the key a CTA gains nothing alone: the whole second wave (2 units).
  h800.lone_cta_throughput = 0.0;
  CHECK(h800.lone_share() == 0.5);
  CHECK(h800.occupancy(320) == Approx(320.0 / 528.0));
  // Unequal work on one SM x 2, lone 2/3: CTAs of 1 and 3 share the SM at 1/2 each until t = 2,
  // then the 3 has 2 left, alone at 2/3: 3 more units, T = 5, 4 units of work.
  const OccupancyModel one{1, 2, 128, 4, 2.0 / 3.0};
  const std::vector<double> uneven{1, 3};
  CHECK(one.scheduled_occupancy(uneven, 1) == Approx(4.0 / 5.0));
  // Three CTAs 1, 1, 2: the 1s share to t = 2, then the 2 runs alone: 2 / (2/3) = 3: T = 5.
  const std::vector<double> three{1, 1, 2};
  CHECK(one.scheduled_occupancy(three, 1) == Approx(4.0 / 5.0));
  // One SM, one slot: lone is the whole SM, work in order: T = sum.
  const OccupancyModel single{1, 1, 128, 4, 1.0};
  CHECK(single.scheduled_occupancy(three, 1) == Approx(1.0));
}

TEST_CASE("call efficiency: lone_cta_throughput is read, bounded by 1/ctas_per_sm and 1") {
  const CalibrationProfile p = load_calibration(
      temp_profile("tilesim-lone.calib.yaml",
                   "  occupancy: {sms: 100, ctas_per_sm: 2, cta_tokens: 128, reference_ctas: 2000, "
                   "lone_cta_throughput: 0.8}\n"));
  CHECK(p.occupancy.lone_cta_throughput == 0.8);
  // 250 CTAs on 200 slots: a full wave (2), then 50 lone (1 / 0.8).
  CHECK(p.occupancy.occupancy(250) == Approx(250.0 / (100 * (2 + 1.25))));
  const std::string low =
      temp_profile("tilesim-lone-low.calib.yaml",
                   "  occupancy: {sms: 100, ctas_per_sm: 2, cta_tokens: 128, reference_ctas: 2000, "
                   "lone_cta_throughput: 0.4}\n");
  try {
    load_calibration(low);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.key() == "compute.occupancy.lone_cta_throughput");
    CHECK_THAT(e.what(), Catch::Contains("between 1/ctas_per_sm = 0.5 and 1"));
  }
}

TEST_CASE("compute model: a causally cut call's tiles carry their unmasked pairs") {
  // 2 GPUs, 512 tokens, causal: each rank holds one 256-token chunk, two 128-token tiles.
  const PreparedScenario p =
      prepare_scenario(source_path("scenarios/ring-256k.yaml"),
                       {"schedule.gpus=2", "attention.seq_len=512", "attention.causal=true",
                        "attention.pass=forward", "schedule.kind=ring"});
  const Plan plan = build_valid_plan(p.scenario);
  const ComputeModel model(plan, p.profile);
  REQUIRE(p.profile.occupancy.cta_tokens == 128);
  bool diagonal = false;
  bool full = false;
  for (const RankProgram& program : plan.programs) {
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      if (program.op(i).kind != OpKind::compute) continue;
      const std::span<const ChunkPair> pairs = program.pairs(i);
      const AttentionCall call = model.call_of(program.op(i).pass, pairs);
      if (pairs.size() == 1 && pairs[0].q_chunk == pairs[0].kv_chunk) {
        // The diagonal: tile 0 sees 128 x 129 / 2 keys, tile 1 all 128 x 128 of tile 0's
        // keys plus its own triangle.
        diagonal = true;
        REQUIRE(call.tile_work.size() == 2);
        CHECK(call.tile_work[0] == Approx(128.0 * 129.0 / 2.0));
        CHECK(call.tile_work[1] == Approx(128.0 * 128.0 + 128.0 * 129.0 / 2.0));
      } else {
        full = true;  // rank 1 against rank 0's keys: every tile equal, the closed form
        CHECK(call.tile_work.empty());
      }
    }
  }
  CHECK(diagonal);
  CHECK(full);
}

// The unmasked pairs of each CTA tile of a call, counted position by position with
// AttentionMask::visible: the reference the compute model's counts (prefix sums under the causal
// mask, run by run otherwise) must equal exactly. Tiles in call_of's grid order: tiled chunks by
// first block, each chunk's blocks in order, cta_tokens positions at a time.
std::vector<double> tile_work_by_position(const Plan& plan, Pass pass,
                                          std::span<const ChunkPair> pairs, int cta_tokens) {
  const bool forward = pass == Pass::fwd;
  std::vector<int> tiled;
  for (ChunkPair pair : pairs) tiled.push_back(forward ? pair.q_chunk : pair.kv_chunk);
  const auto position = [&](int id) {
    return std::pair{plan.chunks[static_cast<std::size_t>(id)].blocks.front(), id};
  };
  std::sort(tiled.begin(), tiled.end(), [&](int x, int y) { return position(x) < position(y); });
  tiled.erase(std::unique(tiled.begin(), tiled.end()), tiled.end());
  const auto positions = [&](const PositionRun& run) {
    std::vector<std::int64_t> out;
    for (std::int64_t a = 0; a < run.count; ++a) out.push_back(run.start + a * run.stride);
    return out;
  };
  std::vector<double> work;
  for (int id : tiled) {
    std::vector<std::int64_t> partner_positions;
    for (ChunkPair pair : pairs) {
      if ((forward ? pair.q_chunk : pair.kv_chunk) != id) continue;
      for (int block :
           plan.chunks[static_cast<std::size_t>(forward ? pair.kv_chunk : pair.q_chunk)].blocks) {
        for (std::int64_t x : positions(plan.layout.run(block))) partner_positions.push_back(x);
      }
    }
    for (int block : plan.chunks[static_cast<std::size_t>(id)].blocks) {
      const std::vector<std::int64_t> own = positions(plan.layout.run(block));
      for (std::size_t first = 0; first < own.size();
           first += static_cast<std::size_t>(cta_tokens)) {
        double w = 0.0;
        for (std::size_t t = first; t < std::min(own.size(), first + cta_tokens); ++t) {
          for (std::int64_t x : partner_positions) {
            w += forward ? plan.shape.mask.visible(own[t], x) : plan.shape.mask.visible(x, own[t]);
          }
        }
        work.push_back(w);
      }
    }
  }
  const auto [lo, hi] = std::minmax_element(work.begin(), work.end());
  if (work.empty() || *hi - *lo <= 1e-9 * *hi) return {};
  return work;
}

TEST_CASE(
    "compute model: every fused call's tile work is its tiles' visible pairs, counted one by one") {
  // Fused calls of many chunks (mesh, USP), zigzag's two-block chunks, striped's strided runs,
  // under the causal mask (the prefix-sum count) and a sliding window (counted run by run).
  const std::vector<std::vector<std::string>> cases = {
      {"schedule.kind=mesh", "schedule.tile=[2,4]"},
      {"schedule.kind=mesh", "schedule.tile=[4,2]"},
      {"schedule.kind=usp", "schedule.ulysses=2"},
      {"schedule.kind=zigzag"},
      {"schedule.kind=striped"},
      {"schedule.kind=ring"},
      {"schedule.kind=allgather_kv"},
      {"schedule.kind=double_ring", "schedule.inner=2"},
  };
  const std::vector<std::vector<std::string>> masks = {
      {"attention.causal=true"},
      {"attention.causal=true", "attention.mask=sliding_window", "attention.window=300"}};
  for (const std::vector<std::string>& mask : masks) {
    for (const std::vector<std::string>& schedule : cases) {
      std::vector<std::string> sets = {"schedule.gpus=8", "attention.seq_len=2048",
                                       "attention.pass=both"};
      sets.insert(sets.end(), mask.begin(), mask.end());
      sets.insert(sets.end(), schedule.begin(), schedule.end());
      const PreparedScenario p = prepare_scenario(source_path("scenarios/ring-256k.yaml"), sets);
      const Plan plan = build_valid_plan(p.scenario);
      const ComputeModel model(plan, p.profile);
      int uneven_calls = 0;
      for (int r = 0; r < plan.ranks; ++r) {
        const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
        for (int i = 0; i < static_cast<int>(program.size()); ++i) {
          if (program.op(i).kind != OpKind::compute) continue;
          const AttentionCall call = model.call_of(program.op(i).pass, program.pairs(i));
          INFO(schedule.front() << " " << mask.front() << " " << plan.describe({r, i}));
          CHECK(call.tile_work == tile_work_by_position(plan, program.op(i).pass, program.pairs(i),
                                                        p.profile.occupancy.cta_tokens));
          uneven_calls += call.tile_work.empty() ? 0 : 1;
        }
      }
      CHECK(uneven_calls > 0);  // the mask cut some call's tiles unevenly
    }
  }
}

TEST_CASE("call efficiency: table by size times occupancy by batch x heads x tiles") {
  const CalibrationProfile p = load_calibration(temp_profile(
      "tilesim-occupancy.calib.yaml",
      "  occupancy: {sms: 100, ctas_per_sm: 2, cta_tokens: 128, reference_ctas: 2000}\n"));
  REQUIRE(p.occupancy.enabled());
  CHECK(p.occupancy.occupancy(2000) == Approx(1.0));  // 10 full waves of 200 slots
  // 4K x 4K, 32 heads: table 0.6; 1024 CTAs in 6 waves of 200 -> 1024/1200.
  CHECK(p.call_efficiency({Pass::fwd, 128, 4096, 4096, 32, 1, {}}, nullptr) ==
        Approx(0.6 * 1024.0 / 1200.0));
  // The same call with 4 heads (Ulysses over 8 ranks): 128 CTAs in one wave -> 0.64.
  CHECK(p.call_efficiency({Pass::fwd, 128, 4096, 4096, 4, 1, {}}, nullptr) == Approx(0.6 * 0.64));
  // 1K queries x 4K keys: size 2K -> table 0.55. Backward tiles the 4K keys (128 CTAs, 0.64);
  // forward tiles the 1K queries (32 CTAs, 0.16).
  CHECK(p.call_efficiency({Pass::bwd, 128, 1024, 4096, 4, 1, {}}, nullptr) == Approx(0.55 * 0.64));
  CHECK(p.call_efficiency({Pass::fwd, 128, 1024, 4096, 4, 1, {}}, nullptr) == Approx(0.55 * 0.16));
  // Batch multiplies CTAs like heads: batch 2 x 2 heads = 4 heads.
  CHECK(p.call_efficiency({Pass::fwd, 128, 4096, 4096, 2, 2, {}}, nullptr) == Approx(0.6 * 0.64));
}

TEST_CASE("call efficiency: old profiles without occupancy keep the table value") {
  const CalibrationProfile p =
      load_calibration(temp_profile("tilesim-no-occupancy.calib.yaml", ""));
  CHECK_FALSE(p.occupancy.enabled());
  CHECK(p.call_efficiency({Pass::fwd, 128, 4096, 4096, 1, 1, {}}, nullptr) == Approx(0.6));
  const CalibrationProfile cpu = load_calibration(source_path("topologies/cpu.calib.yaml"));
  CHECK_FALSE(cpu.occupancy.enabled());
  for (const char* name : {"h100", "h200", "h800", "a100"}) {
    INFO(name);
    const CalibrationProfile gpu =
        load_calibration(source_path(std::string("topologies/") + name + ".calib.yaml"));
    CHECK(gpu.occupancy.enabled());
    CHECK(gpu.occupancy.reference_ctas == 2048);
  }
}

TEST_CASE("call efficiency: a malformed occupancy names its key") {
  const std::string path = temp_profile(
      "tilesim-bad-occupancy.calib.yaml",
      "  occupancy: {sms: 0, ctas_per_sm: 1, cta_tokens: 128, reference_ctas: 2048}\n");
  try {
    load_calibration(path);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.key() == "compute.occupancy.sms");
    CHECK_THAT(e.what(), Catch::Contains("expected a whole number between 1 and"));
  }
}

TEST_CASE("simulation warns once per table end that its lookups left") {
  // ring-256k on 8 GPUs: 32K-token blocks, past h100's 16K forward row; the one-GPU reference
  // (one 256K block) is reported under its own name.
  const PreparedScenario p = prepare_scenario(source_path("scenarios/ring-256k.yaml"), {});
  const SimulationResult r = simulate(build_valid_plan(p.scenario), p.topology, p.profile);
  int ends = 0;
  int reference = 0;
  for (const std::string& w : r.warnings) {
    INFO(w);
    if (w.find("(one-GPU reference)") != std::string::npos) {
      ++reference;
      CHECK_THAT(w, Catch::Contains("(up to 256K) held its last value"));
    } else {
      ++ends;
      CHECK_THAT(w, Catch::Contains("forward d128 efficiency table ends at 16K tokens"));
      CHECK_THAT(w, Catch::Contains("(up to 32K) held its last value"));
    }
  }
  CHECK(ends == 1);
  CHECK(reference == 1);
  // 64K tokens: 8K blocks lie inside every table; only the reference leaves them.
  const PreparedScenario inside =
      prepare_scenario(source_path("scenarios/ring-256k.yaml"), {"attention.seq_len=64K"});
  const SimulationResult q =
      simulate(build_valid_plan(inside.scenario), inside.topology, inside.profile);
  for (const std::string& w : q.warnings) {
    INFO(w);
    CHECK_THAT(w, Catch::Contains("(one-GPU reference)"));
  }
}

TEST_CASE(
    "compute model: a head-split plan's calls over the same blocks cost and log as if each were "
    "costed anew") {
  // USP u = 4 on 16 GPUs, causal, 32K tokens (1K-token zigzag blocks, below the causal table's 2K
  // start, so every causally cut block is one lookup below it): the u ranks of a Ulysses group
  // run calls over the same blocks for different heads, which one model finds in its memo.
  const PreparedScenario p =
      prepare_scenario(source_path("scenarios/ring-256k.yaml"),
                       {"schedule.gpus=16", "attention.seq_len=32K", "attention.causal=true",
                        "attention.pass=both", "schedule.kind=usp", "schedule.ulysses=4"});
  const Plan plan = build_valid_plan(p.scenario);
  REQUIRE(plan.head_groups == 4);
  const ComputeModel shared(plan, p.profile);
  const auto block = static_cast<double>(plan.layout.block_tokens());
  REQUIRE(block < 2048);
  long cut_blocks = 0;
  int computes = 0;
  for (const RankProgram& program : plan.programs) {
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      if (program.op(i).kind != OpKind::compute) continue;
      ++computes;
      const ComputeModel fresh(plan, p.profile);  // an empty memo: the call costed anew
      // One lookup for time and FLOPs, as the simulator makes it.
      const ComputeModel::StreamCost cost = shared.stream_cost(program, i);
      CHECK(cost.duration_ps == s_to_ps(fresh.compute_time_s(program, i)));
      CHECK(cost.flops == plan.compute_flops(program.op(i).pass, program.pairs(i)));
      for (ChunkPair pair : program.pairs(i)) {
        for (int qb : plan.chunks[static_cast<std::size_t>(pair.q_chunk)].blocks) {
          for (int kb : plan.chunks[static_cast<std::size_t>(pair.kv_chunk)].blocks) {
            const double pairs = plan.layout.unmasked_pairs(qb, kb, plan.shape.mask);
            cut_blocks += pairs > 0 && pairs < block * block ? 1 : 0;
          }
        }
      }
    }
  }
  REQUIRE(computes > 0);
  REQUIRE(cut_blocks > 0);
  // One causal_efficiency lookup per cut block of every call, hits included.
  bool found = false;
  for (const std::string& line : shared.warnings()) {
    if (line.find("causal_efficiency") == std::string::npos) continue;
    found = true;
    CHECK_THAT(line, Catch::Contains(fmt::format("; {} lookups below it", cut_blocks)));
  }
  CHECK(found);
}
