// Efficiency by the work a call has: table extrapolation past its ends (and the warnings it
// raises), wave quantisation by CTAs, and the two combined per call. Expected values are
// hand-computed from the formulas in efficiency_curve.hpp and occupancy.hpp.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "sim/core/input_error.hpp"
#include "sim/model/calibration_profile.hpp"
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

TEST_CASE("call efficiency: table by size times occupancy by batch x heads x tiles") {
  const CalibrationProfile p = load_calibration(
      temp_profile("tilesim-occupancy.calib.yaml",
                   "  occupancy: {sms: 100, ctas_per_sm: 2, cta_tokens: 128, reference_ctas: 2000}\n"));
  REQUIRE(p.occupancy.enabled());
  CHECK(p.occupancy.occupancy(2000) == Approx(1.0));  // 10 full waves of 200 slots
  // 4K x 4K, 32 heads: table 0.6; 1024 CTAs in 6 waves of 200 -> 1024/1200.
  CHECK(p.call_efficiency({Pass::fwd, 128, 4096, 4096, 32, 1}, nullptr) ==
        Approx(0.6 * 1024.0 / 1200.0));
  // The same call with 4 heads (Ulysses over 8 ranks): 128 CTAs in one wave -> 0.64.
  CHECK(p.call_efficiency({Pass::fwd, 128, 4096, 4096, 4, 1}, nullptr) == Approx(0.6 * 0.64));
  // 1K queries x 4K keys: size 2K -> table 0.55. Backward tiles the 4K keys (128 CTAs, 0.64);
  // forward tiles the 1K queries (32 CTAs, 0.16).
  CHECK(p.call_efficiency({Pass::bwd, 128, 1024, 4096, 4, 1}, nullptr) == Approx(0.55 * 0.64));
  CHECK(p.call_efficiency({Pass::fwd, 128, 1024, 4096, 4, 1}, nullptr) == Approx(0.55 * 0.16));
  // Batch multiplies CTAs like heads: batch 2 x 2 heads = 4 heads.
  CHECK(p.call_efficiency({Pass::fwd, 128, 4096, 4096, 2, 2}, nullptr) == Approx(0.6 * 0.64));
}

TEST_CASE("call efficiency: old profiles without occupancy keep the table value") {
  const CalibrationProfile p =
      load_calibration(temp_profile("tilesim-no-occupancy.calib.yaml", ""));
  CHECK_FALSE(p.occupancy.enabled());
  CHECK(p.call_efficiency({Pass::fwd, 128, 4096, 4096, 1, 1}, nullptr) == Approx(0.6));
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
  const std::string path =
      temp_profile("tilesim-bad-occupancy.calib.yaml",
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
