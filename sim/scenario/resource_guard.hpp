// How big a plan will be, from the shape alone, so that a request too large for this machine
// fails in milliseconds with its estimate instead of growing until the machine runs out.
//
// Ops (P ranks, non-causal, the default separate output correction: the causal mask only
// removes computes and a fused correction removes merges, so these are upper bounds):
//   ring, zigzag, striped, double_ring   forward 6 P^2 - 5 P, backward 9 P^2 - 5 P, both
//                                        15 P^2 - 10 P (per rank and step: one call, one
//                                        correction, one free of its partials, comm, KV free)
//   allgather_kv                         3 P^2 - 2 P
//   pass_q                               13 P^2 - 12 P
//   usp (u ranks of all-to-all, r = P/u) P ((3u + 3) r + 6u - 11); ulysses (u = P) 9 P^2 - 8 P
//   other schedules' backward / both     1.5 / 2.5 x forward (the ring family's ratios)
//   mesh a x b                           P (18a + 7b - 27) forward, P (36a + 17b - 54) both,
//                                        P (19a + 11b - 29) backward
// The non-mesh forms are exact for the generated plans (tests/test_resource_guard.cpp); mesh's
// count depends on its greedy step order, so its form is the smallest linear upper bound of
// seven fixed tiles (2x4 .. 8x8), within 14% of each.
// Memory = 10 MB + 113 bytes per op; time = 5.6 us per op: measured RSS and wall time of
// `simulate` ring 1M tokens at 64..1024 GPUs (16K..4.2M ops) with /usr/bin/time -v on a 2-core
// host (docs/resource-guards.md). A mesh with an automatic tile is estimated with the tile that
// gives the fewest ops, so the guard never refuses what could fit.
#pragma once

#include <string>

#include "sim/plan/attention_shape.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

inline constexpr double kSimBytesPerOp = 113.0;
inline constexpr double kSimBaseBytes = 10e6;
inline constexpr double kSimSecondsPerOp = 5.6e-6;

struct ResourceLimits {
  double max_memory_bytes = 0.0;  // 0: default_max_memory_bytes()
  double max_ops = 0.0;           // 0: no limit on ops
};

struct PlanEstimate {
  double ops = 0.0;
  double memory_bytes = 0.0;
  double sim_s = 0.0;
};

PlanEstimate estimate_plan(const AttentionShape& shape, const ScheduleSpec& spec);

// Half of this machine's memory (MemTotal of /proc/meminfo; 8 GB where it cannot be read).
double default_max_memory_bytes();

// "" when the estimate fits the limits, else the estimate, the limit it passes and the largest
// GPU count that would fit.
std::string resource_violation(const AttentionShape& shape, const ScheduleSpec& spec,
                               const ResourceLimits& limits);

}  // namespace tilesim
