// How big a plan will be, from the shape alone, so that a request too large for this machine
// fails in milliseconds with its estimate instead of growing until the machine runs out.
//
// Ops (P ranks, non-causal: the causal mask only removes computes, so this is an upper bound;
// the forward pass F, backward ~1.75 F and both ~2.75 F, the ring's measured ratios):
//   ring, zigzag, striped, allgather_kv, double_ring  F = 4 P^2        (P^2 computes, 3P(P-1)
//   comm+free) pass_q                                            F = 13 P^2 ulysses F = P^3 + 9 P^2
//   (P^2 computes per rank) usp (u ranks of all-to-all)                       F = (u + 4) P^2 mesh
//   a x b                                        P (15a + 4b - 19) forward,
//                                                     P (32a + 13b - 44) both, P (17a + 9b - 25)
//                                                     backward
// fitted exactly to `tilesim plan --json` op counts (tests/test_resource_guard.cpp checks them).
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
