// Which schedule to generate, and the dispatcher over the generators.
#pragma once

#include <stdexcept>
#include <string>

#include "sim/plan/attention_shape.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

// A schedule that cannot be built for this shape (e.g. tokens not divisible by
// the GPU count). The scenario layer turns it into an InputError naming the key.
class ScheduleError : public std::invalid_argument {
 public:
  ScheduleError(std::string key, const std::string& message)
      : std::invalid_argument(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

struct ScheduleSpec {
  std::string kind = "ring";
  int gpus = 1;
  int tile_a = 0;  // mesh only; 0 = not set
  int tile_b = 0;
};

Plan make_plan(const AttentionShape& shape, const ScheduleSpec& spec);

}  // namespace tilesim
