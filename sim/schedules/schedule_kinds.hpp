// Dispatch of the ring-family, Ulysses and all-gather schedule kinds of
// kScheduleKinds (schedule.hpp): ring, zigzag, striped, pass_q, allgather_kv,
// ulysses, usp, double_ring. Backward (pass backward|both) is generated for
// ring, zigzag, striped, ulysses and usp; the others are forward-only and a
// backward pass is a ScheduleError on attention.pass.
// usp without schedule.ulysses takes the largest Ulysses degree u that divides
// the GPU count, heads and kv_heads and is at most gpus_per_node (all-to-all
// inside a node). double_ring without schedule.inner uses gcd(GPUs,
// gpus_per_node) ranks per inner ring: a whole node, or all GPUs when they fit
// in one node.
#pragma once

#include "sim/plan/plan.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

// Builds `out` and returns true when spec.kind is one of the kinds above;
// returns false for other kinds.
bool make_standard_plan(const AttentionShape& shape, const ScheduleSpec& spec, Plan& out);

// The inner ring size double_ring uses for this spec (spec.kind aside).
int double_ring_inner_size(const ScheduleSpec& spec);

// The Ulysses degree usp uses for this spec.
int usp_ulysses_degree(const AttentionShape& shape, const ScheduleSpec& spec);

// What the kind refuses of the shape alone, before anything sizes a plan that could never be
// built: Ulysses and USP split the heads over the Ulysses degree (a shape that does not divide),
// pass-Q has no backward. ScheduleError naming the key; nothing for the other kinds.
void check_kind_fits_shape(const AttentionShape& shape, const ScheduleSpec& spec);

}  // namespace tilesim
