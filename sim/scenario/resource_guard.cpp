#include "sim/scenario/resource_guard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "sim/core/units.hpp"
#include "sim/schedules/schedule_kinds.hpp"

namespace tilesim {
namespace {

// The squarest factorisations are not always cheapest (a costs more than b); try them all.
double mesh_ops(double p, int a, int b, bool forward, bool backward) {
  const double fa = a, fb = b;
  if (forward && backward) return p * std::max(1.0, 36 * fa + 17 * fb - 54);
  if (backward) return p * std::max(1.0, 19 * fa + 11 * fb - 29);
  return p * std::max(1.0, 18 * fa + 7 * fb - 27);
}

double estimate_ops(const AttentionShape& shape, const ScheduleSpec& spec) {
  const double p = std::max(1, spec.gpus);
  const bool forward = shape.has_forward();
  const bool backward = shape.has_backward();
  if (spec.kind == "mesh") {
    if (spec.tile_a > 0 && spec.tile_b > 0) {
      return mesh_ops(p, spec.tile_a, spec.tile_b, forward, backward);
    }
    double best = std::numeric_limits<double>::infinity();
    for (int a = 1; a <= spec.gpus; ++a) {
      if (spec.gpus % a == 0)
        best = std::min(best, mesh_ops(p, a, spec.gpus / a, forward, backward));
    }
    return best;
  }
  const bool ring_family = spec.kind == "ring" || spec.kind == "zigzag" ||
                           spec.kind == "striped" || spec.kind == "double_ring";
  if (ring_family && forward && backward) return 15 * p * p - 10 * p;
  if (ring_family && backward) return 9 * p * p - 5 * p;
  double f = 6 * p * p - 5 * p;
  if (spec.kind == "allgather_kv") f = 3 * p * p - 2 * p;
  if (spec.kind == "pass_q") f = 13 * p * p - 12 * p;
  if (spec.kind == "ulysses") f = 9 * p * p - 8 * p;
  if (spec.kind == "usp") {
    int u = spec.ulysses_degree;
    if (u < 1) {
      try {
        u = usp_ulysses_degree(shape, spec);
      } catch (const std::exception&) {
        u = 1;  // the generator reports the bad shape; u = 1 bounds every degree from above
      }
    }
    const double fu = std::max(1, u);
    f = p * ((3 * fu + 3) * p / fu + 6 * fu - 11);
  }
  if (forward && backward) return 2.5 * f;  // the ring family's both / forward
  if (backward) return 1.5 * f;             // and backward / forward
  return f;
}

}  // namespace

PlanEstimate estimate_plan(const AttentionShape& shape, const ScheduleSpec& spec) {
  PlanEstimate e;
  e.ops = estimate_ops(shape, spec);
  e.memory_bytes = kSimBaseBytes + kSimBytesPerOp * e.ops;
  e.sim_s = kSimSecondsPerOp * e.ops;
  return e;
}

double default_max_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    double kib = 0.0;
    if (fields >> key >> kib && key == "MemTotal:" && kib > 0) return 0.5 * kib * 1024.0;
  }
  return 8e9;
}

std::string resource_violation(const AttentionShape& shape, const ScheduleSpec& spec,
                               const ResourceLimits& limits) {
  const double max_memory =
      limits.max_memory_bytes > 0 ? limits.max_memory_bytes : default_max_memory_bytes();
  const auto fits = [&](const PlanEstimate& e) {
    return e.memory_bytes <= max_memory && (limits.max_ops <= 0 || e.ops <= limits.max_ops);
  };
  const PlanEstimate e = estimate_plan(shape, spec);
  if (fits(e)) return {};
  const bool memory = e.memory_bytes > max_memory;
  const std::string passed =
      memory ? fmt::format("--max-memory {}{}", format_bytes(max_memory),
                           limits.max_memory_bytes > 0 ? "" : " (default: half of this machine's)")
             : fmt::format("--max-ops {:.3g}", limits.max_ops);
  // The largest GPU count of the same schedule that fits (op counts grow with P). A mesh tile
  // is the user's to change, so it is left automatic for the smaller counts.
  ScheduleSpec smaller = spec;
  if (spec.kind == "mesh") smaller.tile_a = smaller.tile_b = 0;
  int lo = 0, hi = spec.gpus;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    smaller.gpus = mid;
    (fits(estimate_plan(shape, smaller)) ? lo : hi) = mid;
  }
  const std::string advice =
      lo >= 1 ? fmt::format("at most {} GPUs would fit", lo) : std::string("no GPU count fits");
  return fmt::format(
      "a plan this machine can hold: {} on {} GPUs is about {:.3g} ops, {} of memory and {} of "
      "simulation (estimated from the shape, sim/scenario/resource_guard.hpp), beyond {}; {}, "
      "or raise {}",
      spec.kind, spec.gpus, e.ops, format_bytes(e.memory_bytes), format_time_s(e.sim_s), passed,
      advice, memory ? "--max-memory" : "--max-ops");
}

}  // namespace tilesim
