// A fingerprint of a plan, so that `tilesim validate` can tell a measured run of this very
// plan from a run of another size, shape or schedule: 64-bit FNV-1a over the schedule, tile,
// ranks, attention shape, token layout, placement (empty = identity), every chunk's blocks,
// owner, tokens and head group, every object's tensor, chunk, home and bytes, and every op's
// kind, pass, peer, group, block pairs, reads, writes and dependencies, in plan order.
// Written as 16 hex digits (result JSON `plan_digest`). Equal plans give equal digests on
// every run; any change to what a plan computes, moves or waits for changes it.
#pragma once

#include <cstddef>
#include <string>

#include "sim/core/fnv1a.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

std::string plan_digest(const Plan& plan);

// The same digest fed piece by piece, for a plan whose programs are never held whole
// (ring_classes_source.hpp): the constructor takes everything before the programs from `plan`
// (its objects must be final), then each program in rank order: its op count, then its ops.
class PlanDigestBuilder {
 public:
  explicit PlanDigestBuilder(const Plan& plan);
  void begin_program(std::size_t ops);
  void add_op(const RankProgram& program, int index);
  std::string value() const;

 private:
  Fnv1a fnv_;
};

}  // namespace tilesim
