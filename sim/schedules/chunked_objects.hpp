// Shared set-up for schedules over one chunk per rank: the token layout, the
// chunks and the per-chunk data objects with their byte sizes.
#pragma once

#include <string>
#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim {

struct ChunkObjects {
  std::vector<int> q, kv, o, lse;  // object ids, indexed by chunk
};

// P contiguous chunks, chunk i owned by rank i. Throws ScheduleError when the
// sequence does not split evenly.
Plan make_contiguous_plan(std::string schedule, const AttentionShape& shape, int ranks);

// Inputs Q[i], KV[i] and final outputs O[i], LSE[i] at each chunk's owner.
ChunkObjects add_forward_objects(Plan& plan);

}  // namespace tilesim
