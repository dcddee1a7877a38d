#include "sim/plan/ring_schedule.hpp"

#include <fmt/format.h>

#include "sim/plan/chunked_objects.hpp"
#include "sim/plan/program_builder.hpp"
#include "sim/plan/schedule.hpp"

namespace tilesim {

Plan make_ring_plan(const AttentionShape& shape, int ranks) {
  Plan plan = make_contiguous_plan("ring", shape, ranks);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  const ChunkObjects objs = add_forward_objects(plan);
  ProgramBuilder build(plan);
  const int p = ranks;
  for (int r = 0; r < p; ++r) {
    const int next = (r + 1) % p;
    const int prev = (r - 1 + p) % p;
    int last_free = -1;
    for (int s = 0; s < p; ++s) {
      const int j = (r - s + p) % p;
      if (s + 1 < p) {
        const int incoming = (r - s - 1 + p) % p;
        build.send(r, objs.kv[static_cast<std::size_t>(j)], next, s);
        std::vector<int> after;
        if (last_free >= 0) after.push_back(last_free);
        build.recv(r, objs.kv[static_cast<std::size_t>(incoming)], prev, s, after);
      }
      if (plan.unmasked_pairs(r, j) > 0) {
        const int reads[] = {objs.q[static_cast<std::size_t>(r)],
                             objs.kv[static_cast<std::size_t>(j)]};
        const int writes[] = {objs.o[static_cast<std::size_t>(r)],
                              objs.lse[static_cast<std::size_t>(r)]};
        build.compute(r, r, j, Pass::fwd, reads, writes);
      }
      if (j != r) last_free = build.free(r, objs.kv[static_cast<std::size_t>(j)]);
    }
  }
  return plan;
}

}  // namespace tilesim
