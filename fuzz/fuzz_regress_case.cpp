// Regression case YAML (tilesim regress): loading only; its scenario and --set values are the
// scenario target's.
#include "fuzz/fuzz_support.hpp"
#include "sim/validation/regress_case.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  const std::string path = fuzz::scratch().write("case.yaml", data, size);
  fuzz::expect_typed_errors([&] { validation::load_regress_case(path); });
  return 0;
}
