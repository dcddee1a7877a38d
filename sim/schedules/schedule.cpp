#include "sim/schedules/schedule.hpp"

#include <fmt/format.h>

#include "sim/schedules/mesh_schedule.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "sim/schedules/schedule_kinds.hpp"

namespace tilesim {

Plan make_plan(const AttentionShape& shape, const ScheduleSpec& spec) {
  if (spec.gpus < 1) throw ScheduleError("schedule.gpus", "expected at least 1 GPU");
  if (shape.heads <= 0 || shape.kv_heads <= 0 || shape.heads % shape.kv_heads != 0) {
    throw ScheduleError("attention.kv_heads", fmt::format("kv_heads {} must divide heads {}",
                                                          shape.kv_heads, shape.heads));
  }
  Plan plan;
  if (!make_standard_plan(shape, spec, plan)) {
    if (spec.kind != "mesh") {
      throw ScheduleError("schedule.kind",
                          fmt::format("schedule '{}' has no generator in this build", spec.kind));
    }
    plan = make_mesh_plan(shape, spec);
  }
  if (spec.correction != Correction::fused) separate_output_corrections(plan);
  if (spec.correction == Correction::eager) plan.merge_form = MergeForm::eager;
  return plan;
}

}  // namespace tilesim
