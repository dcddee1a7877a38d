#include "sim/plan/schedule.hpp"

#include <fmt/format.h>

#include "sim/plan/ring_schedule.hpp"

namespace tilesim {

Plan make_plan(const AttentionShape& shape, const ScheduleSpec& spec) {
  if (spec.gpus < 1) throw ScheduleError("schedule.gpus", "expected at least 1 GPU");
  if (shape.heads <= 0 || shape.kv_heads <= 0 || shape.heads % shape.kv_heads != 0) {
    throw ScheduleError("attention.kv_heads",
                        fmt::format("kv_heads {} must divide heads {}", shape.kv_heads,
                                    shape.heads));
  }
  if (spec.kind == "ring") {
    if (shape.has_backward()) {
      throw ScheduleError("attention.pass",
                          "the ring generator builds the forward pass; pass must be forward");
    }
    return make_ring_plan(shape, spec.gpus);
  }
  throw ScheduleError("schedule.kind",
                      fmt::format("schedule '{}' has no generator in this build", spec.kind));
}

}  // namespace tilesim
