// Peak memory of a Mesh-Attention rank and the caching windows a budget allows.
//
// With c = S/P tokens per chunk and q, kv, o (fp32), lse the chunk sizes of
// attention_shape.hpp, a rank of an a x b tile holds at most
//   q + kv                          its own inputs
// + o + lse                         its final output accumulators
// + nq*q + nk*kv                    received Q and KV chunks, nq = a-1 (or the
//                                   Q window when smaller), nk likewise
// + (a+1)*(o + lse)   when a > 1    a-1 local partials plus up to two received
//                                   ones between a recv and the merge's free
// (mesh_peak_bound_bytes; the validator's dry run and the simulator measure
// the actual peak, which tests check against this bound).
// A budget is met by streaming one ring: cache every chunk of one ring and
// keep only 2 received chunks of the other (the larger saving first).
#pragma once

#include "sim/plan/attention_shape.hpp"
#include "sim/schedules/mesh_order.hpp"
#include "sim/schedules/mesh_tile.hpp"

namespace tilesim {

double mesh_peak_bound_bytes(const AttentionShape& shape, MeshTile tile, MeshWindows windows);

// The windows a tile uses by default: a = 1 double-buffers KV like ring,
// b = 1 double-buffers Q like pass-Q, otherwise everything is cached.
MeshWindows default_mesh_windows(MeshTile tile);

// The most caching that fits `budget_bytes` (0 = no budget). Throws
// ScheduleError at schedule.memory_budget when even streaming does not fit,
// saying by how much the smallest choice exceeds the budget.
MeshWindows mesh_windows_for_budget(const AttentionShape& shape, MeshTile tile,
                                    double budget_bytes);

}  // namespace tilesim
