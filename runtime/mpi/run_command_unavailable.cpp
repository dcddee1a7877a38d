// `tilesim run` in a build without MPI: says so instead of running.
#include <fmt/format.h>

#include "runtime/mpi/run_command.hpp"

namespace tilesim::runtime {

bool runtime_available() { return false; }

int run_command(const RunOptions& /*options*/) {
  fmt::print(stderr,
             "error: this tilesim was built without MPI (TILESIM_MPI=OFF or MPI not found); "
             "the run verb needs it\n");
  return 2;
}

}  // namespace tilesim::runtime
