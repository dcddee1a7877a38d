// Calibration profile YAML; a loaded profile is also queried over its whole range.
#include "fuzz/fuzz_support.hpp"
#include "sim/model/calibration_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  const std::string path = fuzz::scratch().write("profile.calib.yaml", data, size);
  fuzz::expect_typed_errors([&] {
    const CalibrationProfile profile = load_calibration(path);
    for (double tokens : {1.0, 128.0, 4096.0, 1e6}) {
      for (int head_dim : {64, 128}) {
        profile.efficiency(Pass::fwd, head_dim, tokens);
        profile.efficiency(Pass::bwd, head_dim, tokens);
      }
    }
  });
  return 0;
}
