// A fingerprint of a plan, so that `tilesim validate` can tell a measured run of this very
// plan from a run of another size, shape or schedule: 64-bit FNV-1a over the schedule, tile,
// ranks, attention shape, token layout, placement (empty = identity), every chunk's blocks,
// owner, tokens and head group, every object's tensor, chunk, home and bytes, and every op's
// kind, pass, peer, group, block pairs, reads, writes and dependencies. The programs are hashed
// one by one (each from FNV's offset basis) and the plan's hash takes each program's op count
// and hash in rank order, so a plan whose programs are generated interleaved (a windowed run,
// ring_classes_source.hpp) is digested as it runs, with no second generation pass; this form
// replaced one FNV stream over every op in December 2026 (every digest value changed then).
// Written as 16 hex digits (result JSON `plan_digest`). Equal plans give equal digests on
// every run; any change to what a plan computes, moves or waits for changes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/core/fnv1a.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

std::string plan_digest(const Plan& plan);

// One program's part of the digest, fed op by op in program order.
class ProgramDigest {
 public:
  void add_op(const RankProgram& program, int index);
  // Digests the ops appended to `program` since the last call (a growing program's new piece).
  void add_new_ops(const RankProgram& program) {
    for (auto i = ops_; i < program.size(); ++i) add_op(program, static_cast<int>(i));
  }
  std::size_t ops() const { return ops_; }
  std::uint64_t value() const { return fnv_.value(); }

 private:
  Fnv1a fnv_;
  std::size_t ops_ = 0;
};

// The same digest for a plan whose programs are never held whole (ring_classes_source.hpp):
// the constructor takes everything before the programs from `plan` (its objects must be
// final), then add_program in rank order.
class PlanDigestBuilder {
 public:
  explicit PlanDigestBuilder(const Plan& plan);
  void add_program(const ProgramDigest& program);
  std::string value() const;

 private:
  Fnv1a fnv_;
};

}  // namespace tilesim
