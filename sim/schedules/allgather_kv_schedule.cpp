#include "sim/schedules/allgather_kv_schedule.hpp"

#include <numeric>

#include "sim/plan/fusing_builder.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/pairwise_exchange.hpp"

namespace tilesim {

Plan make_allgather_kv_plan(const AttentionShape& shape, int ranks, bool by_work) {
  const ChunkOwnership ownership = by_work        ? ChunkOwnership::work
                                   : shape.causal ? ChunkOwnership::zigzag
                                                  : ChunkOwnership::contiguous;
  Plan plan = make_chunked_plan("allgather_kv", shape, ranks, ownership);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  const AttentionObjects objs = add_attention_objects(plan);
  auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  CommGroups groups(ranks);
  std::vector<int> members(static_cast<std::size_t>(ranks));
  std::iota(members.begin(), members.end(), 0);
  // Only the KV chunks some local query sees travel (all of them unless a window or short
  // documents leave some chunk pairs empty).
  auto needs = [&](int rank, int chunk) { return plan.unmasked_pairs(rank, chunk) > 0; };
  add_pairwise_exchange(plan, groups, members, [&](int from, int to) {
    return needs(to, from) ? std::vector<int>{at(objs.kv, from)} : std::vector<int>{};
  });
  FusingScratch scratch;
  for (int r = 0; r < ranks; ++r) {
    // One attention call of the local Q against the gathered KV (pairs in
    // arrival order), then the gathered chunks are dropped.
    FusingBuilder build(plan, scratch, r, true);
    for (int t = 0; t < ranks; ++t) {
      const int j = (r - t + ranks) % ranks;
      if (plan.unmasked_pairs(r, j) <= 0) continue;
      const int reads[] = {at(objs.q, r), at(objs.kv, j)};
      const int writes[] = {at(objs.o, r), at(objs.lse, r)};
      build.compute({r, j}, Pass::fwd, reads, writes);
    }
    for (int t = 1; t < ranks; ++t) {
      const int j = (r - t + ranks) % ranks;
      if (needs(r, j)) build.free(at(objs.kv, j));
    }
    build.flush();
  }
  return plan;
}

}  // namespace tilesim
