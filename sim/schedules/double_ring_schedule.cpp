#include "sim/schedules/double_ring_schedule.hpp"

#include <fmt/format.h>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/program_builder.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

Plan make_double_ring_plan(const AttentionShape& shape, int ranks, int inner) {
  if (inner < 1 || ranks % inner != 0) {
    throw ScheduleError(
        "schedule.inner",
        fmt::format("inner ring of {} ranks does not divide {} GPUs", inner, ranks));
  }
  Plan plan = make_chunked_plan("double_ring", shape, ranks,
                                shape.causal ? ChunkOwnership::zigzag : ChunkOwnership::contiguous);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  const AttentionObjects objs = add_attention_objects(plan);
  auto kv = [&](int chunk) { return objs.kv[static_cast<std::size_t>(chunk)]; };
  const int k = inner;
  const int n = ranks / inner;
  ProgramBuilder build(plan);
  CommGroups groups(ranks);
  for (int p = 0; p < ranks; ++p) {
    const int node = p / k;
    const int i = p % k;
    const int inner_next = node * k + (i + 1) % k;
    const int inner_prev = node * k + (i - 1 + k) % k;
    const int outer_next = ((node + 1) % n) * k + i;
    const int outer_prev = ((node - 1 + n) % n) * k + i;
    std::vector<int> last_free;
    for (int o = 0; o < n; ++o) {
      const int m = (node - o + n) % n;
      for (int t = 0; t < k; ++t) {
        const int cur = m * k + (i - t + k) % k;
        const bool inner_step = t + 1 < k;
        const bool outer_step = t == 0 && o + 1 < n;
        if (inner_step || outer_step) {
          const int g = groups.take(p);
          if (inner_step) {
            build.send(p, kv(cur), inner_next, g);
            build.recv(p, kv(m * k + (i - t - 1 + k) % k), inner_prev, g, last_free);
          }
          if (outer_step) {
            build.send(p, kv(cur), outer_next, g);
            build.recv(p, kv(((m - 1 + n) % n) * k + i), outer_prev, g);
          }
        }
        if (plan.unmasked_pairs(p, cur) > 0) {
          const int reads[] = {objs.q[static_cast<std::size_t>(p)], kv(cur)};
          const int writes[] = {objs.o[static_cast<std::size_t>(p)],
                                objs.lse[static_cast<std::size_t>(p)]};
          build.compute(p, p, cur, Pass::fwd, reads, writes);
        }
        if (cur != p) last_free = {build.free(p, kv(cur))};
      }
    }
  }
  return plan;
}

}  // namespace tilesim
