// Published-measurement case YAML (tilesim validate --published): loading only.
#include "fuzz/fuzz_support.hpp"
#include "sim/validation/published_case.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  const std::string path = fuzz::scratch().write("published.yaml", data, size);
  fuzz::expect_typed_errors([&] { validation::load_published_case(path); });
  return 0;
}
