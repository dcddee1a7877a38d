#include "sim/schedules/pass_q_schedule.hpp"

#include <fmt/format.h>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/program_builder.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"

namespace tilesim {
namespace {

struct Partial {
  int o = -1, lse = -1;
};

// partials[i][x]: the partial output of chunk i computed on rank x (x != i).
std::vector<std::vector<Partial>> add_partials(Plan& plan) {
  const int p = plan.ranks;
  std::vector<std::vector<Partial>> partials(static_cast<std::size_t>(p),
                                             std::vector<Partial>(static_cast<std::size_t>(p)));
  for (int i = 0; i < p; ++i) {
    const std::int64_t c = plan.chunks[static_cast<std::size_t>(i)].tokens;
    for (int x = 0; x < p; ++x) {
      if (x == i || plan.unmasked_pairs(i, x) <= 0) continue;
      Partial& part = partials[static_cast<std::size_t>(i)][static_cast<std::size_t>(x)];
      part.o = plan.add_object({Tensor::o, i, x, plan.shape.o_accumulator_bytes(c), false, false,
                                fmt::format("O[{}]@{}", i, x)});
      part.lse = plan.add_object({Tensor::lse, i, x, plan.shape.lse_bytes(c), false, false,
                                  fmt::format("LSE[{}]@{}", i, x)});
    }
  }
  return partials;
}

}  // namespace

Plan make_pass_q_plan(const AttentionShape& shape, int ranks) {
  Plan plan = make_chunked_plan("pass_q", shape, ranks,
                                shape.causal ? ChunkOwnership::zigzag : ChunkOwnership::contiguous);
  plan.tile_a = ranks;
  plan.tile_b = 1;
  const AttentionObjects objs = add_attention_objects(plan);
  const auto partials = add_partials(plan);
  auto partial = [&](int chunk, int rank) {
    return partials[static_cast<std::size_t>(chunk)][static_cast<std::size_t>(rank)];
  };
  auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  ProgramBuilder build(plan);
  CommGroups groups(ranks);
  const int p = ranks;
  for (int r = 0; r < p; ++r) {
    const int next = (r + 1) % p;
    const int prev = (r - 1 + p) % p;
    std::vector<int> last_free;
    Partial to_merge;
    auto merge_pending = [&] {
      if (to_merge.o < 0) return;
      const int parts[] = {to_merge.o, to_merge.lse};
      const int targets[] = {at(objs.o, r), at(objs.lse, r)};
      build.merge(r, parts, targets);
      build.free(r, to_merge.o);
      build.free(r, to_merge.lse);
      to_merge = Partial{};
    };
    for (int s = 0; s < p; ++s) {
      const int i = (r - s + p) % p;
      if (s + 1 < p) {
        const int g = groups.take(r);
        build.send(r, at(objs.q, i), next, g);
        build.recv(r, at(objs.q, (i - 1 + p) % p), prev, g, last_free);
      }
      const Partial out = s == 0 ? Partial{at(objs.o, r), at(objs.lse, r)} : partial(i, r);
      if (out.o >= 0) {
        const int reads[] = {at(objs.q, i), at(objs.kv, r)};
        const int writes[] = {out.o, out.lse};
        build.compute(r, i, r, Pass::fwd, reads, writes);
      }
      merge_pending();
      if (s == 0) continue;
      const Partial in = partial(r, (r + s) % p);
      if (out.o >= 0 || in.o >= 0) {
        const int g = groups.take(r);
        if (out.o >= 0) {
          build.send(r, out.o, i, g);
          build.send(r, out.lse, i, g);
        }
        if (in.o >= 0) {
          build.recv(r, in.o, (r + s) % p, g);
          build.recv(r, in.lse, (r + s) % p, g);
        }
      }
      if (out.o >= 0) {
        build.free(r, out.o);
        build.free(r, out.lse);
      }
      to_merge = in;
      last_free = {build.free(r, at(objs.q, i))};
    }
    merge_pending();
  }
  return plan;
}

}  // namespace tilesim
