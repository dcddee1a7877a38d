#include "sim/scenario/lazy_plan.hpp"

#include <optional>
#include <stdexcept>

#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/ring_classes_source.hpp"
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

// Pass both: a rank's first backward call waits only for its last forward one (and the data it
// wrote), so where a rank's forward ends in ring steps without work (the plain ring under a
// causal mask: rank 0 computes in step 0 only; a window; documents) that call is ready while
// the window of ops is still in the forward, before the tracker has generated it. The window
// cannot run it in the past (windowed_tracker.hpp refuses), so those runs build the whole plan.
// Every rank has work in every step under the full mask, and under the causal one with zigzag
// or striped chunks.
bool every_rank_works_to_the_end(const Scenario& scenario) {
  if (!scenario.attention.has_forward() || !scenario.attention.has_backward()) return true;
  switch (scenario.attention.mask.kind) {
    case AttentionMaskKind::full:
      return true;
    case AttentionMaskKind::causal:
      return lazy_ring_ownership(scenario) != ChunkOwnership::contiguous;
    default:
      return false;
  }
}

}  // namespace

bool lazy_generates(const Scenario& scenario) {
  const bool ring =
      lazy_ring_ownership(scenario).has_value() && every_rank_works_to_the_end(scenario);
  // USP's backward opens with the all-to-all of dO, which its first call waits for.
  const bool usp = usp_degree(scenario) > 0;
  return (ring || usp) && scenario.schedule.gpus >= 2;
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
  return windowed_plan_violation(scenario, scenario.schedule.gpus);
}

void check_lazy_resources(const Scenario& scenario) {
  const std::string violation = lazy_violation(scenario);
  if (!violation.empty()) throw scenario.error_at("schedule.gpus", violation);
}

}  // namespace tilesim
