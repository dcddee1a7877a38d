#include <catch2/catch.hpp>
#include <cmath>

#include "sim/core/input_error.hpp"
#include "sim/model/calibration_profile.hpp"

using namespace tilesim;

TEST_CASE("shipped profiles load and carry their datasheet figures") {
  const CalibrationProfile h100 =
      load_calibration(std::string(TILESIM_SOURCE_DIR) + "/topologies/h100.calib.yaml");
  CHECK(h100.peak_flops == 989e12);
  CHECK(h100.link(LinkClass::nvlink).flow_cap_bytes_per_s == 180e9);
  CHECK(h100.efficiency(Pass::fwd, 128, 2048) == Approx(0.632));
  for (const char* name : {"a100", "h200", "h800"}) {
    const auto p =
        load_calibration(std::string(TILESIM_SOURCE_DIR) + "/topologies/" + name + ".calib.yaml");
    CHECK(p.peak_flops > 0);
    CHECK(p.link(LinkClass::ib).defined);
  }
}
