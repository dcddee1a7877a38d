#include "sim/scenario/lazy_plan.hpp"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "sim/core/units.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/ring_classes_source.hpp"
#include "sim/schedules/usp_classes_source.hpp"

namespace tilesim {
namespace {

bool keys_reach_every_rank(const AttentionShape& shape) {
  const AttentionMaskKind mask = shape.mask.kind;
  return mask != AttentionMaskKind::sliding_window && mask != AttentionMaskKind::documents;
}

// The chunk ownership make_plan's ring-family generator uses, where it is
// make_pass_kv_ring_plan's.
std::optional<ChunkOwnership> lazy_ring_ownership(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  if (spec.kind == "ring") {
    // balance: work deals the blocks by work (ChunkOwnership::work): not generated lazily.
    if (spec.balance == TokenBalance::work) return std::nullopt;
    return ChunkOwnership::contiguous;
  }
  if (spec.kind == "striped") return ChunkOwnership::striped;
  if (spec.kind == "zigzag" && keys_reach_every_rank(scenario.attention)) {
    return ChunkOwnership::zigzag;
  }
  return std::nullopt;
}

// USP's Ulysses degree where the USP source generates its plan, else 0.
int usp_degree(const Scenario& scenario) {
  return keys_reach_every_rank(scenario.attention) ? usp_shift_degree(scenario) : 0;
}

// Ops the window holds per rank: a ring step's, u ring steps' for USP (a piece moves u
// head-split bundles), as the windowed quotients (symmetric_plan.cpp).
double window_ops_per_rank(const Scenario& scenario) {
  const int u = usp_degree(scenario);
  return u > 0 ? kWindowedOpsPerClass * u : kWindowedOpsPerClass;
}

}  // namespace

bool lazy_generates(const Scenario& scenario) {
  const bool source = lazy_ring_ownership(scenario).has_value() || usp_degree(scenario) > 0;
  return source && !scenario.attention.has_backward() && scenario.schedule.gpus >= 2;
}

bool lazy_runs(const Scenario& scenario) {
  return lazy_generates(scenario) && !scenario.job && scenario.schedule.gpus > kFullCheckMaxRanks;
}

std::unique_ptr<ProgramSource> make_lazy_source(const Scenario& scenario) {
  if (!lazy_generates(scenario)) {
    throw std::invalid_argument("make_lazy_source: not a plan a lazy source generates");
  }
  const ScheduleSpec& spec = scenario.schedule;
  if (const int u = usp_degree(scenario); u > 0) {
    return std::make_unique<UspClassesSource>(
        UspClassesSpec{scenario.attention, spec.gpus, u, spec.gpus, spec.correction});
  }
  return std::make_unique<RingClassesSource>(
      RingClassesSpec{spec.kind, scenario.attention, spec.gpus, *lazy_ring_ownership(scenario),
                      spec.gpus, spec.correction});
}

std::string lazy_violation(const Scenario& scenario) {
  const ScheduleSpec& spec = scenario.schedule;
  const PlanEstimate e =
      estimate_symmetric_plan(scenario.attention, spec, spec.gpus, window_ops_per_rank(scenario));
  const ResourceLimits& limits = scenario.limits;
  const double max_memory =
      limits.max_memory_bytes > 0 ? limits.max_memory_bytes : default_max_memory_bytes();
  if (e.memory_bytes <= max_memory && (limits.max_ops <= 0 || e.ops <= limits.max_ops)) return {};
  return fmt::format(
      "a plan this machine can hold: {} on {} GPUs generated as it runs is about {:.3g} ops, {} "
      "of memory (sim/scenario/lazy_plan.hpp), beyond the limits ({}{}); raise --max-memory or "
      "--max-ops, or use fewer GPUs",
      spec.kind, spec.gpus, e.ops, format_bytes(e.memory_bytes), format_bytes(max_memory),
      limits.max_ops > 0 ? fmt::format(", {:.3g} ops", limits.max_ops) : "");
}

void check_lazy_resources(const Scenario& scenario) {
  const std::string violation = lazy_violation(scenario);
  if (!violation.empty()) throw scenario.error_at("schedule.gpus", violation);
}

}  // namespace tilesim
