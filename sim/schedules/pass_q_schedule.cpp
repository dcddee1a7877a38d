#include "sim/schedules/pass_q_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/program_builder.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/class_plan.hpp"

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

// The way Q travels and how far each chunk goes. Full and causal masks: every rank reads every
// chunk, so Q goes round towards r+1 (P-1 hops each, P steps). Under a window or documents a
// chunk goes only as far as its farthest reader along the direction that reaches every
// reader in fewer steps (readers of a causal-within mask over contiguous chunks are the ranks
// before the owner, so towards r-1).
struct QRoute {
  int direction = 1;      // Q goes from rank r to r + direction
  std::vector<int> hops;  // hops[i]: how far Q[i] travels
  int steps = 0;          // 1 + the largest hop count
};

QRoute route_towards(const Plan& plan, int direction) {
  const int p = plan.ranks;
  QRoute route{direction, std::vector<int>(static_cast<std::size_t>(p), 0), 1};
  for (int i = 0; i < p; ++i) {
    int& hops = route.hops[static_cast<std::size_t>(i)];
    for (int d = 1; d < p; ++d) {
      if (plan.unmasked_pairs(i, ((i + direction * d) % p + p) % p) > 0) hops = d;
    }
    route.steps = std::max(route.steps, 1 + hops);
  }
  return route;
}

QRoute route_q(const Plan& plan) {
  const int p = plan.ranks;
  if (!plan.shape.mask.may_leave_pairs_empty()) {
    return QRoute{1, std::vector<int>(static_cast<std::size_t>(p), p - 1), p};
  }
  QRoute forward = route_towards(plan, 1), back = route_towards(plan, -1);
  auto total = [](const QRoute& r) { return std::accumulate(r.hops.begin(), r.hops.end(), 0LL); };
  // Fewer steps first, then fewer hops (bytes); ties keep the forward ring.
  if (back.steps < forward.steps || (back.steps == forward.steps && total(back) < total(forward))) {
    return back;
  }
  return forward;
}

// The programs of ranks 0..emit-1 of the P-rank plan.
Plan build_pass_q(const AttentionShape& shape, int ranks, int emit) {
  // Zigzag ownership balances a causal mask; under a window or documents contiguous chunks let
  // a Q chunk stop at its farthest reader (a zigzag chunk is read on both sides of its rank).
  const bool zigzag = shape.causal && !shape.mask.may_leave_pairs_empty();
  Plan plan = make_chunked_plan("pass_q", shape, ranks,
                                zigzag ? ChunkOwnership::zigzag : ChunkOwnership::contiguous);
  plan.tile_a = ranks;
  plan.tile_b = 1;
  const AttentionObjects objs = add_attention_objects(plan);
  const auto partials = add_partials(plan);
  auto partial = [&](int chunk, int rank) {
    return partials[static_cast<std::size_t>(chunk)][static_cast<std::size_t>(rank)];
  };
  auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  const QRoute route = route_q(plan);
  const int p = ranks, dir = route.direction;
  auto wrap = [p](int x) { return ((x % p) + p) % p; };
  auto held_at_step = [&](int chunk, int s) {
    return s <= route.hops[static_cast<std::size_t>(chunk)];
  };
  ProgramBuilder build(plan);
  CommGroups groups(ranks);
  for (int r = 0; r < emit; ++r) {
    const int next = wrap(r + dir);
    const int prev = wrap(r - dir);
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
    for (int s = 0; s < route.steps; ++s) {
      // Step s: rank r holds Q[i] if Q[i] travels at least s hops.
      const int i = wrap(r - dir * s);
      const int incoming = wrap(r - dir * (s + 1));
      const bool holds = held_at_step(i, s);
      const bool sends = holds && held_at_step(i, s + 1);
      const bool receives = s + 1 < route.steps && held_at_step(incoming, s + 1);
      if (sends || receives) {
        const int g = groups.take(r);
        if (sends) build.send(r, at(objs.q, i), next, g);
        if (receives) build.recv(r, at(objs.q, incoming), prev, g, last_free);
      }
      const Partial out = !holds   ? Partial{}
                          : s == 0 ? Partial{at(objs.o, r), at(objs.lse, r)}
                                   : partial(i, r);
      if (out.o >= 0) {
        const int reads[] = {at(objs.q, i), at(objs.kv, r)};
        const int writes[] = {out.o, out.lse};
        build.compute(r, i, r, Pass::fwd, reads, writes);
      }
      merge_pending();
      if (s == 0) continue;
      // The partial of Q[r] computed this step at the rank Q[r] reached, s hops away.
      const int computing = wrap(r + dir * s);
      const Partial in = partial(r, computing);
      if (out.o >= 0 || in.o >= 0) {
        const int g = groups.take(r);
        if (out.o >= 0) {
          build.send(r, out.o, i, g);
          build.send(r, out.lse, i, g);
        }
        if (in.o >= 0) {
          build.recv(r, in.o, computing, g);
          build.recv(r, in.lse, computing, g);
        }
      }
      if (out.o >= 0) {
        build.free(r, out.o);
        build.free(r, out.lse);
      }
      to_merge = in;
      if (holds) last_free = {build.free(r, at(objs.q, i))};
    }
    merge_pending();
  }
  return plan;
}

}  // namespace

Plan make_pass_q_plan(const AttentionShape& shape, int ranks) {
  return build_pass_q(shape, ranks, ranks);
}

Plan make_pass_q_classes_plan(const AttentionShape& shape, int ranks, int classes) {
  if (classes < 1 || classes >= ranks || ranks % classes != 0) {
    throw std::invalid_argument(
        fmt::format("a pass-Q quotient plan takes classes dividing {}, below it", ranks));
  }
  Plan plan = build_pass_q(shape, ranks, classes);
  keep_class_programs(plan, classes);
  return plan;
}

}  // namespace tilesim
