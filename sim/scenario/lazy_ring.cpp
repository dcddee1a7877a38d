#include "sim/scenario/lazy_ring.hpp"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "sim/core/units.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/resource_guard.hpp"

namespace tilesim {
namespace {

// The chunk ownership make_plan's generator uses, where it is make_pass_kv_ring_plan's.
std::optional<ChunkOwnership> lazy_ownership(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  const AttentionMaskKind mask = scenario.attention.mask.kind;
  if (spec.kind == "ring") {
    // balance: work deals the blocks by work (ChunkOwnership::work): not generated lazily.
    if (spec.balance == TokenBalance::work) return std::nullopt;
    return ChunkOwnership::contiguous;
  }
  if (spec.kind == "striped") return ChunkOwnership::striped;
  if (spec.kind == "zigzag" && mask != AttentionMaskKind::sliding_window &&
      mask != AttentionMaskKind::documents) {
    return ChunkOwnership::zigzag;
  }
  return std::nullopt;
}

}  // namespace

bool lazy_ring_generates(const Scenario& scenario) {
  return lazy_ownership(scenario).has_value() && !scenario.attention.has_backward() &&
         scenario.schedule.gpus >= 2;
}

bool lazy_ring_runs(const Scenario& scenario) {
  return lazy_ring_generates(scenario) && !scenario.job &&
         scenario.schedule.gpus > kFullCheckMaxRanks;
}

std::unique_ptr<RingClassesSource> make_lazy_ring_source(const Scenario& scenario) {
  const std::optional<ChunkOwnership> ownership = lazy_ownership(scenario);
  if (!ownership || !lazy_ring_generates(scenario)) {
    throw std::invalid_argument("make_lazy_ring_source: not a plan the lazy ring generates");
  }
  const ScheduleSpec& spec = scenario.schedule;
  return std::make_unique<RingClassesSource>(RingClassesSpec{
      spec.kind, scenario.attention, spec.gpus, *ownership, spec.gpus, spec.correction});
}

std::string lazy_ring_violation(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  const PlanEstimate e =
      estimate_symmetric_plan(scenario.attention, spec, spec.gpus, kWindowedOpsPerClass);
  const ResourceLimits& limits = scenario.limits;
  const double max_memory =
      limits.max_memory_bytes > 0 ? limits.max_memory_bytes : default_max_memory_bytes();
  if (e.memory_bytes <= max_memory && (limits.max_ops <= 0 || e.ops <= limits.max_ops)) return {};
  return fmt::format(
      "a plan this machine can hold: {} on {} GPUs generated as it runs is about {:.3g} ops, {} "
      "of memory (sim/scenario/lazy_ring.hpp), beyond the limits ({}{}); raise --max-memory or "
      "--max-ops, or use fewer GPUs",
      spec.kind, spec.gpus, e.ops, format_bytes(e.memory_bytes), format_bytes(max_memory),
      limits.max_ops > 0 ? fmt::format(", {:.3g} ops", limits.max_ops) : "");
}

void check_lazy_ring_resources(const Scenario& scenario) {
  const std::string violation = lazy_ring_violation(scenario);
  if (!violation.empty()) throw scenario.error_at("schedule.gpus", violation);
}

}  // namespace tilesim
