#include "tools/cli/cli_errors.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/core/units.hpp"

namespace tilesim::cli {

int run_guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const Interrupted& e) {
    fmt::print(stderr, "tilesim: {}\n", e.what());
    return 128 + e.signal();
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitBadInput;
  } catch (const SimulatedRangeError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "internal error: {}\n", e.what());
    return kExitFailure;
  }
}

}  // namespace tilesim::cli
