// The GPU counts of the simulation-equality tests under TILESIM_TEST_MAX_GPUS
// (tests/gpu_counts.hpp).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/gpu_counts.hpp"

namespace {

// Sets TILESIM_TEST_MAX_GPUS for one scope and puts back what was there.
class MaxGpusSetting {
 public:
  explicit MaxGpusSetting(const char* value) {
    if (const char* old = std::getenv("TILESIM_TEST_MAX_GPUS")) previous_ = old;
    if (value == nullptr) {
      ::unsetenv("TILESIM_TEST_MAX_GPUS");
    } else {
      ::setenv("TILESIM_TEST_MAX_GPUS", value, 1);
    }
  }
  ~MaxGpusSetting() {
    if (previous_) {
      ::setenv("TILESIM_TEST_MAX_GPUS", previous_->c_str(), 1);
    } else {
      ::unsetenv("TILESIM_TEST_MAX_GPUS");
    }
  }
  MaxGpusSetting(const MaxGpusSetting&) = delete;
  MaxGpusSetting& operator=(const MaxGpusSetting&) = delete;

 private:
  std::optional<std::string> previous_;
};

}  // namespace

TEST_CASE("gpu_counts keeps every count unless TILESIM_TEST_MAX_GPUS caps them") {
  using tilesim::test::gpu_counts;
  {
    const MaxGpusSetting unset(nullptr);
    CHECK(gpu_counts({8, 16, 64, 256}) == std::vector<int>{8, 16, 64, 256});
  }
  {
    const MaxGpusSetting cap("64");
    CHECK(gpu_counts({8, 16, 64, 256}) == std::vector<int>{8, 16, 64});
    CHECK(gpu_counts({64, 256}) == std::vector<int>{64});
    CHECK(gpu_counts({128, 256}) == std::vector<int>{128});  // the smallest always stays
  }
  {
    const MaxGpusSetting bad("64k");
    CHECK_THROWS_AS(gpu_counts({8}), std::invalid_argument);
  }
  {
    const MaxGpusSetting zero("0");
    CHECK_THROWS_AS(gpu_counts({8}), std::invalid_argument);
  }
}
