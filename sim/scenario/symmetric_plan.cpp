#include "sim/scenario/symmetric_plan.hpp"

#include <fmt/format.h>

#include <string>

#include "sim/core/units.hpp"
#include "sim/plan/output_correction.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/schedules/ring_schedule.hpp"

namespace tilesim {
namespace {

std::optional<ChunkOwnership> ring_ownership(const ScheduleSpec& spec) {
  if (spec.balance == TokenBalance::work) return std::nullopt;
  if (spec.kind == "ring") return ChunkOwnership::contiguous;
  if (spec.kind == "zigzag") return ChunkOwnership::zigzag;
  if (spec.kind == "striped") return ChunkOwnership::striped;
  return std::nullopt;
}

// schedule.symmetry, checked by load_scenario to be auto or off.
bool switched_off(const Scenario& scenario) {
  const YAML::Node doc = scenario.document;
  if (!doc.IsMap() || !doc["schedule"] || !doc["schedule"].IsMap()) return false;
  const YAML::Node key = doc["schedule"]["symmetry"];
  return key && key.IsScalar() && key.Scalar() == "off";
}

}  // namespace

bool symmetry_applies(const Scenario& scenario) {
  const AttentionShape& a = scenario.attention;
  return ring_ownership(scenario.schedule).has_value() && !scenario.job && a.has_forward() &&
         !a.has_backward() && a.mask.kind == AttentionMaskKind::full &&
         scenario.schedule.gpus >= 4 && !switched_off(scenario);
}

std::optional<RingSymmetry> scenario_symmetry(const Scenario& scenario, const Topology& topology,
                                              const CalibrationProfile& profile) {
  if (!symmetry_applies(scenario)) return std::nullopt;
  return find_ring_symmetry(topology, {}, scenario.schedule.gpus, profile.compute_cores > 0);
}

void check_symmetric_plan_resources(const Scenario& scenario, int classes) {
  const PlanEstimate full = estimate_plan(scenario.attention, scenario.schedule);
  const double ops = full.ops * classes / scenario.schedule.gpus;
  const double memory_bytes = kSimBaseBytes + kSimBytesPerOp * ops;
  const ResourceLimits& limits = scenario.limits;
  const double max_memory =
      limits.max_memory_bytes > 0 ? limits.max_memory_bytes : default_max_memory_bytes();
  if (memory_bytes <= max_memory && (limits.max_ops <= 0 || ops <= limits.max_ops)) return;
  throw scenario.error_at(
      "schedule.gpus",
      fmt::format("a plan this machine can hold: {} on {} GPUs simulated as {} rank classes is "
                  "about {:.3g} ops, {} of memory (sim/scenario/symmetric_plan.hpp), beyond the "
                  "limits ({}{}); raise --max-memory or --max-ops",
                  scenario.schedule.kind, scenario.schedule.gpus, classes, ops,
                  format_bytes(memory_bytes), format_bytes(max_memory),
                  limits.max_ops > 0 ? fmt::format(", {:.3g} ops", limits.max_ops) : ""));
}

Plan build_symmetric_plan(const Scenario& scenario, const RingSymmetry& symmetry) {
  const ScheduleSpec& spec = scenario.schedule;
  Plan plan = make_pass_kv_ring_classes_plan(spec.kind, scenario.attention, spec.gpus,
                                             *ring_ownership(spec), symmetry.classes);
  if (spec.correction != Correction::fused) separate_output_corrections(plan);
  if (spec.correction == Correction::eager) plan.merge_form = MergeForm::eager;
  return plan;
}

std::size_t full_ring_ops(const Plan& quotient, const RingSymmetry& symmetry) {
  return quotient.op_count() / static_cast<std::size_t>(quotient.ranks) *
         static_cast<std::size_t>(symmetry.full_ranks);
}

void describe_full_ring(nlohmann::ordered_json& json, const Plan& quotient,
                        const RingSymmetry& symmetry) {
  json["gpus"] = symmetry.full_ranks;
  json["ops"] = full_ring_ops(quotient, symmetry);
  json["symmetry"] = {{"classes", symmetry.classes}, {"exact", true}};
}

}  // namespace tilesim
