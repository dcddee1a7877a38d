#include "sim/scenario/lazy_plan.hpp"

#include <optional>
#include <stdexcept>

#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/double_ring_source.hpp"
#include "sim/schedules/pass_q_source.hpp"
#include "sim/schedules/ring_classes_source.hpp"
#include "sim/schedules/schedule_kinds.hpp"
#include "sim/schedules/usp_classes_source.hpp"

namespace tilesim {
namespace {

bool keys_reach_every_rank(const AttentionShape& shape) {
  const AttentionMaskKind mask = shape.mask.kind;
  return mask != AttentionMaskKind::sliding_window && mask != AttentionMaskKind::documents;
}

// The chunk ownership of the ring-family plan the lazy source generates: make_plan's
// make_pass_kv_ring_plan (zigzag under a window or documents takes its two-direction ring).
std::optional<ChunkOwnership> lazy_ring_ownership(const Scenario& scenario) {
  if (scenario.schedule.kind == "zigzag" && !keys_reach_every_rank(scenario.attention)) {
    return std::nullopt;
  }
  return ring_ownership(scenario.schedule);
}

// USP's Ulysses degree where the USP source generates its plan, else 0.
int usp_degree(const Scenario& scenario) {
  return keys_reach_every_rank(scenario.attention) ? usp_shift_degree(scenario) : 0;
}

}  // namespace

bool double_ring_generated(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  const AttentionShape& shape = scenario.attention;
  if (spec.kind != "double_ring") return false;
  const int inner = double_ring_inner_size(spec);
  // lazy_plan.hpp: both passes under a window or documents run the whole plan.
  const bool long_forward_tail =
      shape.has_forward() && shape.has_backward() && shape.mask.may_leave_pairs_empty();
  return inner >= 1 && spec.gpus % inner == 0 && !long_forward_tail;
}

bool lazy_generates(const Scenario& scenario) {
  const bool ring = lazy_ring_ownership(scenario).has_value();
  // USP's backward opens with the all-to-all of dO, which its first call waits for.
  const bool usp = usp_degree(scenario) > 0;
  const bool pass_q = scenario.schedule.kind == "pass_q" && !scenario.attention.has_backward();
  return (ring || usp || pass_q || double_ring_generated(scenario)) && scenario.schedule.gpus >= 2;
}

bool lazy_runs(const Scenario& scenario) {
  return lazy_generates(scenario) && !scenario.job && scenario.schedule.gpus > kFullCheckMaxRanks;
}

std::unique_ptr<ProgramSource> make_lazy_source(const Scenario& scenario) {
  if (!lazy_generates(scenario)) {
    throw std::invalid_argument("make_lazy_source: not a plan a lazy source generates");
  }
  const ScheduleSpec& spec = scenario.schedule;
  if (double_ring_generated(scenario)) {
    return std::make_unique<DoubleRingSource>(scenario.attention, spec.gpus,
                                              double_ring_inner_size(spec), spec.correction);
  }
  if (spec.kind == "pass_q") {
    return std::make_unique<PassQSource>(scenario.attention, spec.gpus, spec.gpus, spec.correction);
  }
  if (const int u = usp_degree(scenario); u > 0) {
    return std::make_unique<UspClassesSource>(
        UspClassesSpec{scenario.attention, spec.gpus, u, spec.gpus, spec.correction});
  }
  return std::make_unique<RingClassesSource>(
      RingClassesSpec{spec.kind, scenario.attention, spec.gpus, *lazy_ring_ownership(scenario),
                      spec.gpus, spec.correction});
}

std::string lazy_violation(const Scenario& scenario) {
  return windowed_plan_violation(scenario, scenario.schedule.gpus);
}

void check_lazy_resources(const Scenario& scenario) {
  const std::string violation = lazy_violation(scenario);
  if (!violation.empty()) throw scenario.error_at("schedule.gpus", violation);
}

}  // namespace tilesim
