// `tilesim calibrate` in a build without MPI: says so instead of running.
#include <fmt/format.h>

#include "runtime/calibration/calibrate_command.hpp"

namespace tilesim::runtime {

int calibrate_command(const CalibrateOptions& /*options*/) {
  fmt::print(stderr,
             "error: this tilesim was built without MPI (TILESIM_MPI=OFF or MPI not found); "
             "the calibrate verb needs it\n");
  return 2;
}

}  // namespace tilesim::runtime
