// One op's step of the derivation in plan_semantics.hpp, shared by the whole-program derivation
// (SemanticsDeriver) and the windowed tracker's op-by-op one (windowed_tracker.hpp), so that
// the two cannot disagree on what an op waits for.
//
// Object hazards, for op i with the hazard records of the objects it reads and writes (a free
// counts as a write):
//   prerequisites += the last writer of every object i reads             (read-after-write)
//                  + the last writer and every reader since then
//                    of every object i writes                             (WAW, WAR)
//   then i is a reader since the last write of what it reads, and the last writer (with no
//   readers since) of what it writes, in that order: an op that reads and writes one object
//   leaves no reader behind.
// Memory: an op other than send allocates each object it writes that is not live at that
// point; a free releases its object when live.
// The folded compute stream (SemanticsOptions::fold_compute_stream): of an op's compute-stream
// prerequisites only the latest is kept, since the stream completes in program order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim {

struct ObjectHazard {
  std::int32_t last_writer = -1;
  std::vector<std::int32_t> readers_since_write;
};

// Appends op `op`'s hazard prerequisites to `prerequisites` (unsorted, possibly repeated) and
// records `op` as reader and writer. A pointer may appear in both spans or twice in one.
inline void hazard_step(std::span<ObjectHazard* const> read, std::span<ObjectHazard* const> written,
                        std::int32_t op, std::vector<std::int32_t>& prerequisites) {
  for (const ObjectHazard* h : read) {
    if (h->last_writer >= 0) prerequisites.push_back(h->last_writer);
  }
  for (const ObjectHazard* h : written) {
    if (h->last_writer >= 0) prerequisites.push_back(h->last_writer);
    prerequisites.insert(prerequisites.end(), h->readers_since_write.begin(),
                         h->readers_since_write.end());
  }
  for (ObjectHazard* h : read) h->readers_since_write.push_back(op);
  for (ObjectHazard* h : written) {
    h->last_writer = op;
    h->readers_since_write.clear();
  }
}

// Whether an op of `kind` writing an object that is `live` allocates it (a free: releases it);
// updates `live`.
inline bool allocation_step(OpKind kind, bool& live) {
  if (kind == OpKind::free) {
    const bool releases = live;
    live = false;
    return releases;
  }
  if (kind == OpKind::send || live) return false;
  live = true;
  return true;
}

// Sorts `prerequisites` ascending, removes repeats, `op` itself and those `drop` names, then,
// with `fold`, every compute-stream prerequisite but the latest (`on_compute_stream(p)`).
template <typename Drop, typename OnComputeStream>
void finish_prerequisites(std::vector<std::int32_t>& prerequisites, std::int32_t op, bool fold,
                          Drop&& drop, OnComputeStream&& on_compute_stream) {
  std::sort(prerequisites.begin(), prerequisites.end());
  prerequisites.erase(std::unique(prerequisites.begin(), prerequisites.end()), prerequisites.end());
  std::erase_if(prerequisites, [&](std::int32_t p) { return p == op || drop(p); });
  if (!fold) return;
  std::int32_t latest = -1;
  for (std::int32_t p : prerequisites) {
    if (on_compute_stream(p)) latest = p;
  }
  if (latest < 0) return;
  std::erase_if(prerequisites, [&](std::int32_t p) { return p != latest && on_compute_stream(p); });
}

}  // namespace tilesim
