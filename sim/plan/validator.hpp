// Proves a plan correct before anything runs, and measures it.
//
// Checks, each failure naming the op (rank, index) involved:
//  1. coverage: every unmasked (head group, q block, kv block) triple of each
//     pass is computed exactly once; no compute covers only masked pairs; the
//     two chunks of a compute belong to the same head group;
//  2. availability: every object an op reads is on the rank at that point of its
//     program (an input it owns, or received/produced earlier and not freed);
//  3. matching: the k-th send a->b and the k-th recv b<-a carry the same object;
//  4. progress: a dry run of the plan semantics (plan_tracker.hpp) completes, so
//     the order is deadlock-free for grouped point-to-point (NCCL groups);
//  5. outputs: every final output (O, LSE, dQ, dKV) ends at its owner holding the
//     contributions of exactly the unmasked blocks of its chunk, as tracked
//     through computes, transfers and merges (a count plus a 64-bit hash sum
//     of the block ids, so a missing or doubled contribution is caught).
// It also reports per-rank bytes sent and received, FLOPs and peak live memory.
#pragma once

#include <string>
#include <vector>

#include "sim/plan/plan.hpp"
#include "sim/plan/plan_tracker.hpp"

namespace tilesim {

struct RankStats {
  double bytes_sent = 0.0;
  double bytes_received = 0.0;
  double compute_flops = 0.0;
  int computes = 0;  // chunk pairs computed (a fused op counts each of its pairs)
  double peak_bytes = 0.0;
  TensorBytes peak_breakdown{};
};

struct PlanReport {
  std::vector<std::string> errors;  // empty when the plan is valid
  std::vector<RankStats> ranks;
  bool ok() const { return errors.empty(); }
  double max_bytes_received() const;
  double total_bytes_sent() const;
  double max_peak_bytes() const;
};

PlanReport validate_plan(const Plan& plan);

}  // namespace tilesim
